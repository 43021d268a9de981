"""BLAS levels: the counts of each example, the slides' asymptotics, and where each lands on a measured roofline."""

from __future__ import annotations

import pytest

from gpukb.gemm.blas import (
    EXAMPLES,
    axpy,
    dot,
    examples,
    floors,
    gemm,
    gemv,
    growth,
    trsm,
)
from gpukb.gemm.pages.ground_up import blas_examples, blas_roofline
from gpukb.measuring.counting import gemm_bytes, gemm_flops


def test_counts_of_each_example() -> None:
    assert (axpy(1000).flops, axpy(1000).nbytes) == (2000, 12_000)  # read x and y, write y
    assert (dot(1000, "fp64").flops, dot(1000, "fp64").nbytes) == (2000, 8 * 2001)
    op = gemv(300, 200)
    assert op.flops == gemm_flops(300, 1, 200) == 2 * 300 * 200
    assert op.nbytes == gemm_bytes(300, 1, 200, 4) + 300 * 4 == 4 * (300 * 200 + 200 + 2 * 300)
    op = gemm(64, 32, 16, "bf16")
    assert op.flops == gemm_flops(64, 32, 16)
    assert op.nbytes == gemm_bytes(64, 32, 16, 2) + 64 * 32 * 2  # C read too: β ≠ 0
    op = trsm(10, 3)
    assert op.flops == 3 * 10 * 10
    assert op.elements == 55 + 2 * 30


def test_routine_names() -> None:
    assert [op.routine for op in examples(8, "fp64")] == ["daxpy", "ddot", "dgemv", "dgemm", "dtrsm"]
    assert [op.routine for op in examples(8, "fp32")] == ["saxpy", "sdot", "sgemv", "sgemm", "strsm"]
    assert gemm(8, 8, 8, "bf16").routine == "gemm (bf16)"  # classic BLAS has no bf16 routine


def test_slides_asymptotics() -> None:
    """Levels 1 and 2: O(1) flops per memory access; level 3: O(n)."""
    for n in (64, 1024, 16384):
        for op in examples(n):
            if op.level < 3:
                assert op.per_element <= 2
            else:
                assert op.per_element > n / 4
    for name in ("axpy", "dot", "gemv"):
        assert growth(name, 4096) == pytest.approx(1.0, abs=1e-3)
    for name in ("gemm", "trsm"):
        assert growth(name, 4096) == pytest.approx(2.0, abs=1e-2)
    assert gemm(4096, 4096, 4096).per_element == pytest.approx(4096 / 2)  # 2n³ / 4n² (A, B, C read, C written)


def test_memory_bound_levels_on_the_h100() -> None:
    table = blas_roofline((4096,), "fp32")
    rows = {line.split(" | ")[0].strip("| `"): line for line in table.splitlines()[2:] if line.startswith("|")}
    for routine in ("saxpy", "sdot", "sgemv"):
        assert rows[routine].endswith("| memory |")
    assert rows["sgemm"].endswith("| compute |")
    assert "ridge point" in table


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match=r"defined for \['bf16', 'fp16', 'fp32', 'fp64'\]; got 'fp8'"):
        axpy(10, "fp8")
    with pytest.raises(ValueError, match="unknown element type"):
        gemm(2, 2, 2, "fp7")
    with pytest.raises(ValueError, match="n must be an int ≥ 1; got 0"):
        dot(0)
    with pytest.raises(TypeError, match=r"m must be an int ≥ 1; got 2\.5"):
        gemv(2.5, 2)
    with pytest.raises(ValueError, match=r"unknown example 'gemmm'; known: \['axpy'"):
        growth("gemmm", 8)
    with pytest.raises(ValueError, match="has no measured fp64 product"):
        blas_roofline((8,), "fp64")


def test_examples_table_has_one_row_per_example() -> None:
    table = blas_examples(1024)
    assert len(table.splitlines()) == 2 + len(EXAMPLES)
    assert "| `sgemm` | 3 | C ← αAB + βC | 2,147,483,648 |" in table


def test_floors_take_the_larger_bound() -> None:
    bounded = floors((256, 4096), "fp32", peak_flops=50e12, bandwidth=3e12)
    routines = ("saxpy", "sdot", "sgemv", "sgemm", "strsm")
    assert [(n, op.routine) for n, op, _ in bounded] == [(n, r) for n in (256, 4096) for r in routines]
    for _, op, floor in bounded:
        assert floor.time_s == max(op.flops / 50e12, op.nbytes / 3e12)
