"""The errata data file is well formed, every erratum names a test that exists, and the errata page renders it."""

from __future__ import annotations

import ast
import re
from importlib import resources

import pytest

from gpukb.errata import TOPICS, load, parse
from gpukb.site import pages
from tests.helpers import ROOT

FILE = "errata.toml"


def test_every_erratum_names_an_existing_test() -> None:
    entries = load()
    assert entries
    for entry in entries:
        file, _, name = entry.test.partition("::")
        path = ROOT / file
        assert path.is_file(), f"{entry.id}: {file} does not exist"
        defined = {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)}
        assert name in defined, f"{entry.id}: {file} defines no {name}"


ENTRY = """[[erratum]]
id = "x"
topic = "formats"
seed = "000"
claim = "c"
truth = "t"
test = "tests/a.py::test_b"
source = "s"
"""


def _file(entry: str = ENTRY, second: str = "") -> str:
    """A copy of the real file with one more entry at the end (a corrupted copy when ``entry`` is broken)."""
    text = resources.files("gpukb.data").joinpath(FILE).read_text(encoding="utf-8")
    return f"{text}\n{entry}\n{second}"


N = len(load()) + 1  # the number of the added entry
AT = rf"erratum entry {N} \(x\)"  # how a message names it


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_file(ENTRY.replace('truth = "t"\n', "")), rf"{AT}: truth: Field required"),
        (_file(ENTRY.replace('truth = "t"', 'truth = "  "')), rf"{AT}: truth: String should match"),
        (_file(ENTRY + 'colour = "red"\n'), rf"{AT}: colour: Extra inputs are not permitted"),
        (_file(ENTRY.replace('"formats"', '"astrology"')), rf"{AT}: topic: Input should be 'formats'"),
        (_file(ENTRY.replace('"tests/a.py::test_b"', '"test_b"')), rf"{AT}: test: String should match"),
        (_file(ENTRY.replace('seed = "000"', "seed = 0")), rf"{AT}: seed: Input should be a valid string"),
        (_file(ENTRY, ENTRY), rf"erratum entry {N + 1} \(x\): id 'x' repeats entry {N}"),
        (_file(ENTRY.replace('id = "x"', 'id = "fp8-42-5-row"')), rf"{N} \(fp8-42-5-row\): id 'fp8-42-5-row' repeats"),
        ("version = 2\n" + _file(), r"unknown top-level keys \['version'\]"),
    ],
)  # fmt: skip
def test_a_corrupted_copy_fails_naming_file_entry_and_field(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(FILE)}: .*{message}"):
        parse(text, FILE)


def test_page_has_an_anchor_and_the_test_per_entry() -> None:
    entry = parse(ENTRY)[0]
    text = pages.errata([entry])
    assert text.startswith("## Formats\n")
    assert "### x { #x }" in text
    assert "**Decided by:** `tests/a.py::test_b`  \n**Source:** s" in text


def test_page_lists_every_erratum_under_its_topic() -> None:
    text = pages.errata()
    headings = re.findall(r"^## (\w+)$", text, flags=re.MULTILINE)
    assert headings == [t.capitalize() for t in TOPICS if any(e.topic == t for e in load())]
    assert [m for m in re.findall(r"^### (\S+) \{ #\1 \}$", text, flags=re.MULTILINE)] == [
        e.id for t in TOPICS for e in load() if e.topic == t
    ]
