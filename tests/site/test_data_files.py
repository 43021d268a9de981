"""Every data file under src/gpukb/data is read strictly: corrupt it and the loader refuses it with a ValueError that
names the file and what is wrong, never a raw KeyError/TypeError and never silently.

One parametrized test across the files: each TOML file is parsed with ``tomllib``, corrupted as a dict (an unknown
key in an entry and at the top, a duplicated entry, a string where a list or number belongs, each field removed in
turn), written back as TOML and handed to the file's own parser; each committed record (JSON) the same way through
``gpukb.records``. Every data file must be listed here: a new file without its loader fails
:func:`test_every_data_file_is_covered`.
"""

from __future__ import annotations

import copy
import datetime
import json
import math
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpukb.bench import specs
from gpukb.cuda import limits as cuda_limits
from gpukb.cudnn import cnn as cudnn_cnn
from gpukb.cudnn import facts as cudnn_facts
from gpukb.cudnn import layers as cudnn_layers
from gpukb.datasets import catalog
from gpukb.distributed import options as distributed_options
from gpukb.errata import parse as parse_errata
from gpukb.formats.mixed_precision import parse_autocast
from gpukb.formats.spec import parse as parse_formats
from gpukb.gemm import types
from gpukb.kernels import model_shapes
from gpukb.records import store
from gpukb.schema import parse_toml
from gpukb.sequences import bleu, worked_example
from gpukb.site.breaking import parse_fuzz, parse_mutation
from tests.helpers import ROOT

DATA = ROOT / "src" / "gpukb" / "data"


def _gemm(name: str) -> Callable[[str], object]:
    file = f"gpukb/data/gemm/{name}"
    return lambda text: types.parse(parse_toml(text, file, types.FILE_KEYS), file)


#: Each TOML data file: its parser (text -> model) and the array of tables whose entries are corrupted.
TOML_FILES: dict[str, tuple[Callable[[str], object], str]] = {
    "formats.toml": (lambda text: parse_formats(text, "formats.toml"), "format"),
    "errata.toml": (lambda text: parse_errata(text, "errata.toml"), "erratum"),
    "autocast.toml": (lambda text: parse_autocast(text, "autocast.toml"), "list"),
    "gpu_specs.toml": (lambda text: specs.parse(text, "gpu_specs.toml"), "gpu"),
    "datasets/eeg.toml": (lambda text: catalog.loads(text, file="eeg.toml", domain="eeg"), "dataset"),
    "datasets/people.toml": (lambda text: catalog.loads(text, file="people.toml", domain="people"), "dataset"),
    "gemm/hipblaslt.toml": (_gemm("hipblaslt.toml"), "group"),
    "gemm/cublaslt.toml": (_gemm("cublaslt.toml"), "group"),
    "mutation.toml": (lambda text: parse_mutation(text, "mutation.toml"), "run"),
    "cuda/limits.toml": (lambda text: cuda_limits.parse(text, "limits.toml"), "capability"),
    "fuzz.toml": (lambda text: parse_fuzz(text, "fuzz.toml"), "target"),
    "sequences/lstm_example.toml": (lambda text: worked_example.parse(text, "lstm_example.toml"), "example"),
    "sequences/bleu_examples.toml": (lambda text: bleu.parse_examples(text, "bleu_examples.toml"), "example"),
    "cudnn/facts.toml": (lambda text: cudnn_facts.parse(text, "facts.toml"), "fact"),
    "cudnn/resnet50_layers.toml": (lambda text: cudnn_layers.parse(text, "resnet50_layers.toml"), "layer"),
    "cudnn/small_cnn.toml": (lambda text: cudnn_cnn.parse(text, "small_cnn.toml"), "example"),
    "distributed/fsdp.toml": (lambda text: distributed_options.parse(text, "fsdp.toml"), "source"),
    "gemm/model_shapes.toml": (lambda text: model_shapes.parse(text, "model_shapes.toml"), "model"),
}
RECORDS = sorted(p.relative_to(DATA).as_posix() for p in (DATA / "results").rglob("*.json"))


def test_every_data_file_is_covered() -> None:
    files = sorted(
        p.relative_to(DATA).as_posix() for p in DATA.rglob("*") if p.is_file() and p.suffix in (".toml", ".json")
    )
    assert sorted(set(files) - set(TOML_FILES) - set(RECORDS)) == []


def _value(v: Any) -> str:
    """A value as inline TOML."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v == math.inf else "-inf" if v == -math.inf else repr(v))
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, datetime.date | datetime.datetime | datetime.time):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def to_toml(data: dict[str, Any]) -> str:
    return "".join(f"{json.dumps(k)} = {_value(v)}\n" for k, v in data.items())


def _refused(parse: Callable[[str], object], data: dict[str, Any], *names: str) -> str:
    """Parse the corrupted data; it must be refused with a ValueError naming each of ``names``."""
    with pytest.raises(ValueError, match=r".") as info:
        parse(to_toml(data))
    message = str(info.value)
    for name in names:
        assert name in message, f"the message does not name {name!r}: {message}"
    return message


@pytest.mark.parametrize("file", sorted(TOML_FILES))
def test_the_file_round_trips(file: str) -> None:
    parse, _ = TOML_FILES[file]
    text = (DATA / file).read_text(encoding="utf-8")
    # the writer above loses nothing the parser needs: the rewritten file reads back as the same model
    assert parse(to_toml(tomllib.loads(text))) == parse(text)


@pytest.mark.parametrize("file", sorted(TOML_FILES))
def test_unknown_keys_are_refused(file: str) -> None:
    parse, table = TOML_FILES[file]
    data = tomllib.loads((DATA / file).read_text(encoding="utf-8"))
    top = {**copy.deepcopy(data), "misspelt_table": 1}
    _refused(parse, top, "misspelt_table")
    entry = copy.deepcopy(data)
    entry[table][0]["misspelt_field"] = 1
    _refused(parse, entry, "misspelt_field")


@pytest.mark.parametrize("file", sorted(TOML_FILES))
def test_duplicate_entries_are_refused(file: str) -> None:
    parse, table = TOML_FILES[file]
    data = tomllib.loads((DATA / file).read_text(encoding="utf-8"))
    data[table].append(copy.deepcopy(data[table][0]))
    message = _refused(parse, data)
    assert any(word in message for word in ("repeat", "duplicate", "twice", "more than once")), message


@pytest.mark.parametrize("file", sorted(TOML_FILES))
def test_wrong_types_are_refused(file: str) -> None:
    """A string where a list belongs (not split into characters), a list where a string belongs."""
    parse, table = TOML_FILES[file]
    data = tomllib.loads((DATA / file).read_text(encoding="utf-8"))
    first = data[table][0]
    tried = 0
    for key, value in first.items():
        if isinstance(value, list) and value and isinstance(value[0], str):
            bad = copy.deepcopy(data)
            bad[table][0][key] = "abc"
            _refused(parse, bad, key)
            tried += 1
        elif isinstance(value, str):
            bad = copy.deepcopy(data)
            bad[table][0][key] = ["abc"]
            _refused(parse, bad, key)
            tried += 1
    assert tried, f"{file}: no field of the first {table} entry was corrupted"


@pytest.mark.parametrize("file", sorted(TOML_FILES))
def test_a_missing_field_is_named(file: str) -> None:
    """Remove each field of the first entry in turn: the file still parses (the field is optional) or the error
    names the field; never a bare KeyError."""
    parse, table = TOML_FILES[file]
    data = tomllib.loads((DATA / file).read_text(encoding="utf-8"))
    required = []
    for key in data[table][0]:
        bad = copy.deepcopy(data)
        del bad[table][0][key]
        try:
            parse(to_toml(bad))
        except ValueError as err:
            required.append((key, str(err)))
    assert [(key, message) for key, message in required if key not in message] == []
    assert required, f"{file}: every field of a {table} entry is optional?"


@pytest.mark.parametrize("record", RECORDS)
def test_records_are_read_strictly(record: str, tmp_path: Path) -> None:
    data = json.loads((DATA / record).read_text(encoding="utf-8"))

    def refused(corrupt: dict[str, Any], *names: str) -> None:
        path = tmp_path / Path(record).name
        path.write_text(json.dumps(corrupt))
        with pytest.raises(ValueError, match=r".") as info:
            store.read(path)
        assert all(name in str(info.value) for name in names), str(info.value)

    store.read(DATA / record)
    refused({**data, "misspelt_field": 1}, "misspelt_field")
    required = []
    for key, value in data.items():
        if key == "kind":
            continue
        if isinstance(value, dict | list):
            refused({**data, key: "abc"}, key)
        path = tmp_path / "missing.json"
        path.write_text(json.dumps({k: v for k, v in data.items() if k != key}))
        try:
            store.read(path)  # a field with a default (an empty list of failures) may be left out
        except ValueError as err:
            required.append((key, str(err)))
    assert [(key, message) for key, message in required if key not in message] == []
    assert {"schema_version", "run"} <= {key for key, _ in required}
