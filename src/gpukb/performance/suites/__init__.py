"""What ``gpukb bench`` measures, one module per suite; each returns the typed records of its section of a
:class:`~gpukb.performance.results.SweepRecord`.

Every suite runs on random inputs (never zeros), warms up before timing, times call by call with CUDA events,
flushes the L2 cache before each timed call unless the point is to show what a warm cache does, and reports
medians with their spread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpukb.measuring.stats import Summary, summarize
from gpukb.measuring.timing import Budget, Measurement, Monitor, Timer, benchmark


@dataclass
class Context:
    """What a suite needs: torch, how to time, how much time to spend, and where to report progress.

    Attributes:
        torch: The ``torch`` module.
        mode: ``"quick"`` or ``"full"``.
        budget: Warm-up and repetition budget per measurement.
        timer: The timer for device work (CUDA events).
        flush: Evicts the L2 cache (untimed, before each timed call).
        progress: Receives one line per finished measurement.
        notes: Remarks a suite adds to the run's notes (``run.notes`` of the record).
        monitor: Samples SM clock and power during each measurement's timed calls (``None``: not sampled).
    """

    torch: Any
    mode: str
    budget: Budget
    timer: Timer
    flush: Callable[[], None]
    progress: Callable[[str], None]
    notes: list[str] = field(default_factory=list)
    monitor: Monitor | None = None

    def measure(
        self,
        fn: Callable[[], object],
        flush: bool = True,
        budget: Budget | None = None,
        before: Callable[[], object] | None = None,
    ) -> Measurement:
        """Benchmark device work with this context's timer, budget and monitor, flushing L2 first unless told
        not to (``before`` replaces the flush: another untimed step)."""
        step = before if before is not None else (self.flush if flush else None)
        return benchmark(fn, self.timer, budget or self.budget, step, self.monitor)


def timed(ctx: Context, fn: Callable[[], object], flush: bool = True) -> tuple[Summary, Any]:
    """The ``ms`` summary of a benchmark, as a results file stores it, and the clocks during its timed calls."""
    measured = ctx.measure(fn, flush)
    return summarize(measured.samples), measured.window


def first_line(error: BaseException, limit: int = 200) -> str:
    """The first line of an exception's message, shortened, for a results file's ``error`` field."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"{type(error).__name__}: {text}"[:limit]


class Stopwatch:
    """Seconds since the run started, for progress lines."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    def __call__(self) -> float:
        return time.perf_counter() - self.start
