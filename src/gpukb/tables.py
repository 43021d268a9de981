"""Render rows as Markdown (for pages, at build time) or aligned text (for the CLI): one table, two outputs."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from gpukb import arguments


def _cells(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> list[list[str]]:
    width = len(headers)
    for number, row in enumerate(rows, start=1):
        if len(row) != width:
            raise ValueError(f"row {number} has {len(row)} cells, the header has {width}: {row!r}")
    return [[str(c) for c in row] for row in rows]


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown pipe table. ``|`` inside a cell is escaped.

    Raises:
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


def mib_text(nbytes: float) -> str:
    """Bytes in MiB with one decimal (``"96.0 MiB"``), or in KiB below one MiB (``"3.5 KiB"``).

    Raises:
        TypeError: If ``nbytes`` is not a real number (a bool or a string is not).
        ValueError: If it is negative, NaN or infinite.
    """
    nbytes = arguments.real("nbytes", nbytes, minimum=0)
    return f"{float(nbytes) / 2**20:.1f} MiB" if nbytes >= 2**20 else f"{float(nbytes) / 1024:.1f} KiB"
