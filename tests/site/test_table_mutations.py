"""The issue's third kind of attack, re-run by the suite: mutations of what renders page tables, and snippet checks
that would not notice a changed output.

Every table a checked chapter's pages print is mutated three ways, the way a slip in a page layer would change it,
and its cell check (``CHECKS`` of the chapter's ``tests/<topic>/test_page_tables.py``) must fail on each:

- a number: one numeric cell, the last in the table, gets a digit in front (``52.0`` becomes ``952.0``);
- swapped columns: the headers of the first two neighbouring columns whose headers and cells differ (the label column
  included)
  are swapped, as if a page layer printed its columns in the wrong order;
- a mislabelled row: the first cells of the first two rows that differ are swapped.

A table with no numeric cell, or no two differing columns or rows, has nothing to mutate that way. The mutation
runner itself is checked below on a table built here.

A snippet check must read what the snippet printed: one that recomputes a value and never compares it with the
output lets any change of the snippet through. Every check of every topic (``tests/test_snippets.py`` collects them)
is handed an empty output and an unrelated one, and must fail on both.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable

import pytest

from tests.helpers import markdown_tables
from tests.page_calls import PageCall, page_calls, rendered
from tests.site.test_page_tables import CHECK_MODULES

#: The chapters whose tables are mutated here: every chapter with a check module, so a new chapter joins with it.
MUTATED_LAYERS = tuple(CHECK_MODULES)

_NUMBER = re.compile(r"^[-+]?[\d,]*\.?\d+(e[-+]?\d+)?\s*(%|×|µs|ms|s|B|MHz|W|GiB|MiB|KiB)?( [†?])?$")
_PIPE = re.compile(r"(?<!\\)\|")


def _first_table(markdown: str) -> tuple[list[str], int, int]:
    lines = markdown.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return lines, start, end


def mutate_number(markdown: str) -> str | None:
    """The last numeric cell of the first table with a ``9`` in front of it."""
    lines, start, end = _first_table(markdown)
    for r in range(end - 1, start + 1, -1):
        cells = _PIPE.split(lines[r])
        for c in range(len(cells) - 2, 0, -1):
            if _NUMBER.match(cells[c].strip()):
                cells[c] = f" 9{cells[c].strip()} "
                lines[r] = "|".join(cells)
                return "\n".join(lines)
    return None


def swap_columns(markdown: str) -> str | None:
    """The headers of the first two neighbouring columns whose headers and cells differ, swapped (swapping two equal
    headers would change nothing)."""
    lines, start, end = _first_table(markdown)
    rows = [_PIPE.split(line) for line in lines[start:end]]
    for a in range(1, len(rows[0]) - 2):
        if rows[0][a].strip() != rows[0][a + 1].strip() and any(
            row[a].strip() != row[a + 1].strip() for row in rows[2:]
        ):
            rows[0][a], rows[0][a + 1] = rows[0][a + 1], rows[0][a]
            lines[start:end] = ["|".join(row) for row in rows]
            return "\n".join(lines)
    return None


def swap_labels(markdown: str) -> str | None:
    """The first cells of the first two rows whose first cells differ, swapped."""
    lines, start, end = _first_table(markdown)
    rows = [_PIPE.split(line) for line in lines[start:end]]
    data = rows[2:]
    for x in range(len(data)):
        for y in range(x + 1, len(data)):
            if data[x][1].strip() != data[y][1].strip():
                data[x][1], data[y][1] = data[y][1], data[x][1]
                lines[start:end] = ["|".join(row) for row in rows]
                return "\n".join(lines)
    return None


MUTATIONS: dict[str, Callable[[str], str | None]] = {
    "a number": mutate_number,
    "swapped columns": swap_columns,
    "a mislabelled row": swap_labels,
}


def _cases() -> list[PageCall]:
    """Every call of a checked page function of the mutated chapters (one function may render several records)."""
    return [
        call
        for call in page_calls()
        if call.module in MUTATED_LAYERS and call.function in importlib.import_module(CHECK_MODULES[call.module]).CHECKS
    ]


@pytest.mark.parametrize("call", _cases(), ids=lambda c: f"{c.page}:{c.line}:{c.function}")
def test_every_mutation_of_a_table_fails_its_cell_check(call: PageCall) -> None:
    check = importlib.import_module(CHECK_MODULES[call.module]).CHECKS[call.function]
    markdown = rendered(call)
    if not markdown_tables(markdown):
        pytest.skip(f"{call.page}:{call.line} prints no table")
    survived = []
    for name, mutate in MUTATIONS.items():
        mutated = mutate(markdown)
        if mutated is None:
            continue
        try:
            check(mutated, {**call.kwargs, "args": call.args})
        except (AssertionError, ValueError, KeyError, IndexError, AttributeError, TypeError, StopIteration):
            continue
        survived.append(name)
    assert survived == [], f"{call.page}:{call.line} {call.function}: the check passes with {survived}"


def test_the_mutations_change_what_they_say() -> None:
    table = "| name | a | b |\n|---|---|---|\n| x | 1.5 | 2 |\n| y | 3 | 4% |\n\ntext"
    assert mutate_number(table).splitlines()[3] == "| y | 3 | 94% |"
    assert swap_columns(table).splitlines()[0] == "| a | name | b |"
    assert [r["name"] for r in markdown_tables(swap_labels(table))[0]] == ["y", "x"]
    assert swap_columns("| a | b |\n|---|---|\n| 1 | 1 |\n") is None
    assert swap_columns("|  |  |\n|---|---|\n| GPU | H100 |\n") is None
    assert mutate_number("| a |\n|---|\n| text |\n") is None


# --- snippet checks --------------------------------------------------------------------------------------------
NOT_THE_OUTPUT = {"empty": "", "unrelated": "0\n1.5\nx = 3\nPASS\n"}


def _snippet_checks() -> dict[str, Callable[[str], None]]:
    from tests.test_snippets import collect, topic_checks

    return collect(topic_checks())


@pytest.mark.no_snippet_run
@pytest.mark.parametrize("snippet", sorted(_snippet_checks()))
def test_a_snippet_check_fails_on_output_that_is_not_the_snippets(snippet: str) -> None:
    check = _snippet_checks()[snippet]
    passed = []
    for name, text in NOT_THE_OUTPUT.items():
        try:
            check(text)
        except (AssertionError, ValueError, KeyError, IndexError, AttributeError, TypeError, StopIteration):
            continue
        passed.append(name)
    assert passed == [], f"the check of {snippet} passes an output that is not the snippet's: {passed}"
