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
from gpukb.measuring.timing import Budget, Measurement, Timer
from gpukb.records.script import Script


@dataclass
class Context:
    """What a suite needs: the script that times its work, the mode, and where to report progress.

    The timing is :class:`gpukb.records.Script`'s (:meth:`~gpukb.records.Script.measure`: warm-up, CUDA events,
    the L2 flushed before each sample, clocks and power sampled), the one way the project times, whether a sweep of
    ``gpukb bench`` or a bench script measures.

    Attributes:
        script: Times the work (:meth:`measure`), and holds torch, the budget, the timer, the flush and the monitor.
        mode: ``"quick"`` or ``"full"``.
        progress: Receives one line per finished measurement.
        notes: Remarks a suite adds to the run's notes (``run.notes`` of the record).
    """

    script: Script
    mode: str
    progress: Callable[[str], None]
    notes: list[str] = field(default_factory=list)

    @property
    def torch(self) -> Any:
        """The ``torch`` module."""
        return self.script.torch

    @property
    def budget(self) -> Budget:
        """Warm-up and repetition budget per measurement."""
        return self.script.budget

    @property
    def timer(self) -> Timer:
        """The timer for device work (CUDA events), for work timed call by call outside :meth:`measure`."""
        return self.script.timer()

    @property
    def flush(self) -> Callable[[], object]:
        """Evicts the L2 cache (untimed, before each timed call)."""
        return self.script.flush

    @property
    def measure(self) -> Callable[..., Measurement]:
        """The script's :meth:`~gpukb.records.Script.measure`."""
        return self.script.measure


def timed(ctx: Context, fn: Callable[[], object], flush: bool = True) -> tuple[Summary, Any]:
    """The ``ms`` summary of a benchmark, as a results file stores it, and the clocks during its timed calls."""
    measured = ctx.measure(fn, flush=flush)
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
