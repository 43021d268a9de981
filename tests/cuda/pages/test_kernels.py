"""The cell checks of docs/cuda/kernels.md (``gpukb.cuda.pages.kernels``): the kernels against their peers, against
the record read raw."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.cuda.pages import _record
from tests.helpers import markdown_tables


def check_kernels(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    data = _record("kernels-h100")
    assert len(table) == len(data["rows"])
    for row, rec in zip(table, data["rows"], strict=True):
        for column in ("group", "framework", "kernel", "size", "peer"):
            assert row[column] == rec[column], (column, row)
        assert row["median (ms)"] == f"{rec['ms']['median']:.3f}"
        assert row["rate"] == f"{rec['rate']:,.1f} {rec['unit']}"
        assert row["peer rate"] == f"{rec['peer_rate']:,.1f} {rec['unit']}"
        assert row["checked"] == ("yes" if rec["correct"] else "NO")
        assert row["ratio"] == f"{rec['peer_ms']['median'] / rec['ms']['median'] * _amount_ratio(rec):.2f}"


def _amount_ratio(rec: dict[str, Any]) -> float:
    """Work of the kernel over work of its peer (a vector add moves 3 arrays, the copy peer 2)."""
    return (rec["rate"] * rec["ms"]["median"]) / (rec["peer_rate"] * rec["peer_ms"]["median"])


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "kernels": check_kernels,
}
