"""The one-GPU page's block check table checked against its record read raw."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.distributed.pages import _record, _table


def check_block_check(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    blocks = _record("fsdp-single-gpu")["blocks"]
    assert [r["dtype"] for r in rows] == [x["dtype"] for x in blocks]
    for row, x in zip(rows, blocks, strict=True):
        e = 4 if x["dtype"] == "float32" else 2
        n, s, h, a = x["batch"], x["seq"], x["hidden"], x["heads"]
        assert int(row["saved bytes (measured)"]) == x["live_bytes"] - x["output_bytes"] + x["input_bytes"]
        assert int(row["formula"]) == e * (16 * n * s * h + a * n * s * s) + 16 * n * s
        assert row["measured / formula"] == "1.0000"
        assert row["shape"] == f"{n} × {s} × {h}, {a} heads"


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "block_check_markdown": check_block_check,
}
