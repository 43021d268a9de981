"""The committed H100 run behind the ground-up and timing pages: its checks passed, and the tables render from it."""

from __future__ import annotations

import copy
import re
import statistics

import pytest

from gpukb.gemm import ground_up_results as r
from tests.helpers import ROOT

DATA = r.load()


def test_the_committed_run_is_complete() -> None:
    meta = DATA["meta"]
    assert meta["gpu"].startswith("NVIDIA H100")
    assert meta["compute_capability"] == "9.0"
    assert meta["environment"]["nvcc"] in DATA["cublaslt"]["nvcc_version"]  # the nvcc that compiled the snippet
    assert DATA["cublaslt"]["compile"]["returncode"] == 0


def test_every_cublaslt_run_passed_its_check() -> None:
    runs = DATA["cublaslt"]["runs"]
    assert len(runs) == 1 + 2 * 3  # the check at the default size, then two sizes in three rounds
    parsed = [r.parse_snippet_output(run["stdout"]) for run in runs]
    assert all(run["returncode"] == 0 for run in runs)
    assert all(p["passed"] and p["over_bound"] == 0 for p in parsed)
    source = (ROOT / "snippets" / "gemm" / "cublaslt_matmul.cu").read_text(encoding="utf-8")
    defaults = tuple(int(x) for x in re.search(r"int64_t m = (\d+), n = (\d+), k = (\d+);", source).groups())
    assert (parsed[0]["m"], parsed[0]["n"], parsed[0]["k"]) == defaults  # the first run is the default size
    assert [(p["m"], p["calls"]) for p in parsed[1:]] == [(4096, 50), (8192, 50)] * 3


def test_torch_products_were_checked() -> None:
    records = DATA["cublaslt"]["torch_mm"]
    keys = [(x["library"], x["m"], x["round"]) for x in records]
    assert sorted(keys) == sorted((lib, m, i) for lib in ("cublas", "cublaslt") for m in (4096, 8192) for i in range(3))
    assert all(x["rel_error"] < 1e-2 for x in records)  # bf16 inputs, FP32 accumulation, bf16 output


def test_cublaslt_table_shows_the_snippet_next_to_torch() -> None:
    table = r.cublaslt_table()
    for size in (4096, 8192):
        rates = [
            p["tflops"]
            for p in (r.parse_snippet_output(run["stdout"]) for run in DATA["cublaslt"]["runs"][1:])
            if p["m"] == size
        ]
        cell = f"{statistics.median(rates):.0f} ({min(rates):.0f}–{max(rates):.0f})"
        assert f"| {size}×{size}×{size} | 3 | {cell} |" in table
    build = r.cublaslt_build()
    assert build.startswith("```text")
    assert "-lcublasLt" in build
    assert r.cublaslt_output().endswith("PASS\n(exit status 0)\n```")


def test_batched_records_agree_and_table_covers_every_case() -> None:
    records = r.batched_rows()
    cases = {(x["m"], x["batch"]) for x in records}
    assert {x["variant"] for x in records} == set(r.BATCHED_VARIANTS)
    assert all(x["max_abs_diff"] <= 2**-7 * x["max_abs_out"] for x in records)  # the forms computed the same thing
    table = r.batched_table()
    assert len(table.splitlines()) == 2 + len(cases)
    loop = next(x for x in records if (x["m"], x["batch"], x["variant"]) == (32, 4096, "loop"))
    bmm = next(x for x in records if (x["m"], x["batch"], x["variant"]) == (32, 4096, "bmm"))
    assert f"| {loop['ms']['median'] / bmm['ms']['median']:,.0f}× |" in table
    assert r.batched_figure().startswith('<div class="gpukb-figure"><svg')


def test_timing_tables() -> None:
    cases = {(x["dtype"], x["n"]) for x in DATA["timing"] if x["device"] == "cuda"}
    assert cases == {("fp32", 2000), ("fp32", 4000), ("fp32", 6000), ("tf32", 6000), ("bf16", 8192)}
    table = r.timing_table(dtype="fp32", n=6000)
    assert "| lab: first call, host clock, no synchronize |" in table
    assert "| warm calls, CUDA events (median) |" in table
    assert len(r.timing_summary().splitlines()) == 2 + len(cases)
    assert len(r.cpu_lab_table().splitlines()) == 2 + 6
    first = r.first_call_table()
    assert len(first.splitlines()) == 2 + len(cases)
    assert first.splitlines()[2].startswith("| fp32, n = 2,000 |")  # in the order run
    with pytest.raises(ValueError, match=r"no timing of fp16 at n=6000; the file has \[\('bf16', 8192\)"):
        r.timing_table(dtype="fp16", n=6000)


def test_rates_follow_from_the_medians() -> None:
    for x in DATA["timing"]:
        assert x["gflops"] == pytest.approx(2 * x["n"] ** 3 / (x["ms"]["median"] * 1e-3) / 1e9)
    for x in r.batched_rows():
        flops = x["batch"] * 2 * x["m"] * x["n"] * x["k"]
        assert x["tflops"] == pytest.approx(flops / (x["ms"]["median"] * 1e-3) / 1e12)


def test_versions_line() -> None:
    line = r.versions_line()
    assert line.startswith(f"Measured on an {DATA['meta']['gpu']} (132 SMs")
    assert "nvcc 13.0" in line


def test_malformed_files_are_refused() -> None:
    with pytest.raises(ValueError, match=r"missing parts \['timing'\]"):
        r.load({k: v for k, v in DATA.items() if k != "timing"})
    bad = copy.deepcopy(DATA)
    del bad["meta"]["driver"]
    with pytest.raises(ValueError, match="meta lacks 'driver'"):
        r.load(bad)
    bad = copy.deepcopy(DATA)
    del bad["batched"][0]["ms"]
    with pytest.raises(ValueError, match=r"batched\[0\] lacks \['ms'\]"):
        r.load(bad)
    with pytest.raises(ValueError, match="lacks its time line"):
        r.parse_snippet_output("M=1 N=2 K=3\nelements over the bound: 0\nPASS")
