"""Vector add with one thread per element, and a 2D grid adding two matrices, in numba CUDA.

Without a GPU, run it on numba's simulator: NUMBA_ENABLE_CUDASIM=1 python vector_add_numba.py
"""

# --8<-- [start:example]
import numpy as np

from gpukb.cuda.kernels import add_2d, blocks, vector_add

rng = np.random.default_rng(0)
n, threads = 100, 64  # n is not a multiple of the block size: the last block has idle threads
a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
c = vector_add(a, b, threads)
print(f"vector add: {blocks(n, threads)} blocks of {threads} threads, max |c - (a + b)| = {np.abs(c - (a + b)).max()}")

x, y = rng.random((13, 7), dtype=np.float32), rng.random((13, 7), dtype=np.float32)
z = add_2d(x, y, block=(4, 4))  # a grid of ceil(7/4) x ceil(13/4) = 2 x 4 blocks
print(f"2D add {x.shape}: max |z - (x + y)| = {np.abs(z - (x + y)).max()}")
# --8<-- [end:example]
