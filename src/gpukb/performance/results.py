"""The results of ``gpukb bench``: one :class:`SweepRecord` per run, read and written through :mod:`gpukb.records`.

A sweep record holds the run's description (``run``: GPU, software, clocks before and after each suite, date,
command, notes), how L2 was flushed (``l2_flush``), the ``mode`` and the ``suites`` that ran, and one list of
typed records per suite (``gemm``, ``copy``, ``host_device``, ``attention``, ``mistakes``, ``kernels``). Every
record keeps its timings as a :class:`~gpukb.measuring.stats.Summary` (median, quartiles, extremes, count, in
milliseconds) next to the rate derived from the median, and the SM clock and power sampled while its calls ran
(``clocks``). Committed sweeps are read by id::

    from gpukb.records import load
    record = load(H100_SWEEP, SweepRecord)

A malformed file is refused with a message naming the file and the field (``gemm[3].dtype``).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, get_args

from pydantic import ConfigDict, Field, model_validator

from gpukb.measuring.device import WindowClocks
from gpukb.measuring.pairs import KernelRecord
from gpukb.measuring.stats import Summary
from gpukb.records import Record
from gpukb.schema import Finite, Rate, Size, StrictModel

#: Ids of the committed sweeps the performance pages render.
H100_SWEEP = "performance/h100-sweep"
H100_QUICK = "performance/h100-sweep-quick"
H200_SWEEP = "performance/h200-sweep"

GemmDtype = Literal["fp32", "tf32", "fp16", "bf16", "fp8"]
GemmSweep = Literal["square", "grid", "alignment"]
CopyMethod = Literal["memcpy", "elementwise"]
CopyDtype = Literal["uint8", "int16", "int32", "int64"]
Direction = Literal["h2d", "d2h"]
HostMemory = Literal["pageable", "pinned"]
AttentionBackend = Literal["flash", "efficient", "cudnn", "math"]
AttentionDtype = Literal["bf16", "fp16"]
Mistake = Literal["sync", "cold_start", "zeros", "one_run", "idle_gpu", "l2_cache"]
RateUnit = Literal["TFLOP/s", "GB/s"]
Mode = Literal["quick", "full"]
#: How the L2 cache was emptied before each flushed call: by reading a buffer larger than L2 (clean lines), or
#: by writing one (dirty lines, written back inside the next timed call: runs recorded before schema 2).
L2Flush = Literal["read", "write"]
Suite = Literal["mistakes", "gemm", "copy", "host_device", "attention", "kernels"]

#: The element types of the matrix-product suite, in the order tables list them.
GEMM_DTYPES: tuple[str, ...] = get_args(GemmDtype)
#: The suites, in the order they run (``mistakes`` first: it needs the process's first cuBLAS call).
SUITES: tuple[str, ...] = get_args(Suite)
MODES: tuple[str, ...] = get_args(Mode)


class GemmRecord(StrictModel):
    """One matrix product ``(m×k)·(k×n)`` of an element type: its timing and rate, or the error a library gave.

    ``rel_error`` is the relative error against a float64 product of the same operands, where it was checked.
    """

    dtype: GemmDtype
    sweep: GemmSweep
    m: Size
    n: Size
    k: Size
    ms: Summary | None
    tflops: Rate | None
    rel_error: Finite | None = None
    error: str | None = None
    clocks: WindowClocks | None = None


class CopyRecord(StrictModel):
    """A device-to-device copy of ``bytes`` bytes as elements of ``dtype``; ``gbps`` counts read plus write."""

    method: CopyMethod
    dtype: CopyDtype
    bytes: Size
    l2_flushed: bool
    ms: Summary
    gbps: Rate
    clocks: WindowClocks | None = None


class HostDeviceRecord(StrictModel):
    """A copy between host and device memory; ``gbps`` counts each byte once."""

    direction: Direction
    memory: HostMemory
    bytes: Size
    ms: Summary
    gbps: Rate
    clocks: WindowClocks | None = None


class AttentionRecord(StrictModel):
    """A forward pass of ``scaled_dot_product_attention`` with one backend forced, or why it did not run."""

    backend: AttentionBackend
    dtype: AttentionDtype
    batch: Size
    heads: Size
    seq: Size
    head_dim: Size
    causal: bool
    ms: Summary | None
    tflops: Rate | None
    error: str | None = None
    clocks: WindowClocks | None = None


class MistakeRecord(StrictModel):
    """One way of timing (a classic mistake or the right way), the rate it implies, and, where kept, every
    sample in milliseconds."""

    mistake: Mistake
    variant: str
    ms: Summary
    rate: Rate
    unit: RateUnit
    samples: list[Annotated[float, Field(ge=0, allow_inf_nan=False)]] | None = None
    clocks: WindowClocks | None = None


class SweepRecord(Record):
    """A run of ``gpukb bench`` (kind ``performance.sweep``): the mode, the suites that ran and their records.

    Schema 2 added ``l2_flush`` (how L2 was emptied before each flushed call) and, on each record, ``clocks``: SM
    clock and power sampled while its timed calls ran (:class:`~gpukb.measuring.device.WindowClocks`)."""

    # The file's key is ``copy``, which would shadow ``BaseModel.copy`` as an attribute: the field is ``copies``.
    model_config = ConfigDict(**Record.model_config, validate_by_name=True, serialize_by_alias=True)

    kind: Literal["performance.sweep"] = "performance.sweep"
    schema_version: Literal[2] = 2
    l2_flush: L2Flush
    mode: Mode
    suites: list[Suite]
    mistakes: list[MistakeRecord] = Field(default_factory=list)
    gemm: list[GemmRecord] = Field(default_factory=list)
    copies: list[CopyRecord] = Field(default_factory=list, alias="copy")
    host_device: list[HostDeviceRecord] = Field(default_factory=list)
    attention: list[AttentionRecord] = Field(default_factory=list)
    kernels: list[KernelRecord] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> SweepRecord:
        if self.run.gpu is None:
            raise ValueError("run.gpu is null; a sweep is measured on a GPU")
        if len(set(self.suites)) != len(self.suites):
            raise ValueError(f"suites repeats a suite: {self.suites}")
        for suite in SUITES:
            if self.section(suite) and suite not in self.suites:
                raise ValueError(f"{suite} holds records, but suites {self.suites} does not name it")
        return self

    def section(self, suite: str) -> list[StrictModel]:
        """The records of one suite, by the suite's name (``"copy"`` reads :attr:`copies`)."""
        if suite not in SUITES:
            raise ValueError(f"unknown suite {suite!r}; suites are {list(SUITES)}")
        return self.copies if suite == "copy" else getattr(self, suite)

    def mistake(self, mistake: str) -> list[MistakeRecord]:
        """The records of one mistake, in the order measured."""
        return [r for r in self.mistakes if r.mistake == mistake]

    def suite_notes(self) -> list[str]:
        """The notes the suites wrote (``"gemm: torch.mm into ..."``), without notes about the file itself."""
        return [note for note in self.run.notes if note.split(":", 1)[0] in SUITES]

    def failed(self) -> list[str]:
        """The notes of suites that failed in this run."""
        return [note for note in self.run.notes if ": FAILED, " in note]


def file_name(gpu: str, date: str) -> str:
    """A results file's conventional name: the GPU's name as a slug and the day, e.g.
    ``nvidia-h100-80gb-hbm3-2026-11-22.json``."""
    slug = re.sub(r"[^a-z0-9]+", "-", gpu.lower()).strip("-")
    if not slug or not re.match(r"\d{4}-\d{2}-\d{2}", date):
        raise ValueError(f"need a GPU name and an ISO date; got {gpu!r}, {date!r}")
    return f"{slug}-{date[:10]}.json"


# --- the ceilings run: each ceiling measured in rounds, interleaved, in one run -----------------------------------

#: Id of the committed H100 ceilings run (``bench/performance_ceilings.py``).
H100_CEILINGS = "performance/ceilings-h100"

#: What the ceilings run measures, by item id: torch's ``copy_`` at two sizes, the CUDA chapter's one-element-per-
#: thread copy kernel at two widths, and cuBLAS dense products at the shapes where the sweep found its best rates.
CEILING_ITEMS = (
    "copy-256mib",
    "copy-1gib",
    "copy-one-per-thread-u16",
    "copy-one-per-thread-u32",
    "gemm-fp16-4096x4096x8192",
    "gemm-bf16-4096x4096x8192",
    "gemm-fp16-4096x4096x12288",
    "gemm-bf16-4096x4096x12288",
)
CeilingItem = Literal[CEILING_ITEMS]  # type: ignore[valid-type]


class CeilingTiming(StrictModel):
    """One item timed in one round of the ceilings run.

    Attributes:
        item: What was timed (one of :data:`CEILING_ITEMS`).
        round: The round, from 0; every item is timed once per round, in an order that rotates between rounds.
        position: Where in its round the item ran (0 first).
        ms: The round's timing of the item.
        rate: GB/s (bytes read plus written) for a copy, TFLOP/s for a product, at the median.
        clocks: SM clock and power sampled while its calls ran.
    """

    item: CeilingItem
    round: int = Field(ge=0)
    position: int = Field(ge=0)
    ms: Summary
    rate: Rate
    clocks: WindowClocks | None = None


class CeilingsRecord(Record):
    """The H100's copy and dense-product ceilings, each item timed once per round in rounds that interleave them
    (kind ``performance.ceilings``), so fp16 and bf16, or two copy sizes, meet the same clocks and temperature."""

    kind: Literal["performance.ceilings"] = "performance.ceilings"
    schema_version: Literal[1] = 1
    rounds: int = Field(ge=2)
    timings: list[CeilingTiming]

    @model_validator(mode="after")
    def _complete(self) -> CeilingsRecord:
        if self.run.gpu is None:
            raise ValueError("run.gpu is null; the ceilings are measured on a GPU")
        seen = {(t.item, t.round) for t in self.timings}
        missing = [(i, r) for i in CEILING_ITEMS for r in range(self.rounds) if (i, r) not in seen]
        if missing or len(seen) != len(self.timings):
            raise ValueError(f"every item is timed once per round; missing {missing[:4]}, or an item timed twice")
        return self

    def rates(self, item: str) -> list[float]:
        """An item's rate in each round, in round order."""
        if item not in CEILING_ITEMS:
            raise ValueError(f"unknown ceilings item {item!r}; items are {list(CEILING_ITEMS)}")
        return [t.rate for t in sorted(self.timings, key=lambda t: t.round) if t.item == item]
