"""The GEMM chapter's committed H100 runs: they validate as their kinds, their checks passed, and the pages' tables
render from them."""

from __future__ import annotations

import json
import re
import statistics
from typing import get_args

import pytest

from gpukb import records
from gpukb.gemm.pages import accuracy as accuracy_page
from gpukb.gemm.pages import ground_up as ground_up_page
from gpukb.gemm.pages import timing as timing_page
from gpukb.gemm.results import (
    FP8_H100,
    GROUND_UP_H100,
    Fp8Hardware,
    GroundUp,
    TimingMethod,
    fp8_h100,
    ground_up_h100,
    parse_snippet_output,
)
from tests.helpers import ROOT

DATA = ground_up_h100()


def test_the_committed_run_is_complete() -> None:
    run = DATA.run
    assert run.gpu is not None
    assert run.gpu.name.startswith("NVIDIA H100")
    assert run.gpu.compute_capability == "9.0"
    assert run.versions.nvcc in DATA.cublaslt.nvcc_version  # the nvcc that compiled the snippet
    assert DATA.cublaslt.compile is not None
    assert DATA.cublaslt.compile.returncode == 0
    assert DATA.batched_failures == []


def test_every_cublaslt_run_passed_its_check() -> None:
    runs = DATA.cublaslt.runs
    assert len(runs) == 1 + 2 * 3  # the check at the default size, then two sizes in three rounds
    parsed = [run.parsed() for run in runs]
    assert all(run.returncode == 0 for run in runs)
    assert all(p.passed and p.over_bound == 0 for p in parsed)
    source = (ROOT / "snippets" / "gemm" / "cublaslt_matmul.cu").read_text(encoding="utf-8")
    defaults = tuple(int(x) for x in re.search(r"int64_t m = (\d+), n = (\d+), k = (\d+);", source).groups())
    assert (parsed[0].m, parsed[0].n, parsed[0].k) == defaults  # the first run is the default size
    assert [(p.m, p.calls) for p in parsed[1:]] == [(4096, 50), (8192, 50)] * 3


def test_torch_products_were_checked() -> None:
    timings = DATA.cublaslt.torch_mm
    keys = [(x.library, x.m, x.round) for x in timings]
    assert sorted(keys) == sorted((lib, m, i) for lib in ("cublas", "cublaslt") for m in (4096, 8192) for i in range(3))
    assert all(x.rel_error < 1e-2 for x in timings)  # bf16 inputs, FP32 accumulation, bf16 output


def test_cublaslt_table_shows_the_snippet_next_to_torch() -> None:
    table = ground_up_page.cublaslt_speed()
    for size in (4096, 8192):
        rates = [p.tflops for p in (run.parsed() for run in DATA.cublaslt.runs[1:]) if p.m == size]
        cell = f"{statistics.median(rates):.0f} ({min(rates):.0f}–{max(rates):.0f})"
        assert f"| {size}×{size}×{size} | 3 | {cell} |" in table
    build = ground_up_page.cublaslt_build()
    assert build.startswith("```text")
    assert "-lcublasLt" in build
    assert ground_up_page.cublaslt_output().endswith("PASS\n(exit status 0)\n```")


def test_batched_records_agree_and_table_covers_every_case() -> None:
    cases = DATA.batched_cases()
    assert {x.variant for x in DATA.batched} == set(ground_up_page.BATCHED_LABELS)
    assert all(x.max_abs_diff <= 2**-7 * x.max_abs_out for x in DATA.batched)  # the forms computed the same thing
    table = ground_up_page.batched_table()
    assert len(table.splitlines()) == 2 + len(cases)
    by = DATA.batched_by_variant(32, 4096)
    assert f"| {by['loop'].ms.median / by['bmm'].ms.median:,.0f}× |" in table
    assert DATA.loop_over_bmm(32, 4096) == by["loop"].ms.median / by["bmm"].ms.median
    assert ground_up_page.batched_figure().startswith('<div class="gpukb-figure"><svg')


def test_timing_tables() -> None:
    cases = set(DATA.gpu_cases())
    assert cases == {("fp32", 2000), ("fp32", 4000), ("fp32", 6000), ("tf32", 6000), ("bf16", 8192)}
    table = timing_page.timing_table(dtype="fp32", n=6000)
    assert "| lab: first call, host clock, no synchronize |" in table
    assert "| warm calls, CUDA events (median) |" in table
    assert "| 30 calls back to back, one synchronize at the end (mean) |" in table
    assert len(timing_page.timing_summary().splitlines()) == 2 + len(cases)
    assert len(timing_page.cpu_lab_table().splitlines()) == 2 + 6
    assert "| numpy, host clock (median of 3 after it) |" in timing_page.cpu_lab_table()
    first = timing_page.first_call_table()
    assert len(first.splitlines()) == 2 + len(cases)
    assert first.splitlines()[2].startswith("| fp32, n = 2,000 |")  # in the order run
    with pytest.raises(ValueError, match=r"no timing of fp16 at n=6000 in gemm/ground-up-h100; it has \[\('bf16'"):
        timing_page.timing_table(dtype="fp16", n=6000)


def test_every_timing_method_has_a_label() -> None:
    assert set(timing_page.TIMING_LABELS) == set(get_args(TimingMethod))
    for entry in DATA.timing:
        assert timing_page.timing_label(entry)


def test_rates_follow_from_the_medians() -> None:
    for x in DATA.timing:
        assert x.gflops == pytest.approx(2 * x.n**3 / (x.ms.median * 1e-3) / 1e9)
    for x in DATA.batched:
        flops = x.batch * 2 * x.m * x.n * x.k
        assert x.tflops == pytest.approx(flops / (x.ms.median * 1e-3) / 1e12)


def test_measured_on_is_the_records_sentence() -> None:
    line = ground_up_page.ground_up_measured_on()
    assert line == records.measured_on(DATA.run)
    assert line.startswith(f"Measured on an {DATA.run.gpu.name} (132 SMs")
    assert "nvcc 13.0" in line
    assert accuracy_page.fp8_measured_on() == records.measured_on(fp8_h100().run)
    assert "cuBLASLt 13.1.0" in accuracy_page.fp8_measured_on()


def test_the_records_load_by_id_as_their_kinds() -> None:
    assert isinstance(records.load(GROUND_UP_H100), GroundUp)
    assert isinstance(records.load(FP8_H100), Fp8Hardware)
    with pytest.raises(ValueError, match=r"expected 'gemm\.fp8-hardware'"):
        records.load(GROUND_UP_H100, expect=Fp8Hardware)


def _committed(record_id: str) -> dict:
    return json.loads(records.results_dir().joinpath(f"{record_id}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("record_id", "change", "message"),
    [
        (GROUND_UP_H100, lambda d: d["timing"][3].update(method="warm calls, CUDA events (median)"),
         r"timing\[3\]\.method: Input should be 'lab_first_call'"),
        (GROUND_UP_H100, lambda d: d["batched"][0].pop("ms"), r"batched\[0\]\.ms: Field required"),
        (GROUND_UP_H100, lambda d: d["batched"][2].update(colour="red"), r"batched\[2\]\.colour: Extra inputs"),
        (GROUND_UP_H100, lambda d: d["run"]["gpu"].pop("driver"), r"run\.gpu\.driver: Field required"),
        (FP8_H100, lambda d: d["agreement"][5].update(hw_vs_fp64="0.1"), r"agreement\[5\]\.hw_vs_fp64: Input should"),
        (FP8_H100, lambda d: d["acceptance"][0].pop("accepted"), r"acceptance\[0\]\.accepted: Field required"),
        (FP8_H100, lambda d: d["layout"][1].update(a_layout="diagonal"), r"layout\[1\]\.a_layout: Input should be"),
    ],
)  # fmt: skip
def test_a_corrupted_record_names_the_file_entry_and_field(record_id, change, message) -> None:
    data = _committed(record_id)
    records.parse(data, record_id)  # the committed file is valid
    change(data)
    with pytest.raises(ValueError, match=re.escape(record_id) + ": " + message):
        records.parse(data, record_id)


def test_snippet_output_lacking_a_line_is_refused() -> None:
    with pytest.raises(ValueError, match="lacks its time line"):
        parse_snippet_output("M=1 N=2 K=3\nelements over the bound: 0\nPASS")
