"""The page “Sources” (docs/parallelism/problems.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.parallelism.sources import sources
from gpukb.tables import markdown_table


def sources_markdown() -> str:
    """Every primary source of the chapter."""
    rows = [[f"[{s.title}]({s.url})", s.authors, s.version, s.supports, s.checked] for s in sources()]
    return markdown_table(["source", "authors", "version", "what the chapter takes from it", "checked"], rows)
