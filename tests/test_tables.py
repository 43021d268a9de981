"""The shared table renderers: Markdown for pages, text for the CLI."""

from __future__ import annotations

import pytest

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
