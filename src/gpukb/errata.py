"""Claims a reader may meet, corrected, as data: where the claim is met, the claim, the truth, the deciding test.

Entries live in ``gpukb/data/errata.toml``; chapters append to it, and the errata page renders it
(``gpukb.site.pages.errata``).
"""

from __future__ import annotations

import re
from functools import cache

from pydantic import Field, field_validator

from gpukb import chapters
from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_entries


def topics() -> tuple[str, ...]:
    """Topics an erratum may belong to: the chapters of the site (their declarations), in their order."""
    return tuple(c.name for c in chapters.chapters() if c.package != "gpukb.site")


#: The data file, inside the package ``gpukb.data``.
DATA_FILE = "errata.toml"

#: Text that is not empty or blank.
_TEXT = r"\S"

#: What ``claimed_in`` may not contain: a reader has never seen the files a claim was first collected from, so a
#: source is described in words. Refused: a collected file's name (three digits, an underscore, sixteen hex
#: digits), any name ending in .txt, .md, .py, .toml or .json, and the word "seed".
FILE_NAME = re.compile(r"\b\d{3}_[0-9a-f]{16}\b|\w\.(txt|md|py|toml|json)\b|\bseeds?\b", re.IGNORECASE)


class Erratum(StrictModel):
    """A claim a reader may meet, and what is true instead.

    Attributes:
        id: Short stable identifier, used as the anchor on the errata page.
        topic: The chapter it belongs to, one of :func:`topics`.
        claimed_in: Where a reader may meet the claim, as a kind of source ("lecture slides on ..., a table of
            precisions", "a Q&A answer on ...", "an earlier version of this site's ... page"): never a file name.
        claim: What the claim says, paraphrased.
        truth: What is true instead.
        test: The pytest node id (``tests/...py::test_name``) whose assertions decide it.
        source: The primary source that confirms the truth.
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    topic: str
    claimed_in: str = Field(pattern=_TEXT)
    claim: str = Field(pattern=_TEXT)
    truth: str = Field(pattern=_TEXT)
    test: str = Field(pattern=r"^tests/\S+\.py::\S+$")
    source: str = Field(pattern=_TEXT)

    @field_validator("topic")
    @classmethod
    def _a_chapter(cls, value: str) -> str:
        if value not in topics():
            raise ValueError(f"{value!r} is not a chapter; chapters: {', '.join(topics())}")
        return value

    @field_validator("claimed_in")
    @classmethod
    def _described_not_named(cls, value: str) -> str:
        found = FILE_NAME.search(value)
        if found:
            raise ValueError(
                f"names a file or a seed ({found.group(0)!r}); describe the kind of source instead, e.g. "
                "'lecture slides on ..., a table of precisions' or 'a Q&A answer on ...'"
            )
        return value


def parse(text: str, file: str = DATA_FILE) -> list[Erratum]:
    """Read the data file's text into entries.

    Raises:
        ValueError: Naming the file, the entry and the field: a TOML error, an unknown key, a missing or blank
            field, a ``claimed_in`` that names a file, an unknown topic, a test that is not a ``tests/...py::name``
            node id, or an id used twice.
    """
    data = parse_toml(text, file, ("erratum",))
    return validate_entries(Erratum, data.get("erratum", []), file, "erratum", key="id")


@cache
def _load() -> tuple[Erratum, ...]:
    return tuple(parse(data_text(DATA_FILE)))


def load() -> list[Erratum]:
    """The project's errata, validated."""
    return list(_load())
