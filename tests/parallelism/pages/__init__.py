"""The cell checks of the parallelism pages, one module per page (``test_<page>.py`` checks
``gpukb.parallelism.pages.<page>``); this package holds what several of them use.
"""

from __future__ import annotations

from tests.helpers import markdown_tables


def _table(markdown: str) -> list[dict[str, str]]:
    tables = markdown_tables(markdown)
    assert tables, "no table rendered"
    return tables[0]
