"""The dataset catalogs as typed, validated data.

Each domain has one TOML file under ``gpukb/data/datasets/`` (``eeg.toml``, ``people.toml``) with three kinds of
tables:

- ``[[dataset]]``: a dataset, its key figures, and a verification record (status, date checked, the sources read
  and, where a widely shared summary said something else, what it said);
- ``[[paper]]``: a paper and the result a summary attributed to it, with the same kind of verdict;
- ``[[resource]]``: a library or repository used to get at the datasets (loaders, data archives).

A malformed file raises :class:`ValueError` naming the file, the entry (index and id) and the field, worded as
:mod:`gpukb.schema` words it for every data file of the project.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from gpukb.data import data_text
from gpukb.schema import StrictModel, parse_toml, validate_entries

#: The catalog's domains; each is one file, ``<domain>.toml``.
DOMAINS = ("eeg", "people")
#: Verification verdicts, from strongest to weakest.
STATUSES = ("verified", "corrected", "unconfirmed")
#: Kinds of source a verification may cite.
SOURCE_KINDS = ("homepage", "paper", "repository", "loader", "other")
#: Kinds of resource (libraries and archives, not datasets).
RESOURCE_KINDS = ("loader library", "data repository", "model code", "paper index")

_SLUG = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_ARXIV = re.compile(r"^\d{4}\.\d{4,5}(v\d+)?$")


def _url(value: str) -> str:
    if not re.match(r"^https?://[^\s/]+\.[^\s/]+", value):
        raise ValueError(f"{value!r} is not an http(s) URL")
    return value


def _text(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _slug(value: str) -> str:
    if not _SLUG.match(value):
        raise ValueError(f"{value!r} is not a slug (lower-case letters, digits, '-' and '.')")
    return value


def _doi(value: str) -> str:
    if not _DOI.match(value):
        raise ValueError(f"{value!r} is not a DOI (10.<registrant>/<suffix>, without https://doi.org/)")
    return value


def _arxiv(value: str) -> str:
    if not _ARXIV.match(value):
        raise ValueError(f"{value!r} is not an arXiv id like 1805.00123")
    return value


Text = Annotated[str, AfterValidator(_text)]
Url = Annotated[str, AfterValidator(_url)]
Slug = Annotated[str, AfterValidator(_slug)]
Doi = Annotated[str, AfterValidator(_doi)]
Arxiv = Annotated[str, AfterValidator(_arxiv)]
Year = Annotated[int, Field(ge=1950, le=2100)]
Count = Annotated[int, Field(gt=0)]


class _Model(StrictModel):
    """The catalog's models: the project's strict base (unknown keys and coercion refused, instances frozen)."""


class Source(_Model):
    """A source that was read to check an entry.

    Attributes:
        kind: ``homepage``, ``paper``, ``repository``, ``loader`` (a loader library's code or metadata) or ``other``.
        title: What it is, specific enough to find the passage (file path and version for code).
        url: Where it is.
        said: Optional: what this source states, where sources disagree.
    """

    kind: Literal["homepage", "paper", "repository", "loader", "other"]
    title: Text
    url: Url
    said: Text | None = None


class Verification(_Model):
    """How an entry was checked.

    Attributes:
        status: ``verified`` (the stored figures were read in the sources), ``corrected`` (the entry is real but a
            widely shared summary got something wrong; ``notes_said`` says what) or ``unconfirmed`` (no primary
            source was found; nothing presents it as real).
        checked: The date the sources were read.
        notes_said: What the summary claimed, where it differs.
        sources: The sources read.
    """

    status: Literal["verified", "corrected", "unconfirmed"]
    checked: dt.date
    notes_said: Text | None = None
    sources: list[Source] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Verification:
        if self.status in ("verified", "corrected") and not self.sources:
            raise ValueError(f"status {self.status!r} needs at least one source")
        if self.status in ("corrected", "unconfirmed") and self.notes_said is None:
            raise ValueError(f"status {self.status!r} needs notes_said: the claim that was checked")
        return self


class EegFacts(_Model):
    """Figures of an EEG dataset; a field is left out where no source read states it.

    Attributes:
        subjects: Participants.
        channels: EEG channels (EOG, EMG and other channels are described in the entry's note).
        sampling_rate_hz: Sampling rate of the distributed EEG.
        sessions: Sessions per subject (the maximum, where it varies; the note says how).
        recordings: Recording files or nights in the whole dataset.
        trials: Trials per subject (the note says how they are counted).
        paradigm: What the participants did.
        classes: Labels a decoder predicts.
    """

    subjects: Count | None = None
    channels: Count | None = None
    sampling_rate_hz: Annotated[float, Field(gt=0)] | None = None
    sessions: Count | None = None
    recordings: Count | None = None
    trials: Count | None = None
    paradigm: Text | None = None
    classes: list[Text] | None = None


class PeopleFacts(_Model):
    """Figures of a person-detection dataset; a field is left out where no source read states it.

    Attributes:
        images: Images (or frames, for video datasets).
        instances: Annotated persons (the note says which boxes count).
        persons_per_image: Average persons per image.
        resolution: Image size, as the source states it.
        annotations: Kinds of annotation.
        splits: Images per split.
        video: Whether the data are video sequences.
    """

    images: Count | None = None
    instances: Count | None = None
    persons_per_image: Annotated[float, Field(gt=0)] | None = None
    resolution: Text | None = None
    annotations: list[Text] | None = None
    splits: dict[str, Annotated[int, Field(ge=0)]] | None = None
    video: bool | None = None


class Dataset(_Model):
    """One catalog entry.

    ``task``, ``modality``, ``license`` and ``access`` ("not stated" is a value), and a way to find the dataset
    (``homepage``, ``doi``, ``arxiv`` or ``paper``), may only be left out of an ``unconfirmed`` entry: a name no
    source knows has none of them. A figure no source states, ``year`` included, is left out rather than guessed.
    """

    id: Slug
    name: Text
    aliases: list[Text] = Field(default_factory=list)
    domain: Literal["eeg", "people"]
    task: Text | None = None
    modality: Text | None = None
    year: Year | None = None
    license: Text | None = None
    access: Text | None = None
    homepage: Url | None = None
    paper: Text | None = None
    doi: Doi | None = None
    arxiv: Arxiv | None = None
    note: Text | None = None
    eeg: EegFacts | None = None
    people: PeopleFacts | None = None
    verification: Verification

    @model_validator(mode="after")
    def _consistent(self) -> Dataset:
        other = "people" if self.domain == "eeg" else "eeg"
        if getattr(self, other) is not None:
            raise ValueError(f"a {self.domain!r} entry cannot have a [{other}] table")
        if self.verification.status != "unconfirmed":
            missing = [f for f in ("task", "modality", "license", "access") if getattr(self, f) is None]
            if self.homepage is None and self.doi is None and self.arxiv is None and self.paper is None:
                missing.append("homepage, doi, arxiv or paper")
            if missing:
                raise ValueError(
                    f"a {self.verification.status} entry needs {missing} (only unconfirmed ones may omit them)"
                )
        return self

    @property
    def status(self) -> str:
        """The verification status."""
        return self.verification.status

    @property
    def facts(self) -> EegFacts | PeopleFacts | None:
        """The domain's figures."""
        return self.eeg if self.domain == "eeg" else self.people


class Paper(_Model):
    """A paper a summary cited, with the result it attributed to it, and the verdict.

    Attributes:
        id: Slug.
        title: The title as cited.
        year: The year as cited.
        claimed: The result as cited (for example ``"91.2% accuracy"``).
        dataset: The catalog id of the dataset it was cited for.
        citation: The real reference, where one was found.
        reported: What the real paper reports, where it was found.
        doi: DOI of the real paper.
        arxiv: arXiv id of the real paper.
        note: How it was searched for, caveats.
        verification: Status, date, sources.
    """

    id: Slug
    title: Text
    year: Year | None = None
    claimed: Text | None = None
    dataset: Slug | None = None
    citation: Text | None = None
    reported: Text | None = None
    doi: Doi | None = None
    arxiv: Arxiv | None = None
    note: Text | None = None
    verification: Verification


class Resource(_Model):
    """A library or archive used to reach datasets (not a dataset itself).

    Attributes:
        id: Slug.
        name: Its name.
        kind: ``loader library``, ``data repository``, ``model code`` or ``paper index``.
        homepage: Where it is.
        license: Its license, as stated.
        version: The version read, for code.
        note: What it does for the catalog, caveats.
        verification: Status, date, sources.
    """

    id: Slug
    name: Text
    aliases: list[Text] = Field(default_factory=list)
    kind: Literal["loader library", "data repository", "model code", "paper index"]
    homepage: Url | None = None
    license: Text | None = None
    version: Text | None = None
    note: Text | None = None
    verification: Verification


class Catalog(_Model):
    """One domain's file, validated.

    Attributes:
        domain: ``eeg`` or ``people``.
        file: The file's name, for messages.
        datasets: The ``[[dataset]]`` entries, in file order.
        papers: The ``[[paper]]`` entries.
        resources: The ``[[resource]]`` entries.
    """

    domain: str
    file: str
    datasets: tuple[Dataset, ...]
    papers: tuple[Paper, ...] = ()
    resources: tuple[Resource, ...] = ()

    def get(self, id: str) -> Dataset:
        """The dataset with this id.

        Raises:
            KeyError: If there is none; the message lists the ids.
        """
        for d in self.datasets:
            if d.id == id:
                return d
        raise KeyError(f"no dataset {id!r} in {self.file}; ids: {', '.join(d.id for d in self.datasets)}")


_TABLES: dict[str, type[_Model]] = {"dataset": Dataset, "paper": Paper, "resource": Resource}


def parse(data: dict, *, file: str, domain: str) -> Catalog:
    """Validate a parsed TOML document as one domain's catalog.

    Args:
        data: The document, as :func:`tomllib.loads` returns it.
        file: The file's name, used in messages.
        domain: The domain the file holds; every dataset must belong to it.

    Raises:
        ValueError: For an unknown table, a malformed entry, a duplicate id, name or alias, an entry of another
            domain, or a paper citing a dataset that is not in the file. The message names the file, the entry
            (``eeg.toml: dataset entry 3 (bci-iv-2b)``) and the field, as :mod:`gpukb.schema` words it for every
            data file of the project.
    """
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}; domains: {', '.join(DOMAINS)}")
    unknown = sorted(set(data) - set(_TABLES))
    if unknown:
        raise ValueError(f"{file}: unknown top-level keys {unknown}; this file holds {list(_TABLES)}")
    parsed = {table: validate_entries(model, data.get(table, []), file, table) for table, model in _TABLES.items()}
    for index, d in enumerate(parsed["dataset"], start=1):
        if d.domain != domain:
            raise ValueError(f"{file}: dataset entry {index} ({d.id}): domain: {d.domain!r}, the file holds {domain!r}")
    check_unique([(f"{file}: {t} entry {i} ({e.id})", e) for t in _TABLES for i, e in enumerate(parsed[t], start=1)])
    ids = {d.id for d in parsed["dataset"]}
    for index, p in enumerate(parsed["paper"], start=1):
        if p.dataset is not None and p.dataset not in ids:
            raise ValueError(f"{file}: paper entry {index} ({p.id}): dataset: {p.dataset!r} is not a dataset id here")
    return Catalog(
        domain=domain,
        file=file,
        datasets=tuple(parsed["dataset"]),
        papers=tuple(parsed["paper"]),
        resources=tuple(parsed["resource"]),
    )


def _key(name: str) -> str:
    return re.sub(r"\s+", " ", name).strip().casefold()


def check_unique(labelled: Iterable[tuple[str, Dataset | Paper | Resource]]) -> None:
    """Refuse a duplicate id, or a name or alias shared by two entries (case and spacing ignored).

    Args:
        labelled: ``(label, entry)`` pairs; the label names the file and entry in messages.

    Raises:
        ValueError: Naming both entries and the field.
    """
    ids: dict[str, str] = {}
    names: dict[str, str] = {}
    for label, entry in labelled:
        if entry.id in ids:
            raise ValueError(f"{label}: id: {entry.id!r} is already used by {ids[entry.id]}")
        ids[entry.id] = label
        spelled = [("name", entry.name)] if hasattr(entry, "name") else []
        spelled += [(f"aliases[{i}]", a) for i, a in enumerate(getattr(entry, "aliases", []))]
        for field, text in spelled:
            key = _key(text)
            if key in names and names[key] != label:  # repeating the entry's own name as an alias is only redundant
                raise ValueError(f"{label}: {field}: {text!r} is already a name or alias of {names[key]}")
            names[key] = label


def read_text(domain: str) -> str:
    """The text of a domain's catalog file, from the installed package."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}; domains: {', '.join(DOMAINS)}")
    return data_text(f"datasets/{domain}.toml")


def loads(text: str, *, file: str, domain: str) -> Catalog:
    """Parse and validate a catalog file's text.

    Raises:
        ValueError: For TOML that does not parse (naming the file) or a catalog that does not validate.
    """
    return parse(parse_toml(text, file, _TABLES), file=file, domain=domain)


def parse_file(text: str, file: str) -> Catalog:
    """Parse a catalog file's text; its domain is the file's name (``datasets/eeg.toml`` holds ``eeg``).

    Raises:
        ValueError: For a file named after no domain, TOML that does not parse or a catalog that does not validate.
    """
    domain = file.rsplit("/", 1)[-1].removesuffix(".toml")
    if domain not in DOMAINS:
        raise ValueError(f"{file}: a catalog file is named after its domain, one of {', '.join(DOMAINS)}")
    return loads(text, file=file, domain=domain)


def load(domain: str) -> Catalog:
    """A domain's catalog (``"eeg"`` or ``"people"``), validated.

    Raises:
        ValueError: For an unknown domain or a malformed file.
    """
    return loads(read_text(domain), file=f"{domain}.toml", domain=domain)


def load_all() -> dict[str, Catalog]:
    """Every domain's catalog, with names, aliases and ids unique across all of them."""
    catalogs = {domain: load(domain) for domain in DOMAINS}
    check_unique(
        (f"{c.file}: {t} entry {i} ({e.id})", e)
        for c in catalogs.values()
        for t, entries in (("dataset", c.datasets), ("paper", c.papers), ("resource", c.resources))
        for i, e in enumerate(entries, start=1)
    )
    return catalogs
