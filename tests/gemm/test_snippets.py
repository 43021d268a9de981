"""The GEMM chapter's snippets (``snippets/gemm/*.py``): each is run as a reader runs it, and what it prints is
asserted, recomputed independently where it can be (ml_dtypes casts for the emulator, the closed form for the
blocked product). The cuBLASLt ``.cu`` snippet is tested in ``test_cublaslt_snippet.py``.

``tests/test_snippets.py`` collects ``CHECKS`` from every ``tests/<topic>/test_snippets.py`` and fails for a snippet
that has no check.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from tests.gemm.test_cublaslt_snippet import check_cublaslt_matmul


def check_gemm_check_combination(out: str) -> None:
    lines = out.splitlines()
    assert lines[0] == "hipblaslt on MI300X (gfx942): e4m3fnuz x e5m2fnuz -> bf16"  # FNUZ FP8 on MI300
    assert lines[1] == "  compute HIPBLAS_COMPUTE_32F, scale fp32, bias fp32 or bf16"
    assert lines[2] == "  layout any, confirmed: yes"  # the ROCm 6.2 API reference states every field
    assert lines[3] == "cublaslt on H100 (sm_90): e4m3 x e5m2 -> bf16"  # OCP FP8 on Hopper
    assert lines[4] == "  compute CUBLAS_COMPUTE_32F, scale fp32, bias bf16"
    assert lines[5] == "  layout TN, confirmed: yes"  # A transposed, B not: the FP8 rule on Hopper
    assert lines[6].startswith("cuBLASLt refuses A=e5m2 x B=e5m2: the FP8 table has no E5M2 x E5M2 row")
    assert len(lines) == 7


def check_blocked_matmul(out: str) -> None:
    from gpukb.gemm.blocking import largest_block, reuse_analysis

    lines = out.splitlines()
    assert lines[0] == "result matches C + A·B: True"
    (one,) = reuse_analysis(64, 64, 64, 16)
    c_moves = one.c_loads + one.c_stores
    assert lines[1] == f"moved {one.moves:,} elements: A {one.a_loads:,}, B {one.b_loads:,}, C {c_moves:,}"
    assert lines[2] == f"formula (2N+2)·n² with N=4: {(2 * 4 + 2) * 64 * 64:,}"
    assert one.moves == (2 * 4 + 2) * 64 * 64
    assert lines[3] == f"flops per element moved: {2 * 64**3 / one.moves:.2f}"
    levels = re.findall(
        r"^level (\d) tile \((\d+), (\d+), (\d+)\): counted ([\d,]+), formula ([\d,]+), holds (\d+)$", out, re.M
    )
    assert [lv[:4] for lv in levels] == [("1", "32", "32", "16"), ("2", "8", "8", "4")]
    for (_, bm, bn, bk, counted, formula, holds), want in zip(
        levels, reuse_analysis(64, 64, 64, [(32, 32, 16), (8, 8, 4)]), strict=True
    ):
        assert counted == formula == f"{want.moves:,}"
        assert int(holds) == int(bm) * int(bk) + int(bk) * int(bn) + int(bm) * int(bn)
    lru = re.findall(r"^LRU cache of 768 elements, block (\d+): ([\d,]+) moves \(formula ([\d,]+)\)$", out, re.M)
    assert [int(b) for b, _, _ in lru] == [largest_block(768), 2 * largest_block(768)] == [16, 32]
    (fits, _, formula_fits), (too_big, _, formula_big) = [(m, b, f) for b, m, f in lru]
    assert fits == formula_fits  # three 16×16 tiles fit in 768 elements: the cache moves what the analysis says
    assert int(too_big.replace(",", "")) > 10 * int(formula_big.replace(",", ""))  # 32×32 tiles do not


def check_gemm_emulate(out: str) -> None:
    import ml_dtypes

    pattern = (
        r"^A (e4m3|e5m2), B e4m3, D bf16, (no scales|scales (\S+), (\S+))\s+relative error (\S+) \(max abs (\S+)\)$"
    )
    rows = re.findall(pattern, out, re.M)
    assert [(r[0], r[1] == "no scales") for r in rows] == [
        ("e4m3", True),
        ("e4m3", False),
        ("e5m2", True),
        ("e5m2", False),
    ]
    # Recompute every row with ml_dtypes' casts and a float32 matrix product instead of gpukb's emulator.
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((64, 512)) * 1e-3, rng.standard_normal((512, 32))
    exact = x @ w
    formats = {"e4m3": (ml_dtypes.float8_e4m3fn, 448.0), "e5m2": (ml_dtypes.float8_e5m2, 57344.0)}
    errors = {}
    for a_type, label, sx_text, sw_text, frobenius, max_abs in rows:
        dtype, top = formats[a_type]
        sx, sw = (1.0, 1.0) if label == "no scales" else (top / np.abs(x).max(), 448.0 / np.abs(w).max())
        if label != "no scales":
            assert (float(sx_text), float(sw_text)) == pytest.approx((sx, sw), rel=1e-3)
        xs = (x * sx).astype(np.float32).astype(dtype).astype(np.float32)
        ws = (w * sw).astype(np.float32).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
        d = ((xs @ ws).astype(np.float64) / (sx * sw)).astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)
        diff = d - exact
        assert float(frobenius) == pytest.approx(np.linalg.norm(diff) / np.linalg.norm(exact), abs=2e-4)
        assert float(max_abs) == pytest.approx(np.abs(diff).max() / np.abs(exact).max(), abs=2e-4)
        errors[(a_type, label == "no scales")] = float(frobenius)
    assert errors[("e4m3", True)] > 10 * errors[("e4m3", False)]  # E4M3 needs the scale: its range is narrow
    assert errors[("e5m2", True)] == pytest.approx(errors[("e5m2", False)], rel=0.1)  # E5M2's range covers 0.001
    assert 1.3 < errors[("e5m2", False)] / errors[("e4m3", False)] < 1.9  # one mantissa bit fewer in A


def check_batched_gemm(out: str) -> None:
    import torch

    fields = dict(line.split(": ", 1) for line in out.splitlines() if line.startswith(("device", "largest")))
    assert fields["device"] == ("cuda" if torch.cuda.is_available() else "cpu")
    assert "A: (64, 32, 32)  B: (64, 32, 32)  shared B: (32, 32)" in out
    assert "loop out: (64, 32, 32)  bmm out: (64, 32, 32)  one GEMM out: (64, 32, 32)" in out
    diffs = {
        k.removeprefix("largest difference from torch.bmm, "): float(v) for k, v in fields.items() if k != "device"
    }
    assert set(diffs) == {"loop", "loop, shared B", "one_gemm"}
    assert all(0 <= d < 1e-4 for d in diffs.values())  # fp32 products of 32 terms: the forms agree
    flops, nbytes = 64 * 2 * 32**3, 64 * 3 * 32 * 32 * 4
    assert f"work: {flops:,} FLOPs over {nbytes:,} bytes ({flops / nbytes:.1f} FLOP/byte)" in out


def check_triton_matmul(out: str) -> None:
    import torch

    from gpukb.gemm.triton.configs import INTERPRETER_CONFIG

    fields = dict(line.split(": ", 1) for line in out.splitlines())
    if not torch.cuda.is_available():  # the interpreter's tiles; on a GPU the label is whatever default_config picks
        assert fields["device"] == f"cpu, kernel: {INTERPRETER_CONFIG.label}"
    assert fields["C"] == "(100, 56) float16"
    gen = torch.Generator().manual_seed(0)  # the snippet's operands, rebuilt here
    a, b = torch.randn(100, 72, generator=gen).half(), torch.randn(72, 56, generator=gen).half()
    largest = (a.double() @ b.double()).abs().max().item()
    assert float(fields["largest |A@B|"]) == pytest.approx(largest, rel=1e-5)
    # One rounding of a float32 sum to fp16: within half an ulp, at most 2^-11 of the largest entry.
    assert 0 < float(fields["max |C - A@B| (float64)"]) <= 2**-11 * largest * (1 + 1e-5)
    # torch's product is within half an ulp of the exact value too, so the two differ by at most one ulp.
    assert float(fields["max |C - torch.matmul(A, B)|"]) <= 2**-10 * largest * (1 + 1e-5)


CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/gemm/batched_gemm.py": check_batched_gemm,
    "snippets/gemm/blocked_matmul.py": check_blocked_matmul,
    "snippets/gemm/check_combination.py": check_gemm_check_combination,
    "snippets/gemm/cublaslt_matmul.cu": check_cublaslt_matmul,  # compiled with nvcc, run on the GPU
    "snippets/gemm/emulate.py": check_gemm_emulate,
    "snippets/gemm/triton_matmul.py": check_triton_matmul,
}
