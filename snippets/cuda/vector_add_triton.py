"""The same vector add in Triton: one program per block of 1024 elements, checked against torch.

Without a CUDA GPU the kernel runs in Triton's interpreter (numpy on the CPU).
"""

# --8<-- [start:example]
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # run Triton kernels on the CPU; set before the first launch

from gpukb.cuda.triton_kernels import add

device = "cuda" if torch.cuda.is_available() else "cpu"
gen = torch.Generator().manual_seed(0)
n = 3000  # three programs of 1024 elements, the last one partly masked
a, b = torch.rand(n, generator=gen).to(device), torch.rand(n, generator=gen).to(device)
c = add(a, b)
print(f"n = {n}, programs = {-(-n // 1024)}, max |c - (a + b)| = {(c - (a + b)).abs().max().item()}")
# --8<-- [end:example]
