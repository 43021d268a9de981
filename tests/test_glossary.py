"""The glossary: at least 100 terms, each pointing at a page that exists, and no term the prose uses often without
an entry (or a stated reason it is not a term)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from gpukb import glossary
from tests.helpers import ROOT

#: Capitalised words the prose uses that are names or common computing words rather than terms to define.
NOT_TERMS = {
    "CPU": "a common computing word",
    "NVIDIA": "a company",
    "AMD": "a company",
    "API": "a common computing word",
    "CI": "the project's continuous integration, explained where it is used",
    "README": "the repository's README file",
    "JSON": "a file format the reader knows",
    "GB": "a unit",
    "MB": "a unit",
    "ICLR": "a conference, named in citations",
    "IEEE": "an organisation; its standard is the term IEEE 754",
    "KV": "only ever part of KV cache or KV heads, which are terms",
    "V3": "a version number",
    "QK": "the product of Q and K transposed, written out where it is used",
    "BERT": "a model's name (BERT-base, BERT-large), used where its layers' sizes are",
    "LM": "only ever part of LM head, a model layer's name, used where its sizes are",
}


def _prose_words() -> Counter[str]:
    """Capitalised tokens (2-8 letters or digits) in the prose of every page, code, math and links left out."""
    found: Counter[str] = Counter()
    for page in (ROOT / "docs").rglob("*.md"):
        if "reference" in page.relative_to(ROOT / "docs").parts:
            continue
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        text = re.sub(r"`[^`]*`", "", text)
        text = re.sub(r"\\\((.*?)\\\)|\$\$.*?\$\$", "", text, flags=re.S)  # \(PV\) is a product, not a term
        text = re.sub(r"\]\([^)]*\)", "]", text)
        found.update(re.findall(r"\b[A-Z][A-Z0-9]{1,7}\b", text))
    return found


def test_the_glossary_has_at_least_100_terms() -> None:
    assert len(glossary.load()) >= 100


def test_each_term_points_at_a_page_that_exists() -> None:
    """(An anchor, where a term has one, is checked in the built site by tests/site/test_links.py.)"""
    missing = [(t.id, t.page) for t in glossary.load() if not (ROOT / "docs" / t.page.partition("#")[0]).is_file()]
    assert missing == []


def test_every_term_the_prose_uses_is_defined() -> None:
    """A capitalised word used three times or more across the pages is a glossary form or a stated non-term."""
    forms = set(glossary.hover_texts())
    missing = sorted(w for w, n in _prose_words().items() if n >= 3 and w not in forms and w not in NOT_TERMS)
    assert missing == [], f"terms used in prose with no glossary entry: {missing}"


def test_a_form_two_terms_claim_is_refused() -> None:
    entry = (
        '[[term]]\nid = "{id}"\nterm = "t"\nforms = ["SM"]\ndefinition = "d"\npage = "cuda/index.md"\nsource = "s"\n'
    )
    with pytest.raises(ValueError, match="the form 'SM' belongs to both 'a' and 'b'"):
        glossary.parse(entry.format(id="a") + entry.format(id="b"), "g.toml")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("forms", '["a b!"]', "is not a word or phrase"),
        ("definition", '"says \\"hi\\""', "without double quotes"),
        ("page", '"cuda/index.html"', "String should match pattern"),
    ],
)
def test_a_bad_entry_is_refused_naming_the_field(field: str, value: str, message: str) -> None:
    fields = {"id": '"a"', "term": '"t"', "forms": "[]", "definition": '"d"', "page": '"cuda/index.md"'}
    fields["source"] = '"s"'
    fields[field] = value
    text = "[[term]]\n" + "".join(f"{k} = {v}\n" for k, v in fields.items())
    with pytest.raises(ValueError, match=rf"g\.toml: term entry 1 \(a\): {field}: .*{message}"):
        glossary.parse(text, "g.toml")
