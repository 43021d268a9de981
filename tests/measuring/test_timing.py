"""Warm-up, repetition and the timers, exercised on the CPU (no timing thresholds: counts and order only)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from gpukb.measuring.timing import (
    BUDGETS,
    ESTIMATE_CALLS,
    HOLD_FIRST_MS,
    HOLD_MAX_MS,
    HOLD_SAMPLES,
    Budget,
    EventTimer,
    HostTimer,
    L2Flusher,
    Marks,
    benchmark,
)


class FixedTimer:
    """A timer that calls the function and reports a fixed time: the budget arithmetic without a clock."""

    def __init__(self, ms: float) -> None:
        self.ms = ms
        self.calls: list[int] = []

    def time(self, fn, n, before=None):
        for _ in range(n):
            if before is not None:
                before()
            fn()
        self.calls.append(n)
        return [self.ms] * n


def test_budget_sizes_warm_up_and_repetitions_from_the_estimate() -> None:
    timer = FixedTimer(ms=2.0)
    run = benchmark(lambda: None, timer, Budget(warmup_ms=25, rep_ms=100, min_reps=5, max_reps=200))
    assert run.estimate_ms == 2.0
    assert run.warmup_calls == math.ceil(25 / 2.0)
    assert len(run.samples) == math.ceil(100 / 2.0)
    assert timer.calls == [1, ESTIMATE_CALLS, run.warmup_calls, len(run.samples)]


@pytest.mark.parametrize(("ms", "reps"), [(1000.0, 5), (1e-4, 200)])
def test_repetitions_stay_within_bounds(ms, reps) -> None:
    run = benchmark(lambda: None, FixedTimer(ms), Budget(rep_ms=100, min_reps=5, max_reps=200))
    assert len(run.samples) == reps


def test_before_runs_ahead_of_every_call() -> None:
    order: list[str] = []
    benchmark(
        lambda: order.append("fn"),
        HostTimer(),
        Budget(warmup_ms=0, rep_ms=0, min_reps=3, max_reps=3, min_warmup=1),
        before=lambda: order.append("before"),
    )
    assert order == ["before", "fn"] * (1 + ESTIMATE_CALLS + 1 + 3)


def test_host_timer_synchronizes_around_each_call() -> None:
    events: list[str] = []
    samples = HostTimer(sync=lambda: events.append("sync")).time(lambda: events.append("fn"), 2)
    assert events == ["sync", "fn", "sync"] * 2
    assert len(samples) == 2
    assert all(s >= 0 for s in samples)


def _fake_torch(log: list[str], early: list[bool] | None = None):
    """A torch whose events log what they do and time ``end.id - start.id`` ms; ``early`` lists what successive
    gate checks (``query`` of an event made without timing) answer: True, the GPU passed the gate too soon."""
    answers = list(early or [])

    class Event:
        count = 0

        def __init__(self, enable_timing: bool = False) -> None:
            Event.count += 1
            self.id = Event.count
            self.timing = enable_timing

        def query(self) -> bool:
            assert not self.timing
            log.append(f"query {self.id}")
            return answers.pop(0) if answers else False

        def record(self, stream=None) -> None:
            log.append(f"record {self.id}" + (f" on {stream}" if stream is not None else ""))

        def synchronize(self) -> None:
            log.append(f"wait {self.id}")

        def elapsed_time(self, end) -> float:
            return float(end.id - self.id)

    cuda = SimpleNamespace(
        Event=Event, synchronize=lambda: log.append("synchronize"), _sleep=lambda cycles: log.append(f"sleep {cycles}")
    )
    sizes = {"int32": 4, "int64": 8}
    return SimpleNamespace(
        cuda=cuda,
        int32="int32",
        int64="int64",
        ones=lambda n, dtype, device: SimpleNamespace(nbytes=n * sizes[dtype]),
        zeros=lambda shape, dtype, device: SimpleNamespace(dtype=dtype),
    )


def test_event_timer_brackets_each_call_and_synchronizes_once() -> None:
    log: list[str] = []
    samples = EventTimer(_fake_torch(log)).time(lambda: log.append("fn"), 2, before=lambda: log.append("flush"))
    # events 1, 2 are the starts; 3, 4 the ends: start i and end i bracket call i, with the flush outside
    assert log == ["flush", "record 1", "fn", "record 3", "flush", "record 2", "fn", "record 4", "synchronize"]
    assert samples == [2.0, 2.0]


def test_a_batching_event_timer_brackets_several_calls_and_reports_one() -> None:
    log: list[str] = []
    timer = EventTimer(_fake_torch(log), calls_per_sample=3)
    samples = timer.time(lambda: log.append("fn"), 2, before=lambda: log.append("flush"))
    first = ["flush", "record 1", "fn", "fn", "fn", "record 3"]
    assert log == [*first, "flush", "record 2", "fn", "fn", "fn", "record 4", "synchronize"]
    assert samples == [2.0 / 3, 2.0 / 3]  # the events' interval over the calls between them


def test_a_held_event_timer_queues_its_samples_behind_a_gate() -> None:
    log: list[str] = []
    timer = EventTimer(_fake_torch(log), hold=True)
    samples = timer.time(lambda: log.append("fn"), 2, before=lambda: log.append("flush"))
    # calibration: a spin of 1e6 cycles timed by events 1 and 2 (1 ms in the fake), so 1e6 cycles a millisecond
    assert log[:4] == ["record 1", "sleep 1000000", "record 2", "wait 2"]
    gate = int(HOLD_FIRST_MS * 1e6)
    # then the gate (a spin, event 3 after it), every sample queued behind it, the gate checked, one synchronize
    assert log[4:] == [f"sleep {gate}", "record 3", "flush", "record 4", "fn", "record 6", "flush", "record 5", "fn",
                       "record 7", "query 3", "synchronize"]  # fmt: skip
    assert samples == [2.0, 2.0]
    assert (timer.retimed, timer.unheld, len(timer.host_ms)) == (0, 0, 1)


def test_a_gate_that_ends_too_soon_is_lengthened_and_its_samples_timed_again() -> None:
    log: list[str] = []
    timer = EventTimer(_fake_torch(log, early=[True, False]), hold=True)
    assert timer.time(lambda: log.append("fn"), 1) == [1.0]  # start and end events one apart
    sleeps = [int(line.split()[1]) for line in log if line.startswith("sleep")][1:]  # past the calibration
    assert sleeps == [int(HOLD_FIRST_MS * 1e6), int(2 * HOLD_FIRST_MS * 1e6)]  # doubled after the early one
    assert log.count("fn") == 2
    assert timer.retimed == 1
    assert timer.unheld == 0


def test_a_gate_that_is_always_too_short_stops_at_its_longest_and_is_counted() -> None:
    log: list[str] = []
    timer = EventTimer(_fake_torch(log, early=[True] * 100), hold=True)
    timer.time(lambda: None, 1)
    sleeps = [int(line.split()[1]) for line in log if line.startswith("sleep")][1:]
    assert max(sleeps) == int(HOLD_MAX_MS * 1e6)
    assert timer.unheld == 1
    assert timer.retimed == len(sleeps) - 1  # every gate but the last was retried


def test_a_held_timer_queues_at_most_a_group_of_samples_behind_one_gate() -> None:
    log: list[str] = []
    timer = EventTimer(_fake_torch(log), hold=True)
    assert len(timer.time(lambda: log.append("fn"), HOLD_SAMPLES + 3)) == HOLD_SAMPLES + 3
    gates = [i for i, line in enumerate(log) if line.startswith("sleep")][1:]
    assert len(gates) == 2
    assert log[gates[0] : gates[1]].count("fn") == HOLD_SAMPLES
    assert len(timer.host_ms) == 2


def test_benchmark_reports_the_host_time_of_a_held_timer_only() -> None:
    held = benchmark(lambda: None, EventTimer(_fake_torch([]), hold=True), Budget(warmup_ms=0, rep_ms=1, min_reps=3))
    assert held.host_ms is not None
    assert len(held.host_ms) == 1
    assert all(h >= 0 for h in held.host_ms)
    assert benchmark(lambda: None, FixedTimer(1.0), Budget(warmup_ms=0, rep_ms=1)).host_ms is None


def test_a_batching_host_timer_synchronizes_around_the_batch() -> None:
    events: list[str] = []
    samples = HostTimer(sync=lambda: events.append("sync"), calls_per_sample=2).time(lambda: events.append("fn"), 1)
    assert events == ["sync", "fn", "fn", "sync"]
    assert len(samples) == 1


def test_the_budget_counts_the_calls_of_a_batching_timer() -> None:
    class Batching(FixedTimer):
        calls_per_sample = 4

    timer = Batching(ms=2.0)  # 2 ms a call, 8 ms a sample
    run = benchmark(lambda: None, timer, Budget(warmup_ms=16, rep_ms=80, min_reps=1, max_reps=200))
    assert run.warmup_calls == 2  # 16 ms of samples of 8 ms
    assert len(run.samples) == 10  # 80 ms of samples of 8 ms
    assert run.summary().median == 2.0  # a sample is the time of one call


def test_marks_time_the_steps_between_them_on_their_streams() -> None:
    log: list[str] = []
    marks = Marks(_fake_torch(log))
    assert [marks.mark(), marks.mark("side"), marks.mark()] == [0, 1, 2]
    assert log == ["record 1", "record 2 on side", "record 3"]
    assert marks.between(1, 2) == 1.0
    assert marks.since_first() == [0.0, 1.0, 2.0]
    assert "synchronize" in log


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda m: m.between(0, 3), r"last must be the index of a mark, 0 to 2; got 3"),
        (lambda m: m.between(-1, 1), r"first must be the index of a mark, 0 to 2; got -1"),
        (lambda m: m.between(True, 1), r"first must be the index of a mark, 0 to 2; got True"),
    ],
)
def test_marks_refuse_an_index_they_do_not_have(make, message) -> None:
    marks = Marks(_fake_torch([]))
    for _ in range(3):
        marks.mark()
    with pytest.raises(ValueError, match=message):
        make(marks)
    with pytest.raises(ValueError, match="no marks were recorded"):
        Marks(_fake_torch([])).since_first()


def test_l2_flusher_buffer_is_at_least_four_times_l2() -> None:
    torch = _fake_torch([])
    assert L2Flusher(torch, 50 * 2**20).buffer.nbytes == 256 * 2**20  # 4 × 50 MiB is under the 256 MiB floor
    assert L2Flusher(torch, 2**30).buffer.nbytes == 4 * 2**30
    assert L2Flusher(torch, 0).buffer.nbytes == 256 * 2**20
    with pytest.raises(ValueError, match="l2_bytes must be ≥ 0; got -1"):
        L2Flusher(torch, -1)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: benchmark("not callable", HostTimer()), TypeError, "expects a callable; got str"),
        (lambda: benchmark(print, HostTimer(), before=3), TypeError, "before must be callable"),
        (lambda: HostTimer().time(print, 0), ValueError, "the number of calls must be an int ≥ 1; got 0"),
        (lambda: HostTimer().time(print, 2.0), TypeError, "the number of calls must be an int ≥ 1; got 2.0"),
        (lambda: HostTimer(calls_per_sample=0), ValueError, "calls per sample must be an int ≥ 1; got 0"),
        (lambda: EventTimer(None, calls_per_sample=1.5), TypeError, "calls per sample must be an int ≥ 1; got 1.5"),
        (lambda: EventTimer(None, hold=1), TypeError, "hold must be a bool; got int"),
        (lambda: Budget(min_reps=0), ValueError, "1 ≤ min_reps ≤ max_reps"),
        (lambda: Budget(min_reps=9, max_reps=3), ValueError, "got 9, 3"),
        (lambda: Budget(rep_ms=-1), ValueError, "must be ≥ 0"),
    ],
)
def test_bad_arguments_are_refused(make, error, message) -> None:
    with pytest.raises(error, match=message):
        make()


def test_the_budget_the_measuring_page_describes() -> None:
    # docs/performance/measuring.md: "25 ms, at least twice" of warm-up; a flush buffer of four times L2, at
    # least 256 MiB.
    full = BUDGETS["full"]
    assert (full.warmup_ms, full.min_warmup) == (25.0, 2)
    torch = _fake_torch([])
    assert L2Flusher(torch, 2**30).buffer.nbytes == 4 * 2**30
    assert L2Flusher(torch, 2**20).buffer.nbytes == 256 * 2**20
