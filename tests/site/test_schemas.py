"""Every data file and every results kind has a published JSON Schema (the site's "Files and their schemas" page)."""

from __future__ import annotations

import json

from gpukb import records
from gpukb.site.schemas import data_files, schemas
from tests.helpers import ROOT


def test_every_data_file_has_a_schema() -> None:
    data = ROOT / "src" / "gpukb" / "data"
    files = sorted(p.relative_to(data).as_posix() for p in data.rglob("*.toml"))
    assert sorted({file for file, _, _ in data_files()}) == files


def test_every_results_kind_has_a_schema_equal_to_its_model() -> None:
    published = {s.name: json.loads(s.text) for s in schemas()}
    for kind in records.KINDS:
        assert published[f"results-{kind}.json"] == records.model_for(kind).model_json_schema()


def test_schema_names_are_unique() -> None:
    names = [s.name for s in schemas()]
    assert len(names) == len(set(names))
