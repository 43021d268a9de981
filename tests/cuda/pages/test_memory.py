"""The cell checks of docs/cuda/memory.md (``gpukb.cuda.page.memory``)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import pytest

from tests.cuda.pages import _int, _record
from tests.helpers import markdown_tables, size_text


def _ends_on_its_run_line(markdown: str) -> None:
    """A measured table's block ends on the line that names its run (the command in backticks), then a line break:
    anything after it would run into the page's next paragraph."""
    assert markdown.endswith("`.\n"), markdown[-80:]


def check_memory_hierarchy(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    p = _record("device-h100")["properties"]
    rows = {row["memory"]: row for row in table}
    assert f"on the {p['name']}.\n" in markdown
    assert rows["registers"]["size on this GPU"].startswith(f"{p['regsPerMultiprocessor'] * 4 // 1024} KiB per SM")
    assert rows["shared memory"]["size on this GPU"] == (
        f"{p['sharedMemPerMultiprocessor'] // 1024} KiB per SM, "
        f"up to {p['sharedMemPerBlockOptin'] // 1024} KiB per block"
    )
    assert rows["L2 cache"]["size on this GPU"] == f"{p['l2CacheSize'] // 2**20} MiB"
    assert rows["constant memory"]["size on this GPU"] == f"{p['totalConstMem'] // 1024} KiB"
    assert rows["global memory"]["size on this GPU"] == f"{p['totalGlobalMem'] / 2**30:.1f} GiB"


def check_copy_width(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    _ends_on_its_run_line(markdown)
    data = _record("copy-width-h100")
    assert len(table) == len(data["rows"])
    for row, rec in zip(table, data["rows"], strict=True):
        assert (row["kernel"], row["type"]) == (rec["kernel"], rec["dtype"])
        median = rec["ms"]["median"]
        assert _int(row["GB/s"]) == round(2 * data["buffer_bytes"] / median / 1e6)
        assert row["× torch copy_"] == f"{data['torch_copy_ms']['median'] / median:.2f}"
        assert row["median (µs)"] == f"{median * 1e3:,.0f}"
        # the committed run (do_bench) kept the 20th and 80th percentiles, not quartiles
        assert row["20–80 % (µs)"] == f"{rec['ms']['p20'] * 1e3:,.0f}–{rec['ms']['p80'] * 1e3:,.0f}"
    size = size_text(data["buffer_bytes"])
    assert f"Buffers of {size}; torch's `copy_` of the same bytes: {data['torch_copy_gbps']:,.0f} GB/s." in markdown


def check_transfers(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    _ends_on_its_run_line(markdown)
    data = _record("transfers-h100")
    by = {(r["direction"], r["host_memory"], r["bytes"]): r for r in data["rows"]}
    assert len(table) == len(data["rows"]) // 2
    # one row per size, smallest first, host to device then back
    order = [(size, direction) for size in sorted({b for (_, _, b) in by}) for direction in ("H2D", "D2H")]
    assert [(row["transfer"], row["direction"]) for row in table] == [(size_text(b), d) for b, d in order]
    for row, (size, direction) in zip(table, order, strict=True):
        gbps = {}
        for memory in ("pageable", "pinned"):
            r = by[(direction, memory, size)]
            gbps[memory] = size / (r["ms"]["median"] / 1e3) / 1e9
            assert row[f"{memory} (GB/s)"] == f"{gbps[memory]:.2f}"
        assert row["pinned ÷ pageable"] == f"{gbps['pinned'] / gbps['pageable']:.1f}", row


def _time_cell(ms: float) -> str:
    return f"{ms * 1e3:,.0f} µs" if ms < 10 else f"{ms:,.1f} ms"


HOST_MEMORY_HEADINGS = {
    "pinned: copy, then kernel": "pinned-copy-kernel",
    "mapped (zero-copy): kernel": "mapped-kernel",
    "managed, first touch: kernel": "managed-fault-kernel",
    "managed: prefetch, then kernel": "managed-prefetch-kernel",
    "device memory: kernel alone": "device-kernel",
}


def check_host_memory(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    _ends_on_its_run_line(markdown)
    data = _record("host-memory-h100")
    sizes = sorted({r["bytes"] for r in data["rows"]})
    assert len(table) == len(sizes)
    seen = 0
    for row, size in zip(table, sizes, strict=True):
        unit = "MiB" if size >= 2**20 else "KiB"
        assert row["size"] == f"{size // (2**20 if unit == 'MiB' else 2**10)} {unit}"
        for heading, method in HOST_MEMORY_HEADINGS.items():
            rec = [r for r in data["rows"] if r["method"] == method and r["bytes"] == size]
            if not rec:
                assert row[heading] == "not measured"
                continue
            (rec,) = rec
            median = statistics.median(rec["samples_ms"])
            assert rec["ms"]["median"] == pytest.approx(median, rel=1e-12)
            gbps = size / median / 1e6
            assert row[heading] == f"{_time_cell(median)} ({gbps:,.1f} GB/s)", (heading, size)
            seen += 1
    assert seen >= 8
    assert "Measured on an NVIDIA H100" in markdown
    apis = _record("host-memory-h100")["apis"]
    assert f"Allocations: {'; '.join(f'{kind}: {api}' for kind, api in sorted(apis.items()))}. " in markdown


def check_host_memory_methods(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    ids = [row["method id"].strip("`") for row in table]
    # the methods the run timed, in the order it first timed them
    assert ids == list(dict.fromkeys(r["method"] for r in _record("host-memory-h100")["rows"]))
    assert [row["method id"] for row in table] == [f"`{i}`" for i in ids]
    assert len(ids) == len(set(ids)) == 8
    for row, method in zip(table, ids, strict=True):
        # a window with a kernel in it says so; a copy or prefetch alone does not mention one
        assert ("kernel" in row["the timed window"]) == method.endswith("-kernel"), row
    assert len({row["the timed window"] for row in table}) == len(ids)


def check_overlap_timings(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    _ends_on_its_run_line(markdown)
    variants = _record("overlap-h100")["variants"]
    assert [r["issued as"] for r in table] == [v["name"] for v in variants]
    base = statistics.median(variants[0]["totals_ms"])
    for row, v in zip(table, variants, strict=True):
        median = statistics.median(v["totals_ms"])
        assert _int(row["streams"]) == v["streams"]
        assert _int(row["chunks"]) == v["chunks"]
        assert row["total (ms, median)"] == f"{median:.2f}"
        assert row["range (ms)"] == f"{min(v['totals_ms']):.2f}–{max(v['totals_ms']):.2f}"
        assert row["speed-up"] == f"{base / median:.2f}×"
        # the kept timeline is the run whose total is the median one
        assert max(o["end_ms"] for o in v["ops"]) == sorted(v["totals_ms"])[len(v["totals_ms"]) // 2]
    assert "Measured on an NVIDIA H100" in markdown
    data = _record("overlap-h100")
    runs = {len(v["totals_ms"]) for v in variants}
    assert len(runs) == 1
    assert (
        f"Buffer: {size_text(data['total_bytes'])} of float32; kernel: {data['kernel']}; {runs.pop()} runs of each. "
        f"The device reports `asyncEngineCount` = {data['async_engine_count']}. "
    ) in markdown


def check_bank_conflicts(markdown: str, kwargs: dict[str, Any]) -> None:
    """Each pattern's banks and passes from the rule itself: word w in bank w mod 32, passes the most distinct words
    in one bank, recomputed from the word indices each row describes."""
    (table,) = markdown_tables(markdown)
    col = [r * 32 for r in range(32)]
    expected = {
        "a row of a 32 × 32 tile (consecutive words)": list(range(32)),
        "every lane the same word (broadcast)": [0] * 32,
        "stride 2 words": [2 * i for i in range(32)],
        "a column of a 32 × 32 tile (stride 32)": col,
        "a column of a 32 × 33 tile (one word of padding)": [r * 33 for r in range(32)],
        "a column of a 32 × 32 tile, XOR-swizzled": [r * 32 + (0 ^ r) for r in range(32)],
        "the tiled matmul's `sa[ty, j]`, 16 × 16 tiles": [(i // 16) * 16 for i in range(32)],
        "the tiled matmul's `sb[j, tx]`, 16 × 16 tiles": [i % 16 for i in range(32)],
        "the tiled matmul's `sa[ty, j]`, 32 × 32 tiles": [0] * 32,
        "the tiled matmul's `sb[j, tx]`, 32 × 32 tiles": list(range(32)),
    }
    assert [r["warp reads"] for r in table] == list(expected)
    for row in table:
        words = expected[row["warp reads"]]
        per_bank: dict[int, set[int]] = {}
        for w in words:
            per_bank.setdefault(w % 32, set()).add(w)
        assert int(row["passes"]) == max(len(v) for v in per_bank.values())
        assert row["banks of lanes 0-3"] == ", ".join(str(w % 32) for w in words[:4]) + ", …"
    assert {r["warp reads"]: int(r["passes"]) for r in table}["a column of a 32 × 32 tile (stride 32)"] == 32


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "bank_conflicts": check_bank_conflicts,
    "memory_hierarchy": check_memory_hierarchy,
    "copy_width": check_copy_width,
    "transfers": check_transfers,
    "host_memory": check_host_memory,
    "host_memory_methods": check_host_memory_methods,
    "overlap_timings": check_overlap_timings,
}
