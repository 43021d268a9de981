"""The pipeline bound against a simulated schedule, the engine lanes of a timeline, and the managed-size guard."""

from __future__ import annotations

import random

import pytest

from gpukb.cuda.host_memory import check_managed_size
from gpukb.cuda.overlap import engine_lanes, pipeline_bound, sequential_time


def _in_order_makespan(h2d: list[float], kernel: list[float], d2h: list[float]) -> float:
    """Three engines, each taking the chunks in order, a chunk's stage starting when its previous stage and the
    engine's previous chunk are both done: the schedule the bound is a lower bound of."""
    done = [0.0, 0.0, 0.0]
    for stages in zip(h2d, kernel, d2h, strict=True):
        ready = 0.0
        for engine, duration in enumerate(stages):
            done[engine] = max(done[engine], ready) + duration
            ready = done[engine]
    return done[2]


def test_equal_chunks_reach_the_largest_stage_plus_one_chunk_of_the_others() -> None:
    h, k, d = [1.0] * 8, [2.0] * 8, [1.0] * 8
    assert sequential_time(h, k, d) == 32.0
    assert pipeline_bound(h, k, d) == 1.0 + 16.0 + 1.0
    assert _in_order_makespan(h, k, d) == 18.0
    assert pipeline_bound([3.0], [4.0], [5.0]) == sequential_time([3.0], [4.0], [5.0]) == 12.0  # one chunk: no overlap


def test_the_bound_never_exceeds_a_real_in_order_schedule() -> None:
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 9)
        h, k, d = ([rng.uniform(0.0, 3.0) for _ in range(n)] for _ in range(3))
        bound, makespan = pipeline_bound(h, k, d), _in_order_makespan(h, k, d)
        assert bound <= makespan + 1e-9
        assert makespan <= sequential_time(h, k, d) + 1e-9


def test_the_bound_is_exact_for_equal_chunks_and_only_a_bound_otherwise() -> None:
    """Equal chunks: the in-order schedule takes exactly the bound. Unequal ones can take longer: here chunk 2's long
    copy-in and long copy-out make the copy-out engine wait in the middle, 8 against a bound of 7."""
    rng = random.Random(11)
    for _ in range(100):
        n = rng.randint(1, 12)
        h, k, d = ([x] * n for x in (rng.uniform(0.1, 3.0) for _ in range(3)))
        assert _in_order_makespan(h, k, d) == pytest.approx(pipeline_bound(h, k, d), rel=1e-12)
    h, k, d = [1.0, 3.0, 1.0], [1.0, 1.0, 1.0], [1.0, 2.0, 1.0]
    assert pipeline_bound(h, k, d) == 7.0
    assert _in_order_makespan(h, k, d) == 8.0  # the path: copy in 1 + 3, kernel 1, copy out 2 + 1


def test_bad_stage_lists_are_refused() -> None:
    with pytest.raises(ValueError, match="one duration per chunk for each stage, at least one chunk; got 2, 1 and 2"):
        pipeline_bound([1.0, 1.0], [1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="got 0, 0 and 0"):
        sequential_time([], [], [])
    with pytest.raises(ValueError, match=r"kernel duration \[0\] must be ≥ 0; got -1\.0"):
        pipeline_bound([1.0], [-1.0], [1.0])


def test_engine_lanes_start_an_operation_after_the_previous_one_on_its_engine() -> None:
    ops = [
        ("H2D", 0, 0.0, 1.0),
        ("H2D", 1, 0.0, 2.0),  # its stream reached it at 0, but the copy engine was busy until 1
        ("kernel", 0, 1.0, 3.0),
        ("kernel", 1, 2.0, 5.0),
        ("D2H", 0, 3.0, 4.0),
        ("D2H", 1, 5.0, 6.0),
    ]
    lanes = engine_lanes(ops)
    assert lanes["H2D"] == [(0, 0.0, 1.0), (1, 1.0, 2.0)]
    assert lanes["kernel"] == [(0, 1.0, 3.0), (1, 3.0, 5.0)]
    assert lanes["D2H"] == [(0, 3.0, 4.0), (1, 5.0, 6.0)]
    with pytest.raises(ValueError, match=r"H2D of chunk 0 ends \(1.0\) before it starts \(2.0\)"):
        engine_lanes([("H2D", 0, 2.0, 1.0)])
    with pytest.raises(ValueError, match=r"unknown ops\[0\] stage 'memset'; choose one of \['H2D', 'kernel', 'D2H'\]"):
        engine_lanes([("memset", 0, 0.0, 1.0)])
    for op, message in [(("H2D", 0, 0.0, float("nan")), "end must be a finite number; got nan"),
                        (("H2D", True, 0.0, 1.0), "chunk must be an int ≥ 0; got True"),
                        (("H2D", 0, -1.0, 1.0), "start must be ≥ 0; got -1.0"),
                        (("H2D", 0, 1.0), r"must be a \(stage, chunk, start, end\) tuple")]:  # fmt: skip
        with pytest.raises((ValueError, TypeError), match=message):
            engine_lanes([op])


def test_managed_allocations_leave_the_gpu_room() -> None:
    assert check_managed_size(2**20, 10 * 2**20) == 2**20
    assert check_managed_size(5 * 2**20, 10 * 2**20) == 5 * 2**20  # exactly half is allowed
    with pytest.raises(ValueError, match=r"6,000 bytes is more than 50% of the 10,000 bytes the GPU has free"):
        check_managed_size(6000, 10_000)
    with pytest.raises(ValueError, match="nbytes must be an int ≥ 1; got 0"):
        check_managed_size(0, 10_000)
    with pytest.raises(TypeError, match=r"nbytes must be an int ≥ 1; got 1\.5 \(float\)"):
        check_managed_size(1.5, 10_000)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"share must be ≤ 1; got 2"):
        check_managed_size(1, 10, share=2)


def test_stage_and_ops_checks_name_what_they_refuse() -> None:
    """A string or a mapping is not a sequence of durations or of operations, and the error says what it got."""
    from gpukb.cuda.overlap import engine_lanes

    with pytest.raises(TypeError, match=r"^H2D durations must be a sequence of numbers, one per chunk; got 'abc'"):
        sequential_time("abc", "abc", "abc")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^H2D durations must be .*; got \{0: 1\.0\} \(dict\)"):
        sequential_time({0: 1.0}, [1.0], [1.0])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^ops must be a sequence of .*; got \{\} \(dict\)"):
        engine_lanes({})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^ops\[0\] must be .*; got \('H2D', 0, 0\) \(tuple\)"):
        engine_lanes([("H2D", 0, 0)])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("ops", "lane"),
    [
        # in order of end, not of chunk: chunk 1 ends first, chunk 0 waits for it
        ([("H2D", 0, 0.0, 5.0), ("H2D", 1, 0.0, 2.0)], [(1, 0.0, 2.0), (0, 2.0, 5.0)]),
        # equal ends: the earlier start first
        ([("H2D", 0, 1.0, 5.0), ("H2D", 1, 0.0, 5.0)], [(1, 0.0, 5.0), (0, 5.0, 5.0)]),
        # an operation of no length (start = end) is allowed
        ([("H2D", 0, 1.0, 1.0)], [(0, 1.0, 1.0)]),
    ],
)
def test_engine_lane_order(ops: list[tuple[str, int, float, float]], lane: list[tuple[int, float, float]]) -> None:
    from gpukb.cuda.overlap import engine_lanes

    assert engine_lanes(ops)["H2D"] == lane
