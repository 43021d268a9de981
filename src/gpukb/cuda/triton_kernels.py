"""The vector add in Triton, next to the CUDA version: a program handles a block of elements, not one.

In CUDA each *thread* computes its own index and handles one element. In Triton each *program* (one instance of
the kernel, which Triton maps to a block of threads) computes a vector of ``BLOCK`` offsets with ``tl.arange`` and
loads, adds and stores the whole vector with a mask for the tail; how the vector is spread over threads, and how
wide each thread's loads are, is the compiler's choice. Runs on the CPU with ``TRITON_INTERPRET=1``.
"""

from __future__ import annotations

# ruff: noqa: N803  (Triton names compile-time block sizes in capitals)
import triton
import triton.language as tl


# --8<-- [start:kernel]
@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)  # which block of BLOCK elements this program handles
    offsets = pid * BLOCK + tl.arange(0, BLOCK)  # a vector of BLOCK indices
    mask = offsets < n  # the last program may stick out past the end
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(c_ptr + offsets, a + b, mask=mask)


def add(a, b, block: int = 1024):
    """``a + b`` for two torch tensors of one shape on one device, by :func:`add_kernel`."""
    import torch

    if a.shape != b.shape or a.device != b.device:
        raise ValueError(
            f"add needs tensors of one shape on one device; got {a.shape} on {a.device}, {b.shape} on {b.device}"
        )
    c = torch.empty_like(a)
    n = a.numel()
    grid = (triton.cdiv(n, block),)  # one program per block of elements
    add_kernel[grid](a, b, c, n, BLOCK=block)
    return c
    # --8<-- [end:kernel]


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    """``dst = src``, one program per ``BLOCK`` elements (the bandwidth benchmark's Triton copy)."""
    offsets = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)
