"""The errata of the source notes, as data: claim, truth, and the test that decides.

Entries live in ``gpukb/data/errata.toml``; chapters append to it, and the errata page renders it
(``gpukb.site.pages.errata``).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Literal, get_args

from pydantic import Field

from gpukb.schema import StrictModel, parse_toml, validate_entries

#: The chapter an erratum belongs to.
Topic = Literal["formats", "gemm", "cuda", "cudnn", "attention", "distributed", "datasets", "performance"]

#: Topics an erratum may belong to: the chapters of the site, in the order the errata page lists them.
TOPICS: tuple[str, ...] = get_args(Topic)

#: The data file, inside the package ``gpukb.data``.
DATA_FILE = "errata.toml"

#: Text that is not empty or blank.
_TEXT = r"\S"


class Erratum(StrictModel):
    """One mistake in the source notes.

    Attributes:
        id: Short stable identifier, used as the anchor on the errata page.
        topic: The chapter it belongs to, one of ``TOPICS``.
        seed: Which note, and where in it.
        claim: What the note says, paraphrased.
        truth: What is true instead.
        test: The pytest node id (``tests/...py::test_name``) whose assertions decide it.
        source: The primary source that confirms the truth.
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    topic: Topic
    seed: str = Field(pattern=_TEXT)
    claim: str = Field(pattern=_TEXT)
    truth: str = Field(pattern=_TEXT)
    test: str = Field(pattern=r"^tests/\S+\.py::\S+$")
    source: str = Field(pattern=_TEXT)


def parse(text: str, file: str = DATA_FILE) -> list[Erratum]:
    """Read the data file's text into entries.

    Raises:
        ValueError: Naming the file, the entry and the field: a TOML error, an unknown key, a missing or blank
            field, an unknown topic, a test that is not a ``tests/...py::name`` node id, or an id used twice.
    """
    data = parse_toml(text, file, ("erratum",))
    return validate_entries(Erratum, data.get("erratum", []), file, "erratum", key="id")


@cache
def _load() -> tuple[Erratum, ...]:
    return tuple(parse(resources.files("gpukb.data").joinpath(DATA_FILE).read_text(encoding="utf-8")))


def load() -> list[Erratum]:
    """The project's errata, validated."""
    return list(_load())
