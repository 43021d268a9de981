"""What the H100 run shows, asserted on the committed results file: the claims the performance pages make.

These tests read recorded measurements; they time nothing. If a new run stopped supporting a sentence on a
page, the test behind that sentence fails and the sentence must change.
"""

from __future__ import annotations

import pytest

from gpukb.performance.ceilings import measured_ceilings
from gpukb.performance.results import H100_SWEEP, H200_SWEEP, SweepRecord
from gpukb.performance.specs import datasheet_for, datasheet_peak
from gpukb.performance.suites import mistakes
from gpukb.records import load

RUN = load(H100_SWEEP, SweepRecord)
H100 = datasheet_for(RUN.run.gpu.name)


def _rates(mistake: str) -> dict[str, float]:
    return {r.variant: r.rate for r in RUN.mistake(mistake)}


def _ms(mistake: str) -> dict[str, float]:
    return {r.variant: r.ms.median for r in RUN.mistake(mistake)}


def test_the_run_is_an_h100_sxm5_with_its_datasheet_entry() -> None:
    assert H100 is not None
    assert H100.id == "h100-sxm5"
    assert RUN.mode == "full"


def test_unsynchronized_timing_measures_the_launch_not_the_product() -> None:
    # The notes' lab timed torch.matmul with time.time() and no synchronization.
    rates, ms = _rates("sync"), _ms("sync")
    fp32_peak = H100.figure("fp32").dense
    events = ms["warm calls, CUDA events, L2 flushed"]
    assert rates["warm calls, no synchronize"] > 10 * fp32_peak  # impossible: the launch, not the product
    assert rates["warm calls, CUDA events, L2 flushed"] < fp32_peak
    assert ms["warm calls, host clock with synchronize"] == pytest.approx(events, rel=0.1)
    # The first call returned only after one-time initialization, many times the product's own time.
    assert ms["first call, no synchronize (the lab's method)"] > 5 * events


def test_the_first_call_pays_for_initialization() -> None:
    ms = _ms("cold_start")
    assert ms["first call, synchronized"] > 5 * ms["warm calls, CUDA events, L2 flushed"]


def test_zeros_run_faster_than_random_inputs() -> None:
    rates = {variant.split(", ", 1)[1]: rate for variant, rate in _rates("zeros").items()}
    assert rates["zeros"] > 1.05 * rates["random inputs"]
    assert rates["zeros"] > 1.05 * rates["random inputs, again"]


def test_one_run_can_land_far_from_the_median() -> None:
    (record,) = RUN.mistake("one_run")
    samples = record.samples
    assert max(samples) > 10 * record.ms.median  # the first call of a new shape
    assert samples.index(max(samples)) == 0


def test_an_idle_gpu_adds_the_launch_to_event_timings() -> None:
    rates = _rates("idle_gpu")
    for what in ("copy 16 MiB", "bf16 product 1024³"):
        assert rates[f"{what}, GPU idle between calls"] < 0.9 * rates[f"{what}, GPU kept busy between calls"]


def test_a_warm_l2_flatters_work_that_fits_in_it() -> None:
    rates = _rates("l2_cache")
    for what in ("copy 16 MiB", "bf16 product 1024³"):
        assert rates[f"{what}, cache warm (GPU kept busy between calls)"] > 1.05 * rates[f"{what}, {mistakes.FLUSHED}"]


def test_a_write_flush_leaves_dirty_lines_that_slow_the_next_call() -> None:
    # docs/performance/measuring.md: the write flush (zero_()) understates work that fits in L2; the read flush
    # the suites use does not.
    rates = _rates("l2_cache")
    for what in ("copy 16 MiB", "bf16 product 1024³"):
        assert rates[f"{what}, {mistakes.FLUSHED}"] > 1.05 * rates[f"{what}, {mistakes.WRITE_FLUSHED}"]


def test_sizes_that_are_not_multiples_of_8_run_far_slower() -> None:
    # The notes (seed 003) advise multiples of 8; the bf16 sizes around 8192 bear it out.
    rows = [r for r in RUN.gemm if r.sweep == "alignment"]
    aligned = [r.tflops for r in rows if r.m % 8 == 0]
    unaligned = [r.tflops for r in rows if r.m % 8]
    assert aligned
    assert unaligned
    assert min(aligned) > 2 * max(unaligned)


def test_element_width_does_not_change_copy_bandwidth() -> None:
    # The notes (seed 004) report u16 copies almost 2x slower than u32 on an Intel GPU, u8 slower still.
    # On the H100 neither torch path shows it.
    for method, spread in (("memcpy", 0.98), ("elementwise", 0.9)):
        rates = {r.dtype: r.gbps for r in RUN.copies if r.method == method and r.bytes == 2**30}
        assert sorted(rates) == ["int16", "int32", "int64", "uint8"]
        assert min(rates.values()) > spread * max(rates.values())


def test_measured_ceilings_stay_under_the_datasheet() -> None:
    measured = measured_ceilings(RUN)
    assert measured["bandwidth"] < H100.figure("memory_bandwidth").value
    for dtype in ("fp32", "tf32", "fp16", "bf16", "fp8"):
        assert 0.5 * datasheet_peak(H100, dtype).dense < measured[dtype] < datasheet_peak(H100, dtype).dense


def test_pinned_host_memory_is_faster_than_pageable() -> None:
    rates = {(r.direction, r.memory, r.bytes): r.gbps for r in RUN.host_device}
    for (direction, memory, nbytes), gbps in rates.items():
        if memory == "pinned" and nbytes >= 2**20:
            assert gbps > 2 * rates[(direction, "pageable", nbytes)]


def test_cudnn_is_the_fastest_attention_backend_here() -> None:
    by_case: dict[tuple, dict[str, float]] = {}
    for r in RUN.attention:
        if r.tflops is not None:
            by_case.setdefault((r.seq, r.head_dim, r.causal), {})[r.backend] = r.tflops
    assert by_case
    for rates in by_case.values():
        assert max(rates, key=rates.get) == "cudnn"


def test_clocks_were_read_and_fell_under_sustained_load() -> None:
    # docs/performance/h100.md: the clocks sampled during the timed calls of the large bf16 products fell below
    # the maximum while the board drew near its power limit; small products ran at the maximum.
    clocks = RUN.run.clocks
    limit, top = clocks["start"].power_limit_w, clocks["start"].max_sm_mhz
    large = [r.clocks for r in RUN.gemm if r.dtype == "bf16" and r.m >= 8192 and r.clocks is not None]
    assert large
    assert min(c.sm_mhz_median for c in large) < 0.9 * top
    assert max(c.power_w_median for c in large) > 0.9 * limit
    small = [r.clocks for r in RUN.gemm if r.dtype == "bf16" and r.m <= 1024 and r.clocks is not None]
    assert all(c.sm_mhz_median == top for c in small)


def test_the_sweeps_the_h100_page_describes() -> None:
    # docs/performance/h100.md: squares from 256 to 16384, a grid of M, N, K from 4096 to 16384, sizes around
    # 8192; the relative error of a 1024³ product; attention with 16 384 tokens and a width of 2048.
    squares = {r.m for r in RUN.gemm if r.sweep == "square"}
    assert (min(squares), max(squares)) == (256, 16384)
    grid = {d for r in RUN.gemm if r.sweep == "grid" for d in (r.m, r.n, r.k)}
    assert (min(grid), max(grid)) == (4096, 16384)
    assert all(8176 <= r.m <= 8200 for r in RUN.gemm if r.sweep == "alignment")
    assert {r.m for r in RUN.gemm if r.rel_error is not None} == {1024}
    for r in RUN.attention:
        assert r.batch * r.seq == 16384
        assert r.heads * r.head_dim == 2048


def test_the_h200_run_measured_the_registered_triton_gemm() -> None:
    """Backs the H200 section of the H100 page: same harness, more memory, and the Triton GEMM in `kernels`, at the
    goal sizes and over the GEMM page's shape sweep."""
    h200 = load(H200_SWEEP, SweepRecord)
    assert h200.run.gpu.name == "NVIDIA H200"
    assert h200.run.gpu.memory_bytes > RUN.run.gpu.memory_bytes
    assert measured_ceilings(h200)["bandwidth"] > measured_ceilings(RUN)["bandwidth"]
    from gpukb.gemm.triton.sweep import case_label, fp8_shapes, fp16_shapes, shapes

    swept = {"bf16": shapes(), "fp16": fp16_shapes(), "fp8": fp8_shapes()}
    assert {k.name for k in h200.kernels} == {"triton-gemm-bf16"} | {f"triton-gemm-sweep-{t}" for t in swept}
    for t, chosen in swept.items():  # every shape of the GEMM page's sweep, each timed once
        cases = [k.case for k in h200.kernels if k.name == f"triton-gemm-sweep-{t}"]
        assert cases == list(dict.fromkeys(case_label(s) for s in chosen)), t
    assert {k.name for k in RUN.kernels} <= {"triton-gemm-bf16"}


def test_the_h200_sweeps_extremes_against_the_h100_sweep() -> None:
    """Backs the H200 section's sentences on the kernels summary: for bf16 and fp16 the lowest and highest ratio
    fall on the shapes where the H100 sweep (the GEMM page's record) has them; FP8's lowest on the H200,
    65536×64×2048, is 0.99× (rounded) in the H100 sweep."""
    import json

    from tests.helpers import ROOT

    h200 = load(H200_SWEEP, SweepRecord)
    raw = json.loads((ROOT / "src/gpukb/data/results/gemm/triton-gemm-sweep-h100.json").read_text(encoding="utf-8"))

    def extremes(dtype: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        rows = [r for r in raw["rows"] if r["dtype"] == dtype and r["ratio"] is not None]
        low, high = min(rows, key=lambda r: r["ratio"]), max(rows, key=lambda r: r["ratio"])
        return (low["m"], low["n"], low["k"]), (high["m"], high["n"], high["k"])

    def h200_extremes(name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        runs = [k for k in h200.kernels if k.name == name]
        low, high = min(runs, key=lambda r: r.ratio), max(runs, key=lambda r: r.ratio)
        return tuple(map(int, low.case.split("x"))), tuple(map(int, high.case.split("x")))

    for short, dtype in (("bf16", "bfloat16"), ("fp16", "float16")):
        assert h200_extremes(f"triton-gemm-sweep-{short}") == extremes(dtype) == ((3000,) * 3, (4095, 4097, 4099))
    low, _ = h200_extremes("triton-gemm-sweep-fp8")
    assert low == (65536, 64, 2048)
    (h100,) = [r for r in raw["rows"] if r["dtype"] == "float8_e4m3fn" and (r["m"], r["n"], r["k"]) == low]
    assert round(h100["ratio"], 2) == 0.99
