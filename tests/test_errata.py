"""The errata data file is well formed, every erratum names a test that exists, the errata page renders it, and no
page or data file points the reader at source files they have never seen."""

from __future__ import annotations

import ast
import re
from importlib import resources

import pytest

from gpukb import chapters
from gpukb.errata import load, parse, topics
from gpukb.gemm.pages.type_tables import type_notes_errata
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
claimed_in = "lecture slides on number formats"
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
        (_file(ENTRY.replace('"formats"', '"astrology"')), rf"{AT}: topic: Value error, 'astrology' is not a chapter; "
            "chapters: formats, gemm"),
        (_file(ENTRY.replace('"tests/a.py::test_b"', '"test_b"')), rf"{AT}: test: String should match"),
        (_file(ENTRY.replace('claimed_in = "lecture slides on number formats"', "claimed_in = 0")),
         rf"{AT}: claimed_in: Input should be a valid string"),
        (_file(ENTRY.replace('claimed_in = "lecture slides on number formats"', 'seed = "000"')),
         rf"{AT}: claimed_in: Field required; seed: Extra inputs are not permitted"),
        (_file(ENTRY.replace("lecture slides on number formats", "000_f9967bbdf790133a.txt, section 'FP8'")),
         rf"{AT}: claimed_in: Value error, names a file or a seed \('000_f9967bbdf790133a'\)"),
        (_file(ENTRY.replace("lecture slides on number formats", "seed 002, precision table")),
         rf"{AT}: claimed_in: Value error, names a file or a seed \('seed'\)"),
        (_file(ENTRY.replace("lecture slides on number formats", "the page docs/gemm/type-tables.md")),
         rf"{AT}: claimed_in: Value error, names a file or a seed \('s.md'\)"),
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
    assert text.startswith("## Number formats { #formats }\n")
    assert "### x { #x }" in text
    assert "**Decided by:** `tests/a.py::test_b`  \n**Source:** s" in text
    assert "**A claim you may meet** in lecture slides on number formats: c" in text


def test_page_lists_every_erratum_under_its_topic() -> None:
    text = pages.errata()
    headings = re.findall(r"^## (.+) \{ #\w+ \}$", text, flags=re.MULTILINE)
    titles = {c.name: c.title for c in chapters.chapters()}
    assert headings == [titles[t] for t in topics() if any(e.topic == t for e in load())]
    assert [m for m in re.findall(r"^### (\S+) \{ #\1 \}$", text, flags=re.MULTILINE)] == [
        e.id for t in topics() for e in load() if e.topic == t
    ]


# --- pages stand on their own ------------------------------------------------------------------------------------

#: Ways a page could point its reader at sources they have never seen: a collected file's name, a numbered seed, a
#: lab or problem number, or "the notes" / "the slides" as if the reader had them. "notes" and "seed" alone stay
#: allowed: a run's notes, a random seed and the notes under a table are ordinary English.
SOURCE_REFERENCE = re.compile(
    r"\b\d{3}_[0-9a-f]{16}\b"  # a collected file's name, 000_f9967bbdf790133a.txt
    r"|shared/seeds|\bseed \d{3}\b|\bseed files?\b"  # "seed 002"
    r"|\b(?:lab|problem) \d+\b"  # "LAB 2 Problem 4"
    r"|\b(?:the|these|those|our|my|personal|source) (?:source |personal |lecture )?(?:notes|slides)\b"
    r"|\b(?:notes|slides)'",  # "the notes' stack", "the slides' formula"
    re.IGNORECASE,
)


def _texts() -> list[tuple[str, str]]:
    """(where, text) for every page source, every data file, every erratum field and the rendered corrections."""
    out = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in sorted((ROOT / "docs").rglob("*.md"))]
    data = ROOT / "src/gpukb/data"
    out += [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in sorted(data.rglob("*.toml"))]
    out += [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in sorted(data.rglob("*.json"))]
    for e in load():
        out += [(f"erratum {e.id}: {field}", getattr(e, field)) for field in ("claimed_in", "claim", "truth", "source")]
    out += [
        ("gpukb.site.pages.errata()", pages.errata()),
        ("gpukb.gemm.pages.type_tables.type_notes_errata()", type_notes_errata()),
    ]
    return out


@pytest.mark.parametrize(
    "bad",
    ["see 000_f9967bbdf790133a.txt", "The slides (seed 002)", "LAB 2 Problem 4", "the notes' stack",
     "What the notes got wrong", "The source notes walk 42.5", "these slides say", "the lecture slides' point"],
)  # fmt: skip
def test_the_pattern_catches_references_to_unseen_sources(bad: str) -> None:
    assert SOURCE_REFERENCE.search(bad)


@pytest.mark.parametrize(
    "fine",
    ["the run's notes", "across several seeds", "(seed 0)", "`default_rng(seed)`", "notes_said",
     "lecture slides on DNN computing", "A claim you may meet", "docs/stable/notes/cuda.html", "release notes"],
)  # fmt: skip
def test_the_pattern_allows_ordinary_words(fine: str) -> None:
    assert not SOURCE_REFERENCE.search(fine)


def test_no_page_or_data_file_names_a_source_the_reader_never_saw() -> None:
    found = [f"{where}: {m.group(0)!r}" for where, text in _texts() for m in SOURCE_REFERENCE.finditer(text)]
    assert not found, "state the fact; describe a claim as one a reader may meet, never by its file:\n" + "\n".join(
        found
    )


def test_errata_page_does_not_call_itself_errata_of_notes() -> None:
    page = (ROOT / "docs/about/errata.md").read_text(encoding="utf-8")
    assert page.startswith("# Claims corrected\n")
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "- Claims corrected: about/errata.md" in nav
    assert "notes claim" not in pages.errata()


def test_deciding_tests_are_named_for_the_fact_not_for_a_source() -> None:
    """The errata page shows each deciding test's node id, so its name is page text too."""
    named = [e.test for e in load() if re.search(r"::test_(?:notes|seed|slides)_", e.test)]
    assert not named
