"""On a CUDA GPU: the read flush (clean lines) against the write flush (dirty lines) on a copy that fits in L2.

A write flush leaves L2 full of dirty lines; the next timed call pays for writing them back, so it measures the
copy slower than it runs. The read flush leaves clean lines, which the copy can simply replace. The test times
the same 16 MiB copy after each flush, alternating rounds, and asserts that the clean flush never measures it
slower (within 3%, the noise of one round).
"""

from __future__ import annotations

import statistics

import pytest

from gpukb.measuring.counting import copy_bytes
from gpukb.measuring.timing import Budget, EventTimer, L2Flusher, benchmark

pytestmark = pytest.mark.gpu

COPY_BYTES = 16 * 2**20
ROUNDS = 3


def test_the_read_flush_measures_a_copy_no_slower_than_the_write_flush() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    l2 = int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0))
    src = torch.randint(0, 256, (COPY_BYTES,), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    timer, budget = EventTimer(torch), Budget(warmup_ms=10, rep_ms=50, min_reps=20, max_reps=200)
    rates: dict[str, list[float]] = {"read": [], "write": []}
    for _ in range(ROUNDS):
        for method in ("write", "read"):
            flush = L2Flusher(torch, l2, method)
            ms = statistics.median(benchmark(lambda: dst.copy_(src), timer, budget, flush).samples)
            rates[method].append(copy_bytes(COPY_BYTES) / (ms * 1e-3) / 1e9)
            del flush
    read, write = statistics.median(rates["read"]), statistics.median(rates["write"])
    print(f"16 MiB copy: read flush {read:.0f} GB/s, write flush {write:.0f} GB/s (rounds: {rates})")
    assert read >= 0.97 * write
    assert torch.equal(dst, src)


def test_the_read_flush_leaves_its_buffer_and_reads_all_of_it() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    flush = L2Flusher(torch, int(torch.cuda.get_device_properties(0).L2_cache_size))
    flush()
    torch.cuda.synchronize()
    assert int(flush.total) == flush.buffer.numel()  # every word (all ones) was read
