"""The chapter's cited facts, from ``gpukb/data/cudnn/facts.toml``: each in the site's words, with its sources,
status, the day checked and the test that holds the code to it."""

from __future__ import annotations

import datetime as dt
from functools import cache
from typing import Literal

from pydantic import Field

from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_entries

FILE = "cudnn/facts.toml"
Topic = Literal["tensor", "convolution", "math", "algorithm"]
Status = Literal["confirmed", "header", "measured", "secondary"]


class Fact(StrictModel):
    """One fact: an id (rule ids of :class:`gpukb.cudnn.descriptors.DescriptorError` are fact ids), its topic,
    its text, source keys, status, the day checked and a test ``path::name``."""

    id: str = Field(pattern=r"^[a-z0-9-]+$")
    topic: Topic
    text: str = Field(min_length=10)
    sources: list[str] = Field(min_length=1)
    status: Status
    checked: dt.date
    test: str = Field(pattern=r"^tests/\S+\.py::test_\w+$")


class Facts(StrictModel):
    sources: dict[str, str]
    facts: list[Fact]


def parse(text: str, file: str = FILE) -> Facts:
    """Parse the facts file.

    Raises:
        ValueError: Naming the file, the entry and the field; also for a source key that ``[sources]`` lacks.
    """
    data = parse_toml(text, file, ("sources", "fact"))
    sources = data.get("sources")
    if not isinstance(sources, dict) or not all(isinstance(v, str) for v in sources.values()):
        raise ValueError(f"{file}: [sources] must map keys to strings")
    facts = validate_entries(Fact, data.get("fact"), file, "fact")
    for fact in facts:
        unknown = [s for s in fact.sources if s not in sources]
        if unknown:
            raise ValueError(f"{file}: fact {fact.id}: unknown sources {unknown}; known: {sorted(sources)}")
    return Facts(sources=sources, facts=facts)


@cache
def load() -> Facts:
    """The committed facts file."""
    return parse(data_text(FILE))


def facts_table(topic: str) -> tuple[list[str], list[list[str]]]:
    """The facts of one topic as (headers, rows): fact, source keys, status and date, the test that holds it.

    The source column names each source by its key; :func:`sources_cited` spells the keys out once per table.
    """
    rows = [
        [f.text, ", ".join(f.sources), f"{f.status}, {f.checked.isoformat()}", f.test]
        for f in load().facts
        if f.topic == topic
    ]
    if not rows:
        raise ValueError(f"no facts of topic {topic!r}; topics: tensor, convolution, math, algorithm")
    return ["fact", "source", "status, checked", "test"], rows


def sources_cited(topic: str) -> list[tuple[str, str]]:
    """``(key, source)`` for every source the facts of one topic cite, in the order of ``[sources]``."""
    facts_table(topic)  # refuses an unknown topic
    data = load()
    used = {s for f in data.facts if f.topic == topic for s in f.sources}
    return [(key, text) for key, text in data.sources.items() if key in used]


def fact(fact_id: str) -> Fact:
    """One fact by id."""
    for f in load().facts:
        if f.id == fact_id:
            return f
    raise ValueError(f"no fact {fact_id!r}; ids: {[f.id for f in load().facts]}")
