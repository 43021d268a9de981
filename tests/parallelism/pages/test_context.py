"""The cell checks of docs/parallelism/context.md (``gpukb.parallelism.pages.context``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.helpers import size_text
from tests.parallelism.pages import _table


def check_cp_traffic(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    b, s, kv = 1, 131072, 1024
    assert [r["ring size"] for r in rows] == ["2", "4", "8"]
    for r in rows:
        cp = int(r["ring size"])
        pair = 2 * b * s // cp * kv * 2
        assert r["K and V shard"] == size_text(pair)
        assert r["sent: reference"] == size_text(2 * (cp - 1) * pair)
        assert r["sent: PyTorch, all-to-all rotation"] == size_text((2 * (cp - 1) + cp) * pair)


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "cp_traffic_markdown": check_cp_traffic,
}
