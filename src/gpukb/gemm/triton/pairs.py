"""The Triton GEMM paired with cuBLAS, as ``gpukb bench`` measures it: square bf16 products
(``triton-gemm-bf16``) and the shape sweep of :mod:`gpukb.gemm.triton.sweep` (``triton-gemm-sweep-bf16``,
``-fp16`` and ``-fp8``). The chapter declares :func:`pairs` (``Chapter.kernel_pairs``).

Importing this module imports neither torch nor triton; they are imported when a pair is first measured.
"""

from __future__ import annotations

from typing import Any

from gpukb.measuring.counting import gemm_bytes, gemm_flops
from gpukb.measuring.pairs import KernelPair

#: The cases ``gpukb bench`` measures the Triton GEMM on: square bf16 products.
GEMM_CASES = ("4096x4096x4096", "8192x8192x8192")


def parse_case(case: str) -> tuple[int, int, int]:
    """``"MxNxK"`` → ``(M, N, K)``.

    Raises:
        ValueError: For anything but three positive integers joined by ``x``.
    """
    parts = case.split("x") if isinstance(case, str) else []
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"a GEMM case is 'MxNxK' with positive integers, e.g. '4096x4096x4096'; got {case!r}")
    m, n, k = (int(p) for p in parts)
    return m, n, k


# pragma: no mutate start
# GPU only (CUDA tensors, the driver's launchers): the CPU tests cannot reach it and the GPU tests do, so
# it stays out of the CPU mutation run.
def _gemm_inputs(case: str) -> dict[str, Any]:
    import torch

    m, n, k = parse_case(case)
    return {
        "a": torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
        "b": torch.randn(k, n, device="cuda", dtype=torch.bfloat16),
        "out": torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16),
        "peer_out": torch.empty(m, n, device="cuda", dtype=torch.bfloat16),
    }


def _gemm_kernel(x: dict[str, Any]) -> Any:
    from gpukb.gemm.triton.matmul import matmul

    return matmul(x["a"], x["b"], out=x["out"])


def _gemm_peer(x: dict[str, Any]) -> Any:
    import torch

    return torch.matmul(x["a"], x["b"], out=x["peer_out"])


def _gemm_check(out: Any, ref: Any) -> None:
    import torch

    from gpukb.numerics import relative_error

    assert bool(torch.isfinite(out).all()), "the Triton GEMM left elements of its output unwritten (NaN)"
    diff = relative_error(out, ref)
    assert diff < 1e-2, f"the Triton GEMM differs from cuBLAS by {diff:.3g} (relative Frobenius norm)"


GEMM_PAIR = KernelPair(
    name="triton-gemm-bf16",
    peer="torch.matmul (cuBLAS)",
    cases=GEMM_CASES,
    make_inputs=_gemm_inputs,
    kernel=_gemm_kernel,
    reference=_gemm_peer,
    flops=lambda case: gemm_flops(*parse_case(case)),
    nbytes=lambda case: gemm_bytes(*parse_case(case), a_bytes=2),
    check=_gemm_check,
)


# pragma: no mutate end
def pairs() -> list[KernelPair]:
    """The Triton GEMM's pairs: square bf16 products, then the shape sweep (bf16, fp16, FP8)."""
    from gpukb.gemm.triton.sweep import pairs as sweep_pairs

    return [GEMM_PAIR, *sweep_pairs()]
