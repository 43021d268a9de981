"""The memory page's tables checked: the training states and transients recomputed here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.distributed.pages import _table


def check_states(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = {r["scheme"].strip("`"): r for r in _table(markdown)}
    n, psi = 64, 7.5e9
    want = {
        "ddp": (2, 2, 12),
        "ddp_fp32": (4, 4, 8),
        "zero1": (2, 2, 12 / n),
        "zero2": (2, 2 / n, 12 / n),
        "zero3": (2 / n, 2 / n, 12 / n),
        "fsdp2": (4 / n, 4 / n, 8 / n),
    }
    assert set(rows) == set(want)
    for scheme, parts in want.items():
        row = rows[scheme]
        cells = [float(row[c]) for c in ("params B/param", "grads B/param", "optimizer B/param", "total B/param")]
        assert cells == pytest.approx([*parts, sum(parts)], rel=5e-3)
        assert float(row["GB per rank"]) == pytest.approx(sum(parts) * psi / 1e9, rel=5e-3)
    # the ZeRO paper's figure 1
    assert [rows[s]["GB per rank"] for s in ("ddp", "zero1", "zero2", "zero3")] == ["120", "31.4", "16.6", "1.88"]


def check_transients(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = {r["mode"]: r["bytes per parameter of the unit"] for r in _table(markdown)}
    assert rows == {"`FULL`": str(4 + 4 + 4), "`DEFAULT`": str(2 + 2 + 4), "`PURE`": str(2 + 2 + 2)}


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "states_markdown": check_states,
    "transients_markdown": check_transients,
}
