"""The glossary: each term the site uses, defined in the site's words, with the page that shows it and a primary
source, as data (``gpukb/data/glossary.toml``).

The glossary page renders it (:func:`gpukb.site.pages.glossary`), and every page gets its terms as
abbreviations (:func:`hover_texts`, given to the abbr extension by the MkDocs hook), so prose shows a term's
definition on hover.
"""

from __future__ import annotations

import re
from functools import cache

from pydantic import Field, field_validator

from gpukb.arguments import given
from gpukb.arguments import text as text_arg
from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_entries

#: The data file, inside the package ``gpukb.data``.
DATA_FILE = "glossary.toml"

#: A page of the site, optionally with an anchor: ``cuda/execution.md`` or ``cuda/execution.md#occupancy``.
PAGE = r"^[a-z0-9-]+/[a-z0-9-]+\.md(#[a-z0-9-]+)?$"


class Term(StrictModel):
    """One glossary entry.

    Attributes:
        id: Anchor on the glossary page.
        term: The term as the entry's heading shows it.
        forms: The spellings that get the definition on hover wherever prose uses them, case-sensitive whole words
            (``"SM"``, ``"SMs"``); empty for a term too common as a plain word to mark everywhere.
        definition: One or two sentences in the site's words.
        page: The page of this site that shows it at work.
        source: The primary source of the definition.
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    term: str = Field(pattern=r"\S")
    forms: list[str] = Field(default_factory=list)
    definition: str = Field(pattern=r"\S")
    page: str = Field(pattern=PAGE)
    source: str = Field(pattern=r"\S")

    @field_validator("forms")
    @classmethod
    def _words(cls, forms: list[str]) -> list[str]:
        for form in forms:
            if not re.fullmatch(r"[\w][\w .+/-]*[\w+]|\w", form):
                raise ValueError(f"{form!r} is not a word or phrase the abbreviations can match")
        return forms

    @field_validator("definition")
    @classmethod
    def _one_line_on_hover(cls, text: str) -> str:
        if "\n" in text.strip() or '"' in text:
            raise ValueError("a definition is one paragraph without double quotes (it becomes a hover text)")
        return text


def parse(text: str, file: str = DATA_FILE) -> tuple[Term, ...]:
    """Validate the glossary file's text.

    Raises:
        TypeError: If ``text`` or ``file`` is not a string.
        ValueError: Naming the file, the entry and the field; for a repeated id, or a form two entries claim.
    """
    text_arg("file", file)
    text_arg("text", text, max_length=10_000_000)
    data = parse_toml(text, file, ("term",))
    terms = tuple(validate_entries(Term, data.get("term"), file, "term", key="id"))
    owner: dict[str, str] = {}
    for t in terms:
        for form in t.forms:
            if form in owner:
                raise ValueError(f"{file}: the form {form!r} belongs to both {owner[form]!r} and {t.id!r}")
            owner[form] = t.id
    return terms


@cache
def load() -> tuple[Term, ...]:
    """The packaged glossary, parsed once."""
    return parse(data_text(DATA_FILE))


def hover_texts(terms: tuple[Term, ...] | None = None) -> dict[str, str]:
    """Each form of each term → the text shown on hover (``"SM: streaming multiprocessor (SM): The unit ..."``),
    the glossary the abbreviation extension applies to every page.

    Raises:
        TypeError: If ``terms`` is neither ``None`` nor a tuple or list of :class:`Term`.
    """
    terms = load() if terms is None else terms
    if not isinstance(terms, tuple | list) or not all(isinstance(t, Term) for t in terms):
        raise TypeError(f"terms must be a tuple of glossary Terms (or None: the packaged glossary); got {given(terms)}")
    return {form: f"{t.term}: {t.definition}" for t in terms for form in t.forms}
