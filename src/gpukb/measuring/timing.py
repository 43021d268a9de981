"""How a call is timed: warm-up, repetition, a timer, and what happens between calls.

GPU work is asynchronous: a launch returns to Python long before the kernel ends. A timer must therefore either
put CUDA events on the stream around the work (:class:`EventTimer`) or wait for the device before it reads a
host clock (:class:`HostTimer` with a ``sync`` function). :func:`benchmark` estimates the cost of one call,
warms up for a while, then times many calls one by one, running ``before`` (an L2 flush, say) untimed ahead of
each.

The same code times CPU functions with ``HostTimer()``, which is how the tests exercise it without a GPU.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from gpukb.arguments import positive_int
from gpukb.measuring.stats import Summary, summarize


class Monitor(Protocol):
    """Something that watches the device while the timed calls run: :class:`gpukb.measuring.device.ClockSampler`
    samples SM clock and power."""

    def start(self) -> None:
        """Begin watching (just before the timed calls are queued)."""
        ...

    def stop(self) -> Any:
        """Stop watching (after the timed calls ended) and return what was seen."""
        ...


class Timer(Protocol):
    """Something that times ``n`` samples of a function, in milliseconds per call (a sample is one call, or the
    mean of a few back-to-back calls where the timer has ``calls_per_sample``)."""

    def time(self, fn: Callable[[], object], n: int, before: Callable[[], object] | None = None) -> list[float]:
        """Call ``before`` (untimed) and then ``fn`` (timed), ``n`` times; return the ``n`` times in ms."""
        ...


@dataclass
class HostTimer:
    """Times calls with the host's monotonic clock.

    Attributes:
        sync: Called before the clock starts and before it stops, e.g. ``torch.cuda.synchronize``. Without
            it, a host clock around GPU work measures the launch, not the work.
        calls_per_sample: Back-to-back calls per sample; a sample is their mean (see :class:`EventTimer`).
    """

    sync: Callable[[], object] | None = None
    calls_per_sample: int = 1

    def __post_init__(self) -> None:
        positive_int("calls per sample", self.calls_per_sample)

    def time(self, fn: Callable[[], object], n: int, before: Callable[[], object] | None = None) -> list[float]:
        """Time ``n`` samples of ``fn``; see :class:`Timer`."""
        positive_int("the number of calls", n)
        samples = []
        for _ in range(n):
            if before is not None:
                before()
            if self.sync is not None:
                self.sync()
            start = time.perf_counter()
            for _ in range(self.calls_per_sample):
                fn()
            if self.sync is not None:
                self.sync()
            samples.append((time.perf_counter() - start) * 1e3 / self.calls_per_sample)
        return samples


#: Samples a held :class:`EventTimer` queues behind one gate: a few hundred launches at most, so that the
#: driver's queue never fills while the GPU waits (the host would then block inside a launch, behind the gate).
HOLD_SAMPLES = 32
#: The first gate (ms) and the longest: a gate that ends before its samples are queued is doubled and the samples
#: timed again, up to this length; past it they are kept as they are and counted as not held.
HOLD_FIRST_MS, HOLD_MAX_MS = 2.0, 400.0


@dataclass
class EventTimer:
    """Times calls with CUDA events recorded on the current stream around each call.

    All events are read after one synchronization at the end, so the host never waits between calls and the
    queue stays full; ``before`` runs between the end event of one call and the start event of the next.

    An event measures the GPU's time only if the work after it was already queued when the GPU reached it. With a
    flush between calls, the host has the flush's duration (about 80 µs for 256 MiB on an H100) to queue the next
    call; a call whose host path takes longer (a Python launch path, a copy staged on the host, a thread holding
    the interpreter lock) leaves the GPU waiting *between* the start event and the kernel, and that wait is timed.
    A *held* timer (``hold=True``) closes that gap: it first queues a gate, a kernel that spins for a few
    milliseconds (``torch.cuda._sleep``), then up to :data:`HOLD_SAMPLES` samples behind it, and checks that the
    gate was still running when the last was queued (``Event.query``); if not, it doubles the gate and times those
    samples again. Every held sample then ran back to back on the GPU, whatever the host did meanwhile.

    Attributes:
        torch: The ``torch`` module (passed in so that this module imports without it).
        calls_per_sample: Back-to-back calls per sample, whose mean the sample is (default one). A call shorter than its
            own launch leaves the GPU idle while the host launches the next one, and events around that one call
            time the host; several calls between two events keep the queue full, so the launches overlap the
            previous calls' work. ``before`` then runs once per sample, ahead of the first of its calls.
        hold: Queue the samples behind a gate (see above).
        host_ms: After :meth:`time` (held): the host's time to queue one sample, per group of samples, in ms.
        retimed: Groups of samples timed again because their gate ended too early (held timers only).
        unheld: Groups kept although a gate of :data:`HOLD_MAX_MS` ended before they were queued.
    """

    torch: Any
    calls_per_sample: int = 1
    hold: bool = False
    host_ms: list[float] = field(default_factory=list, repr=False)
    retimed: int = 0
    unheld: int = 0
    _gate_ms: float = field(default=HOLD_FIRST_MS, repr=False)
    _cycles_per_ms: float | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        positive_int("calls per sample", self.calls_per_sample)
        if not isinstance(self.hold, bool):
            raise TypeError(f"hold must be a bool; got {type(self.hold).__name__}")

    def time(self, fn: Callable[[], object], n: int, before: Callable[[], object] | None = None) -> list[float]:
        """Time ``n`` samples of ``fn``; see :class:`Timer`."""
        positive_int("the number of calls", n)
        if not self.hold:
            starts, ends = self._queue(fn, n, before)
            self.torch.cuda.synchronize()
            return self._read(starts, ends)
        self.host_ms = []
        samples: list[float] = []
        while len(samples) < n:
            samples += self._held(fn, min(HOLD_SAMPLES, n - len(samples)), before)
        return samples

    def _queue(self, fn: Callable[[], object], n: int, before: Callable[[], object] | None) -> tuple[list, list]:
        cuda = self.torch.cuda
        starts = [cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [cuda.Event(enable_timing=True) for _ in range(n)]
        for start, end in zip(starts, ends, strict=True):
            if before is not None:
                before()
            start.record()
            for _ in range(self.calls_per_sample):
                fn()
            end.record()
        return starts, ends

    def _read(self, starts: list, ends: list) -> list[float]:
        return [start.elapsed_time(end) / self.calls_per_sample for start, end in zip(starts, ends, strict=True)]

    def _cycles(self, ms: float) -> int:
        """GPU clock cycles that ``torch.cuda._sleep`` spins for about ``ms`` milliseconds (measured once, on a
        spin of 1e6 cycles; a clock that rises later shortens the gate, which the check after each group catches)."""
        if self._cycles_per_ms is None:
            cuda = self.torch.cuda
            start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
            start.record()
            cuda._sleep(1_000_000)
            end.record()
            end.synchronize()
            self._cycles_per_ms = 1e6 / max(start.elapsed_time(end), 1e-3)
        return int(ms * self._cycles_per_ms)

    # --8<-- [start:held]
    def _held(self, fn: Callable[[], object], n: int, before: Callable[[], object] | None) -> list[float]:
        """Queue a gate, then ``n`` samples behind it; again with a longer gate while the gate ends first."""
        cuda = self.torch.cuda
        while True:
            cycles = self._cycles(self._gate_ms)
            opened = cuda.Event()
            cuda._sleep(cycles)
            opened.record()
            began = time.perf_counter()
            starts, ends = self._queue(fn, n, before)
            host_ms = (time.perf_counter() - began) * 1e3
            early = opened.query()  # the GPU passed the gate before the host had queued every sample
            cuda.synchronize()
            self.host_ms.append(host_ms / n)
            if not early:
                # the next gate: twice what queuing took, so a host that slows down by half still fits
                self._gate_ms = min(HOLD_MAX_MS, max(HOLD_FIRST_MS / 4, 2 * host_ms))
                return self._read(starts, ends)
            if self._gate_ms >= HOLD_MAX_MS:
                self.unheld += 1
                return self._read(starts, ends)
            self.retimed += 1
            self._gate_ms = min(HOLD_MAX_MS, max(2 * self._gate_ms, 4 * host_ms))
        # --8<-- [end:held]


class Marks:
    """CUDA events recorded at chosen points of the work queued on one or more streams, read after it ended.

    For work that is not one call timed again and again (:class:`EventTimer`): the steps of one sample (a copy,
    then a kernel, each timed), or the operations of several streams laid out on one timeline. :meth:`mark`
    records an event on a stream where the host has queued the work so far; the GPU reaches it when that
    stream's earlier work is done.

    Args:
        torch: The ``torch`` module.
    """

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.events: list[Any] = []

    def mark(self, stream: Any = None) -> int:
        """Record an event on ``stream`` (the current stream when omitted); returns its index."""
        event = self.torch.cuda.Event(enable_timing=True)
        if stream is None:
            event.record()
        else:
            event.record(stream)
        self.events.append(event)
        return len(self.events) - 1

    def between(self, first: int, last: int) -> float:
        """Milliseconds from mark ``first`` to mark ``last`` (waits for ``last`` to complete)."""
        count = len(self.events)
        for name, index in (("first", first), ("last", last)):
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
                raise ValueError(f"{name} must be the index of a mark, 0 to {count - 1}; got {index!r}")
        self.events[last].synchronize()
        return float(self.events[first].elapsed_time(self.events[last]))

    def since_first(self) -> list[float]:
        """Milliseconds from the first mark to every mark (the first is 0); waits for all of them."""
        if not self.events:
            raise ValueError("no marks were recorded")
        self.torch.cuda.synchronize()
        return [self.between(0, i) for i in range(len(self.events))]


@dataclass(frozen=True)
class Budget:
    """How long to warm up and how many calls to time.

    Attributes:
        warmup_ms: Time spent calling the function, untimed, before measuring.
        rep_ms: Time to spend measuring; the number of calls follows from the estimated cost of one.
        min_reps: The fewest timed calls, however slow one is.
        max_reps: The most timed calls, however fast one is.
        min_warmup: The fewest warm-up calls.
    """

    warmup_ms: float = 25.0
    rep_ms: float = 100.0
    min_reps: int = 5
    max_reps: int = 200
    min_warmup: int = 2

    def __post_init__(self) -> None:
        if not (self.warmup_ms >= 0 and self.rep_ms >= 0):
            raise ValueError(f"warmup_ms and rep_ms must be ≥ 0; got {self.warmup_ms}, {self.rep_ms}")
        if not 1 <= self.min_reps <= self.max_reps:
            raise ValueError(f"need 1 ≤ min_reps ≤ max_reps; got {self.min_reps}, {self.max_reps}")
        if self.min_warmup < 0:
            raise ValueError(f"min_warmup must be ≥ 0; got {self.min_warmup}")


#: Calls timed, after one untimed call, to estimate the cost of one call.
ESTIMATE_CALLS = 3

#: The budgets of the two modes of ``gpukb bench``.
BUDGETS = {
    "full": Budget(warmup_ms=25.0, rep_ms=100.0, min_reps=5, max_reps=200),
    "quick": Budget(warmup_ms=5.0, rep_ms=10.0, min_reps=3, max_reps=50, min_warmup=1),
}


@dataclass
class Measurement:
    """The outcome of :func:`benchmark`.

    Attributes:
        samples: One time per timed call, in milliseconds.
        estimate_ms: The estimated cost of one call, used to size warm-up and repetition.
        warmup_calls: How many warm-up samples were taken (calls, for a timer that times one call a sample).
        window: What the monitor saw during the timed calls (a
            :class:`~gpukb.measuring.device.WindowClocks`), or ``None`` without a monitor.
        host_ms: For a held :class:`EventTimer`: the host's time to queue one sample of the timed calls, per group
            of samples (ms); ``None`` for other timers.
    """

    samples: list[float]
    estimate_ms: float
    warmup_calls: int
    window: Any = None
    host_ms: list[float] | None = None

    def summary(self) -> Summary:
        """The samples' median, quartiles, extremes and count: what a results file stores."""
        return summarize(self.samples)


def benchmark(
    fn: Callable[[], object],
    timer: Timer,
    budget: Budget | None = None,
    before: Callable[[], object] | None = None,
    monitor: Monitor | None = None,
) -> Measurement:
    """Warm up, then time ``fn`` call by call.

    Args:
        fn: The work to time; it must not depend on being called a given number of times.
        timer: How to time a call (:class:`EventTimer` for GPU work, :class:`HostTimer` for CPU work).
        budget: Warm-up time, measuring time and repetition bounds; ``Budget()`` when omitted.
        before: Untimed work before every call (and every warm-up call), e.g. flushing the L2 cache.
        monitor: Started just before the timed calls and stopped after them (the timers return only once the
            calls have ended), e.g. a clock and power sampler.

    Returns:
        The samples, the estimate of one call, the number of warm-up calls, and what the monitor saw.

    Raises:
        TypeError: If ``fn`` or ``before`` is not callable.
    """
    if not callable(fn):
        raise TypeError(f"benchmark expects a callable; got {type(fn).__name__}")
    if before is not None and not callable(before):
        raise TypeError(f"before must be callable or None; got {type(before).__name__}")
    budget = budget or Budget()
    timer.time(fn, 1, before)  # the first call may pay one-time costs (loading, planning): not an estimate
    estimate = max(min(timer.time(fn, ESTIMATE_CALLS, before)), 1e-6)
    per_sample = estimate * getattr(timer, "calls_per_sample", 1)  # a sample of a batching timer is several calls
    warmup = max(budget.min_warmup, math.ceil(budget.warmup_ms / per_sample))
    warmup = min(warmup, 10 * budget.max_reps)
    if warmup:
        timer.time(fn, warmup, before)
    reps = min(budget.max_reps, max(budget.min_reps, math.ceil(budget.rep_ms / per_sample)))
    window = None
    if monitor is not None:
        monitor.start()
    try:
        samples = timer.time(fn, reps, before)
    finally:
        if monitor is not None:
            window = monitor.stop()
    host = list(timer.host_ms) if getattr(timer, "hold", False) else None
    return Measurement(samples=samples, estimate_ms=estimate, warmup_calls=warmup, window=window, host_ms=host)


#: How a flush empties L2: ``"read"`` reduces a buffer larger than L2 into one scalar, so the cache is left
#: holding clean lines that can simply be dropped; ``"write"`` overwrites the buffer (``zero_()``, what
#: ``triton.testing.do_bench`` does), which leaves L2 full of dirty lines that are written back to DRAM inside
#: the next timed call. ``"read"`` is the default; ``"write"`` is kept to measure the difference.
FLUSH_METHODS = ("read", "write")


class L2Flusher:
    """Evicts the GPU's L2 cache before a timed call by streaming a buffer larger than it through the cache.

    The default method reads the buffer (a sum into one preallocated scalar): every line it leaves in L2 is
    clean, so the next timed call starts with nothing to write back. Writing the buffer instead (``"write"``,
    ``zero_()``, as ``triton.testing.do_bench`` does) also evicts the caller's data, but leaves L2 full of
    dirty lines; a write-back cache must write each one to DRAM before reusing its slot, and that traffic lands
    inside the next timed call and slows it down (the measuring page shows by how much).

    Args:
        torch: The ``torch`` module.
        l2_bytes: The L2 size of the device; the buffer is four times that, and at least 256 MiB.
        method: ``"read"`` (default) or ``"write"``; see :data:`FLUSH_METHODS`.
        device: Where the buffer lives (``"cpu"`` in the tests).
    """

    def __init__(self, torch: Any, l2_bytes: int, method: str = "read", device: str = "cuda") -> None:
        if isinstance(l2_bytes, bool) or not isinstance(l2_bytes, int) or l2_bytes < 0:
            raise ValueError(f"l2_bytes must be ≥ 0; got {l2_bytes}")
        if method not in FLUSH_METHODS:
            raise ValueError(f"method must be one of {list(FLUSH_METHODS)}; got {method!r}")
        self.method = method
        self.torch = torch
        nbytes = max(4 * l2_bytes, 256 * 2**20)
        # int32 words summed into one int64 scalar: exact, and every byte of the buffer is read once
        self.buffer = torch.ones(nbytes // 4, dtype=torch.int32, device=device)
        self.total = torch.zeros((), dtype=torch.int64, device=device)

    def __call__(self) -> None:
        """Stream the buffer through L2, pushing everything else out."""
        if self.method == "write":
            self.buffer.zero_()
        else:
            self.torch.sum(self.buffer, dim=0, dtype=self.total.dtype, out=self.total)


class WriteBackCache:
    """A tiny model of a write-back, write-allocate cache with LRU replacement: what :class:`L2Flusher`'s two
    methods leave behind.

    A read brings a line in clean; a write brings it in (or finds it) and marks it dirty. When a line must make
    room for another, a dirty one is first written back to memory (:attr:`writebacks` counts them); a clean one
    is dropped. So a flush that *writes* a buffer larger than the cache leaves every line dirty, and the next
    work pays one write-back per line it brings in, until the flush's lines are gone; a flush that *reads* leaves
    every line clean, and the next work pays nothing for them. The H100's L2 is far more elaborate (sectors,
    partitions, its own replacement policy), but it is a write-back cache, which is all this argument needs.

    Args:
        lines: How many lines the cache holds.
    """

    def __init__(self, lines: int) -> None:
        positive_int("the number of cache lines", lines)
        self.lines = lines
        self.cached: dict[int, bool] = {}  # line address -> dirty, oldest first
        self.writebacks = 0

    def access(self, address: int, write: bool) -> None:
        """Read or write one line."""
        dirty = self.cached.pop(address, False) or write
        if len(self.cached) >= self.lines:
            oldest = next(iter(self.cached))
            self.writebacks += self.cached.pop(oldest)
        self.cached[address] = dirty

    def dirty_lines(self) -> int:
        """How many cached lines are dirty."""
        return sum(self.cached.values())

    def flush(self, method: str, buffer_lines: int, base: int = 1 << 40) -> None:
        """Model :class:`L2Flusher`: stream ``buffer_lines`` lines at ``base`` through the cache by reading
        (``"read"``) or writing (``"write"``) them."""
        if method not in FLUSH_METHODS:
            raise ValueError(f"method must be one of {list(FLUSH_METHODS)}; got {method!r}")
        for line in range(buffer_lines):
            self.access(base + line, write=method == "write")


def captured(torch: Any, fn: Callable[[], Any], warmup: int = 3) -> Callable[[], Any]:
    """Capture ``fn``'s GPU work in a CUDA graph and return the graph's replay.

    A replay launches the whole recorded sequence at once, so a loop of small GEMMs no longer pays one host
    launch per product: what remains is the kernels' own time and the gaps between them on the GPU. Warm-up
    calls on a side stream come first, as CUDA graph capture requires (libraries set up their workspaces then).
    """
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay
