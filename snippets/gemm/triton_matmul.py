"""Multiply two fp16 matrices with the project's Triton GEMM and compare the result with float64 and torch.

Without a CUDA GPU the kernel runs in Triton's interpreter (numpy on the CPU, one program at a time), which is
why the matrices are small.
"""

# --8<-- [start:example]
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # run Triton kernels on the CPU; set before the first launch

from gpukb.gemm.triton.matmul import default_config, matmul

device = "cuda" if torch.cuda.is_available() else "cpu"
gen = torch.Generator().manual_seed(0)
a = torch.randn(100, 72, generator=gen).half().to(device)  # M×K: the edge tiles hang over M
b = torch.randn(72, 56, generator=gen).half().to(device)  # K×N
c = matmul(a, b)  # fp16 in, float32 accumulation, fp16 out

exact = a.double() @ b.double()
print(f"device: {device}, kernel: {default_config(a, b, c).label}")
print(f"C: {tuple(c.shape)} {str(c.dtype).removeprefix('torch.')}")
print(f"largest |A@B|: {exact.abs().max().item():.6g}")
print(f"max |C - A@B| (float64): {(c.double() - exact).abs().max().item():.6g}")
print(f"max |C - torch.matmul(A, B)|: {(c - torch.matmul(a, b)).abs().max().item():.6g}")
# --8<-- [end:example]
