"""The same vector add in Triton: one program per block of 1024 elements, checked against torch.

Without a GPU, run it on Triton's interpreter: TRITON_INTERPRET=1 python vector_add_triton.py
"""

# --8<-- [start:example]
import torch

from gpukb.cuda.triton_kernels import add

device = "cuda" if torch.cuda.is_available() else "cpu"
gen = torch.Generator().manual_seed(0)
n = 3000  # three programs of 1024 elements, the last one partly masked
a, b = torch.rand(n, generator=gen).to(device), torch.rand(n, generator=gen).to(device)
c = add(a, b)
print(f"n = {n}, programs = {-(-n // 1024)}, max |c - (a + b)| = {(c - (a + b)).abs().max().item()}")
# --8<-- [end:example]
