"""Simulate a ring all-reduce on four ranks in numpy and count the bytes each rank sends."""

# --8<-- [start:example]
import numpy as np

from gpukb.distributed.collectives import bandwidths, ring_all_reduce

p = 4
arrays = [np.full(1024, rank + 1, dtype=np.float32) for rank in range(p)]  # 4 KiB per rank
result = ring_all_reduce(arrays)
size = arrays[0].nbytes
print("every rank holds the sum:", all((out == 1 + 2 + 3 + 4).all() for out in result.outputs))
print("steps:", result.steps)
print("bytes sent per rank:", result.bytes_sent_per_rank[0], "= 2(p-1)/p * S =", 2 * (p - 1) * size // p)
algbw, busbw = bandwidths("all_reduce", size_bytes=1 << 30, seconds=0.01, ranks=p)
print(f"1 GiB in 10 ms on {p} ranks: algbw {algbw / 1e9:.1f} GB/s, busbw {busbw / 1e9:.1f} GB/s")
# --8<-- [end:example]
