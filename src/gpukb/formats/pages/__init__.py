"""The formats chapter's page layer: one module per page (``pages.<page>`` renders ``docs/formats/<page>.md``), and
here what several of its pages share: the only code of the chapter that returns Markdown or SVG.

Library modules return values or ``(headers, rows)`` (``gpukb.formats.tables``, ``mx.error_table``, ...) and
figures as matplotlib figures (``gpukb.formats.figures``); the page modules render them, and load recorded
results by id (``gpukb.formats.results``), so a page calls them with no path::

    from gpukb.formats.pages.anatomy import tf32_check
    print(tf32_check())
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gpukb import tables as render
from gpukb.formats import tables


def properties_table(
    names: Iterable[str] | None = None,
    int8: bool = False,
    transpose: bool = False,
    columns: Sequence[str] | None = None,
) -> str:
    """Range and precision of each format (default: all), with an INT8 row if asked.

    Args:
        names: The formats, in order (default: all).
        int8: Add an INT8 row for comparison.
        transpose: Put the formats in columns, for a few formats with many properties.
        columns: The properties to show, by header (default: all); the format's name always comes first. A page
            with many formats splits the table in two this way, so that neither needs scrolling.

    Raises:
        ValueError: If a name in ``columns`` is not a property the table has.
    """
    headers, rows = tables.properties_table(names, int8=int8)
    if columns is not None:
        unknown = [c for c in columns if c not in headers]
        if unknown:
            raise ValueError(f"unknown properties {unknown}; the table has {headers}")
        keep = [0, *(headers.index(c) for c in columns if c != headers[0])]
        headers, rows = [headers[i] for i in keep], [[row[i] for i in keep] for row in rows]
    if transpose:
        headers, rows = render.transposed(headers, rows)
    return render.markdown_table(headers, rows)
