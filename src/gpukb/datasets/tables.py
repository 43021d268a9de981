"""The catalog as tables: ``(headers, rows)`` for the pages, the command line and the tests.

Cells are plain values (``str``, ``int``, ``float``); a figure no source states is ``None`` so that a caller can
render it as it likes (the pages print "—"). :mod:`gpukb.datasets.pages` turns these into HTML and Markdown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gpukb import arguments
from gpukb.datasets.catalog import DOMAINS, STATUSES, Catalog, Dataset, Paper, Resource, load

Cell = str | int | float | None

#: Columns of each domain's dataset table: (header, attribute of the domain's facts, or of the entry). Kept to what
#: a reader sorts and filters by, so the table fits a 1400 px screen; access, licence, modality, video and the date
#: checked are on each dataset's card.
COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "eeg": (
        ("dataset", "name"),
        ("task", "task"),
        ("year", "year"),
        ("subjects", "eeg.subjects"),
        ("EEG channels", "eeg.channels"),
        ("rate (Hz)", "eeg.sampling_rate_hz"),
        ("sessions", "eeg.sessions"),
        ("status", "status"),
    ),
    "people": (
        ("dataset", "name"),
        ("task", "task"),
        ("year", "year"),
        ("images", "people.images"),
        ("persons", "people.instances"),
        ("persons / image", "people.persons_per_image"),
        ("status", "status"),
    ),
}


def value(entry: Dataset, attribute: str) -> Cell:
    """One cell: an attribute of the entry (``"name"``), of its facts (``"eeg.channels"``) or of its verification.

    Raises:
        ValueError: For an attribute no entry has.
    """
    if attribute == "status":
        return entry.verification.status
    if attribute == "checked":
        return entry.verification.checked.isoformat()
    if attribute == "sources":
        return len(entry.verification.sources)
    head, _, tail = attribute.partition(".")
    if tail:
        if head not in DOMAINS:
            raise ValueError(f"unknown attribute {attribute!r}")
        facts = getattr(entry, head)
        if facts is None:
            return None
        if tail not in type(facts).model_fields:
            raise ValueError(f"unknown attribute {attribute!r}")
        raw = getattr(facts, tail)
    else:
        if head not in Dataset.model_fields:
            raise ValueError(f"unknown attribute {attribute!r}")
        raw = getattr(entry, head)
    if isinstance(raw, bool):
        return "yes" if raw else "no"
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, list):
        return ", ".join(raw) if raw else None
    return raw


def select(
    catalog: Catalog,
    *,
    status: str | None = None,
    text: str | None = None,
    min_subjects: int | None = None,
) -> list[Dataset]:
    """The entries of a catalog that match every filter given.

    Args:
        catalog: One domain's catalog.
        status: Keep only this verification status.
        text: Keep entries whose name, aliases, task or paradigm contain this text (case ignored).
        min_subjects: Keep EEG entries with at least this many subjects (entries without a count are dropped).

    Raises:
        ValueError: For an unknown status, or ``min_subjects`` on a domain without subjects.
    """
    if not isinstance(catalog, Catalog):
        raise TypeError(f"catalog must be a Catalog (from gpukb.datasets.catalog.load); got {type(catalog).__name__}")
    if text is not None and not isinstance(text, str):
        raise TypeError(f"text must be a string or None; got {text!r} ({type(text).__name__})")
    if min_subjects is not None:
        min_subjects = arguments.non_negative_int("min_subjects", min_subjects)
    if status is not None and status not in STATUSES:
        raise ValueError(f"unknown status {status!r}; statuses: {', '.join(STATUSES)}")
    if min_subjects is not None and catalog.domain != "eeg":
        raise ValueError(f"min_subjects applies to EEG entries, not to {catalog.domain!r}")
    chosen = []
    for entry in catalog.datasets:
        if status is not None and entry.status != status:
            continue
        if text is not None:
            paradigm = entry.eeg.paradigm if entry.eeg is not None else None
            haystack = " ".join([entry.name, *entry.aliases, entry.task or "", paradigm or ""]).casefold()
            if text.casefold() not in haystack:
                continue
        if min_subjects is not None:
            subjects = entry.eeg.subjects if entry.eeg is not None else None
            if subjects is None or subjects < min_subjects:
                continue
        chosen.append(entry)
    return chosen


def dataset_table(domain: str, entries: Sequence[Dataset] | None = None) -> tuple[list[str], list[list[Cell]]]:
    """The domain's dataset table: one row per entry, in file order (or the entries given).

    Raises:
        ValueError: For an unknown domain.
    """
    arguments.choice("domain", domain, tuple(COLUMNS))
    chosen = load(domain).datasets if entries is None else entries
    if isinstance(chosen, str | bytes) or not all(isinstance(e, Dataset) and e.domain == domain for e in chosen):
        raise TypeError(f"entries must be {domain} datasets from the catalog (or None for all); got {chosen!r:.80}")
    columns = COLUMNS[domain]
    return [h for h, _ in columns], [[value(e, a) for _, a in columns] for e in chosen]


def status_counts(catalogs: dict[str, Catalog] | None = None) -> tuple[list[str], list[list[Cell]]]:
    """Entries per domain and status, datasets and papers counted apart.

    Args:
        catalogs: The catalogs to count (default: every domain's).
    """
    catalogs = catalogs if catalogs is not None else {d: load(d) for d in DOMAINS}
    rows: list[list[Cell]] = []
    for domain, cat in catalogs.items():
        kinds = (("datasets", cat.datasets), ("papers", cat.papers), ("libraries and archives", cat.resources))
        for kind, entries in kinds:
            if not entries:
                continue
            counts = Counter(e.verification.status for e in entries)
            rows.append([domain, kind, *(counts.get(s, 0) for s in STATUSES), len(entries)])
    return ["domain", "entries", *STATUSES, "total"], rows


def paper_table(domain: str = "eeg") -> tuple[list[str], list[list[Cell]]]:
    """The papers a summary cited, with the result it claimed and the verdict."""
    cat = load(domain)
    names = {d.id: d.name for d in cat.datasets}
    rows = [
        [p.title, p.year, p.claimed, names.get(p.dataset) if p.dataset else None, p.verification.status, p.reported]
        for p in cat.papers
    ]
    return ["title as cited", "year", "claimed", "cited for", "status", "what the sources report"], rows


def resource_table(domain: str = "eeg") -> tuple[list[str], list[list[Cell]]]:
    """Libraries and archives: name, kind, version read, license, status."""
    rows = [[r.name, r.kind, r.version, r.license, r.verification.status] for r in load(domain).resources]
    return ["name", "kind", "version read", "license", "status"], rows


def sources_of(entry: Dataset | Paper | Resource) -> list[tuple[str, str, str]]:
    """The entry's sources as ``(kind, title, url)``."""
    return [(s.kind, s.title, s.url) for s in entry.verification.sources]
