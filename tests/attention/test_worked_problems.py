"""The attention chapter's worked problems, recomputed from their definitions with numpy."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import h100_ceilings_json
from tests.worked_problems import answer, assert_shows, numbers, rendered_problems, working

LAYERS, HEADS, KV_HEADS, D = 32, 32, 8, 128  # Llama-3-8B (the Llama 3 paper, table 3)


@pytest.fixture  # per test (rendered once, then cached), so mutmut maps every test to the problems it reads
def problems() -> dict[str, str]:
    return rendered_problems("attention")


def test_kv_cache(problems: dict[str, str]) -> None:
    per_token = 2 * LAYERS * D  # a key and a value per layer and head
    text = answer(problems["kv-cache"])
    assert_shows(text, 8192 * per_token * KV_HEADS * 2 / 2**30, 8192 * per_token * HEADS * 2 / 2**30)
    assert_shows(text, 8192 * per_token * KV_HEADS * 1 / 2**30)


def test_score_matrix(problems: dict[str, str]) -> None:
    seq = 32768
    text = answer(problems["score-matrix"])
    assert_shows(text, HEADS * seq * seq * 2 / 2**30, seq * D * 2 * (2 * HEADS + 2 * KV_HEADS) / 2**20)


def test_online_softmax(problems: dict[str, str]) -> None:
    x = np.array([3.0, 1.0, 5.0, 2.0])
    m1, m2 = x[:2].max(), x.max()
    l1, l2 = np.exp(x[:2] - m1).sum(), np.exp(x - m2).sum()
    p = np.exp(x) / np.exp(x).sum()
    text = answer(problems["online-softmax"])
    assert_shows(text, m1, l1, m2, l2, rel=1e-3)
    assert np.allclose(numbers(text.split("softmax", 1)[1]), p, atol=5e-5)


def test_attention_floor(problems: dict[str, str]) -> None:
    seq = 8192
    pairs = sum(range(1, seq + 1))  # query i sees keys 0..i
    flops = 4 * HEADS * pairs * D
    nbytes = seq * D * 2 * (2 * HEADS + 2 * KV_HEADS)
    quoted = h100_ceilings_json()
    peak, bandwidth = quoted["bf16"], quoted["bandwidth"]
    text = answer(problems["attention-floor"])
    assert "compute" in text
    assert_shows(text, flops / (peak * 1e12) * 1e6, nbytes / (bandwidth * 1e9) * 1e6, flops / 1e12)


def _exact(step: str, *values: float) -> None:
    """Every value is written in the step exactly (integers, byte counts)."""
    missing = [v for v in values if v not in numbers(step)]
    assert not missing, f"{missing} not written in: {step}"


LLAMA3 = "arXiv:2407.21783"  # the shapes' source: the Llama 3 paper, table 3


def test_kv_cache_working(problems: dict[str, str]) -> None:
    steps = working(problems["kv-cache"])
    per_token_layer = 2 * KV_HEADS * D * 2  # a key and a value vector per key/value head, 2 B each
    _exact(steps[0], per_token_layer)
    _exact(steps[1], LAYERS, 8192, per_token_layer * LAYERS * 8192)
    assert "4× more" in steps[2]  # 32 query heads over 8 key/value heads
    assert_shows(steps[2], HEADS * 2 * LAYERS * D * 2 * 8192 / 2**30)
    assert LLAMA3 in problems["kv-cache"].split("Sources:")[1]


def test_score_matrix_working(problems: dict[str, str]) -> None:
    seq = 32768
    steps = working(problems["score-matrix"])
    scores = HEADS * seq * seq * 2
    io = seq * D * 2 * (2 * HEADS + 2 * KV_HEADS)
    flops = 4 * HEADS * D * seq * (seq + 1) // 2  # causal: query i sees keys 0..i
    _exact(steps[0], scores)
    _exact(steps[1], io)
    assert_shows(steps[2], (io + 4 * scores) / 2**30, flops / (io + 4 * scores), flops / io)
    assert LLAMA3 in problems["score-matrix"].split("Sources:")[1]


def test_online_softmax_working(problems: dict[str, str]) -> None:
    x = np.array([3.0, 1.0, 5.0, 2.0])
    l1 = np.exp(x[:2] - 3).sum()
    local = np.exp(x[2:] - 5).sum()
    steps = working(problems["online-softmax"])
    assert "[3, 1, 5, 2]" in problems["online-softmax"].split('??? note "Answer"')[0]
    assert "m = max(3, 1) = 3" in steps[0]
    assert "e^(3−3) + e^(1−3)" in steps[0]
    assert "maximum 5 and local sum e^(5−5) + e^(2−5)" in steps[1]
    assert_shows(steps[1], local, l1, np.exp(3 - 5), l1 * np.exp(3 - 5) + local, rel=1e-3)
    rescale = f"l = {l1:.4f} · {np.exp(3 - 5):.4f} + {local:.4f} = {l1 * np.exp(3 - 5) + local:.4f}."
    assert rescale in steps[1]  # the old sum rescaled, plus the block's, which already has the new maximum
    assert_shows(steps[2], l1 * np.exp(3 - 5) + local, rel=1e-3)


def test_attention_floor_working(problems: dict[str, str]) -> None:
    seq = 8192
    flops = 4 * HEADS * D * seq * (seq + 1) // 2
    nbytes = seq * D * 2 * (2 * HEADS + 2 * KV_HEADS)
    quoted = h100_ceilings_json()
    steps = working(problems["attention-floor"])
    assert f"{seq:,}·{seq + 1:,}/2" in steps[0]
    _exact(steps[0], flops)
    _exact(steps[1], nbytes)
    assert_shows(steps[1], flops / nbytes)
    compute_us, memory_us = flops / (quoted["bf16"] * 1e12) * 1e6, nbytes / (quoted["bandwidth"] * 1e9) * 1e6
    assert_shows(steps[2].split("compute")[1], compute_us, memory_us)
    assert_shows(answer(problems["attention-floor"]).split("its")[1], nbytes / 2**20, memory_us)
    assert LLAMA3 in problems["attention-floor"].split("Sources:")[1]
