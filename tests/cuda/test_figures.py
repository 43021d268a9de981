"""The CUDA figures' numbers: the hierarchy's sizes are the recorded device properties, its bandwidths the
datasheet's and the sweep's; the launch's residency is the hand count."""

from __future__ import annotations

import json
import tomllib

from gpukb.cuda.figures import hierarchy_levels, launch_layout
from tests.helpers import ROOT, h100_ceilings_json

DATA = ROOT / "src/gpukb/data"


def test_hierarchy_sizes_and_bandwidths() -> None:
    device = json.loads((DATA / "results/cuda/device-h100.json").read_text("utf-8"))["properties"]
    levels = {lv.name: lv for lv in hierarchy_levels()}
    assert levels["registers"].size_bytes == device["regsPerMultiprocessor"] * 4
    assert levels["registers"].count == device["multiProcessorCount"]
    assert levels["shared memory"].size_bytes == device["sharedMemPerMultiprocessor"]
    assert levels["L2 cache"].size_bytes == device["l2CacheSize"]
    assert levels["device memory (HBM)"].size_bytes == device["totalGlobalMem"]
    specs = tomllib.loads((DATA / "gpu_specs.toml").read_text("utf-8"))
    (sheet,) = [f for f in specs["figure"] if f["gpu"] == "h100-sxm5" and f["quantity"] == "memory_bandwidth"]
    sweep = json.loads((DATA / "results/performance/h100-sweep.json").read_text("utf-8"))
    copy = h100_ceilings_json()["bandwidth"]  # the copy ceiling every page quotes
    assert f"{sheet['value']:,.0f} GB/s datasheet" in levels["device memory (HBM)"].bandwidth
    assert f"{copy:,.0f} GB/s measured" in levels["device memory (HBM)"].bandwidth
    largest = max(r["bytes"] for r in sweep["host_device"])
    (pinned,) = [r["gbps"] for r in sweep["host_device"]
                 if (r["direction"], r["memory"], r["bytes"]) == ("h2d", "pinned", largest)]  # fmt: skip
    assert levels["host memory"].bandwidth.startswith(f"{pinned:,.1f} GB/s")


def test_launch_residency() -> None:
    lay = launch_layout(n=2**20, threads=256, registers=32)
    limits = tomllib.loads((DATA / "cuda/limits.toml").read_text("utf-8"))
    (hopper,) = [c for c in limits["capability"] if c["cc"] == "9.0"]
    warps = 256 // 32
    by_registers = hopper["registers_per_sm"] // (32 * 32 * warps)
    assert (lay.blocks, lay.warps_per_block) == (2**20 // 256, warps)
    assert lay.blocks_per_sm == min(hopper["max_warps_per_sm"] // warps, by_registers, hopper["max_blocks_per_sm"])
