"""The cell checks of docs/parallelism/problems.md (``gpukb.parallelism.pages.problems``)."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from typing import Any

from tests.helpers import ROOT
from tests.parallelism.pages import _table


def check_sources(markdown: str, kwargs: dict[str, Any]) -> None:
    raw = tomllib.loads((ROOT / "src/gpukb/data/parallelism/sources.toml").read_text(encoding="utf-8"))["source"]
    rows = _table(markdown)
    assert len(rows) == len(raw)
    for row, src in zip(rows, raw, strict=True):
        assert row["source"] == f"[{src['title']}]({src['url']})"
        assert (row["authors"], row["version"], row["checked"]) == (src["authors"], src["version"], src["checked"])
        assert row["what the chapter takes from it"] == src["supports"]


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "sources_markdown": check_sources,
}
