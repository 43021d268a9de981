"""The GEMM chapter's worked problems, recomputed from the data files and first principles."""

from __future__ import annotations

import math
import tomllib

import pytest

from tests.helpers import ROOT
from tests.worked_problems import answer, assert_shows, rendered_problems

DATA = ROOT / "src/gpukb/data"


@pytest.fixture  # per test (rendered once, then cached), so mutmut maps every test to the problems it reads
def problems() -> dict[str, str]:
    return rendered_problems("gemm")


def _figure(gpu: str, quantity: str) -> float:
    """A dense datasheet figure, read from the TOML file itself."""
    specs = tomllib.loads((DATA / "gpu_specs.toml").read_text(encoding="utf-8"))
    (f,) = [f for f in specs["figure"] if f["gpu"] == gpu and f["quantity"] == quantity]
    return f["value"] / 2 if f.get("sparsity") else f["value"]


def _h100(quantity: str) -> float:
    return _figure("h100-sxm5", quantity)


def test_llama_mlp_on_h200(problems: dict[str, str]) -> None:
    m, k, n = 4096, 4096, 14336  # Llama-3-8B's MLP up projection over 4,096 tokens
    flops, nbytes = 2 * m * n * k, 2 * (m * k + k * n + m * n)
    compute = flops / (_figure("h200-sxm", "bf16_tensor") * 1e12)
    memory = nbytes / (_figure("h200-sxm", "memory_bandwidth") * 1e9)
    text = answer(problems["llama-mlp-h200"])
    assert compute > memory
    assert "compute" in text
    assert_shows(text, compute * 1e6, memory * 1e6, nbytes / 1e6)


def test_compute_bound_batch(problems: dict[str, str]) -> None:
    n = k = 4096
    ridge = _h100("bf16_tensor") * 1e3 / _h100("memory_bandwidth")
    # m·n·k / (m·k + k·n + m·n) ≥ ridge, solved for m
    m = math.ceil(ridge * k * n / (n * k - ridge * (k + n)))
    text = answer(problems["compute-bound-batch"])
    assert f"m = {m:,}" in text
    assert_shows(text, ridge)


def test_shared_memory_block(problems: dict[str, str]) -> None:
    limits = tomllib.loads((DATA / "cuda/limits.toml").read_text(encoding="utf-8"))
    (hopper,) = [c for c in limits["capability"] if c["cc"] == "9.0"]
    elements = hopper["shared_per_block"] // 4
    b = max(x for x in range(1, 1000) if 3 * x * x <= elements)
    n = 4096
    tiles = n // b
    moves = (2 * tiles + 2) * n * n
    text = answer(problems["shared-memory-block"])
    assert text.startswith(f"b = {b} ")
    assert_shows(text, moves, 2 * n**3 / moves)


def test_fp8_pair(problems: dict[str, str]) -> None:
    table = tomllib.loads((DATA / "gemm/cublaslt.toml").read_text(encoding="utf-8"))
    (refusal,) = [r for r in table["refused"] if (r["a"], r["b"]) == ("e5m2", "e5m2")]
    text = answer(problems["fp8-pair"])
    assert text.startswith("No: ")
    assert refusal["reason"] in text
    assert "e4m3 × e5m2" in text
    assert "e5m2 × e4m3" in text
    assert "TN" in text


def test_split_k_fills_one_round(problems: dict[str, str]) -> None:
    sms = int(_h100("sm_count"))
    tiles = (256 // 128) ** 2
    split = max(s for s in range(1, 129) if s * tiles <= sms and 16384 // s >= 4 * 64)
    text = answer(problems["split-k"])
    assert_shows(text, tiles, split, tiles * split)
    assert f"{split} slices" in text
