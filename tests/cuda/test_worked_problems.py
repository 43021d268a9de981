"""The CUDA chapter's worked problems, recomputed by hand from the limits file and the committed records."""

from __future__ import annotations

import json
import math
import tomllib

import pytest

from tests.helpers import ROOT
from tests.worked_problems import answer, assert_shows, question, rendered_problems, working

DATA = ROOT / "src/gpukb/data"
(HOPPER,) = [c for c in tomllib.loads((DATA / "cuda/limits.toml").read_text("utf-8"))["capability"] if c["cc"] == "9.0"]


@pytest.fixture  # per test (rendered once, then cached), so mutmut maps every test to the problems it reads
def problems() -> dict[str, str]:
    return rendered_problems("cuda")


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def test_occupancy(problems: dict[str, str]) -> None:
    warps = 256 // 32
    per_warp = _round_up(64 * 32, HOPPER["register_allocation_unit"])
    shared = _round_up(32 * 1024 + HOPPER["reserved_shared_per_block"], HOPPER["shared_allocation_unit"])
    limits = {
        "warps": HOPPER["max_warps_per_sm"] // warps,
        "registers": HOPPER["registers_per_sm"] // (per_warp * warps),
        "shared memory": HOPPER["shared_per_sm"] // shared,
        "blocks": HOPPER["max_blocks_per_sm"],
    }
    blocks = min(limits.values())
    text = answer(problems["occupancy"])
    assert text.startswith(f"{blocks} blocks, {blocks * warps} of {HOPPER['max_warps_per_sm']} warps")
    assert_shows(text, 100 * blocks * warps / HOPPER["max_warps_per_sm"])
    assert text.rstrip(".").endswith(" and ".join(r for r, v in limits.items() if v == blocks))
    asked = question(problems["occupancy"])
    assert "uses 64 registers per thread and 32 KiB of dynamic shared memory, launched with 256 threads" in asked
    steps = working(problems["occupancy"])
    assert f"{HOPPER['max_warps_per_sm']}: {limits['warps']} blocks." in steps[0]
    assert f"64 × 32 = {64 * 32:,} per warp" in steps[1]
    per_sm = HOPPER["registers_per_sm"]
    assert steps[1].endswith(f"{per_warp * warps:,} per block; {per_sm:,} per SM: {limits['registers']} blocks.")
    assert steps[2] == (
        f"Shared memory: {32 * 1024:,} B + {HOPPER['reserved_shared_per_block']:,} B reserved = {shared:,} B per "
        "block; "
        f"{HOPPER['shared_per_sm']:,} B per SM: {limits['shared memory']} blocks."
    )
    assert f"at most {HOPPER['max_blocks_per_sm']} per SM. The smallest limit, {blocks}, wins" in steps[3]
    assert "[NVIDIA CUDA C++ Programming Guide" in problems["occupancy"].split("Sources:", 1)[1]


def test_register_budget(problems: dict[str, str]) -> None:
    threads = HOPPER["max_warps_per_sm"] * 32
    full = HOPPER["registers_per_sm"] // threads  # every thread of a full SM gets an equal share
    unit = HOPPER["register_allocation_unit"]
    over = _round_up((full + 1) * 32, unit)  # one more register: the warp's allocation rounds up a whole unit
    warps = 256 // 32
    blocks = HOPPER["registers_per_sm"] // 4 // over * 4 // warps
    assert answer(problems["register-budget"]) == (
        f"{full} registers per thread. At {full + 1} the SM holds {blocks} blocks, "
        f"{blocks * warps / HOPPER['max_warps_per_sm']:.0%} occupancy (`__launch_bounds__(256, {threads // 256})` "
        "asks the compiler to stay within it)."
    )
    steps = working(problems["register-budget"])
    assert steps[0] == (
        f"Full occupancy is {HOPPER['max_warps_per_sm']} warps × 32 = {threads:,} threads sharing "
        f"{HOPPER['registers_per_sm']:,} registers: {full} each."
    )
    assert steps[1].endswith(
        f"{unit}: {full} × 32 = {full * 32:,} fits exactly; "
        f"{full + 1} × 32 = {(full + 1) * 32:,} rounds up to {over:,}."
    )
    assert "[NVIDIA CUDA C++ Programming Guide" in problems["register-budget"].split("Sources:", 1)[1]


def test_grid_size(problems: dict[str, str]) -> None:
    device = json.loads((DATA / "results/cuda/device-h100.json").read_text("utf-8"))
    blocks = math.ceil(10**8 / 256)
    resident = HOPPER["max_warps_per_sm"] // 8  # 32 registers per thread: the warp slots are the limit
    waves = blocks / (device["properties"]["multiProcessorCount"] * resident)
    assert_shows(answer(problems["grid-size"]), blocks, resident, waves)
    sms = device["properties"]["multiProcessorCount"]
    assert f"on {sms} SMs ({sms * resident:,} at once)" in answer(problems["grid-size"])
    assert working(problems["grid-size"])[1].endswith("limited by warps and registers.")  # 8 blocks: 64 warps, 64K


def test_overlap(problems: dict[str, str]) -> None:
    record = json.loads((DATA / "results/cuda/overlap-h100.json").read_text("utf-8"))
    single = max((v for v in record["variants"] if v["streams"] == 1), key=lambda v: v["chunks"])
    d = {(o["op"], o["chunk"]): o["end_ms"] - o["start_ms"] for o in single["ops"]}
    h, k, o = ([d[(s, c)] for c in range(single["chunks"])] for s in ("H2D", "kernel", "D2H"))
    # One engine per stage, chunks in order: the schedule's end (a flow shop), simulated; the page's floor
    # is at most it, and at least each engine's busy time plus what must precede and follow it.
    end_h = end_k = end_o = 0.0
    for i in range(single["chunks"]):
        end_h += h[i]
        end_k = max(end_h, end_k) + k[i]
        end_o = max(end_k, end_o) + o[i]
    floor = max(sum(h) + k[-1] + o[-1], h[0] + sum(k) + o[-1], h[0] + k[0] + sum(o))
    text = answer(problems["overlap"])
    assert floor <= end_o + 1e-9
    assert_shows(text, sum(h) + sum(k) + sum(o), floor)
    assert text.endswith(f"{(sum(h) + sum(k) + sum(o)) / floor:.2f}× faster at best.")
