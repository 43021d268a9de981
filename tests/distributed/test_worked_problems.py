"""The distributed chapter's worked problems, recomputed from the ZeRO paper's counts and the committed record."""

from __future__ import annotations

import json

import pytest

from tests.helpers import ROOT
from tests.worked_problems import answer, assert_shows, rendered_problems


@pytest.fixture  # per test (rendered once, then cached), so mutmut maps every test to the problems it reads
def problems() -> dict[str, str]:
    return rendered_problems("distributed")


def test_fsdp_bytes(problems: dict[str, str]) -> None:
    per_param = (2 + 2 + 12) / 8  # ZeRO's mixed-precision Adam: fp16 params, grads, K = 12; all sharded over 8
    text = answer(problems["fsdp-bytes"])
    assert_shows(text, per_param, per_param * 7e9 / 1e9, 16 * 7e9 / 1e9, 2 + 2 + 4)


def test_ring_all_reduce(problems: dict[str, str]) -> None:
    record = json.loads((ROOT / "src/gpukb/data/results/distributed/collectives-h100x2.json").read_text("utf-8"))
    largest = max((r for r in record["rows"] if r["op"] == "all_reduce"), key=lambda r: r["size_bytes"])
    p = 8
    # every rank sends one 1/p chunk in each of the p − 1 reduce-scatter and p − 1 all-gather steps
    sent = 2 * (p - 1) * (2**30 / p)
    text = answer(problems["ring-all-reduce"])
    assert text.startswith(f"{2 * (p - 1)} steps")
    assert_shows(text, sent / 2**30, sent / largest["busbw"] * 1e3, largest["busbw"] / 1e9, rel=0.01)


def test_activation_checkpointing(problems: dict[str, str]) -> None:
    b, s, h, a = 1, 4096, 4096, 32
    # Korthikanti et al. without dropout: sbh(32 + 2as/h) bytes in 16 bits, plus fp32 LayerNorm statistics
    full = s * b * h * (32 + 2 * a * s / h) + 4 * b * s * 4
    kept = 2 * b * s * h
    text = answer(problems["activation-checkpointing"])
    assert_shows(text, full / 2**30, kept / 2**20, 32 * full / 2**30, 32 * kept / 2**30)


def test_bus_bandwidth(problems: dict[str, str]) -> None:
    algbw = 2**30 / 5e-3
    assert_shows(answer(problems["bus-bandwidth"]), algbw / 1e9, algbw * 2 * 7 / 8 / 1e9)
