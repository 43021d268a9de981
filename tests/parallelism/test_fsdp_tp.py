"""FSDP + TP on a 2 × 2 ``DeviceMesh`` of four gloo ranks: outputs and gradients equal one process's (averaged
over the two replicas), parameters split by TP then sharded by FSDP, and the collectives are the formula's."""

from __future__ import annotations

from gpukb.parallelism import communication as comm
from gpukb.parallelism.model import BlockShape

SHAPE = BlockShape()
FP32 = 4


def test_fsdp_tp_equals_one_process(four_ranks) -> None:
    for rank in four_ranks:
        run = rank["fsdp_tp"]
        assert run["mesh"] == [2, 2]
        assert run["output_equal"]
        assert run["param_grads_equal"]


def test_parameters_are_split_by_tp_then_sharded_by_fsdp(four_ranks) -> None:
    h = SHAPE.hidden
    shapes = four_ranks[0]["fsdp_tp"]["local_shapes"]
    assert shapes["attention.wq.weight"] == [h // 2 // 2, h]  # colwise over tp, then dim 0 over dp
    assert shapes["mlp.w2.weight"] == [h // 2, 4 * h // 2]  # rowwise: columns over tp, rows over dp
    assert shapes["norm1.weight"] == [h // 2]  # replicated over tp, sharded over dp


def test_collectives_are_fsdp_over_dp_and_tp_over_tp(four_ranks) -> None:
    h = SHAPE.hidden
    split = 12 * h * h  # Q, K, V, O and the MLP
    replicated = 4 * h  # the LayerNorms
    formula = comm.fsdp_tp(
        split, replicated, SHAPE.batch, SHAPE.seq, h, dp=2, tp=2, element_bytes=FP32, reshard_after_forward=False
    )
    for rank in four_ranks:
        log = rank["fsdp_tp"]["log"]
        assert comm.collective_counts(formula) == {"all_gather": 1, "reduce_scatter": 1, "all_reduce": 4}
        assert {k: sum(1 for r in log if r[0] == k) for k in ("all_gather", "reduce_scatter", "all_reduce")} == (
            comm.collective_counts(formula)
        )
        assert comm.sent_bytes(formula) == sum(r[3] for r in log)
        gather = next(r for r in log if r[0] == "all_gather")
        assert gather[2] == (split // 2 + replicated) * FP32  # one replica's TP shard, gathered whole
