"""The attention chapter's worked problems, recomputed from their definitions with numpy."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import h100_ceilings_json
from tests.worked_problems import answer, assert_shows, numbers, rendered_problems

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
