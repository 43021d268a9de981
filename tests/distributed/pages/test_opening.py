"""The distributed opening page's sources table checked against the data file read with ``tomllib``."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.distributed.pages import _data, _table


def check_sources(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _data()["source"]
    assert len(rows) == len(raw)
    for row, src in zip(rows, raw, strict=True):
        assert row["checked"] == src["checked"]
        full = " ".join(src["version"].split())
        assert row["version"] == re.sub(r"\b([0-9a-f]{12})[0-9a-f]{28}\b", r"\1", full)
        path = (src.get("path") or src["version"]).replace("/", "/<wbr>")
        assert row["file or document"] == f"[{path}]({src['url']})"
        assert row["source"] == " ".join(src["title"].split())


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "sources_markdown": check_sources,
}
