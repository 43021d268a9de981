"""Every cell of the rendered tables against the data file, read with tomllib alone."""

from __future__ import annotations

import tomllib

import pytest

from gpukb.datasets import tables
from gpukb.datasets.catalog import Catalog, load, read_text

RAW = tomllib.loads(read_text("eeg"))


def _expected(entry: dict, attribute: str):
    if attribute == "status":
        return entry["verification"]["status"]
    if attribute == "checked":
        return entry["verification"]["checked"].isoformat()
    domain, _, field = attribute.partition(".")
    value = entry.get(domain, {}).get(field) if field else entry.get(domain)
    if isinstance(value, bool):  # the table spells booleans out
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():  # and drops a trailing .0
        return int(value)
    return value


@pytest.mark.parametrize("domain", ["eeg", "people"])
def test_table_cells_equal_the_data_file(domain: str) -> None:
    raw = tomllib.loads(read_text(domain))
    headers, rows = tables.dataset_table(domain)
    assert headers == [h for h, _ in tables.COLUMNS[domain]]
    assert len(rows) == len(raw["dataset"])
    for entry, row in zip(raw["dataset"], rows, strict=True):
        for (header, attribute), cell in zip(tables.COLUMNS[domain], row, strict=True):
            assert cell == _expected(entry, attribute), (entry["id"], header)


def test_select_filters() -> None:
    eeg = load("eeg")
    verified = tables.select(eeg, status="verified")
    assert [d.id for d in verified] == [e["id"] for e in RAW["dataset"] if e["verification"]["status"] == "verified"]
    big = tables.select(eeg, min_subjects=100)
    assert {d.id for d in big} == {e["id"] for e in RAW["dataset"] if e.get("eeg", {}).get("subjects", 0) >= 100}
    assert [d.id for d in tables.select(eeg, text="bnci2014_001")] == ["bci-iv-2a"]  # aliases count, case ignored
    with pytest.raises(ValueError, match="unknown status 'likely'"):
        tables.select(eeg, status="likely")
    with pytest.raises(ValueError, match="min_subjects applies to EEG entries"):
        tables.select(Catalog(domain="people", file="people.toml", datasets=()), min_subjects=3)


def test_status_counts_add_up() -> None:
    headers, rows = tables.status_counts({"eeg": load("eeg")})
    assert headers == ["domain", "entries", "verified", "corrected", "unconfirmed", "total"]
    by_kind = {r[1]: r[2:] for r in rows}
    statuses = [e["verification"]["status"] for e in RAW["dataset"]]
    assert by_kind["datasets"] == [statuses.count(s) for s in ("verified", "corrected", "unconfirmed")] + [
        len(statuses)
    ]
    assert by_kind["papers"] == [0, 0, len(RAW["paper"]), len(RAW["paper"])]
    assert by_kind["libraries and archives"][-1] == len(RAW["resource"])


def test_paper_and_resource_tables() -> None:
    _headers, rows = tables.paper_table("eeg")
    assert [r[0] for r in rows] == [p["title"] for p in RAW["paper"]]
    assert [r[2] for r in rows] == [p["claimed"] for p in RAW["paper"]]
    names = {d["id"]: d["name"] for d in RAW["dataset"]}
    assert [r[3] for r in rows] == [names[p["dataset"]] for p in RAW["paper"]]
    headers, rows = tables.resource_table()  # the EEG catalog's, by default
    assert headers == ["name", "kind", "version read", "license", "status"]
    assert rows == [[r["name"], r["kind"], r.get("version"), r.get("license"), r["verification"]["status"]]
                    for r in RAW["resource"]]  # fmt: skip


def test_unknown_attributes_and_domains_are_refused() -> None:
    entry = load("eeg").datasets[0]
    assert tables.value(entry, "eeg.subjects") == 9
    assert tables.value(entry, "people.images") is None
    assert tables.value(entry, "sources") == 2
    for bad in ("eeg.electrodes", "weight", "audio.rate"):
        with pytest.raises(ValueError, match=f"unknown attribute '{bad}'"):
            tables.value(entry, bad)
    with pytest.raises(ValueError, match="unknown domain 'audio'"):
        tables.dataset_table("audio")


@pytest.mark.parametrize("domain", ["eeg", "people"])
def test_every_attribute_of_every_entry_is_the_data_files(domain: str) -> None:
    """value() for every fact of every entry, not only the columns a page shows: lists joined (an empty one is no
    value), booleans spelled out, whole floats as ints, the sources counted."""
    from gpukb.datasets.catalog import Dataset

    raw = tomllib.loads(read_text(domain))
    cat = load(domain)
    facts = type(getattr(next(d for d in cat.datasets if getattr(d, domain) is not None), domain))
    attributes = ["status", "checked", "sources", *(f"{domain}.{f}" for f in facts.model_fields)]
    attributes += [f for f in Dataset.model_fields if f not in ("verification", "eeg", "people", "aliases")]
    for entry, parsed in zip(raw["dataset"], cat.datasets, strict=True):
        for attribute in attributes:
            sources = len(entry["verification"].get("sources", []))
            want = sources if attribute == "sources" else _expected(entry, attribute)
            if isinstance(want, list):
                want = ", ".join(want) or None
            assert tables.value(parsed, attribute) == want, (entry["id"], attribute)


def test_select_keeps_the_boundary_and_searches_task_and_paradigm() -> None:
    eeg = load("eeg")
    counted = next(e for e in RAW["dataset"] if e.get("eeg", {}).get("subjects"))
    at_least = {d.id for d in tables.select(eeg, min_subjects=counted["eeg"]["subjects"])}
    assert counted["id"] in at_least  # "at least": an entry with exactly that many subjects is kept
    assert counted["id"] not in {d.id for d in tables.select(eeg, min_subjects=counted["eeg"]["subjects"] + 1)}
    for field in ("task", "paradigm"):
        entry = next(e for e in RAW["dataset"] if (e.get(field) or e.get("eeg", {}).get(field)))
        said = entry.get(field) or entry["eeg"][field]
        assert entry["id"] in {d.id for d in tables.select(eeg, text=said.upper())}, field
    for bad, message in ((3, r"^catalog must be a Catalog .*; got int$"), ("eeg", r"; got str$")):
        with pytest.raises(TypeError, match=message):
            tables.select(bad)
    with pytest.raises(TypeError, match=r"^text must be a string or None; got 3 \(int\)$"):
        tables.select(eeg, text=3)
    with pytest.raises(TypeError, match=r"^min_subjects must be an int ≥ 0; got '3' \(str\)$"):
        tables.select(eeg, min_subjects="3")
    with pytest.raises(ValueError, match=r"statuses: verified, corrected, unconfirmed$"):
        tables.select(eeg, status="likely")


def test_tables_take_the_entries_given_and_default_to_eeg() -> None:
    eeg = load("eeg")
    _, rows = tables.dataset_table("eeg", eeg.datasets[1:3])
    assert rows == tables.dataset_table("eeg")[1][1:3]
    assert tables.paper_table() == tables.paper_table("eeg")
    with pytest.raises(TypeError, match=r"^entries must be eeg datasets from the catalog \(or None for all\); got 'x'"):
        tables.dataset_table("eeg", "x")
    for entry in eeg.datasets:  # every entry found by its own name, wherever it stands in the file
        assert entry.id in {d.id for d in tables.select(eeg, text=entry.name)}
    assert tables.select(eeg, text="xxxx") == []  # an entry without a task or paradigm matches nothing extra
    people = tables.status_counts({"people": load("people")})[1]
    assert [r[1] for r in people] == [
        k
        for k, n in (
            ("datasets", 1),
            ("papers", len(load("people").papers)),
            ("libraries and archives", len(load("people").resources)),
        )
        if n
    ]
