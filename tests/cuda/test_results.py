"""What the chapter's pages conclude from the recorded H100 runs, asserted on the committed records (read with json):
if a re-recorded file stops supporting a sentence, a test here fails."""

from __future__ import annotations

import itertools
import json
import re
import statistics
from typing import Any

import pytest

from tests.helpers import ROOT, markdown_tables

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
    assert one16["ms"]["median"] > 1.3 * one32["ms"]["median"]  # per element: u16 clearly slower ...
    assert one16["ms"]["median"] < 2 * one32["ms"]["median"]  # ... but not twice as slow on the H100
    assert wide16["ms"]["median"] < 1.15 * wide32["ms"]["median"]  # 16 bytes per thread: nearly the same
    assert _copy("one per thread", "u8")["ms"]["median"] > one16["ms"]["median"]  # narrower still is slower still
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


def test_what_the_memory_page_says_about_pageable_memory_and_small_copies() -> None:
    """The page says the measured H100 cannot touch pageable memory from a kernel (``pageableMemoryAccess`` 0) and
    that the transfer times are the host's around a synchronized copy; both come from the records."""
    from gpukb.cuda.pages.memory import transfers

    page = (ROOT / "docs/cuda/memory.md").read_text(encoding="utf-8")
    reported = _record("device-h100")["properties"]["pageableMemoryAccess"]
    assert f"`pageableMemoryAccess` = 1; the H100 measured here reports {reported}" in page
    assert reported == 0
    (method,) = [n for n in _record("transfers-h100")["run"]["notes"] if "host clock" in n]
    assert "host clock around each synchronized copy" in method
    assert "host clock around each synchronized copy" in transfers()


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
    assert one_bin_global["ms"]["median"] > 2 * _kernel("histogram", "global atomics, uniform")["ms"]["median"]
    one_bin_shared = _kernel("histogram", "shared atomics, one bin")
    copy_gbps = _kernel("copy", "copy, BLOCK")["peer_rate"]
    assert one_bin_shared["rate"] > 0.4 * copy_gbps  # read at about half the copy bandwidth
    assert one_bin_shared["ratio"] > 10  # far faster than torch.bincount
    t16, t32 = _kernel("matmul", "tiled, 16x16"), _kernel("matmul", "tiled, 32x32")
    assert abs(t32["rate"] / t16["rate"] - 1) < 0.1  # the bigger tile does no better
    assert t16["ratio"] < 0.5  # a teaching kernel, far from cuBLAS


def _numba(group: str, kernel: str) -> dict[str, Any]:
    """The numba row of ``group`` named ``kernel`` exactly, or, for a name ending in ``*``, starting so."""
    rows = _record("kernels-h100")["rows"]
    (row,) = [
        r
        for r in rows
        if r["framework"] == "numba"
        and r["group"] == group
        and (r["kernel"].startswith(kernel[:-1]) if kernel.endswith("*") else r["kernel"] == kernel)
    ]
    return row


def test_what_the_kernels_page_says_about_bytes_in_flight() -> None:
    """Interleaved load/store per element falls short of 0.95 however many elements a thread takes; loads first
    reaches it; the grid-stride variant is slower than one tile per thread; 8-byte words gain nothing."""
    for group, one, interleaved, loads_first, stride in (
        (
            "copy",
            "copy, one element per thread",
            ("copy, 4 elements per thread", "copy, 8 elements per thread"),
            ("copy, 4 loads then 4 stores", "copy, 8 loads then 8 stores"),
            "copy, 4 loads then 4 stores, grid-stride*",
        ),
        (
            "vector add",
            "one element per thread",
            ("4 elements per thread", "8 elements per thread"),
            ("4 loads of each input, then 4 stores", "8 loads of each input, then 8 stores"),
            "4 loads of each input then 4 stores, grid-stride*",
        ),
    ):
        for name in interleaved:
            assert _numba(group, one)["ratio"] < _numba(group, name)["ratio"] < 0.95  # helps a little, not enough
        for name in loads_first:
            assert _numba(group, name)["ratio"] >= 0.95
        assert _numba(group, stride)["ratio"] < _numba(group, loads_first[0])["ratio"] - 0.05
    words, four = (
        _numba("copy", "copy, 8-byte words, 4 loads then 4 stores"),
        _numba("copy", "copy, 4 loads then 4 stores"),
    )
    assert words["ratio"] <= four["ratio"]


def _overlap() -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in _record("overlap-h100")["variants"]}


def test_what_the_memory_page_says_about_streams() -> None:
    """One stream gains nothing from chunks; several streams do, four more than two; the four-stream run is within
    the ideal bound's reach (at least 80 % of its speed) and never beats it; every run's output was checked."""
    import statistics

    from gpukb.cuda.overlap import pipeline_bound

    v = _overlap()
    median = {name: statistics.median(x["totals_ms"]) for name, x in v.items()}
    whole, one, two, four = (
        median["whole buffer, one stream"],
        median["8 chunks, one stream"],
        median["8 chunks, two streams"],
        median["8 chunks, four streams"],
    )
    assert one > 0.95 * whole
    assert four < two < 0.8 * one
    single = v["8 chunks, one stream"]["ops"]
    stages = [[o["end_ms"] - o["start_ms"] for o in single if o["op"] == s] for s in ("H2D", "kernel", "D2H")]
    bound = pipeline_bound(*stages)
    assert 0.8 * four < bound < four
    assert all(x["correct"] for x in v.values())
    for x in v.values():  # within a stream, operations never overlap: each starts when the one before it ended
        for stream in range(x["streams"]):
            mine = sorted((o for o in x["ops"] if o["stream"] == stream), key=lambda o: o["start_ms"])
            assert all(a["end_ms"] <= b["start_ms"] + 1e-6 for a, b in itertools.pairwise(mine))


def test_the_copy_in_lane_stalls_on_two_streams_and_not_on_four() -> None:
    from gpukb.cuda.overlap import engine_lanes

    v = _overlap()

    def h2d_gaps(name: str) -> list[float]:
        ops = [(o["op"], o["chunk"], o["start_ms"], o["end_ms"]) for o in v[name]["ops"]]
        lane = sorted(engine_lanes(ops)["H2D"], key=lambda x: x[0])
        return [b[1] - a[2] for a, b in itertools.pairwise(lane)]

    two, four = h2d_gaps("8 chunks, two streams"), h2d_gaps("8 chunks, four streams")
    assert all(g > 0.1 for g in two[1::2])  # before chunks 2, 4, 6: queued behind a copy out on their stream
    assert all(g < 0.02 for g in four)  # back to back


def test_what_the_memory_page_says_about_mapped_and_managed_memory() -> None:
    data = _record("host-memory-h100")
    rows = {(r["method"], r["bytes"]): r for r in data["rows"]}
    sizes = sorted({r["bytes"] for r in data["rows"]})
    assert all(r["correct"] for r in data["rows"])
    largest = sizes[-1]
    t = {m: rows[(m, largest)]["ms"]["median"] for m, _ in rows}
    assert t["mapped-kernel"] < 1.1 * t["pinned-copy-kernel"]  # keeps up with copy + kernel
    for size in sizes[:-1]:  # and is the quicker one below the largest size
        assert rows[("mapped-kernel", size)]["ms"]["median"] < rows[("pinned-copy-kernel", size)]["ms"]["median"]
    for size in sizes[1:]:  # faulting managed memory is the slowest way from 1 MiB up ...
        fault = rows[("managed-fault-kernel", size)]["ms"]["median"]
        others = ("pinned-copy-kernel", "mapped-kernel", "managed-prefetch-kernel")
        assert all(fault > rows[(m, size)]["ms"]["median"] for m in others)
    # ... and at the smallest size prefetch plus kernel took longer than faulting
    assert (
        rows[("managed-prefetch-kernel", sizes[0])]["ms"]["median"]
        > rows[("managed-fault-kernel", sizes[0])]["ms"]["median"]
    )
    assert t["managed-prefetch"] < 1.25 * t["pinned-copy"]  # bulk migration near a copy's speed
    small = rows[("managed-prefetch", sizes[0])]["ms"]["median"]
    assert 0.1 < small < 1.0  # a fixed cost of a few hundred microseconds ...
    assert small > rows[("pinned-copy", sizes[0])]["ms"]["median"]  # ... larger than a small copy's
    assert t["managed-resident-kernel"] < 1.1 * t["device-kernel"]  # resident pages: device speed


# --- schema 1 → 2: every time a summary, nothing invented --------------------------------------------------------

_RUN = {"date": "2026-11-23", "command": "python bench/x.py", "machine": None, "cpu_count": None, "gpu": None,
        "versions": {"python": "3.12.3"}, "notes": ["as run"]}  # fmt: skip


def test_the_conversion_moves_what_was_recorded_and_fills_in_nothing() -> None:
    from gpukb.cuda.results import CONVERSION_NOTES, CopyWidth, HostMemory, KernelBench, Overlap, Transfers, upgrade
    from gpukb.records import parse

    copy_row = {"kernel": "k", "dtype": "u8", "element_bytes": 1, "access_bytes": 1, "bytes_moved": 2,
                "median_ms": 0.5, "p20_ms": 0.4, "p80_ms": 0.7, "gbps": 4.0, "ratio_to_torch": 0.9}  # fmt: skip
    v1 = {"kind": "cuda.copy-width", "schema_version": 1, "run": _RUN, "buffer_bytes": 1, "torch_copy_gbps": 1.0,
          "torch_copy_ms": 0.25, "rows": [copy_row]}  # fmt: skip
    copy = parse(upgrade(v1), "copy", CopyWidth)
    assert copy.rows[0].ms.model_dump() == {"median": 0.5, "n": None, "p20": 0.4, "p80": 0.7}
    assert copy.torch_copy_ms.model_dump() == {"median": 0.25, "n": None, "p20": None, "p80": None}
    assert copy.run.notes == ["as run", CONVERSION_NOTES["cuda.copy-width"]]
    assert v1["rows"][0]["median_ms"] == 0.5  # the input is left as it was

    rows = [{"direction": "H2D", "host_memory": "pinned", "bytes": b, "median_ms": 2.0, "gbps": 1.0}
            for b in (4096, 2**28)]  # fmt: skip
    transfers = parse(upgrade({"kind": "cuda.transfers", "schema_version": 1, "run": _RUN, "link": "x", "rows": rows}),
                      "transfers", Transfers)  # fmt: skip
    assert [(r.ms.median, r.ms.n) for r in transfers.rows] == [(2.0, 20), (2.0, 5)]  # the script's counts by size

    row = {"group": "g", "kernel": "k", "framework": "numba", "size": "s", "median_ms": 1.5, "peer": "p",
           "peer_median_ms": 1.0, "unit": "GB/s", "rate": 1.0, "peer_rate": 1.5, "ratio": 0.66,
           "correct": True}  # fmt: skip
    v1 = {"kind": "cuda.kernels", "schema_version": 1, "run": _RUN, "rows": [row]}
    kernels = parse(upgrade(v1), "k", KernelBench)
    assert (kernels.rows[0].ms.median, kernels.rows[0].peer_ms.median, kernels.rows[0].ms.n) == (1.5, 1.0, None)

    samples = [3.0, 1.0, 2.0, 4.0]
    row = {"method": "pinned-copy", "bytes": 8, "samples_ms": samples, "median_ms": 2.5, "gbps": 1.0, "correct": True}
    host = parse(upgrade({"kind": "cuda.host-memory", "schema_version": 1, "run": _RUN, "free_bytes_at_start": 1,
                          "rows": [row]}), "host", HostMemory)  # fmt: skip
    assert host.rows[0].ms.model_dump() == {"median": 2.5, "q1": 1.75, "q3": 3.25, "min": 1.0, "max": 4.0, "n": 4}
    with pytest.raises(ValueError, match=r"the recorded 2\.4 is not the median of the recorded samples"):
        upgrade({"kind": "cuda.host-memory", "schema_version": 1, "run": _RUN, "rows": [row | {"median_ms": 2.4}]})

    ops = [{"op": op, "chunk": 0, "stream": 0, "start_ms": 0.0, "end_ms": 1.0} for op in ("H2D", "kernel", "D2H")]
    variant = {"name": "v", "streams": 1, "chunks": 1, "totals_ms": [1.0, 3.0, 2.0], "ops": ops, "correct": True}
    v1 = {"kind": "cuda.overlap", "schema_version": 1, "run": _RUN, "total_bytes": 4, "kernel": "k",
          "kernel_iters": 1, "async_engine_count": 2, "variants": [variant]}  # fmt: skip
    over = parse(upgrade(v1), "o", Overlap)
    assert (over.variants[0].ms.median, over.variants[0].ms.min, over.variants[0].ms.max) == (2.0, 1.0, 3.0)

    device = {"kind": "cuda.device", "schema_version": 1}
    assert upgrade(device) is device  # a kind with no schema 2 is left alone


def test_a_summary_stored_beside_its_samples_must_be_theirs() -> None:
    from gpukb.cuda.results import HostMemoryRow
    from gpukb.measuring.stats import summarize

    good = summarize([1.0, 2.0, 3.0])
    row = {"method": "device-kernel", "bytes": 8, "samples_ms": [1.0, 2.0, 3.0], "gbps": 1.0, "correct": True}
    assert HostMemoryRow(**row, ms=good).ms == good
    with pytest.raises(ValueError, match="ms of device-kernel at 8 bytes is not the summary of the samples"):
        HostMemoryRow(**row, ms=summarize([1.0, 2.0, 4.0]))


def test_the_committed_cuda_records_say_how_they_were_converted() -> None:
    from gpukb.cuda.results import CONVERSION_NOTES

    for name, kind in (("copy-width-h100", "cuda.copy-width"), ("transfers-h100", "cuda.transfers"),
                       ("kernels-h100", "cuda.kernels"), ("host-memory-h100", "cuda.host-memory"),
                       ("overlap-h100", "cuda.overlap")):  # fmt: skip
        data = _record(name)
        assert (data["kind"], data["schema_version"]) == (kind, 2)
        assert data["run"]["notes"][-1] == CONVERSION_NOTES[kind]


#: The rows each line of the kernels page's "bytes in flight" list names, line by line, in the order it names them.
_IN_FLIGHT = [
    [("copy", "copy, one element per thread"), ("vector add", "one element per thread")],
    [("copy", "copy, 4 elements per thread"), ("copy", "copy, 8 elements per thread"),
     ("vector add", "4 elements per thread"), ("vector add", "8 elements per thread")],
    [("copy", "copy, 4 loads then 4 stores"), ("copy", "copy, 8 loads then 8 stores"),
     ("vector add", "4 loads of each input, then 4 stores"), ("vector add", "8 loads of each input, then 8 stores")],
    [("copy", "copy, 8-byte words, 4 loads then 4 stores")],
    [("copy", "copy, 4 loads then 4 stores, grid-stride*"),
     ("vector add", "4 loads of each input then 4 stores, grid-stride*")],
]  # fmt: skip


def test_the_bytes_in_flight_list_shows_each_named_rows_ratio() -> None:
    from gpukb.cuda.pages.kernels import bytes_in_flight

    lines = bytes_in_flight().splitlines()
    for line, named in zip(lines, _IN_FLIGHT, strict=True):
        assert re.findall(r"\d+\.\d+", line) == [f"{_numba(g, k)['ratio']:.2f}" for g, k in named], line


def test_the_kernels_verdict_shows_each_groups_best_row_against_its_bar() -> None:
    from gpukb.cuda.pages.kernels import kernels_verdict

    best: dict[tuple[str, str], dict[str, Any]] = {}
    for r in _record("kernels-h100")["rows"]:
        key = (r["group"], r["framework"])
        if key not in best or r["ratio"] > best[key]["ratio"]:
            best[key] = r

    def verdict(ratio: float, bar: float) -> str:
        return f"at or above {bar}" if ratio >= bar else f"below {bar}"

    expected = [
        f"- **{g}, {f}** (best: {best[g, f]['kernel']}): {best[g, f]['ratio']:.2f} of torch's copy bandwidth, "
        f"{verdict(best[g, f]['ratio'], 0.95)}."
        for g in ("copy", "vector add")
        for f in ("numba", "triton")
        if (g, f) in best
    ]
    red, mm = best["reduction", "numba"], best["matmul", "numba"]
    expected += [
        f"- **reduction, numba** (best: {red['kernel']}): {red['ratio']:.2f} of `torch.sum`'s bandwidth, "
        f"{verdict(red['ratio'], 0.9)}.",
        f"- **tiled matmul, numba**: {mm['rate']:.1f} {mm['unit']} against cuBLAS's {mm['peer_rate']:.1f}, "
        f"{mm['ratio']:.2f} of it.",
    ]
    assert len(expected) == 6
    assert kernels_verdict().splitlines() == expected


def test_the_kernels_table_keeps_one_group() -> None:
    from gpukb.cuda.pages.kernels import kernels
    from gpukb.cuda.tables import kernels_table

    rows = _record("kernels-h100")["rows"]
    _, copies = kernels_table(group="copy")
    assert [r[2] for r in copies] == [r["kernel"] for r in rows if r["group"] == "copy"]
    (table,) = markdown_tables(kernels(group="reduction"))
    assert [r["kernel"] for r in table] == [r["kernel"] for r in rows if r["group"] == "reduction"]
    assert len(table) == 3


def test_the_memory_page_sentences_show_the_records_ratios() -> None:
    from gpukb.cuda.pages.memory import copy_width_verdict, transfers_verdict

    t = {(r["kernel"], r["dtype"]): r["ms"]["median"] for r in _record("copy-width-h100")["rows"]}
    one, narrow = "one per thread", "16 B per thread, narrow"
    text = copy_width_verdict()
    u16, u8 = t[one, "u16"] / t[one, "u32"], t[one, "u8"] / t[one, "u32"]
    assert f"the table's run gave {u16:.2f}×) and the u8 copy {u8:.2f}×" in text
    assert f"fall to {t[narrow, 'u16'] / t[narrow, 'u32']:.2f}× and {t[narrow, 'u8'] / t[narrow, 'u32']:.2f}×;" in text
    assert f"runs at {_copy('16 B per thread, vector', 'u128')['ratio_to_torch']:.2f} of torch's copy" in text
    rows = _record("transfers-h100")["rows"]
    smallest = min(r["bytes"] for r in rows)
    pinned = max(r["gbps"] for r in rows if r["host_memory"] == "pinned")
    pageable = max(r["gbps"] for r in rows if r["host_memory"] == "pageable")
    text = transfers_verdict()
    assert f"Pinned memory reached {pinned:.1f} GB/s, pageable memory at best {pageable:.1f} GB/s." in text
    assert f"takes about {min(r['ms']['median'] for r in rows if r['bytes'] == smallest) * 1e3:.0f} µs" in text


def test_the_host_memory_figures_at_the_largest_and_smallest_size() -> None:
    """host_memory_summary and the sentence under the host-memory table, against the record read raw."""
    from gpukb.cuda.pages.memory import host_memory_verdict
    from gpukb.cuda.tables import host_memory_summary

    rows = {(r["method"], r["bytes"]): r for r in _record("host-memory-h100")["rows"]}
    largest, smallest = max(b for _, b in rows), min(b for _, b in rows)
    at_largest = {m: r["gbps"] for (m, b), r in rows.items() if b == largest}
    fault = (
        rows["managed-fault-kernel", largest]["ms"]["median"] / rows["managed-prefetch-kernel", largest]["ms"]["median"]
    )
    assert host_memory_summary() == {
        "bytes": largest,
        **at_largest,
        "fault_over_prefetch": pytest.approx(fault),
        "smallest": smallest,
        **{
            f"{m}@smallest_us": pytest.approx(rows[m, smallest]["ms"]["median"] * 1e3)
            for m in ("pinned-copy-kernel", "mapped-kernel")
        },
    }
    text = host_memory_verdict()
    assert text.startswith(f"At {largest // 2**20} MiB: ")
    for said, method in {  # each clause names the method whose rate it gives
        "a pinned copy alone moved": "pinned-copy",
        "copy plus kernel came to": "pinned-copy-kernel",
        "the kernel reading mapped host memory": "mapped-kernel",
        "the kernel faulting managed pages in": "managed-fault-kernel",
        "prefetch plus kernel": "managed-prefetch-kernel",
    }.items():
        assert f"{said} {at_largest[method]:.1f} GB/s," in text, said
    resident = at_largest["managed-resident-kernel"]
    assert f"and the kernel on the prefetched (resident) pages {resident:,.0f} GB/s." in text
    assert text.endswith(f"took {fault:.1f}× as long as prefetching them first.\n")


def test_the_overlap_sentence_shows_the_records_medians_and_bound() -> None:
    from gpukb.cuda.pages.memory import overlap_verdict

    variants = _record("overlap-h100")["variants"]
    medians = {v["name"]: statistics.median(v["totals_ms"]) for v in variants}
    first, best = variants[0]["name"], min(medians, key=medians.get)
    text = overlap_verdict()
    assert text.startswith(
        f"Issued whole on one stream the work took {medians[first]:.2f} ms; the fastest way, {best}, took "
        f"{medians[best]:.2f} ms ({medians[first] / medians[best]:.2f}× faster)."
    )
    chunked = max((v for v in variants if v["streams"] == 1), key=lambda v: v["chunks"])
    assert f"From the {chunked['chunks']} chunks' operations" in text
    d = {(o["op"], o["chunk"]): o["end_ms"] - o["start_ms"] for o in chunked["ops"]}
    h, k, o = ([d[(s, c)] for c in range(chunked["chunks"])] for s in ("H2D", "kernel", "D2H"))
    # three engines in a row: the busiest one's total, plus what must come before and after it
    bound = max(sum(h) + k[-1] + o[-1], h[0] + sum(k) + o[-1], h[0] + k[0] + sum(o))
    assert f"engines is {bound:.2f} ms" in text
    assert text.endswith(f"reached {bound / medians[best]:.0%} of the ideal speed.\n")


def test_hierarchy_table_cells_and_the_fields_they_name() -> None:
    """The memory-hierarchy table, cell by cell: scope and lifetime of each memory as the CUDA programming guide
    gives them, sizes worked by hand from the raw device record (65,536 registers × 4 B = 256 KiB; 233,472 B =
    228 KiB; 232,448 B = 227 KiB; 52,428,800 B = 50 MiB; 65,536 B = 64 KiB; 85,017,493,504 B = 79.2 GiB), and
    every backticked field in the last column a field the record really has (spelled as the runtime spells it)."""
    from gpukb.cuda.tables import hierarchy_table

    props = _record("device-h100")["properties"]
    assert (props["regsPerMultiprocessor"], props["sharedMemPerMultiprocessor"]) == (65536, 233472)
    assert (props["sharedMemPerBlockOptin"], props["l2CacheSize"]) == (232448, 52428800)
    assert (props["totalConstMem"], props["totalGlobalMem"]) == (65536, 85017493504)
    headers, rows = hierarchy_table()
    assert headers == ["memory", "scope", "lifetime", "size on this GPU", "where the size comes from"]
    assert [row[:3] for row in rows] == [
        ["registers", "one thread", "thread"],
        ["local memory", "one thread", "thread"],
        ["shared memory", "one block (a cluster on 9.0)", "block"],
        ["L1 / texture cache", "one SM", "—"],
        ["L2 cache", "whole GPU", "—"],
        ["constant memory", "whole grid (read-only)", "application"],
        ["global memory", "whole grid and host", "application"],
    ]
    assert [row[3] for row in rows] == [
        "256 KiB per SM (65,536 × 32-bit); at most 255 per thread",
        "spills and large per-thread arrays, in device memory (cached)",
        "228 KiB per SM, up to 227 KiB per block",
        "the part of the SM's data cache not configured as shared memory",
        "50 MiB",
        "64 KiB",
        "79.2 GiB",
    ]
    assert [row[4] for row in rows] == [
        "`regsPerMultiprocessor`",
        "compiler report (`local_size_bytes`)",
        "`sharedMemPerMultiprocessor`, `sharedMemPerBlockOptin`",
        "carveout (`cudaFuncAttributePreferredSharedMemoryCarveout`)",
        "`l2CacheSize`",
        "`totalConstMem`",
        "`totalGlobalMem`",
    ]
    named = {f for row in rows for f in re.findall(r"`(\w+)`", str(row[4]))}
    assert named - set(props) == {"local_size_bytes", "cudaFuncAttributePreferredSharedMemoryCarveout"}


def test_copy_width_table_headers() -> None:
    from gpukb.cuda.tables import copy_width_table

    headers, rows = copy_width_table()
    assert headers[:5] == ["kernel", "type", "element (B)", "bytes per access", "median (µs)"]
    assert len(rows) == len(_record("copy-width-h100")["rows"])


@pytest.mark.parametrize(("ms", "text"), [(9.9994, "9,999 µs"), (10.0, "10.0 ms"), (10.5, "10.5 ms")])
def test_times_switch_to_milliseconds_from_10_ms(ms: float, text: str) -> None:
    from gpukb.cuda.tables import _time

    assert _time(ms) == text


def test_the_smallest_transfer_time_is_the_fastest_row_at_the_smallest_size() -> None:
    """``smallest_us``: the least median (ms → µs, × 1000) among the rows of the smallest size, read with json."""
    from gpukb.cuda.tables import transfers_summary

    rows = _record("transfers-h100")["rows"]
    smallest = min(r["bytes"] for r in rows)
    expected = min(r["ms"]["median"] for r in rows if r["bytes"] == smallest) * 1000
    s = transfers_summary()
    assert s["smallest_bytes"] == smallest
    assert s["smallest_us"] == pytest.approx(expected, rel=1e-12)


def test_band_labels_quartiles_and_refuses_a_timing_with_only_its_median() -> None:
    from gpukb.cuda.tables import band
    from gpukb.measuring.stats import PartialSummary, summarize

    assert band(summarize([1.0, 2.0, 3.0, 4.0, 5.0])) == ("25–75 %", 2.0, 4.0)  # linear quartiles of 1..5
    with pytest.raises(ValueError, match=r"^this timing kept only its median \(1\.5 ms\); there is no spread"):
        band(PartialSummary(median=1.5))
