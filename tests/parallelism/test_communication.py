"""The bytes-per-rank formulas: the papers' counts, worked by hand, and what they refuse."""

from __future__ import annotations

import pytest

from gpukb.parallelism import communication as comm


def test_tensor_parallel_worked_problem() -> None:
    # TP = 4, one block, b = 1, s = 2048, h = 12288, bf16: four all-reduces of 50,331,648 bytes, each sending
    # 2·3/4 of it from every rank
    rows = comm.tensor_parallel(1, 2048, 12288, 4)
    assert [(r.kind, r.count, r.whole_bytes, r.ranks) for r in rows] == [("all_reduce", 4, 50_331_648, 4)]
    assert comm.sent_bytes(rows) == 4 * 75_497_472


def test_layers_multiply() -> None:
    one = comm.sent_bytes(comm.tensor_parallel(2, 128, 64, 2, layers=1, sequence=True))
    assert comm.sent_bytes(comm.tensor_parallel(2, 128, 64, 2, layers=6, sequence=True)) == 6 * one
    assert comm.sent_bytes(comm.context_parallel(1, 64, 32, 4, layers=3)) == 3 * comm.sent_bytes(
        comm.context_parallel(1, 64, 32, 4)
    )


def test_context_parallel_sends_every_other_shard_once_each_way() -> None:
    # cp = 4: 3 passes of K and V (b·s/cp·h elements each) forward, 3 of their gradients backward
    rows = comm.context_parallel(1, 4096, 4096, 4, element_bytes=2)
    shard = 1 * 1024 * 4096 * 2
    assert comm.sent_bytes(rows) == 2 * 3 * 2 * shard
    gqa = comm.context_parallel(1, 4096, 4096, 4, element_bytes=2, kv_hidden=1024)
    assert comm.sent_bytes(gqa) * 4 == comm.sent_bytes(rows)  # K and V 4× narrower, 4× fewer bytes


def test_pipeline_first_middle_last() -> None:
    def sent(stage: int) -> int:
        return comm.sent_bytes(comm.pipeline_parallel(2, 1024, 4096, 4, 8, stage))

    act = 2 * 1024 * 4096 * 2
    assert [sent(r) for r in range(4)] == [8 * act, 16 * act, 16 * act, 8 * act]


def test_fsdp_gathers_twice_unless_the_root() -> None:
    assert comm.collective_counts(comm.fsdp(1024, 4)) == {"all_gather": 2, "reduce_scatter": 1}
    assert comm.sent_bytes(comm.fsdp(1024, 4, 2)) == 3 * 3 * 1024 * 2 // 4
    assert comm.sent_bytes(comm.fsdp(1024, 4, 2, grad_bytes=4)) == (2 * 2 + 4) * 1024 * 3 // 4
    assert comm.collective_counts(comm.fsdp(1024, 4, reshard_after_forward=False)) == {
        "all_gather": 1,
        "reduce_scatter": 1,
    }


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: comm.tensor_parallel(0, 1, 1, 1), ValueError, "batch must be an int ≥ 1; got 0"),
        (lambda: comm.tensor_parallel(1, 6, 8, 4, sequence=True), ValueError, "seq divisible by tp; got seq 6, tp 4"),
        (lambda: comm.tensor_parallel(1, 8, 8, 2, sequence="yes"), TypeError, "sequence must be True or False"),
        (lambda: comm.tensor_parallel(1, 8, 8.0, 2), TypeError, "hidden must be an int"),
        (lambda: comm.context_parallel(1, 10, 8, 4), ValueError, "seq divisible by cp; got seq 10, cp 4"),
        (lambda: comm.fsdp(10, 4), ValueError, "parameters must be divisible by dp; got 10 parameters, dp 4"),
        (lambda: comm.fsdp_tp(9, 0, 1, 1, 1, 1, 2), ValueError, "split_parameters must be divisible by tp; got 9"),
        (lambda: comm.Traffic("x", "gossip", 1, 1, 1), ValueError, "unknown kind 'gossip'"),
        (lambda: comm.Traffic("x", "send", -1, 1, 1), ValueError, "count must be an int ≥ 0; got -1"),
    ],
)
def test_bad_input_is_refused(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


def test_all_reduces_per_block() -> None:
    assert comm.tp_all_reduces_per_block()["step"] == 4
    with pytest.raises(TypeError, match="naive_attention_plan must be True or False"):
        comm.tp_all_reduces_per_block(1)
