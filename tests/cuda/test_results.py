"""What the chapter's pages conclude from the recorded H100 runs, asserted on the committed records (read with json):
if a re-recorded file stops supporting a sentence, a test here fails."""

from __future__ import annotations

import json
from typing import Any

from tests.helpers import ROOT

RESULTS = ROOT / "src/gpukb/data/results/cuda"


def _record(name: str) -> dict[str, Any]:
    return json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))


def _copy(kernel: str, dtype: str) -> dict[str, Any]:
    (row,) = [r for r in _record("copy-width-h100")["rows"] if r["kernel"].startswith(kernel) and r["dtype"] == dtype]
    return row


def test_u16_is_slower_than_u32_only_when_each_thread_moves_one_element() -> None:
    """The erratum ``u16-copy-half-speed``: one element per thread, narrow types copy slower; at 16 bytes per thread
    the gap closes, and a 16-byte vector copy matches torch's copy."""
    one16, one32 = _copy("one per thread", "u16"), _copy("one per thread", "u32")
    wide16, wide32 = _copy("16 B per thread, narrow", "u16"), _copy("16 B per thread, narrow", "u32")
    vector = _copy("16 B per thread, vector", "u128")
    assert one16["median_ms"] > 1.3 * one32["median_ms"]  # per element: u16 clearly slower ...
    assert one16["median_ms"] < 2 * one32["median_ms"]  # ... but not twice as slow on the H100
    assert wide16["median_ms"] < 1.15 * wide32["median_ms"]  # 16 bytes per thread: nearly the same
    assert _copy("one per thread", "u8")["median_ms"] > one16["median_ms"]  # narrower still is slower still
    assert vector["ratio_to_torch"] > 0.95
    for dtype in ("u8", "u16", "u32", "u64"):  # more bytes per thread never hurts
        assert _copy("16 B per thread, narrow", dtype)["gbps"] >= _copy("one per thread", dtype)["gbps"]


def test_pinned_memory_beats_pageable_for_large_transfers() -> None:
    rows = _record("transfers-h100")["rows"]
    largest = max(r["bytes"] for r in rows)
    for direction in ("H2D", "D2H"):
        pinned = next(
            r for r in rows if (r["direction"], r["host_memory"], r["bytes"]) == (direction, "pinned", largest)
        )
        pageable = next(
            r for r in rows if (r["direction"], r["host_memory"], r["bytes"]) == (direction, "pageable", largest)
        )
        assert pinned["gbps"] > 3 * pageable["gbps"]
    page = {(r["direction"], r["bytes"]): r["gbps"] for r in rows if r["host_memory"] == "pageable"}
    assert page[("H2D", largest)] < page[("H2D", 16 * 2**20)]  # the memory page's remark on this run
    smallest = min(r["bytes"] for r in rows)
    small = [r["gbps"] for r in rows if r["bytes"] == smallest]
    assert max(small) < 0.05 * max(r["gbps"] for r in rows)  # a 4 KiB copy is all latency


def test_every_recorded_kernel_was_checked_before_it_was_timed() -> None:
    rows = _record("kernels-h100")["rows"]
    assert rows
    assert all(r["correct"] for r in rows)


def _kernel(group: str, start: str) -> dict[str, Any]:
    (row,) = [r for r in _record("kernels-h100")["rows"] if r["group"] == group and r["kernel"].startswith(start)]
    return row


def test_what_the_kernels_page_says_about_reductions_histograms_and_matmul() -> None:
    atomic, shared, warp = (_kernel("reduction", m) for m in ("atomic", "shared", "warp"))
    assert min(warp["ratio"], shared["ratio"]) > 0.9  # both block-level reductions run at memory speed ...
    assert abs(warp["ratio"] - shared["ratio"]) < 0.05  # ... within a few percent of each other
    assert atomic["ratio"] < 0.01  # one atomic per element crawls
    one_bin_global = _kernel("histogram", "global atomics, one bin")
    assert one_bin_global["median_ms"] > 2 * _kernel("histogram", "global atomics, uniform")["median_ms"]
    one_bin_shared = _kernel("histogram", "shared atomics, one bin")
    copy_gbps = _kernel("copy", "copy, BLOCK")["peer_rate"]
    assert one_bin_shared["rate"] > 0.4 * copy_gbps  # read at about half the copy bandwidth
    assert one_bin_shared["ratio"] > 10  # far faster than torch.bincount
    t16, t32 = _kernel("matmul", "tiled, 16x16"), _kernel("matmul", "tiled, 32x32")
    assert abs(t32["rate"] / t16["rate"] - 1) < 0.1  # the bigger tile does no better
    assert t16["ratio"] < 0.5  # a teaching kernel, far from cuBLAS
