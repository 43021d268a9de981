"""The chapter's primary sources as data: ``gpukb/data/parallelism/sources.toml``, read into typed entries."""

from __future__ import annotations

import functools

from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_document, validate_entries

FILE = "parallelism/sources.toml"


class Source(StrictModel):
    """A paper or a piece of PyTorch: what it is, which version, where, what the chapter takes from it."""

    id: str
    title: str
    authors: str
    version: str
    url: str
    supports: str
    checked: str


class Sources(StrictModel):
    """The whole file."""

    source: list[Source]


def parse(text: str, file: str = FILE) -> Sources:
    """Parse and validate the file's text (a repeated id is refused).

    Raises:
        ValueError: Naming the file, the entry and the field of any error.
    """
    data = parse_toml(text, file, ("source",))
    validate_entries(Source, data.get("source"), file, "source")
    return validate_document(Sources, data, file)


@functools.cache
def sources() -> tuple[Source, ...]:
    """The packaged sources, parsed once."""
    return tuple(parse(data_text(FILE)).source)


def source(source_id: str) -> Source:
    """The source with this id.

    Raises:
        ValueError: For an unknown id (the message lists them).
    """
    for s in sources():
        if s.id == source_id:
            return s
    raise ValueError(f"unknown source {source_id!r}; sources are {[s.id for s in sources()]}")
