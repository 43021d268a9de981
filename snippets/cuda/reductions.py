"""Three ways to sum an array on the GPU, and a histogram by atomics, in numba CUDA.

Without a GPU, run it on numba's simulator: NUMBA_ENABLE_CUDASIM=1 python reductions.py
"""

# --8<-- [start:example]
import numpy as np

from gpukb.cuda.kernels import REDUCTIONS, histogram, reduce_sum

rng = np.random.default_rng(0)
x = rng.integers(1, 100, 200).astype(np.float32)  # integers: every order of addition gives the exact sum
for method in REDUCTIONS:
    print(f"{method:<6} sum = {reduce_sum(x, method, threads=32, grid=2):.1f}")
print(f"numpy  sum = {x.sum(dtype=np.float64):.1f}")

values = rng.integers(0, 8, 100).astype(np.int32)
for shared in (False, True):
    where = "shared" if shared else "global"
    print(f"histogram ({where} atomics):", histogram(values, 8, shared=shared, threads=32, grid=2).tolist())
print("numpy bincount:              ", np.bincount(values, minlength=8).tolist())
# --8<-- [end:example]
