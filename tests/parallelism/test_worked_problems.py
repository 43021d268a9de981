"""The parallelism chapter's worked problems, recomputed by hand from the papers' formulas and read back from the
rendered page."""

from __future__ import annotations

import pytest

from tests.helpers import size_text
from tests.worked_problems import answer, rendered_problems

S, H, A = 2048, 12288, 96  # GPT-3 175B: sequence, hidden, heads


@pytest.fixture  # per test (rendered once, then cached), so mutmut maps every test to the problems it reads
def problems() -> dict[str, str]:
    return rendered_problems("parallelism")


def test_tensor_parallel_all_reduces(problems: dict[str, str]) -> None:
    whole = 1 * S * H * 2
    per_gpu = 2 * 3 * whole / 4  # a ring all-reduce on 4 GPUs
    assert answer(problems["tp-all-reduces"]) == (
        f"4 all-reduces (2 forward, 2 backward) of {size_text(whole)} each; every GPU sends {size_text(per_gpu)} per "
        f"all-reduce, {size_text(4 * per_gpu)} per block and step."
    )


def test_sequence_parallel_activations(problems: dict[str, str]) -> None:
    sbh, t = S * 1 * H, 8
    tp_only = sbh * (10 + 24 / t + 5 * A * S / (H * t))
    with_sp = sbh / t * (34 + 5 * A * S / H)
    assert answer(problems["sequence-parallel-activations"]) == (
        f"{size_text(tp_only)} with tensor parallelism alone, {size_text(with_sp)} with sequence parallelism as well."
    )


def test_bubble(problems: dict[str, str]) -> None:
    assert answer(problems["bubble"]) == "3/11 = 27.3% under GPipe and 1F1B; 3/19 = 15.8% interleaved."


def test_model_state(problems: dict[str, str]) -> None:
    assert answer(problems["model-state"]) == f"{16 * 175e9 / 64 / 1e9:.2f} GB per GPU."


def test_expert_all_to_all(problems: dict[str, str]) -> None:
    rows = 4 * 4096 * 2 * 7 / 8  # dispatch and combine, forward and backward; 7/8 of the copies leave the GPU
    assert answer(problems["moe-all-to-all"]) == f"{size_text(rows * 4096 * 2 + 7 * 64)} per GPU."


def test_ring_attention(problems: dict[str, str]) -> None:
    shard = 2 * (131072 // 8) * 1024 * 2  # K and V of one GPU's tokens
    assert answer(problems["ring-attention"]) == f"{size_text(2 * 7 * shard)} per GPU, on the reference ring."
