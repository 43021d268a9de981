"""Multiply two matrices by blocks, count what moves between levels of memory, and compare with the analysis."""

# --8<-- [start:example]
import numpy as np

from gpukb.gemm.blocking import blocked_matmul, largest_block, lru_traffic, reuse_analysis, slides_moves

n = 64
rng = np.random.default_rng(0)
a, b, c = rng.standard_normal((n, n)), rng.standard_normal((n, n)), rng.standard_normal((n, n))

# One level of 16×16 tiles: N = 64 / 16 = 4 tiles per side.
run = blocked_matmul(a, b, c, tiles=16)
level = run.levels[0]
print("result matches C + A·B:", np.allclose(run.result, c + a @ b))
print(f"moved {level.moves:,} elements: A {level.a_loads:,}, B {level.b_loads:,}, C {level.c_loads + level.c_stores:,}")
print(f"formula (2N+2)·n² with N=4: {slides_moves(n, 4):,}")
print(f"flops per element moved: {2 * n**3 / level.moves:.2f}")

# Two levels (as shared memory, then registers, on a GPU): each level's counts against the closed form.
tiles = [(32, 32, 16), (8, 8, 4)]
counted = blocked_matmul(a, b, c, tiles).levels
for got, want in zip(counted, reuse_analysis(n, n, n, tiles), strict=True):
    print(f"level {got.level} tile {got.tile}: counted {got.moves:,}, formula {want.moves:,}, holds {got.footprint}")

# The same loop nest through an LRU cache of M elements: blocks of √(M/3) fit, larger ones thrash.
fast = 768
b_best = largest_block(fast)
for size in (b_best, 2 * b_best):
    loads, stores = lru_traffic(32, 32, 32, size, capacity=fast)
    formula = reuse_analysis(32, 32, 32, size)[0].moves
    print(f"LRU cache of {fast} elements, block {size}: {loads + stores:,} moves (formula {formula:,})")
# --8<-- [end:example]
