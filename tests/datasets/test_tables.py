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
