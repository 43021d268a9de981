"""Matrix-product throughput per element type over a sweep of shapes, in the spirit of a MAMF probe.

The "maximum achievable matmul FLOPS" of a GPU is not its datasheet peak: it is the best rate a library reaches
on some shape. This suite measures ``torch.mm`` (cuBLAS) in fp32 (TF32 off), tf32 (fp32 storage, TF32 tensor
cores), fp16 and bf16, and fp8 (E4M3) through ``torch._scaled_mm``, over square sizes, a grid of M, N, K for the
tensor-core types, and sizes around 8192 that break or keep 16-element alignment.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import Any

from gpukb.dtypes import torch_dtype
from gpukb.measuring.counting import gemm_flops
from gpukb.measuring.stats import summarize
from gpukb.numerics import relative_error
from gpukb.performance.results import GemmRecord
from gpukb.performance.suites import Context, first_line

DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")
SQUARES = {
    "full": (256, 512, 1024, 2048, 4096, 6144, 8192, 12288, 16384),
    "quick": (1024, 4096),
}
GRID = {"full": (4096, 8192, 12288, 16384), "quick": ()}
GRID_DTYPES = ("tf32", "fp16", "bf16", "fp8")
ALIGNMENT = {"full": (8176, 8184, 8188, 8190, 8191, 8192, 8193, 8200), "quick": (4095, 4096)}
ALIGNMENT_DTYPE = "bf16"
#: The size at which each element type's result is compared with a float64 product.
CHECK_SIZE = 1024


def cases(mode: str) -> list[tuple[str, str, int, int, int]]:
    """The (dtype, sweep, m, n, k) cases of a mode, in the order they run.

    Raises:
        ValueError: For a mode other than ``"quick"`` or ``"full"``.
    """
    if mode not in SQUARES:
        raise ValueError(f"mode must be one of {sorted(SQUARES)}; got {mode!r}")
    out = [(dtype, "square", s, s, s) for dtype in DTYPES for s in SQUARES[mode]]
    out += [
        (dtype, "grid", m, n, k)
        for dtype in GRID_DTYPES
        for m, n, k in itertools.product(GRID[mode], repeat=3)
        if not m == n == k  # the squares are measured already
    ]
    out += [(ALIGNMENT_DTYPE, "alignment", s, s, s) for s in ALIGNMENT[mode]]
    return out


@contextlib.contextmanager
def math_mode(torch: Any, dtype: str) -> Iterator[None]:
    """Allow TF32 for ``tf32`` and forbid it for ``fp32``; restore the previous setting afterwards."""
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


def operands(torch: Any, dtype: str, m: int, n: int, k: int) -> tuple[Any, Any, Any]:
    """Random A (m×k) and B (k×n) of an element type, and the function that multiplies them.

    fp8 follows ``torch._scaled_mm``'s contract: A row-major, B column-major (the transpose of a contiguous
    n×k tensor), float32 scale tensors, a bf16 result.
    """
    dev = "cuda"
    if dtype in ("fp32", "tf32", "fp16", "bf16"):
        a = torch.randn(m, k, device=dev, dtype=torch_dtype(dtype))
        b = torch.randn(k, n, device=dev, dtype=torch_dtype(dtype))
        c = torch.empty(m, n, device=dev, dtype=torch_dtype(dtype))
        return a, b, lambda: torch.mm(a, b, out=c)
    if dtype == "fp8":
        fp8 = torch.float8_e4m3fn
        a = torch.randn(m, k, device=dev).to(fp8)
        b = torch.randn(n, k, device=dev).to(fp8).t()
        one = torch.ones((), device=dev, dtype=torch.float32)

        def scaled_mm():
            out = torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            return out[0] if isinstance(out, tuple) else out

        return a, b, scaled_mm
    raise ValueError(f"dtype must be one of {list(DTYPES)}; got {dtype!r}")


def row_alignment(elements: int, elem_bytes: int) -> int:
    """The largest power of two, up to 16 bytes, that divides a row of ``elements`` elements (the alignment
    sweep's sizes keep or break the 16-byte rows Hopper's tensor memory accelerator needs)."""
    nbytes = elements * elem_bytes
    return next(d for d in (16, 8, 4, 2, 1) if nbytes % d == 0)


def run(ctx: Context) -> list[GemmRecord]:
    """Measure every case of the context's mode; a case a library refuses is recorded with its error."""
    torch = ctx.torch
    todo = cases(ctx.mode)
    records = []
    for index, (dtype, sweep, m, n, k) in enumerate(todo, start=1):
        fields: dict = {"ms": None, "tflops": None}
        try:
            with math_mode(torch, dtype):
                a, b, fn = operands(torch, dtype, m, n, k)
                if sweep == "square" and m == CHECK_SIZE:
                    # the reference is a float64 product of the same (rounded) operands
                    fields["rel_error"] = relative_error(fn(), a.float().double() @ b.float().double())
                measured = ctx.measure(fn)
                ms = summarize(measured.samples)
            fields["ms"] = ms
            fields["clocks"] = measured.window
            fields["tflops"] = gemm_flops(m, n, k) / (ms.median * 1e-3) / 1e12
            line = f"{fields['tflops']:8.1f} TFLOP/s (IQR {100 * ms.spread:.1f}%)"
        except RuntimeError as err:  # includes torch.cuda.OutOfMemoryError
            fields["error"] = first_line(err)
            line = fields["error"]
        finally:
            a = b = fn = measured = None
        records.append(GemmRecord(dtype=dtype, sweep=sweep, m=m, n=n, k=k, **fields))
        ctx.progress(f"gemm {index}/{len(todo)} {dtype:>4} {sweep:<9} {m}x{n}x{k}: {line}")
    ctx.notes.append(
        "gemm: torch.mm into a preallocated output; fp32 with torch.backends.cuda.matmul.allow_tf32=False, tf32 "
        "with it True; fp8 is torch._scaled_mm(A e4m3fn row-major, B e4m3fn column-major, scale_a=scale_b="
        "float32 scalar tensor 1.0, out_dtype=bfloat16); L2 flushed (a read of a buffer four times its size) "
        "before each timed call"
    )
    return records
