"""Measured ceilings and roofline points of a sweep: the analysis the pages and other chapters use."""

from __future__ import annotations

import pytest

from gpukb.measuring.counting import intensity_examples
from gpukb.performance.ceilings import CEILING_MIN_BYTES, copy_ceiling, gemm_best, measured_ceilings, measured_ridge
from gpukb.performance.results import H100_SWEEP, H200_SWEEP, SweepRecord
from gpukb.performance.roofline import measured_points
from gpukb.performance.suites.gemm import row_alignment
from gpukb.records import load

RUN = load(H100_SWEEP, SweepRecord)


def test_ceilings_are_the_best_gemm_and_the_best_large_copy() -> None:
    measured = measured_ceilings(RUN)
    assert measured["bf16"] == max(r.tflops for r in RUN.gemm if r.dtype == "bf16" and r.tflops)
    assert measured["bandwidth"] == max(r.gbps for r in RUN.copies if r.bytes >= CEILING_MIN_BYTES)
    assert sorted(measured) == ["bandwidth", "bf16", "fp16", "fp32", "fp8", "tf32"]
    assert copy_ceiling(RUN) == measured["bandwidth"]


def test_ceilings_by_id_or_record() -> None:
    assert measured_ceilings(H100_SWEEP) == measured_ceilings(RUN)
    assert gemm_best(H200_SWEEP)["bf16"].tflops == measured_ceilings(H200_SWEEP)["bf16"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        measured_ceilings("performance/b200")
    with pytest.raises(TypeError, match=r"record must be a SweepRecord or a record id .*; got None \(NoneType\)"):
        measured_ceilings(None)  # was an AttributeError


def test_gemm_best_is_the_fastest_record_per_type() -> None:
    best = gemm_best(RUN)
    for dtype, record in best.items():
        assert all(r.tflops <= record.tflops for r in RUN.gemm if r.dtype == dtype and r.tflops is not None)


def test_a_sweep_without_copies_has_no_bandwidth_ceiling() -> None:
    record = SweepRecord.model_validate(RUN.model_copy(update={"copies": []}).model_dump(by_alias=False))
    assert copy_ceiling(record) is None
    assert "bandwidth" not in measured_ceilings(record)
    assert measured_ridge(measured_ceilings(record), "bf16") is None


def test_the_measured_ridge() -> None:
    measured = measured_ceilings(RUN)
    assert measured_ridge(measured, "bf16") == pytest.approx(measured["bf16"] * 1e12 / (measured["bandwidth"] * 1e9))
    assert 200 < measured_ridge(measured, "bf16") < 400  # hundreds of FLOP per byte, as the roofline page says


def test_roofline_points_use_the_counts() -> None:
    points = measured_points(RUN)
    (gemm,) = [p for p in points if p.group == "gemm" and p.case == "4096"]
    assert gemm.intensity == pytest.approx(2 * 4096**3 / (3 * 4096**2 * 2))
    assert {p.group for p in points} == {"gemm", "attention"} | ({"kernel"} if RUN.kernels else set())
    kernels = [p for p in measured_points(load(H200_SWEEP, SweepRecord)) if p.group == "kernel"]
    record = load(H200_SWEEP, SweepRecord)
    assert [p.case for p in kernels] == [k.name for k in record.kernels]
    for point, k in zip(kernels, record.kernels, strict=True):
        m, n, kk = map(int, k.case.split("x"))
        assert point.tflops == pytest.approx(2 * m * n * kk / (k.kernel_ms.median * 1e-3) / 1e12, rel=1e-3)


def test_alignment_of_a_row() -> None:
    assert row_alignment(8191, 2) == 2
    assert row_alignment(8188, 2) == 8
    assert row_alignment(8192, 2) == 16


def test_intensity_examples_recompute_the_notes() -> None:
    assert [round(f / b, 2) for _, f, b in intensity_examples()] == [315.08, 1.00, 2.00, 0.25]
