"""Ring attention on two gloo ranks equals causal ``scaled_dot_product_attention`` on one process, forward and
backward, sending what the formula says; PyTorch's own context parallelism is refused on the CPU in this torch."""

from __future__ import annotations

from gpukb.parallelism import communication as comm


def test_ring_attention_equals_one_process(two_ranks) -> None:
    for rank in two_ranks:
        assert rank["cp"]["output_equal"]
        assert rank["cp"]["grads_equal"]


def test_ring_traffic_is_the_formula(two_ranks) -> None:
    # batch 1, 2 heads of 4 = hidden 8, seq 8 over 2 ranks, float32
    for rank in two_ranks:
        cp = rank["cp"]
        assert cp["shard_bytes"] == 1 * 4 * 8 * 4
        sends = [r for r in cp["forward"] + cp["backward"] if r[0] == "send"]
        formula = comm.context_parallel(1, 8, 8, 2, element_bytes=4)
        assert comm.collective_counts(formula) == {"send": len(sends)} == {"send": 2}
        assert comm.sent_bytes(formula) == sum(r[3] for r in sends) == 2 * 2 * cp["shard_bytes"]


def test_pytorch_context_parallel_has_no_cpu_attention_rule(two_ranks) -> None:
    # torch.distributed.tensor.experimental.context_parallel shards CUDA's attention kernels only; if a later torch
    # adds the CPU kernel, this fails and the page's statement must change
    assert two_ranks[0]["cp"]["pytorch_cp"] == (
        "Operator aten._scaled_dot_product_flash_attention_for_cpu.default does not have a sharding strategy "
        "registered."
    )
