"""Expert parallelism on two gloo ranks: top-2 routing, dispatch and combine by ``all_to_all_single``; output,
input, expert and router gradients equal one process's, and the all-to-alls send what the formula says for the
routing that happened."""

from __future__ import annotations

import pytest

from gpukb.parallelism import communication as comm
from gpukb.parallelism.experts import imbalance

TOKENS, HIDDEN, EXPERTS, TOP_K, FP32 = 8, 8, 4, 2, 4


def test_expert_parallel_equals_one_process(two_ranks) -> None:
    for rank in two_ranks:
        ep = rank["ep"]
        assert ep["output_equal"]
        assert ep["input_grad_equal"]
        assert ep["expert_grads_equal"]
        assert ep["router_grad_equal"]


def test_all_to_all_bytes_follow_the_routing(two_ranks) -> None:
    for r, rank in enumerate(two_ranks):
        ep = rank["ep"]
        assert sum(ep["routed"]) == TOKENS * TOP_K
        away = TOKENS * TOP_K - ep["routed"][r]
        here = two_ranks[1 - r]["ep"]["routed"][r]  # what the other rank sent to this rank's experts
        formula = comm.expert_parallel(TOKENS, HIDDEN, 2, TOP_K, EXPERTS, FP32, routed_away=away, routed_here=here)
        assert comm.collective_counts(formula) == {"all_to_all": 5} == {"all_to_all": len(ep["log"])}
        assert comm.sent_bytes(formula) == sum(row[3] for row in ep["log"])
        assert sorted(row[2] for row in ep["log"]) == sorted(w for t in formula for w in [t.whole_bytes] * t.count)


def test_load_is_counted_per_expert(two_ranks) -> None:
    load = two_ranks[0]["ep"]["load"]
    assert load == two_ranks[1]["ep"]["load"]
    assert sum(load) == 2 * TOKENS * TOP_K
    assert imbalance(load) == max(load) / (sum(load) / EXPERTS) > 1.0


def test_imbalance() -> None:
    assert imbalance([4, 4, 4, 4]) == 1.0
    assert imbalance([16, 0, 0, 0]) == 4.0
    for bad, match in (([], "non-empty list"), ([0, 0], "positive sum"), ([-1, 2], "count must be an int ≥ 0; got -1")):
        with pytest.raises(ValueError, match=match):
            imbalance(bad)
    assert imbalance([10**400, 0]) == 2.0  # counts beyond a float: the mean overflowed (OverflowError)


def test_even_routing_default() -> None:
    rows = comm.expert_parallel(TOKENS, HIDDEN, 2, TOP_K, EXPERTS, 2)
    # half of the 16 rows leave, half as many come in: 2 × 8 rows each way, plus the counts
    assert comm.sent_bytes(rows) == 4 * 8 * HIDDEN * 2 + 4 * 8 // 2
    with pytest.raises(ValueError, match="even split of tokens·top_k = 3 rows over ep = 2"):
        comm.expert_parallel(3, 8, 2, 1, 4)
    with pytest.raises(ValueError, match="experts must be divisible by ep"):
        comm.expert_parallel(8, 8, 3, 2, 4)
    with pytest.raises(ValueError, match="routed_away must be ≤ tokens·top_k = 16; got 17"):
        comm.expert_parallel(8, 8, 2, 2, 4, routed_away=17, routed_here=0)
