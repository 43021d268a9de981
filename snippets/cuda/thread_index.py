"""Thread-index arithmetic: the global index of one thread, and every thread of a 2D launch of 72 threads."""

# --8<-- [start:example]
from gpukb.cuda.indexing import blocks_for, global_index_1d, launch_table, linear_index

# 8 threads per block: thread 5 of block 2 handles element 2 * 8 + 5
print("global index:", global_index_1d(block_idx=2, block_dim=8, thread_idx=5))

# 50,000 elements in blocks of 256 threads need ceil(50000 / 256) blocks
print("blocks for 50,000 elements:", blocks_for(50_000, 256))

# A grid of 3 x 2 blocks, each of 4 x 3 threads: 6 blocks, 12 threads each, 72 threads
headers, rows = launch_table(grid_dim=(3, 2), block_dim=(4, 3))
print("threads:", len(rows))
print("distinct row-major indices:", len({row[3] for row in rows}))
print("block (1, 1), thread (2, 1) -> row-major index", linear_index((1, 1), (4, 3), (2, 1), (3, 2)))
# --8<-- [end:example]
