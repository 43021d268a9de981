"""The chapter's facts as data: ``gpukb/data/distributed/fsdp.toml`` (sources, Composer's mixed-precision modes and
keys, the FSDP1 → FSDP2 map, the mixed-precision fields of both APIs), read into typed models."""

from __future__ import annotations

import functools
from typing import Literal

from pydantic import model_validator

from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_document, validate_entries

FILE = "distributed/fsdp.toml"
TABLES = ("source", "composer_mode", "composer_key", "fsdp_map", "mp_field")

#: A dtype in a Composer mode: ``"none"`` (the parameter's own), ``"compute"`` (the trainer precision's) or a name.
ModeDtype = Literal["none", "compute", "float32", "bfloat16", "float16"]


class Source(StrictModel):
    """A primary source: what it is, where (repository, pinned version, path), its URL and the date checked."""

    id: str
    title: str
    repository: str
    version: str
    path: str
    url: str
    checked: str


class ComposerMode(StrictModel):
    """What one ``mixed_precision`` name sets."""

    mode: Literal["FULL", "DEFAULT", "PURE"]
    param_dtype: ModeDtype
    reduce_dtype: ModeDtype
    buffer_dtype: ModeDtype
    source: str


class ComposerKey(StrictModel):
    """One ``fsdp_config`` key: its default and what it does."""

    key: str
    default: str
    effect: str
    source: str


class FsdpMapping(StrictModel):
    """One FSDP1 argument and its FSDP2 counterpart."""

    fsdp1: str
    fsdp2: str
    note: str
    source: str


class MixedPrecisionField(StrictModel):
    """One field of FSDP1's ``MixedPrecision`` or FSDP2's ``MixedPrecisionPolicy``."""

    api: Literal["FSDP1 MixedPrecision", "FSDP2 MixedPrecisionPolicy"]
    field: str
    default: str
    meaning: str
    source: str


class FsdpFacts(StrictModel):
    """The whole file; every ``source`` field must name a ``[[source]]`` id."""

    source: list[Source]
    composer_mode: list[ComposerMode]
    composer_key: list[ComposerKey]
    fsdp_map: list[FsdpMapping]
    mp_field: list[MixedPrecisionField]

    @model_validator(mode="after")
    def _sources_exist(self) -> FsdpFacts:
        ids = {s.id for s in self.source}
        for table in ("composer_mode", "composer_key", "fsdp_map", "mp_field"):
            for entry in getattr(self, table):
                if entry.source not in ids:
                    raise ValueError(f"{table} entry cites unknown source {entry.source!r}; sources are {sorted(ids)}")
        return self


def parse(text: str, file: str = FILE) -> FsdpFacts:
    """Parse and validate the data file's text (duplicates of a source id or a mode are refused)."""
    data = parse_toml(text, file, TABLES)
    validate_entries(Source, data.get("source"), file, "source")
    validate_entries(ComposerMode, data.get("composer_mode"), file, "composer_mode", key="mode")
    validate_entries(ComposerKey, data.get("composer_key"), file, "composer_key", key="key")
    return validate_document(FsdpFacts, data, file)


@functools.cache
def facts() -> FsdpFacts:
    """The packaged data file, parsed once."""
    return parse(data_text(FILE))


def source(source_id: str) -> Source:
    """The source with this id.

    Raises:
        ValueError: For an unknown id (the message lists them).
    """
    for s in facts().source:
        if s.id == source_id:
            return s
    raise ValueError(f"unknown source {source_id!r}; sources are {[s.id for s in facts().source]}")
