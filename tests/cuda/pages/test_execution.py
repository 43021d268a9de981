"""The cell checks of docs/cuda/execution.md (``gpukb.cuda.page.execution``)."""

from __future__ import annotations

import html
import inspect
import json
import re
import tomllib
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from tests.cuda.pages import _int, _record
from tests.helpers import ROOT, markdown_tables


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
    # the powers of two from 64 to the 1,024-thread limit, and 768, the size the text says fits only once
    assert [_int(row["threads/block"]) for row in table] == [64, 128, 256, 512, 768, 1024]
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
        assert _int(row["local (B)"]) == k["local_size_bytes"]
        assert _int(row["max threads"]) == k["max_threads_per_block"]
        blocks = [r["runtime_blocks"] for r in mine]
        assert row["driver's blocks/SM"] == f"{min(blocks)}–{max(blocks)}"
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


def check_occupancy_check(markdown: str, kwargs: dict[str, Any]) -> None:
    """The counts in words, from the record read raw; every configuration agrees (tests/cuda/test_occupancy.py checks
    each row against the calculator), so the agreement is all of them."""
    data = _record("occupancy-h100")
    rows, kernels = data["rows"], data["kernels"]
    regs = [k["num_regs"] for k in kernels]
    assert markdown.startswith(
        f"**{len(rows)} of {len(rows)}** launch configurations agree (0 differ): {len(kernels)} compiled kernel "
        f"variants (registers from {min(regs)} to {max(regs)} per thread, static shared memory from 0 to "
        f"{max(k['shared_size_bytes'] for k in kernels):,} bytes)"
    )
    assert f"In {sum(r['runtime_blocks'] == 0 for r in rows)} of them the driver answers 0 blocks" in markdown
    assert f"asked through `{data['api']}`." in markdown
    bounds = [kernels[r["kernel"]]["max_threads_per_block"] for r in rows]
    beyond = sum(r["block_size"] > top and r["runtime_blocks"] > 0 for r, top in zip(rows, bounds, strict=True))
    assert f"\n\n{beyond} configurations ask for more threads per block than the kernel's own" in markdown
    assert "Measured on an NVIDIA H100" in markdown


def check_occupancy_calculator(markdown: str, kwargs: dict[str, Any]) -> None:
    """The form has the fields the script reads, starts at the library's defaults, labels each field with the name
    the library's messages give it, and carries every compute capability of the limits file."""
    from gpukb.calculators import field_value
    from gpukb.cuda.occupancy import occupancy

    script = (ROOT / "docs/javascripts/calculators/occupancy.js").read_text(encoding="utf-8")
    read = set(re.findall(r"boxes\.(\w+)", script)) | set(re.findall(r'optional\("(\w+)"\)', script))
    fields = re.findall(r'data-field="(\w+)"', markdown)
    assert sorted(fields) == sorted(read)
    # the script reads a number from the text fields, the choice or the tick itself from the others
    optional = set(re.findall(r'optional\("(\w+)"\)', script))
    texts = set(re.findall(r"fieldValue\(raw\(boxes\.(\w+)\)\)", script)) | optional
    kinds = dict(re.findall(r'name="(\w+)" type="(text|checkbox)"', markdown)) | {
        n: "select" for n in re.findall(r'<select [^>]*name="(\w+)"', markdown)
    }
    assert {n for n, k in kinds.items() if k == "text"} == texts
    flags = {n for n, p in inspect.signature(occupancy).parameters.items() if isinstance(p.default, bool)}
    assert {n for n, k in kinds.items() if k == "checkbox"} == flags == {"opt_in", "nonportable_cluster"}
    assert {n for n, k in kinds.items() if k == "select"} == {"cc"}
    shown = [html.unescape(label) for label in re.findall(r"<label for=[^>]*>([^<]*)</label>", markdown)]
    labels = dict(zip(fields, shown, strict=True))
    values = dict(re.findall(r'name="(\w+)" type="text" value="([^"]*)"', markdown))
    checked = set(re.findall(r'name="(\w+)" type="checkbox" checked', markdown))
    # the library's messages name each argument as the form's label does
    for field, call in {
        "cc": lambda: occupancy("6.1", 256, 32),
        "threads": lambda: occupancy("9.0", 0, 32),
        "registers": lambda: occupancy("9.0", 256, -1),
        "static_shared": lambda: occupancy("9.0", 256, 32, -1),
        "dynamic_shared": lambda: occupancy("9.0", 256, 32, 0, -1),
        "cluster_size": lambda: occupancy("9.0", 256, 32, cluster_size=0),
        "carveout": lambda: occupancy("9.0", 256, 32, carveout_percent=101),
    }.items():
        with pytest.raises(ValueError, match=f"^{re.escape(labels[field].split(' (')[0])} "):
            call()
    # the defaults: a launch the library computes, the optional fields empty and the boxes as its keywords default
    defaults = inspect.signature(occupancy).parameters
    sizes = [field_value(values[f]) for f in ("threads", "registers", "static_shared", "dynamic_shared")]
    assert occupancy("9.0", *sizes).active_blocks > 0
    assert values["carveout"] == values["cluster_size"] == ""
    assert defaults["carveout_percent"].default is defaults["cluster_size"].default is None
    assert checked == {f for f in ("opt_in", "nonportable_cluster") if defaults[f].default}
    # every compute capability of the limits file, newest first, its data as the file gives it (sources left out)
    raw = tomllib.loads((ROOT / "src/gpukb/data/cuda/limits.toml").read_text())["capability"]
    raw = sorted(raw, key=lambda e: -float(e["cc"]))
    options = [(v, html.unescape(t)) for v, t in re.findall(r'<option value="([^"]+)"[^>]*>([^<]*)</option>', markdown)]
    assert options == [(e["cc"], f"{e['cc']}: {e['name']}") for e in raw]
    assert re.findall(r'<option value="([^"]+)" selected>', markdown) == ["9.0"]
    island = re.search(r'<script type="application/json" class="gpukb-calc-data">(.*?)</script>', markdown)[1]
    island = json.loads(island)
    assert list(island) == ["capabilities"]
    for dumped, entry in zip(island["capabilities"], raw, strict=True):
        assert "sources" not in dumped
        assert {k: v for k, v in dumped.items() if v is not None} == {k: v for k, v in entry.items() if k != "sources"}


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "limits_by_capability": check_limits,
    "occupancy_sweep": check_occupancy_sweep,
    "occupancy_distribution": check_occupancy_distribution,
    "occupancy_kernels": check_occupancy_kernels,
    "triton_limit": check_triton_limit,
    "launch_grid": check_launch_grid,
    "occupancy_check": check_occupancy_check,
    "occupancy_calculator": check_occupancy_calculator,
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
