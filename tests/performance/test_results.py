"""Sweep records: the committed files validate, a malformed file is refused naming the file and the field, and
what the runner writes reads back unchanged."""

from __future__ import annotations

import copy
import json

import pytest

from gpukb.performance.results import (
    H100_CEILINGS,
    H100_QUICK,
    H100_SWEEP,
    H200_SWEEP,
    SUITES,
    CeilingsRecord,
    SweepRecord,
    file_name,
)
from gpukb.records import load, read, record_ids, results_dir, write

SWEEPS = [i for i in record_ids() if i.startswith("performance/") and i != H100_CEILINGS]
QUICK = json.loads(results_dir().joinpath(*f"{H100_QUICK}.json".split("/")).read_text(encoding="utf-8"))


def test_the_committed_sweeps_are_the_ones_the_pages_name() -> None:
    assert sorted(SWEEPS) == sorted([H100_SWEEP, H100_QUICK, H200_SWEEP])


def test_the_ceilings_run_holds_every_item_in_every_round() -> None:
    """The interleaved ceilings run: every item once per round, in an order that rotates, on the H100."""
    record = load(H100_CEILINGS, CeilingsRecord)
    assert record.run.gpu.name == "NVIDIA H100 80GB HBM3"
    assert record.run.command.startswith("python bench/performance_ceilings.py")
    first = [t.item for t in sorted(record.timings, key=lambda t: (t.round, t.position)) if t.round == 0]
    second = [t.item for t in sorted(record.timings, key=lambda t: (t.round, t.position)) if t.round == 1]
    assert second == first[1:] + first[:1]
    data = record.model_dump()
    data["timings"] = data["timings"][1:]
    with pytest.raises(ValueError, match="every item is timed once per round"):
        CeilingsRecord.model_validate(data)
    with pytest.raises(ValueError, match="unknown ceilings item"):
        record.rates("copy-2gib")


@pytest.mark.parametrize("record_id", SWEEPS)
def test_committed_sweeps_validate(record_id) -> None:
    record = load(record_id, SweepRecord)
    assert record.kind == "performance.sweep"
    assert record.run.gpu.sm_count > 0
    assert record.run.versions.torch
    assert record.run.command.startswith("python bench/gpu_sweep.py")
    assert record.suites == list(SUITES)
    # the id names the GPU and the kind of run, not a date (the run states its date; a re-recording keeps the id)
    gpu, kind = record_id.split("/")[1].split("-", 1)
    assert gpu.upper() in record.run.gpu.name
    assert kind == ("sweep-quick" if record.mode == "quick" else "sweep")
    # the clocks were read at the start and after every suite
    expected = ["start", *(f"after_{s}" for s in SUITES)]
    assert list(record.run.clocks) in (expected, [*expected, "end"])  # "end": added by gpukb.records since 2026-11-23
    if record.l2_flush == "write":  # runs made before the read flush were converted, not re-measured
        assert record.run.notes[-1].startswith("converted to schema 2 without re-measuring")
    else:
        assert all(r.clocks is not None for r in record.gemm if r.ms is not None)


def _write(tmp_path, edit) -> str:
    data = copy.deepcopy(QUICK)
    edit(data)
    path = tmp_path / "broken-sweep.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        # an unknown field, anywhere
        (lambda d: d["copy"][0].update(colour="red"), r"copy\[0\]\.colour: Extra inputs are not permitted"),
        (lambda d: d.update(extra=[]), r"extra: Extra inputs are not permitted"),
        (lambda d: d["run"].update(gpu_name="H100"), r"run\.gpu_name: Extra inputs are not permitted"),
        # a wrong type
        (lambda d: d["copy"][0].update(l2_flushed="yes"), r"copy\[0\]\.l2_flushed: Input should be a valid boolean"),
        (lambda d: d["gemm"][0].update(m="4096"), r"gemm\[0\]\.m: Input should be a valid integer \(got '4096'\)"),
        (lambda d: d.update(gemm={}), r"gemm: Input should be a valid array"),
        (lambda d: d["attention"][0].update(tflops=float("nan")), r"attention\[0\]\.tflops: .*finite number"),
        # a value outside its set
        (lambda d: d["gemm"][0].update(dtype="fp64"), r"gemm\[0\]\.dtype: Input should be 'fp32', 'tf32'"),
        (lambda d: d.update(mode="fast"), r"mode: Input should be 'quick' or 'full' \(got 'fast'\)"),
        (lambda d: d.update(suites=["gemm", "fft"]), r"suites\[1\]: Input should be 'mistakes'"),
        (lambda d: d["mistakes"][0].update(unit="GFLOPS"), r"mistakes\[0\]\.unit: Input should be 'TFLOP/s' or"),
        (lambda d: d["gemm"][0].update(m=-4), r"gemm\[0\]\.m: Input should be greater than 0 \(got -4\)"),
        # a missing field
        (lambda d: d["gemm"][1].pop("m"), r"gemm\[1\]\.m: Field required"),
        (lambda d: d["host_device"][0]["ms"].pop("q3"), r"host_device\[0\]\.ms\.q3: Field required"),
        (lambda d: d["run"].pop("command"), r"run\.command: Field required"),
        (lambda d: d.pop("mode"), r"mode: Field required"),
        # values that do not fit together
        (lambda d: d["host_device"][0]["ms"].update(q1=1e9), r"host_device\[0\]\.ms: .*not ordered"),
        (lambda d: d.update(suites=["gemm"]), r"mistakes holds records, but suites \['gemm'\] does not name it"),
        (lambda d: d["run"].update(gpu=None), r"run\.gpu is null; a sweep is measured on a GPU"),
        # the envelope
        (
            lambda d: d.update(kind="formats.gpu-checks"),
            r"holds a 'formats.gpu-checks' record; expected 'performance.sweep'",
        ),
        (lambda d: d.update(kind="bench.sweeps"), r"kind: unknown results kind 'bench.sweeps'"),
        (
            lambda d: d.update(schema_version=SweepRecord.version() + 1),
            rf"schema_version is {SweepRecord.version() + 1}; this version of gpukb reads performance.sweep schema "
            rf"{SweepRecord.version()}",
        ),
        (lambda d: d.pop("schema_version"), r"schema_version is None"),
    ],
)
def test_a_malformed_sweep_is_refused_naming_the_file_and_the_field(tmp_path, edit, message) -> None:
    path = _write(tmp_path, edit)
    with pytest.raises(ValueError, match=message) as caught:
        read(path, SweepRecord)
    assert str(caught.value).startswith(f"{path}: ")


def test_a_sweep_written_reads_back_unchanged(tmp_path) -> None:
    record = load(H100_QUICK, SweepRecord)
    path = write(record, tmp_path / "sub" / "run.json")
    assert read(path, SweepRecord) == record
    assert json.loads(path.read_text(encoding="utf-8")) == QUICK  # the committed file is exactly what write gives
    assert '"copy": [' in path.read_text(encoding="utf-8")  # the section keeps its name (the field is `copies`)


def test_optional_fields_and_sections() -> None:
    data = copy.deepcopy(QUICK)
    data["gemm"][0].update(error="RuntimeError: refused", ms=None, tflops=None)
    for section in ("mistakes", "copy", "host_device", "attention", "kernels"):
        data.pop(section)
    data["suites"] = ["gemm"]
    record = SweepRecord.model_validate_json(json.dumps(data))
    assert record.gemm[0].tflops is None
    assert record.copies == []
    assert record.section("copy") == []
    assert record.failed() == []
    with pytest.raises(ValueError, match="unknown suite 'fft'"):
        record.section("fft")


def test_file_name() -> None:
    assert file_name("NVIDIA H100 80GB HBM3", "2026-11-22T22:04:57+00:00") == "nvidia-h100-80gb-hbm3-2026-11-22.json"
    with pytest.raises(ValueError, match="need a GPU name and an ISO date"):
        file_name("NVIDIA H100", "yesterday")
