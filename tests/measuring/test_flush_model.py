"""The flush the suites use leaves no dirty lines, in the write-back cache model the measuring page describes
(:class:`gpukb.measuring.timing.WriteBackCache`), and the flusher's two methods do what they say on the CPU."""

from __future__ import annotations

import pytest

from gpukb.measuring.timing import FLUSH_METHODS, L2Flusher, WriteBackCache

LINES = 64  # a small cache; the flush buffer is four times its size, as L2Flusher's is at least


def _copy(cache: WriteBackCache, lines: int, src: int = 0, dst: int = 1 << 20) -> None:
    """A copy of ``lines`` lines: read a source line, write a destination line."""
    for i in range(lines):
        cache.access(src + i, write=False)
        cache.access(dst + i, write=True)


def _writebacks_of_a_timed_copy(method: str) -> int:
    cache = WriteBackCache(LINES)
    _copy(cache, LINES // 4)  # the previous call leaves some dirty lines of its own
    cache.flush(method, 4 * LINES)
    before = cache.writebacks
    _copy(cache, LINES // 4)  # the timed call
    return cache.writebacks - before


def test_the_read_flush_leaves_no_dirty_lines() -> None:
    cache = WriteBackCache(LINES)
    _copy(cache, LINES)
    assert cache.dirty_lines() > 0
    cache.flush("read", 4 * LINES)
    assert cache.dirty_lines() == 0
    assert len(cache.cached) == LINES  # the cache is full, of the flush buffer's clean lines


def test_the_write_flush_leaves_every_line_dirty() -> None:
    cache = WriteBackCache(LINES)
    cache.flush("write", 4 * LINES)
    assert cache.dirty_lines() == LINES


def test_only_the_write_flush_makes_the_timed_call_write_back() -> None:
    assert _writebacks_of_a_timed_copy("read") == 0
    # each of the copy's 2 × LINES/4 new lines evicts one of the flush's dirty lines
    assert _writebacks_of_a_timed_copy("write") == 2 * (LINES // 4)


def test_the_model_refuses_bad_arguments() -> None:
    with pytest.raises(ValueError, match="the number of cache lines must be an int ≥ 1; got 0"):
        WriteBackCache(0)
    with pytest.raises(ValueError, match="method must be one of"):
        WriteBackCache(4).flush("zero", 8)


def test_the_flusher_reads_by_default_and_leaves_its_buffer_unchanged() -> None:
    torch = pytest.importorskip("torch")
    flush = L2Flusher(torch, 0, device="cpu")
    assert flush.method == "read" == FLUSH_METHODS[0]
    flush()
    assert int(flush.total) == flush.buffer.numel()  # every word was read
    assert bool((flush.buffer == 1).all())  # and none written


def test_the_write_flusher_overwrites_its_buffer() -> None:
    torch = pytest.importorskip("torch")
    flush = L2Flusher(torch, 0, "write", device="cpu")
    flush()
    assert int(flush.buffer.sum()) == 0


def test_the_flusher_refuses_an_unknown_method() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="method must be one of \\['read', 'write'\\]; got 'zero'"):
        L2Flusher(torch, 0, "zero", device="cpu")
