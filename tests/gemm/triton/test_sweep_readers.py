"""Readers of the Triton GEMM's sweeps: the kernel record's configuration sweep looked up by configuration, the
committed shape sweeps' kind, and the shape sweep's goals on rows made here at each goal's boundary (a ratio or an
error ratio exactly at its goal, a product of exactly 2^30 multiply-adds, an FP8 product with one dimension under
1024, a set with no error measured). Expected values worked by hand or read from the raw JSON; torch-free."""

from __future__ import annotations

import json
import math

import pytest

from gpukb.gemm.triton import results
from gpukb.gemm.triton.configs import Config
from gpukb.records import results_dir

KERNEL_JSON = results_dir() / "gemm" / "triton-gemm-h100.json"


def test_the_configuration_sweep_finds_a_configuration_and_its_case_or_none() -> None:
    raw = json.loads(KERNEL_JSON.read_text(encoding="utf-8"))["sweep"]
    sweep = results.committed().sweep
    first = raw["configs"][0]
    config = Config(**first["config"])
    entry = sweep.entry(config)
    assert entry is not None
    assert entry.config == config
    case = sweep.case(config, 8192)
    assert case is not None
    assert case.tflops == next(r["tflops"] for r in first["results"] if r["m"] == 8192)
    unmeasured = Config("blocked", 32, 32, 32, num_stages=2, num_warps=4)
    assert all(c["config"]["block_m"] != 32 for c in raw["configs"])  # no 32-row tiles in the sweep
    assert sweep.entry(unmeasured) is None
    assert sweep.case(unmeasured, 8192) is None


def test_sweep_committed_refuses_a_record_of_another_kind() -> None:
    with pytest.raises(ValueError, match=r"holds a 'gemm\.triton-gemm' record; expected 'gemm\.triton-gemm-sweep'"):
        results.sweep_committed("gemm/triton-gemm-h100")


def _row(sweep: str, dtype: str, m: int, n: int, k: int, ratio: float | None, **errors: float) -> results.SweepRow:
    return results.SweepRow.model_validate({
        "sweep": sweep, "dtype": dtype, "group": "square", "label": f"{m}×{n}×{k}", "layout": "NN", "m": m, "n": n,
        "k": k, "tuned_on": False, "config": None, "split_k": None, "staged": [], "peer": "cuBLAS", "kernel_ms": [],
        "peer_ms": [], "ratio": ratio, "kernel_tflops": None, "peer_tflops": None, "rel_error": None,
        "peer_rel_error": None, "floor": None, "all_written": True, **errors,
    })  # fmt: skip


def _record(*rows: results.SweepRow) -> results.TritonGemmSweep:
    return results.sweep_committed(results.SWEEP_BEFORE_ID).model_copy(update={"rows": list(rows)})


def test_sweep_goals_at_their_boundaries() -> None:
    bf16 = _row("first", "bfloat16", 1024, 1024, 1024, 0.95, rel_error=0.25, peer_rel_error=0.125)  # errors: 2×
    fp16_large = _row("first", "float16", 1024, 1024, 1024, 0.80)  # 2^30 multiply-adds: a large product
    fp16_small = _row("first", "float16", 512, 512, 512, 2.0)
    fp8 = _row("first", "float8_e4m3fn", 1024, 1024, 1024, 0.95)
    fp8_short_k = _row("first", "float8_e4m3fn", 1024, 1024, 512, 0.5)  # K under 1024: outside the FP8 goal
    tiny = _row("tiny", "bfloat16", 8, 8, 8, 0.5)
    record = _record(bf16, fp16_large, fp16_small, fp8, fp8_short_k, tiny)
    goals = {(g.sweep, g.dtype): g for g in results.sweep_goal_rows(record)}
    assert list(goals) == [
        ("first", "bfloat16"),
        ("first", "float16"),
        ("first", "float8_e4m3fn"),
        ("tiny", "bfloat16"),
    ]

    g = goals["first", "bfloat16"]  # geometric mean 0.95 (= the goal), the large product's 0.95 ≥ 0.80
    assert (g.rows, g.geomean, g.lowest, g.lowest_large, g.met) == ((bf16,), 0.95, bf16, bf16, True)
    assert (g.worst_error_ratio, g.errors_met) == (2.0, True)  # twice the peer's error: within the goal
    g = goals["first", "float16"]  # geometric mean √1.6; the one large product at 0.80 (= the floor)
    assert (g.rows, g.lowest, g.lowest_large, g.met) == ((fp16_large, fp16_small), fp16_large, fp16_large, True)
    assert g.geomean == pytest.approx(math.sqrt(1.6))
    assert math.isnan(g.worst_error_ratio)  # no error measured: nothing to meet the error goal with
    assert g.errors_met is False
    g = goals["first", "float8_e4m3fn"]
    assert (g.rows, g.lowest, g.lowest_large, g.met) == ((fp8,), fp8, None, True)  # 0.95: each ≥ 0.95
    g = goals["tiny", "bfloat16"]
    assert (g.rows, g.lowest_large, g.met) == ((tiny,), None, True)  # 0.5: within twice cuBLAS's time

    below = _row("first", "float16", 1024, 1024, 1024, 0.79)  # the large product under the floor: missed
    missed = results.sweep_goal_rows(_record(bf16, below, fp16_small, fp8))[1]
    assert (missed.dtype, missed.lowest_large, missed.met) == ("float16", below, False)


def test_a_first_sweep_without_a_measured_type_is_refused() -> None:
    date = json.loads((results_dir() / f"{results.SWEEP_BEFORE_ID}.json").read_text(encoding="utf-8"))["run"]["date"]
    rows = [
        _row("first", "bfloat16", 1024, 1024, 1024, 1.0),
        _row("first", "float16", 1024, 1024, 1024, None),  # timed out, say: no ratio
        _row("first", "float8_e4m3fn", 1024, 1024, 1024, 1.0),
    ]
    with pytest.raises(ValueError, match=f"^the sweep of {date} has no measured float16 row$"):
        results.sweep_goal_rows(_record(*rows))
    # a run of other sets has no first sweep: nothing is missing
    (goal,) = results.sweep_goal_rows(_record(_row("random", "float16", 1024, 1024, 1024, 1.0)))
    assert (goal.sweep, goal.dtype, goal.met) == ("random", "float16", True)
