"""Pipelines with ``torch.distributed.pipelining``: GPipe and 1F1B on two and four gloo ranks give one process's
gradients, send each micro-batch's activations and gradients once, and run their micro-batches in an order whose
bubble is (p − 1)/(m + p − 1); 1F1B holds at most p micro-batches where GPipe holds m."""

from __future__ import annotations

from fractions import Fraction

import pytest

from gpukb.parallelism import communication as comm
from gpukb.parallelism.pipeline import bubble_fraction, in_flight, interleaved_bubble_fraction, replay, schedule_order

MICRO, BATCH, HIDDEN, FP32 = 4, 8, 8, 4


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize("group", ["two_ranks", "four_ranks"])
def test_pipeline_gradients_equal_one_process(request, group, schedule) -> None:
    for rank in request.getfixturevalue(group):
        assert rank[schedule]["grads_equal"]


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize("group", ["two_ranks", "four_ranks"])
def test_each_stage_sends_what_the_formula_says(request, group, schedule) -> None:
    ranks = request.getfixturevalue(group)
    p = len(ranks)
    for r, rank in enumerate(ranks):
        run = rank[schedule]
        assert run["activation_bytes"] == BATCH // MICRO * HIDDEN * FP32
        sends = [row for row in run["log"] if row[0] == "send"]
        formula = comm.pipeline_parallel(BATCH // MICRO, 1, HIDDEN, p, MICRO, r, FP32)
        assert comm.collective_counts(formula) == {"send": len(sends)}
        assert comm.sent_bytes(formula) == sum(row[3] for row in sends)


@pytest.mark.parametrize("schedule", ["GPipe", "1F1B"])
@pytest.mark.parametrize("group", ["two_ranks", "four_ranks"])
def test_schedule_order_is_the_order_pytorch_ran(request, group, schedule) -> None:
    # the page's timelines are drawn from schedule_order: it must be what torch.distributed.pipelining ran
    ranks = request.getfixturevalue(group)
    assert [r[schedule.lower()]["order"] for r in ranks] == schedule_order(schedule, len(ranks), MICRO)


def test_the_engine_runs_gpipe_and_1f1b_in_their_orders(two_ranks, four_ranks) -> None:
    gpipe = ["F"] * MICRO + ["B"] * MICRO
    assert [r["gpipe"]["order"] for r in two_ranks] == [gpipe, gpipe]
    assert [r["gpipe"]["order"] for r in four_ranks] == [gpipe] * 4
    # 1F1B: p - 1 - r forwards to warm up, then one forward, one backward (Narayanan et al. 2021, figure 4)
    assert [r["1f1b"]["order"] for r in four_ranks] == [
        ["F", "F", "F", "F", "B", "B", "B", "B"],
        ["F", "F", "F", "B", "F", "B", "B", "B"],
        ["F", "F", "B", "F", "B", "F", "B", "B"],
        ["F", "B", "F", "B", "F", "B", "F", "B"],
    ]


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize("group", ["two_ranks", "four_ranks"])
def test_the_recorded_order_has_the_predicted_bubble(request, group, schedule) -> None:
    ranks = request.getfixturevalue(group)
    p = len(ranks)
    played = replay([r[schedule]["order"] for r in ranks])
    assert played.bubble == bubble_fraction(p, MICRO) == Fraction(p - 1, MICRO + p - 1)
    assert played.makespan == (MICRO + p - 1) * 3  # forward 1, backward 2
    name = "GPipe" if schedule == "gpipe" else "1F1B"
    assert played.peak_in_flight == [in_flight(name, p, MICRO, r) for r in range(p)]


def test_bubble_formulas() -> None:
    assert bubble_fraction(4, 8) == Fraction(3, 11)
    assert bubble_fraction(1, 5) == 0
    assert interleaved_bubble_fraction(4, 8, 1) == bubble_fraction(4, 8)
    assert interleaved_bubble_fraction(4, 8, 2) == Fraction(3, 19)
    assert in_flight("GPipe", 4, 8) == 8
    assert [in_flight("1F1B", 4, 8, r) for r in range(4)] == [4, 3, 2, 1]
    assert in_flight("1F1B", 4, 2) == 2


def test_replay_of_a_schedule_built_by_hand() -> None:
    # two stages, two micro-batches, GPipe: F0 F1 on stage 0 at 0-1, 1-2; stage 1 F at 1-2, 2-3, B at 3-5, 5-7;
    # stage 0 B0 at 5-7, B1 at 7-9
    played = replay([["F", "F", "B", "B"], ["F", "F", "B", "B"]])
    assert played.makespan == 9
    assert [(s, e, k, i) for s, e, k, i in played.slots[0]] == [
        (0, 1, "F", 0),
        (1, 2, "F", 1),
        (5, 7, "B", 0),
        (7, 9, "B", 1),
    ]
    assert played.bubble == Fraction(1, 3)


@pytest.mark.parametrize(
    ("orders", "match"),
    [
        ([], "non-empty list"),
        ([["F", "X"]], r"orders\[0\] must be a list of 'F' and 'B'"),
        ([["B", "F"]], "runs a backward before its forward"),
        ([["F", "B"], ["F", "F", "B", "B"]], "same number"),
        ([["F", "F", "B", "B"], ["F", "B", "F", "B"], ["B"]], r"orders\[2\]"),
    ],
)
def test_replay_refuses_what_is_not_a_schedule(orders, match) -> None:
    with pytest.raises(ValueError, match=match):
        replay(orders)


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="stages must be an int ≥ 1; got 0"):
        bubble_fraction(0, 4)
    with pytest.raises(TypeError, match="micro_batches must be an int"):
        bubble_fraction(2, 2.5)
    with pytest.raises(ValueError, match=r"unknown schedule 'zero-bubble'; choose one of \['GPipe', '1F1B'\]"):
        in_flight("zero-bubble", 4, 8)
    with pytest.raises(ValueError, match="stage must be an int ≥ 0, ≤ 3; got 4"):
        comm.pipeline_parallel(1, 1, 1, 4, 4, 4)
