"""The errata of the source notes, as data: claim, truth, and the test that decides.

Entries live in ``gpukb/data/errata.toml``; chapters append to it, and the errata page renders it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from importlib import resources

#: Topics an erratum may belong to: the chapters of the site.
TOPICS = ("formats", "gemm", "cuda", "cudnn", "attention", "distributed", "datasets", "performance")


@dataclass(frozen=True)
class Erratum:
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

    id: str
    topic: str
    seed: str
    claim: str
    truth: str
    test: str
    source: str


def parse(data: dict) -> list[Erratum]:
    """Validate parsed TOML and build the entries.

    Raises:
        ValueError: For a missing or unknown field, an unknown topic, a duplicate id or a test that is not
            a ``tests/...::name`` node id; the message names the entry and what is allowed.
    """
    names = [f.name for f in fields(Erratum)]
    entries, seen = [], set()
    for index, raw in enumerate(data.get("erratum", [])):
        label = f"erratum #{index + 1} ({raw.get('id', 'no id')})"
        missing = [n for n in names if not isinstance(raw.get(n), str) or not raw[n].strip()]
        unknown = sorted(set(raw) - set(names))
        if missing or unknown:
            raise ValueError(f"{label}: missing or empty {missing}, unknown {unknown}; fields are {names}")
        if raw["topic"] not in TOPICS:
            raise ValueError(f"{label}: topic {raw['topic']!r} is not one of {list(TOPICS)}")
        if raw["id"] in seen:
            raise ValueError(f"{label}: id {raw['id']!r} is used twice")
        if not (raw["test"].startswith("tests/") and ".py::" in raw["test"]):
            raise ValueError(f"{label}: test {raw['test']!r} must be a node id like tests/x/test_y.py::test_z")
        seen.add(raw["id"])
        entries.append(Erratum(**raw))
    return entries


def load() -> list[Erratum]:
    """The project's errata, validated."""
    text = resources.files("gpukb.data").joinpath("errata.toml").read_text(encoding="utf-8")
    return parse(tomllib.loads(text))


def as_markdown(entries: list[Erratum]) -> str:
    """Render entries as the errata page shows them: one admonition each, grouped by topic."""
    out = []
    for topic in TOPICS:
        chosen = [e for e in entries if e.topic == topic]
        if not chosen:
            continue
        out.append(f"## {topic.capitalize()}\n")
        for e in chosen:
            out.append(f"### {e.id} {{ #{e.id} }}\n")
            out.append(f"**The notes claim** ({e.seed}): {e.claim}\n")
            out.append(f"**What is true:** {e.truth}\n")
            out.append(f"**Decided by:** `{e.test}`  \n**Source:** {e.source}\n")
    return "\n".join(out)
