"""The errata data is well formed, and every erratum names a test that exists."""

from __future__ import annotations

import ast

import pytest

from gpukb.errata import as_markdown, load, parse
from tests.helpers import ROOT


def test_every_erratum_names_an_existing_test() -> None:
    entries = load()
    assert entries
    for entry in entries:
        file, _, name = entry.test.partition("::")
        path = ROOT / file
        assert path.is_file(), f"{entry.id}: {file} does not exist"
        defined = {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)}
        assert name in defined, f"{entry.id}: {file} defines no {name}"


def _entry(**change) -> dict:
    entry = dict(id="x", topic="formats", seed="000", claim="c", truth="t", test="tests/a.py::test_b", source="s")
    entry.update(change)
    return {k: v for k, v in entry.items() if v is not None}


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([_entry(truth=None)], r"missing or empty \['truth'\]"),
        ([_entry(colour="red")], r"unknown \['colour'\]"),
        ([_entry(topic="astrology")], "topic 'astrology' is not one of"),
        ([_entry(), _entry()], "id 'x' is used twice"),
        ([_entry(test="test_b")], "must be a node id"),
    ],
)
def test_malformed_entries_are_refused(entries, message) -> None:
    with pytest.raises(ValueError, match=message):
        parse({"erratum": entries})


def test_markdown_has_an_anchor_and_the_test_per_entry() -> None:
    text = as_markdown(parse({"erratum": [_entry()]}))
    assert "### x { #x }" in text
    assert "`tests/a.py::test_b`" in text
