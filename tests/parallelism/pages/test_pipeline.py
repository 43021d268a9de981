"""The cell checks of docs/parallelism/pipeline.md (``gpukb.parallelism.pages.pipeline``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.parallelism.pages import _table


def check_bubble(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    assert len(rows) == 12
    for r in rows:
        p, m = int(r["stages p"]), int(r["micro-batches m"])
        assert r["bubble"] == f"{(p - 1) / (m + p - 1):.1%}"
        assert r["interleaved, v = 2"] == f"{(p - 1) / (2 * m + p - 1):.1%}"
        assert r["held by stage 0: GPipe"] == str(m)
        assert r["1F1B"] == str(min(p, m))


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "bubble_markdown": check_bubble,
}
