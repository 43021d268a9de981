"""Every table the CUDA pages render, read back by header and checked against the raw files (JSON records and the
TOML limits read with json/tomllib) or an independent computation, not through gpukb.cuda's own tables."""

from __future__ import annotations

import json
import re
import statistics
import tomllib
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers import ROOT, markdown_tables, size_text

RESULTS = ROOT / "src/gpukb/data/results/cuda"


def _record(name: str) -> dict[str, Any]:
    return json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))


def _int(cell: str) -> int:
    return int(cell.replace(",", ""))


def _bytes_in(cell: str) -> int:
    return _int(re.search(r"\(([\d,]+) B\)", cell).group(1))


#: What the device-facts table calls each runtime field (the label of its row), in the table's order.
DEVICE_LABELS = {
    "major.minor": "compute capability",
    "multiProcessorCount": "streaming multiprocessors (SMs)",
    "warpSize": "warp size (threads)",
    "maxThreadsPerBlock": "max threads per block",
    "maxThreadsPerMultiProcessor": "max threads per SM",
    "maxBlocksPerMultiProcessor": "max resident blocks per SM",
    "regsPerMultiprocessor": "32-bit registers per SM",
    "regsPerBlock": "32-bit registers per block",
    "sharedMemPerMultiprocessor": "shared memory per SM",
    "sharedMemPerBlock": "shared memory per block (default)",
    "sharedMemPerBlockOptin": "shared memory per block (opt-in)",
    "reservedSharedMemPerBlock": "shared memory reserved per block",
    "l2CacheSize": "L2 cache",
    "persistingL2CacheMaxSize": "L2 set-aside for persisting accesses (max)",
    "totalConstMem": "constant memory",
    "totalGlobalMem": "global memory",
    "memoryBusWidth": "memory bus width",
    "ClockRate": "SM clock (max)",
    "MemoryClockRate": "memory clock (max)",
    "asyncEngineCount": "copy engines",
    "clusterLaunch": "thread-block cluster launch",
}


def check_device_facts(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    data = _record("device-h100")
    values = {**data["properties"], **data["attributes"]}
    # every row's label names the field its value was read from, in order
    assert [(row[""], row["reported as"]) for row in table] == [(v, f"`{k}`") for k, v in DEVICE_LABELS.items()]
    seen = 0
    for row in table:
        field = row["reported as"].strip("`")
        if field == "major.minor":
            assert row["value"] == f"{values['major']}.{values['minor']}"
        elif "(" in row["value"] and row["value"].endswith("B)"):
            assert _bytes_in(row["value"]) == values[field], row
            assert row["value"] == f"{size_text(values[field])} ({values[field]:,} B)", row
        elif row["value"].endswith("MHz"):
            assert row["value"] == f"{values[field] / 1000:,.0f} MHz", row
        elif row["value"].endswith("bits"):
            assert row["value"] == f"{values[field]:,} bits", row
        elif row["value"] in ("yes", "no"):
            assert (row["value"] == "yes") == bool(values[field]), row
        else:
            assert row["value"] == f"{values[field]:,}", row
        seen += 1
    assert seen >= 20
    assert "Measured on an NVIDIA H100" in markdown


def check_memory_hierarchy(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    p = _record("device-h100")["properties"]
    rows = {row["memory"]: row for row in table}
    assert rows["registers"]["size on this GPU"].startswith(f"{p['regsPerMultiprocessor'] * 4 // 1024} KiB per SM")
    assert rows["shared memory"]["size on this GPU"] == (
        f"{p['sharedMemPerMultiprocessor'] // 1024} KiB per SM, "
        f"up to {p['sharedMemPerBlockOptin'] // 1024} KiB per block"
    )
    assert rows["L2 cache"]["size on this GPU"] == f"{p['l2CacheSize'] // 2**20} MiB"
    assert rows["constant memory"]["size on this GPU"] == f"{p['totalConstMem'] // 1024} KiB"
    assert rows["global memory"]["size on this GPU"] == f"{p['totalGlobalMem'] / 2**30:.1f} GiB"


def check_limits(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = {e["cc"]: e for e in tomllib.loads((ROOT / "src/gpukb/data/cuda/limits.toml").read_text())["capability"]}
    assert [row["compute capability"] for row in table] == sorted(raw, key=float)
    for row in table:
        e = raw[row["compute capability"]]
        assert _int(row["warps / SM"]) == e["max_warps_per_sm"]
        assert _int(row["blocks / SM"]) == e["max_blocks_per_sm"]
        assert _int(row["registers / SM"]) == e["registers_per_sm"]
        assert row["shared / SM"] == f"{e['shared_per_sm'] // 1024} KiB"
        assert row["shared / block (opt-in)"] == f"{e['shared_per_block_optin'] // 1024} KiB"
        assert row["reserved / block"] == f"{e['reserved_shared_per_block']:,} B"
        assert row["carveouts (KiB)"] == ", ".join(map(str, e["carveouts_kib"]))
        assert row["GPUs"] == e["name"]
        assert row["allocation unit"] == f"{e['shared_allocation_unit']} B"
    assert "docs.nvidia.com/cuda/cuda-c-programming-guide" in markdown


def check_occupancy_sweep(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    regs = kwargs["args"][0]
    # Hopper by hand: registers per warp rounded to 256; a quarter of 65536 holds that many warps; 64 warp slots,
    # 32 block slots; no shared memory but the 1 KiB reserve (233472 // 1024 = 228 blocks).
    per_warp = -(-regs * 32 // 256) * 256
    for row in table:
        threads = _int(row["threads/block"])
        warps = -(-threads // 32)
        blocks = min(64 // warps, (16384 // per_warp) * 4 // warps, 32, 228)
        assert _int(row["blocks/SM"]) == blocks, row
        assert _int(row["warps/SM"]) == blocks * warps
        assert row["occupancy"] == f"{blocks * warps / 64:.0%}"


def check_occupancy_distribution(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    counts = Counter(r["runtime_blocks"] for r in _record("occupancy-h100")["rows"])
    assert {_int(r["active blocks per SM (driver)"]): _int(r["launches"]) for r in table} == dict(counts)


def check_occupancy_kernels(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    data = _record("occupancy-h100")
    assert [r["kernel variant"] for r in table] == [k["name"] for k in data["kernels"]]
    for row, k in zip(table, data["kernels"], strict=True):
        assert _int(row["registers"]) == k["num_regs"]
        assert _int(row["static shared (B)"]) == k["shared_size_bytes"]
        mine = [r for r in data["rows"] if data["kernels"][r["kernel"]] is k]
        assert _int(row["launches"]) == len(mine)
        assert row["calculator agrees"] == f"{len(mine)}/{len(mine)}"  # every launch: see test_occupancy.py


def check_triton_limit(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    t = _record("occupancy-h100")["triton"]
    optin = _record("device-h100")["properties"]["sharedMemPerBlockOptin"]
    cells = [_int(r["bytes"]) for r in table]
    assert cells == [t["required"], t["limit"], optin]
    assert t["limit"] == optin
    # each row names (in backticks) the figure it shows: a number of Triton's message, or the device property
    said = {name: int(value) for name, value in re.findall(r"(\w[\w ]*): (\d+)", t["message"])}
    assert (said["Required"], said["Hardware limit"]) == (t["required"], t["limit"])
    figures = {**said, "sharedMemPerBlockOptin": optin}
    assert [re.findall(r"`([^`]+)`", r["what"]) for r in table] == [
        ["Required"],
        ["Hardware limit"],
        ["sharedMemPerBlockOptin"],
    ]
    for r in table:
        (name,) = re.findall(r"`([^`]+)`", r["what"])
        assert r["bytes"] == f"{figures[name]:,}", r
    assert "equals the per-block opt-in figure" in markdown


def check_launch_grid(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert len(table) == 6
    assert len(table[0]) == 13
    for y, row in enumerate(table):
        assert row["y \\ x"] == str(y)
        for x in range(12):
            block = (x // 4) + 3 * (y // 3)  # 3 x 2 blocks of 4 x 3 threads, numbered x first
            inside = (x % 4) + 4 * (y % 3)
            assert _int(row[str(x)]) == 12 * block + inside
    assert sorted(_int(row[str(x)]) for row in table for x in range(12)) == list(range(72))


def check_copy_width(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
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


def check_transfers(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
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


def check_kernels(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    data = _record("kernels-h100")
    assert len(table) == len(data["rows"])
    for row, rec in zip(table, data["rows"], strict=True):
        for column in ("group", "framework", "kernel", "size", "peer"):
            assert row[column] == rec[column], (column, row)
        assert row["median (ms)"] == f"{rec['ms']['median']:.3f}"
        assert row["rate"] == f"{rec['rate']:,.1f} {rec['unit']}"
        assert row["peer rate"] == f"{rec['peer_rate']:,.1f} {rec['unit']}"
        assert row["checked"] == ("yes" if rec["correct"] else "NO")
        assert row["ratio"] == f"{rec['peer_ms']['median'] / rec['ms']['median'] * _amount_ratio(rec):.2f}"


def _amount_ratio(rec: dict[str, Any]) -> float:
    """Work of the kernel over work of its peer (a vector add moves 3 arrays, the copy peer 2)."""
    return (rec["rate"] * rec["ms"]["median"]) / (rec["peer_rate"] * rec["peer_ms"]["median"])


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
    "device_facts": check_device_facts,
    "memory_hierarchy": check_memory_hierarchy,
    "limits_by_capability": check_limits,
    "occupancy_sweep": check_occupancy_sweep,
    "occupancy_distribution": check_occupancy_distribution,
    "occupancy_kernels": check_occupancy_kernels,
    "triton_limit": check_triton_limit,
    "launch_grid": check_launch_grid,
    "copy_width": check_copy_width,
    "transfers": check_transfers,
    "kernels": check_kernels,
    "host_memory": check_host_memory,
    "host_memory_methods": check_host_memory_methods,
    "overlap_timings": check_overlap_timings,
}


def test_execution_page_prose_matches_the_record() -> None:
    """The counts the execution page states in words are those of the occupancy record."""
    page = (ROOT / "docs/cuda/execution.md").read_text(encoding="utf-8")
    data = _record("occupancy-h100")
    assert f"compiled in {len(data['kernels'])} variants" in page
    assert f"The {len(data['kernels'])} compiled variants" in page
    sizes = {r["block_size"] for r in data["rows"]}
    dyn_per_kernel = {
        len({r["dynamic_smem"] for r in data["rows"] if r["kernel"] == k}) for k in range(len(data["kernels"]))
    }
    assert f"every combination of {len(sizes)} block sizes and {dyn_per_kernel.pop()} dynamic" in page
    assert not dyn_per_kernel
    statics = sorted({k["shared_size_bytes"] for k in data["kernels"]})
    assert statics == [0, 12 * 1024, 48 * 1024]
    assert "static shared arrays of 0, 12 KiB and 48 KiB" in page
