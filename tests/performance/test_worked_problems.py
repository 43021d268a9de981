"""The performance chapter's worked problems, recomputed from the data files and records directly."""

from __future__ import annotations

import json
import tomllib

import pytest

from tests.helpers import ROOT, h100_ceilings_json
from tests.worked_problems import answer, assert_shows, rendered_problems

SPECS = tomllib.loads((ROOT / "src/gpukb/data/gpu_specs.toml").read_text(encoding="utf-8"))
SWEEP = json.loads((ROOT / "src/gpukb/data/results/performance/h100-sweep.json").read_text(encoding="utf-8"))


def _dense(gpu: str, quantity: str) -> float:
    (figure,) = [f for f in SPECS["figure"] if f["gpu"] == gpu and f["quantity"] == quantity]
    return figure["value"] / 2 if figure.get("sparsity") else figure["value"]


def _copy_ceiling() -> float:
    return h100_ceilings_json()["bandwidth"]


@pytest.fixture  # per test (rendered once, then cached), so mutmut maps every test to the problems it reads
def problems() -> dict[str, str]:
    return rendered_problems("performance")


def test_decode_ceiling(problems: dict[str, str]) -> None:
    nbytes = 8.0e9 * 2
    text = answer(problems["decode-ceiling"])
    assert_shows(text, _dense("h100-sxm5", "memory_bandwidth") * 1e9 / nbytes, _copy_ceiling() * 1e9 / nbytes)


def test_ridge_points(problems: dict[str, str]) -> None:
    best = h100_ceilings_json()["bf16"]
    text = answer(problems["ridge-points"])
    sheet = _dense("h100-sxm5", "bf16_tensor") * 1e3 / _dense("h100-sxm5", "memory_bandwidth")
    assert_shows(text, sheet, best * 1e3 / _copy_ceiling())


def test_checkpoint_load(problems: dict[str, str]) -> None:
    largest = max(r["bytes"] for r in SWEEP["host_device"])
    rate = {r["memory"]: r["gbps"] for r in SWEEP["host_device"] if r["direction"] == "h2d" and r["bytes"] == largest}
    text = answer(problems["checkpoint-load"])
    assert_shows(text, rate["pinned"], rate["pageable"], rel=0.01)
    assert_shows(text, 16 / rate["pinned"], 16 / rate["pageable"], rel=0.1)  # seconds, to one decimal
