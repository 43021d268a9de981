"""Tensor and sequence parallelism with ``parallelize_module`` on two gloo ranks: the block's output and every
gradient equal one process's, and the collectives that ran are those the formula counts, byte for byte."""

from __future__ import annotations

import pytest

from gpukb.parallelism import communication as comm
from gpukb.parallelism.model import BlockShape

SHAPE = BlockShape()
FP32 = 4


def _sent(rows) -> int:
    return sum(r[3] for r in rows)


@pytest.mark.parametrize("scheme", ["tp", "tp_naive", "sp"])
def test_outputs_and_gradients_equal_one_process(two_ranks, scheme) -> None:
    for rank in two_ranks:
        got = rank[scheme]
        assert got["output_equal"]
        assert got["input_grad_equal"]
        assert got["param_grads_equal"]
        assert got["local_q_shape"] == [SHAPE.hidden // 2, SHAPE.hidden]  # half the heads' rows of W_q


def test_tensor_parallel_is_two_all_reduces_each_way(two_ranks) -> None:
    whole = SHAPE.batch * SHAPE.seq * SHAPE.hidden * FP32
    for rank in two_ranks:
        tp = rank["tp"]
        assert tp["forward"] == tp["backward"] == [("all_reduce", 2, whole, whole)] * 2  # 2(p-1)/p · S = S at p=2
        assert tp["commdebug_forward"] == {"all_reduce": 2}  # PyTorch's own count agrees
        formula = comm.tensor_parallel(SHAPE.batch, SHAPE.seq, SHAPE.hidden, 2, FP32)
        assert comm.collective_counts(formula) == {"all_reduce": 4}
        assert comm.sent_bytes(formula) == _sent(tp["forward"] + tp["backward"]) == 4 * whole
        assert comm.tp_all_reduces_per_block() == {"forward": 2, "backward": 2, "step": 4}


def test_without_prepare_module_input_backward_reduces_three_times_for_qkv(two_ranks) -> None:
    for rank in two_ranks:
        naive = rank["tp_naive"]
        assert [r[0] for r in naive["backward"]] == ["all_reduce"] * 4
        assert len(naive["forward"]) == 2
        assert comm.tp_all_reduces_per_block(naive_attention_plan=True) == {"forward": 2, "backward": 4, "step": 6}


def test_sequence_parallel_gathers_and_scatters_the_same_bytes(two_ranks) -> None:
    whole = SHAPE.batch * SHAPE.seq * SHAPE.hidden * FP32
    for rank in two_ranks:
        sp = rank["sp"]
        pairs = [("all_gather", 2, whole, whole // 2), ("reduce_scatter", 2, whole, whole // 2)] * 2
        assert sp["forward"] == sp["backward"] == pairs
        assert sp["commdebug_forward"] == {"all_gather_into_tensor": 2, "reduce_scatter_tensor": 2}
        # the LayerNorms' weights and biases hold partial sums until reduced: four all-reduces of h floats
        assert sp["reduce"] == [("all_reduce", 2, SHAPE.hidden * FP32, SHAPE.hidden * FP32)] * 4
        formula = comm.tensor_parallel(SHAPE.batch, SHAPE.seq, SHAPE.hidden, 2, FP32, sequence=True)
        assert comm.collective_counts(formula) == {"all_gather": 4, "reduce_scatter": 4, "all_reduce": 4}
        assert comm.sent_bytes(formula) == _sent(sp["forward"] + sp["backward"] + sp["reduce"])


def test_activation_bytes_of_sequence_parallelism_equal_tensor_parallelism() -> None:
    for t in (2, 4, 8):
        plain = comm.tensor_parallel(1, 2048, 12288, t)
        seq = [r for r in comm.tensor_parallel(1, 2048, 12288, t, sequence=True) if r.kind != "all_reduce"]
        assert comm.sent_bytes(plain) == comm.sent_bytes(seq) == 4 * 2 * (t - 1) * 2048 * 12288 * 2 // t
