"""The CUDA chapter's worked problems, recomputed by hand from the limits file and the committed records."""

from __future__ import annotations

import json
import math
import tomllib

import pytest

from tests.helpers import ROOT
from tests.worked_problems import answer, assert_shows, rendered_problems

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


def test_register_budget(problems: dict[str, str]) -> None:
    threads = HOPPER["max_warps_per_sm"] * 32
    assert answer(problems["register-budget"]).startswith(
        f"{HOPPER['registers_per_sm'] // threads} registers per thread."
    )


def test_grid_size(problems: dict[str, str]) -> None:
    device = json.loads((DATA / "results/cuda/device-h100.json").read_text("utf-8"))
    blocks = math.ceil(10**8 / 256)
    resident = HOPPER["max_warps_per_sm"] // 8  # 32 registers per thread: the warp slots are the limit
    waves = blocks / (device["properties"]["multiProcessorCount"] * resident)
    assert_shows(answer(problems["grid-size"]), blocks, resident, waves)


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
