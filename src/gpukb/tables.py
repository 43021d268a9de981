"""Render rows as Markdown (for pages, at build time) or aligned text (for the CLI): one table, two outputs."""

from __future__ import annotations

import html
import numbers
import re
from collections.abc import Iterable, Sequence

from gpukb import arguments


def _cells(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> list[list[str]]:
    # a string of headers would be split into one column per letter, a string row into one cell per letter
    if arguments.names("headers", headers) is None:
        raise TypeError("headers must be a list of names (strings); got None")
    if isinstance(rows, str | bytes) or not isinstance(rows, Iterable):
        raise TypeError(f"rows must be a list of rows, each a list of cells; got {arguments.given(rows)}")
    width = len(headers)
    rows = list(rows)
    for number, row in enumerate(rows, start=1):
        if isinstance(row, str | bytes) or not hasattr(row, "__len__"):
            raise TypeError(f"row {number} must be a list of cells; got {arguments.given(row)}")
        if len(row) != width:
            raise ValueError(f"row {number} has {len(row)} cells, the header has {width}: {row!r}")
    return [[str(c) for c in row] for row in rows]


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown pipe table. ``|`` inside a cell is escaped.

    Raises:
        TypeError: If ``headers`` is not a list of strings or ``rows`` not a list of lists (a string is neither).
        ValueError: If a row's length differs from the header's.
    """
    cells = _cells(headers, rows)
    escape = lambda s: s.replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(map(escape, headers)) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(map(escape, row)) + " |" for row in cells]
    return "\n".join(lines)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table with columns padded to their widest cell.

    Raises:
        ValueError: If a row's length differs from the header's.
    """
    cells = _cells(headers, rows)
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    fmt = lambda row: "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()  # noqa: E731
    return "\n".join([fmt(headers), fmt(["-" * w for w in widths]), *map(fmt, cells)])


def transposed(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> tuple[list[str], list[list[str]]]:
    """Swap rows and columns: the first column becomes the header, each other header a row label.

    A table of a few items with many properties reads better with the items as columns.

    Raises:
        ValueError: If a row's length differs from the header's.
    """
    cells = _cells(headers, rows)
    new_headers = [headers[0], *(row[0] for row in cells)]
    return new_headers, [[header, *(row[i] for row in cells)] for i, header in enumerate(headers) if i > 0]


def html_with_links(text: str) -> str:
    """A source for an HTML table cell, escaped, its addresses made links that do not widen the cell: a trailing
    ``label: https://...`` links the label; any other address is linked by its host name.

    Raises:
        TypeError: If ``text`` is not a string.
    """
    text = arguments.text("text", text, max_length=100_000)
    label, sep, url = text.rpartition(": ")
    if sep and re.fullmatch(r"https?://\S+", url):
        return f'<a href="{html.escape(url, quote=True)}">{html.escape(label)}</a>'
    parts = re.split(r"(https?://[^\s<>\"]+?)(?=[.,;)]?(?:\s|$))", text)
    return "".join(
        f'<a href="{html.escape(part, quote=True)}">{html.escape(part.split("/")[2])}</a>'
        if i % 2
        else html.escape(part)
        for i, part in enumerate(parts)
    )


#: Binary units, largest first: a size is shown in the largest it fills.
BINARY_UNITS = (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
#: From here on (1024 EiB, 1.18e21 bytes: more than any machine holds) a size is shown in bytes as a power of ten,
#: to three figures: ``1e300`` is ``"1e+300 B"``, not a figure of 280 digits in a binary unit.
EXPONENT_FROM = 2**70


def bytes_text(nbytes: float) -> str:
    """A size in bytes, the one way the site prints one: in the largest binary unit it fills, whole when it is a
    whole number of that unit and to one decimal otherwise (``233472`` → ``"228 KiB"``, ``32768000`` →
    ``"31.2 MiB"``, ``80 * 2**30`` → ``"80 GiB"``); below one KiB in bytes (``"1,000 B"``); from
    :data:`EXPONENT_FROM` (1024 EiB) on in bytes to three figures (``1e300`` → ``"1e+300 B"``).

    Raises:
        TypeError: If ``nbytes`` is not a real number (a bool or a string is not).
        ValueError: If it is negative, NaN, infinite or beyond a float's range.
    """
    number = arguments.real("nbytes", nbytes, minimum=0)
    nbytes = int(nbytes) if isinstance(nbytes, numbers.Integral) else number  # a whole number of bytes stays exact
    if nbytes >= EXPONENT_FROM or f"{nbytes / 2**60:.1f}" == "1024.0":  # would print "1024.0 EiB": no larger unit
        return f"{number:.3g} B"
    for unit, size in BINARY_UNITS:
        # 2^20 - 1 bytes fills no MiB but would print as "1024.0 KiB": it is "1.0 MiB"
        if nbytes >= size or f"{nbytes / size * 1024:.1f}" == "1024.0":
            return f"{int(nbytes // size)} {unit}" if nbytes % size == 0 else f"{nbytes / size:.1f} {unit}"
    return f"{int(nbytes):,} B" if float(nbytes).is_integer() else f"{float(nbytes):,.1f} B"
