"""What the formats pages share (``gpukb.formats.pages``, checked by ``tests.formats.pages``): its checks fail on
what they should."""

from __future__ import annotations

import pytest

from gpukb.formats import pages
from tests.formats.pages import check_properties


def test_a_swapped_column_fails_the_check() -> None:
    """The check reads cells by header: swapping two columns of the properties table is caught."""
    markdown = pages.properties_table(["e4m3", "e5m2"])
    header, rule, *rows = markdown.splitlines()

    def swap(line: str) -> str:
        cells = line.split("|")
        cells[7], cells[8] = cells[8], cells[7]  # max <-> min normal, cells only
        return "|".join(cells)

    with pytest.raises(AssertionError):
        check_properties("\n".join([header, rule, *map(swap, rows)]), {})
