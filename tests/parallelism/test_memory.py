"""Memory per GPU: Korthikanti et al.'s activation table, pipeline in-flight counts, and model state split by TP
and PP and sharded over data-parallel replicas."""

from __future__ import annotations

from fractions import Fraction

import pytest

from gpukb.distributed.memory import korthikanti_bytes
from gpukb.parallelism.memory import activation_bytes_per_gpu, activation_bytes_per_layer, state_bytes_per_gpu

S, B, H, A = 2048, 1, 12288, 96  # GPT-3 175B's layer


def test_no_parallelism_is_the_distributed_chapters_count() -> None:
    assert activation_bytes_per_layer(S, B, H, A) == korthikanti_bytes(B, S, H, A)


def test_table_2_rows() -> None:
    sbh, t = S * B * H, 8
    assert activation_bytes_per_layer(S, B, H, A, t) == sbh * (10 + Fraction(24, t) + Fraction(5 * A * S, H * t))
    assert activation_bytes_per_layer(S, B, H, A, t, sequence=True) == Fraction(sbh, t) * (34 + Fraction(5 * A * S, H))
    assert activation_bytes_per_layer(S, B, H, A, t, recompute="selective") == sbh * (10 + Fraction(24, t))
    assert activation_bytes_per_layer(S, B, H, A, t, sequence=True, recompute="selective") == Fraction(34 * sbh, t)
    assert activation_bytes_per_layer(S, B, H, A, t, recompute="full") == 2 * sbh


def test_sequence_parallelism_divides_everything_by_t() -> None:
    for t in (1, 2, 8):
        assert activation_bytes_per_layer(S, B, H, A, t, sequence=True) * t == activation_bytes_per_layer(S, B, H, A)


def test_pipeline_first_stage_holds_p_micro_batches_under_1f1b() -> None:
    layer = activation_bytes_per_layer(S, B, H, A, 8, sequence=True)
    one_f = activation_bytes_per_gpu(S, B, H, A, 96, tp=8, pp=8, micro_batches=64, schedule="1F1B", sequence=True)
    gpipe = activation_bytes_per_gpu(S, B, H, A, 96, tp=8, pp=8, micro_batches=64, schedule="GPipe", sequence=True)
    assert one_f == layer * 12 * 8 == layer * 96  # L/p layers × p micro-batches: all L layers' worth
    assert gpipe == layer * 12 * 64


def test_state_bytes() -> None:
    assert state_bytes_per_gpu(175 * 10**9, tp=8, pp=8) == Fraction(175 * 10**9 * 16, 64)
    assert state_bytes_per_gpu(8 * 10**9, dp=8, scheme="zero3") == 16 * 10**9
    assert state_bytes_per_gpu(10**9, tp=2, dp=4, scheme="zero1") == Fraction(10**9, 2) * (4 + Fraction(12, 4))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: activation_bytes_per_layer(S, B, H, A, recompute="some"), "unknown recompute 'some'"),
        (lambda: activation_bytes_per_layer(0, B, H, A), "seq must be an int ≥ 1; got 0"),
        (lambda: activation_bytes_per_gpu(S, B, H, A, 10, pp=4), "layers must be divisible by pp; got layers 10, pp 4"),
        (lambda: state_bytes_per_gpu(10, scheme="zero4"), "unknown scheme 'zero4'"),
    ],
)
def test_bad_input(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call()
