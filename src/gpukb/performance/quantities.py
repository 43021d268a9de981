"""One figure per measured quantity: which recorded runs measure it, and their reconciled value.

The same product is measured by several runs: the performance sweep times bf16 8192³ through cuBLAS in its
square sweep, its alignment sweep and its zeros check; the Triton run times it once per candidate configuration
and three times more per comparison; the ground-up run times it back to back. Each of those is one *run* of the
measurement, with its own median. A page that quotes one of them quotes a number that the next run would not
reproduce, because the clock of an H100 at its power limit moves by hundreds of MHz between windows.

A :class:`Quantity` names one measurement made one way (the method is part of its identity: per-call CUDA events
after an L2 flush, back-to-back events without one, and ``triton.testing.do_bench`` are different quantities) and
the readers that find its runs in the committed records. :func:`reconcile` gives the median of the runs'
medians, the lowest and highest run, and every run with the clocks sampled while it ran. Pages render every
mention of a quantity from here (:func:`gpukb.performance.pages.quantity`), so two pages cannot state two figures.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpukb.measuring.device import WindowClocks
from gpukb.performance.results import H100_CEILINGS, H100_SWEEP, CeilingsRecord, SweepRecord
from gpukb.records import load


@dataclass(frozen=True)
class Reading:
    """One run of a quantity: its median, where it is recorded, and the clocks during its timed calls.

    Attributes:
        record_id: The committed record holding it.
        where: Which entry of the record, in words (``"gemm: bf16 square 8192³"``).
        value: The run's median, in the quantity's unit.
        clocks: SM clock and power sampled during the run (``None`` where the record has none).
    """

    record_id: str
    where: str
    value: float
    clocks: WindowClocks | None = None


@dataclass(frozen=True)
class Quantity:
    """One measurement made one way.

    Attributes:
        id: The id pages and HTML use (``data-quantity``).
        title: What is measured, in words.
        unit: The unit of its figures.
        method: How it is timed, in words; two methods make two quantities.
        readers: Functions returning the runs found in the committed records.
        digits: Decimals a page shows.
    """

    id: str
    title: str
    unit: str
    method: str
    readers: tuple[Callable[[], list[Reading]], ...]
    digits: int = 0


@dataclass(frozen=True)
class Reconciled:
    """A quantity's one figure: the median of its runs' medians, and the lowest and highest run."""

    quantity: Quantity
    readings: tuple[Reading, ...]

    @property
    def value(self) -> float:
        """The median of the runs' medians."""
        return float(statistics.median(r.value for r in self.readings))

    @property
    def low(self) -> float:
        """The lowest run."""
        return min(r.value for r in self.readings)

    @property
    def high(self) -> float:
        """The highest run."""
        return max(r.value for r in self.readings)

    @property
    def drift(self) -> float:
        """The run-to-run drift: (highest − lowest) / the figure (0.1 means the runs span 10%)."""
        return (self.high - self.low) / self.value

    @property
    def records(self) -> list[str]:
        """The records its runs come from, in order of first appearance."""
        return list(dict.fromkeys(r.record_id for r in self.readings))

    def text(self) -> str:
        """The figure as pages print it (``"686"``)."""
        return f"{self.value:.{self.quantity.digits}f}"

    def inside_drift(self, ratio: float) -> bool:
        """Whether a ratio to this quantity (kernel over it, say) is within its run-to-run drift: a rate that
        differs from this one by less than the runs differ among themselves is not shown to differ at all."""
        return abs(ratio - 1) <= self.drift

    def clock_range(self) -> tuple[float, float] | None:
        """The lowest and highest median SM clock over the runs that sampled clocks, MHz (``None``: none did)."""
        medians = [r.clocks.sm_mhz_median for r in self.readings if r.clocks is not None]
        return (min(medians), max(medians)) if medians else None


# --- readers -------------------------------------------------------------------------------------------------

GROUND_UP = "gemm/ground-up-h100"
TRITON = "gemm/triton-gemm-h100"
SIZE = 8192


def _tflops(ms: float, n: int = SIZE) -> float:
    return 2 * n**3 / (ms * 1e-3) / 1e12


def _sweep_bf16() -> list[Reading]:
    record = load(H100_SWEEP, SweepRecord)
    found = [
        Reading(H100_SWEEP, f"gemm: bf16 {r.sweep} {SIZE}³", r.tflops, r.clocks)
        for r in record.gemm
        if r.dtype == "bf16" and r.m == r.n == r.k == SIZE and r.tflops is not None
    ]
    found += [
        Reading(H100_SWEEP, f"mistakes: {r.variant}", r.rate, r.clocks)
        for r in record.mistake("zeros")
        if "random" in r.variant and f"{SIZE}³" in r.variant
    ]
    return found


def _gemm_record(record_id: str, kind: str) -> Any:
    """A GEMM chapter's record, read by id (its model comes from its kind, so this chapter imports none of the
    GEMM chapter's modules: that chapter builds on this one)."""
    record = load(record_id)
    if record.kind != kind:
        raise ValueError(f"results file {record_id!r} holds a {record.kind!r} record; expected {kind!r}")
    return record


def _triton_bf16() -> list[Reading]:
    record = _gemm_record(TRITON, "gemm.triton-gemm")
    found = [
        Reading(TRITON, f"sweep: cuBLAS paired with {entry.config.label}", _tflops(case.cublas_ms.median), case.clocks)
        for entry in record.sweep.configs
        for case in entry.results
        if case.m == SIZE
    ]
    if record.compare is not None:
        found += [
            Reading(TRITON, f"compare: {row.layout} round {i + 1}", _tflops(p.cublas_ms.median), p.clocks)
            for row in record.compare.records
            if row.dtype == "bfloat16" and row.m == SIZE and row.error is None
            for i, p in enumerate(row.rounds)
        ]
    return found


def _ground_up(methods: tuple[str, ...]) -> Callable[[], list[Reading]]:
    def read() -> list[Reading]:
        record = _gemm_record(GROUND_UP, "gemm.ground-up")
        return [
            Reading(GROUND_UP, f"timing: {t.method}", t.gflops / 1e3, t.clocks)
            for t in record.timing
            if t.dtype == "bf16" and t.n == SIZE and t.method in methods
        ]

    return read


def _ground_up_torch_mm() -> list[Reading]:
    record = _gemm_record(GROUND_UP, "gemm.ground-up")
    return [
        Reading(GROUND_UP, f"cuBLASLt section: torch.mm, cuBLAS preferred, round {r.round + 1}", r.tflops, r.clocks)
        for r in record.cublaslt.torch_mm
        if r.library == "cublas" and r.m == r.n == r.k == SIZE
    ]


def _ceiling_rounds(item: str) -> Callable[[], list[Reading]]:
    """Each round of one item of the interleaved ceilings run (``bench/performance_ceilings.py``)."""

    def read() -> list[Reading]:
        record = load(H100_CEILINGS, CeilingsRecord)
        return [
            Reading(H100_CEILINGS, f"{t.item}, round {t.round + 1}", t.rate, t.clocks)
            for t in sorted(record.timings, key=lambda t: t.round)
            if t.item == item
        ]

    return read


def _u16_over_u32() -> list[Reading]:
    """Per round, the time of the one-element-per-thread u16 copy over the u32 copy of the same bytes (the u32
    rate over the u16 rate)."""
    record = load(H100_CEILINGS, CeilingsRecord)
    by_round = {t.round: t for t in record.timings if t.item == "copy-one-per-thread-u32"}
    return [
        Reading(H100_CEILINGS, f"one element per thread, round {t.round + 1}", by_round[t.round].rate / t.rate)
        for t in sorted(record.timings, key=lambda t: t.round)
        if t.item == "copy-one-per-thread-u16"
    ]


#: The product shape of the GEMM ceilings the pages quote: where the performance sweep's best fp16 rate was.
CEILING_SHAPE = (4096, 4096, 8192)
_ROUNDS = "rounds interleaved with the other ceilings in one run (bench/performance_ceilings.py); each round's median"
_EVENTS = "CUDA events around each call, with an untimed L2 flush (a read) before each call"

#: Every quantity the pages quote, by id.
QUANTITIES: dict[str, Quantity] = {
    q.id: q
    for q in (
        Quantity(
            id="h100-cublas-bf16-8192",
            title="cuBLAS (torch.mm) bf16 8192³ on the H100",
            unit="TFLOP/s",
            method="CUDA events around each call, with an untimed L2 flush before each call; the median of the calls",
            readers=(_sweep_bf16, _triton_bf16),
        ),
        Quantity(
            id="h100-cublas-bf16-8192-unflushed",
            title="cuBLAS (torch.mm) bf16 8192³ on the H100, calls back to back",
            unit="TFLOP/s",
            method="CUDA events around each call, the calls queued back to back with no flush between them; the median",
            readers=(_ground_up(("warm_calls_events",)), _ground_up_torch_mm),
        ),
        Quantity(
            id="h100-cublas-bf16-8192-do-bench",
            title="cuBLAS (torch.matmul) bf16 8192³ on the H100, through triton.testing.do_bench",
            unit="TFLOP/s",
            method="triton.testing.do_bench (warmup=25, rep=200, return_mode='median'), with its own warm-up, its "
            "own L2 flush (a write of a 256 MB buffer) before each call and a new output tensor each call",
            readers=(_ground_up(("do_bench",)),),
        ),
        Quantity(
            id="h100-copy-256mib",
            title="torch `copy_` of 256 MiB, device to device, on the H100 (bytes read plus written)",
            unit="GB/s",
            method=f"{_EVENTS}; {_ROUNDS}",
            readers=(_ceiling_rounds("copy-256mib"),),
        ),
        Quantity(
            id="h100-copy-1gib",
            title="torch `copy_` of 1 GiB, device to device, on the H100 (bytes read plus written): the copy ceiling",
            unit="GB/s",
            method=f"{_EVENTS}; {_ROUNDS}",
            readers=(_ceiling_rounds("copy-1gib"),),
        ),
        Quantity(
            id="h100-cublas-fp16-ceiling",
            title="cuBLAS (torch.mm) dense fp16 at {}×{}×{} on the H100".format(*CEILING_SHAPE),
            unit="TFLOP/s",
            method=f"{_EVENTS}; {_ROUNDS}",
            readers=(_ceiling_rounds("gemm-fp16-{}x{}x{}".format(*CEILING_SHAPE)),),
            digits=1,
        ),
        Quantity(
            id="h100-cublas-bf16-ceiling",
            title="cuBLAS (torch.mm) dense bf16 at {}×{}×{} on the H100".format(*CEILING_SHAPE),
            unit="TFLOP/s",
            method=f"{_EVENTS}; {_ROUNDS}",
            readers=(_ceiling_rounds("gemm-bf16-{}x{}x{}".format(*CEILING_SHAPE)),),
            digits=1,
        ),
        Quantity(
            id="h100-copy-u16-over-u32",
            title="time of a one-element-per-thread copy of 256 MiB as u16 over the same copy as u32, on the H100",
            unit="×",
            method=f"{_EVENTS}; the u16 and u32 copies timed in the same rounds, {_ROUNDS}",
            readers=(_u16_over_u32,),
            digits=2,
        ),
    )
}


def quantity(quantity_id: str) -> Quantity:
    """A quantity by id.

    Raises:
        ValueError: For an unknown id (the message lists the known ones).
    """
    if not isinstance(quantity_id, str) or quantity_id not in QUANTITIES:
        raise ValueError(f"unknown quantity {quantity_id!r}; quantities are {sorted(QUANTITIES)}")
    return QUANTITIES[quantity_id]


@cache
def reconcile(quantity_id: str) -> Reconciled:
    """A quantity's runs in the committed records and its one figure.

    Raises:
        ValueError: For an unknown id, or a quantity no committed record measures.
    """
    q = quantity(quantity_id)
    readings = tuple(r for read in q.readers for r in read())
    if not readings:
        raise ValueError(f"no committed record measures {quantity_id!r} ({q.title})")
    return Reconciled(q, readings)
