"""The shared table renderers: Markdown for pages, text for the CLI."""

from __future__ import annotations

import pytest

from gpukb import tables
from gpukb.tables import markdown_table, text_table, transposed

HEADERS = ["format", "bits", "max"]
ROWS = [["e4m3", 8, 448], ["fp16", 16, "65504"]]


def test_markdown_table() -> None:
    assert markdown_table(HEADERS, ROWS).splitlines() == [
        "| format | bits | max |",
        "|---|---|---|",
        "| e4m3 | 8 | 448 |",
        "| fp16 | 16 | 65504 |",
    ]


def test_markdown_escapes_pipes() -> None:
    assert markdown_table(["a"], [["x|y"]]).splitlines()[-1] == "| x\\|y |"


def test_text_table_pads_columns() -> None:
    assert text_table(HEADERS, ROWS).splitlines() == [
        "format  bits  max",
        "------  ----  -----",
        "e4m3    8     448",
        "fp16    16    65504",
    ]


def test_transposed() -> None:
    assert transposed(HEADERS, ROWS) == (["format", "e4m3", "fp16"], [["bits", "8", "16"], ["max", "448", "65504"]])


@pytest.mark.parametrize("render", [markdown_table, text_table, transposed])
def test_ragged_rows_are_refused(render) -> None:
    with pytest.raises(ValueError, match=r"row 2 has 2 cells, the header has 3"):
        render(HEADERS, [["a", 1, 2], ["b", 1]])


@pytest.mark.parametrize("render", [markdown_table, text_table, transposed])
@pytest.mark.parametrize(
    ("headers", "rows", "match"),
    [
        ("abc", [[1, 2, 3]], r"headers must be a list of names .*; got 'abc' \(str\)"),  # was three columns a, b, c
        (None, [[1]], "headers must be a list of names"),  # was "object of type 'NoneType' has no len()"
        (["a"], None, r"rows must be a list of rows, each a list of cells; got None"),
        (["a"], [5], r"row 1 must be a list of cells; got 5 \(int\)"),
        (["a", "b"], ["xy"], r"row 1 must be a list of cells; got 'xy' \(str\)"),  # was the cells x and y
    ],
)
def test_headers_and_rows_that_are_no_table_are_refused(render, headers, rows, match) -> None:
    with pytest.raises(TypeError, match=match):
        render(headers, rows)


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [
        (0, "0 B"),
        (1000, "1,000 B"),
        (1023.5, "1,023.5 B"),
        (1024, "1 KiB"),
        (1023.99, "1.0 KiB"),  # was "1,024.0 B": a size that rounds to a whole unit is shown in it
        (2**20 - 1, "1.0 MiB"),  # was "1024.0 KiB"
        (2**20 - 60, "1023.9 KiB"),
        (233472, "228 KiB"),
        (1536, "1.5 KiB"),
        (32768000, "31.2 MiB"),
        (3 * 2**20, "3 MiB"),
        (80 * 2**30, "80 GiB"),
        (2**40 + 2**39, "1.5 TiB"),
        (2**50, "1 PiB"),  # was "1024 TiB"
        (3 * 2**60, "3 EiB"),
        (2**63 - 1, "8.0 EiB"),  # the most bytes an int64 counts
        (2**60 * 1000 + 1, "1000.0 EiB"),
        (999 * 2**60 + 2**50, "999.0 EiB"),
        (2**70 - 2**50, "1.18e+21 B"),  # would print "1024.0 EiB": beyond the largest unit, a power of ten
        (2**70, "1.18e+21 B"),
        (10**30 + 1, "1e+30 B"),
        (1e300, "1e+300 B"),  # was a 290-digit figure in TiB
        (float.fromhex("0x1.fffffffffffffp+1023"), "1.8e+308 B"),
    ],
)
def test_a_size_is_shown_in_the_largest_unit_it_fills(nbytes: float, text: str) -> None:
    assert tables.bytes_text(nbytes) == text


@pytest.mark.parametrize(
    ("nbytes", "error", "match"),
    [
        (-1, ValueError, "nbytes"),
        (float("nan"), ValueError, "nbytes"),
        (float("inf"), ValueError, "nbytes"),
        (True, TypeError, "nbytes"),
        (10**400, ValueError, "nbytes is beyond the range of a float"),
        ("1024", TypeError, "nbytes"),
    ],
)
def test_a_size_that_is_no_size_is_refused(nbytes: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        tables.bytes_text(nbytes)  # type: ignore[arg-type]
