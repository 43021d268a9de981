"""The results-file schema: committed files fit it, and a malformed file is refused with a precise message."""

from __future__ import annotations

import copy
import json

import pytest

from gpukb.bench.results import RESULTS_DIR, committed, file_name, load_results, save_results, validate

COMMITTED = sorted(RESULTS_DIR.glob("*.json"))
QUICK = json.loads(committed("nvidia-h100-80gb-hbm3-2026-11-22-quick.json").read_text())


def test_there_are_committed_results() -> None:
    assert COMMITTED


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_committed_results_fit_the_schema(path) -> None:
    results = load_results(path)
    meta = results["meta"]
    assert meta["gpu"]
    assert meta["sm_count"] > 0
    assert meta["torch"]
    assert meta["command"]
    assert path.name.startswith(file_name(meta["gpu"], meta["date"]).removesuffix(".json"))


def _broken(edit) -> dict:
    data = copy.deepcopy(QUICK)
    edit(data)
    return data


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["meta"].update(mode="fast"), r"meta\.mode is 'fast'; allowed: \['quick', 'full'\]"),
        (lambda d: d["gemm"][0].update(dtype="fp64"), r"gemm\[0\]\.dtype is 'fp64'; allowed: \['fp32', 'tf32'"),
        (lambda d: d["gemm"][1].pop("m"), r"gemm\[1\]\.m is missing; expected a non-negative integer"),
        (lambda d: d["gemm"][0].update(m=-4), r"gemm\[0\]\.m is -4; expected a non-negative integer"),
        (lambda d: d["copy"][0].update(colour="red"), r"copy\[0\] has unknown fields \['colour'\]; allowed fields"),
        (lambda d: d["copy"][0].update(l2_flushed="yes"), r"copy\[0\]\.l2_flushed is 'yes'; expected true or false"),
        (lambda d: d["host_device"][0]["ms"].pop("q3"), r"host_device\[0\]\.ms\.q3 is missing"),
        (lambda d: d["host_device"][0]["ms"].update(q1=1e9), r"host_device\[0\]\.ms: .*not ordered"),
        (lambda d: d["attention"][0].update(tflops=float("nan")), r"attention\[0\]\.tflops is nan; expected a finite"),
        (lambda d: d["attention"][0].update(backend="xformers"), r"backend is 'xformers'; allowed: \['flash'"),
        (lambda d: d["mistakes"][0].update(unit="GFLOPS"), r"mistakes\[0\]\.unit is 'GFLOPS'; allowed"),
        (lambda d: d["meta"].update(suites=["gemm", "fft"]), r"meta\.suites holds 'fft'; allowed"),
        (lambda d: d["meta"].pop("command"), r"meta\.command is missing; expected a string"),
        (lambda d: d["meta"].update(driver=None, torch=None), r"meta\.torch is null; expected a string"),
        (lambda d: d.update(schema=2), "schema is 2; this version of gpukb reads schema 1"),
        (lambda d: d.update(extra=[]), r"unknown top-level fields \['extra'\]"),
        (lambda d: d.pop("meta"), "meta is missing"),
        (lambda d: d.update(gemm={}), "gemm is dict; expected a list of records"),
    ],
)
def test_malformed_results_are_refused_naming_the_field(edit, message) -> None:
    with pytest.raises(ValueError, match=message):
        validate(_broken(edit))


def test_a_results_file_must_be_an_object() -> None:
    with pytest.raises(ValueError, match="holds a JSON object; got list"):
        validate([])


def test_optional_and_nullable_fields() -> None:
    data = _broken(lambda d: d["gemm"][0].update(error=None, ms=None, tflops=None))
    assert validate(data)["gemm"][0]["tflops"] is None
    validate(_broken(lambda d: d["meta"].update(driver=None, triton=None, clocks=None)))


def test_save_and_load_round_trip(tmp_path) -> None:
    path = save_results(QUICK, tmp_path / "sub" / "run.json")
    assert load_results(path) == QUICK


def test_load_names_the_file_it_refuses(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"bad\.json: not JSON"):
        load_results(bad)
    bad.write_text(json.dumps(_broken(lambda d: d["meta"].update(mode="slow"))))
    with pytest.raises(ValueError, match=r"bad\.json: meta\.mode is 'slow'"):
        load_results(bad)
    with pytest.raises(ValueError, match="not ordered"):
        save_results(_broken(lambda d: d["copy"][0]["ms"].update(max=0.0)), tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_committed_names_what_there_is() -> None:
    with pytest.raises(FileNotFoundError, match=r"no results file 'b200.json'.*nvidia-h100"):
        committed("b200.json")


def test_file_name() -> None:
    assert file_name("NVIDIA H100 80GB HBM3", "2026-11-22T22:04:57+00:00") == "nvidia-h100-80gb-hbm3-2026-11-22.json"
    with pytest.raises(ValueError, match="need a GPU name and an ISO date"):
        file_name("NVIDIA H100", "yesterday")
