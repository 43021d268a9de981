"""A shared-memory tiled matrix multiply in numba CUDA, checked against numpy.

Without a GPU, run it on numba's simulator: NUMBA_ENABLE_CUDASIM=1 python matmul_tiled.py
"""

# --8<-- [start:example]
import numpy as np

from gpukb.cuda.kernels import tiled_matmul

rng = np.random.default_rng(0)
a = rng.standard_normal((7, 10), dtype=np.float32)  # sizes that are not multiples of the tile
b = rng.standard_normal((10, 6), dtype=np.float32)
c = tiled_matmul(a, b, tile=4)
exact = a.astype(np.float64) @ b.astype(np.float64)
print(f"C {c.shape}: max |C - A@B| = {np.abs(c - exact).max():.2e} (largest |A@B| {np.abs(exact).max():.2f})")
# --8<-- [end:example]
