"""The CUDA chapter's recorded results: what the ``bench/cuda_*.py`` scripts write on a GPU.

Each is a :class:`gpukb.records.Record` kind read back by id with :func:`gpukb.records.load`:

- ``"cuda/device-h100"`` (:class:`DeviceFacts`): ``cudaGetDeviceProperties`` of the GPU, as the runtime reports it.
- ``"cuda/occupancy-h100"`` (:class:`OccupancyCheck`): real kernels compiled with varying register caps and
  static shared memory, each launch configuration's active blocks per SM from the driver's occupancy API next to
  :func:`gpukb.cuda.occupancy.occupancy`'s answer; and the shared-memory limit Triton enforces.
- ``"cuda/copy-width-h100"`` (:class:`CopyWidth`): device-to-device copy throughput by element width.
- ``"cuda/transfers-h100"`` (:class:`Transfers`): host↔device copy throughput by size, pageable and pinned.
- ``"cuda/kernels-h100"`` (:class:`KernelBench`): the chapter's kernels against their torch/cuBLAS peers.
- ``"cuda/host-memory-h100"`` (:class:`HostMemory`): a kernel reading host data after a pinned copy, from mapped
  (zero-copy) memory, and from managed memory with and without a prefetch, by size.
- ``"cuda/overlap-h100"`` (:class:`Overlap`): copy, kernel, copy in chunks on one stream and on several, every
  operation's start and end from CUDA events.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from gpukb.measuring.device import WindowClocks
from gpukb.measuring.stats import RecordedSummary, Summary, summarize
from gpukb.records import Record
from gpukb.schema import StrictModel

#: Ids of the committed files the pages render.
DEVICE_ID = "cuda/device-h100"
OCCUPANCY_ID = "cuda/occupancy-h100"
COPY_WIDTH_ID = "cuda/copy-width-h100"
TRANSFERS_ID = "cuda/transfers-h100"
KERNELS_ID = "cuda/kernels-h100"
HOST_MEMORY_ID = "cuda/host-memory-h100"
OVERLAP_ID = "cuda/overlap-h100"


class DeviceFacts(Record):
    """``cudaGetDeviceProperties`` of device 0 (field names as in ``cudaDeviceProp``), plus the attributes the
    properties struct lacks (``cudaDeviceGetAttribute`` names without the ``cudaDevAttr`` prefix)."""

    kind: Literal["cuda.device"] = "cuda.device"
    schema_version: Literal[1] = 1
    api: str
    properties: dict[str, int | str]
    attributes: dict[str, int] = Field(default_factory=dict)


class CompiledKernel(StrictModel):
    """One compiled variant of the probe kernel and the attributes the driver reports for it."""

    name: str
    maxrregcount: int | None
    launch_bounds: int | None
    static_smem_request: int = Field(ge=0)
    num_regs: int = Field(ge=0)
    shared_size_bytes: int = Field(ge=0)
    local_size_bytes: int = Field(ge=0)
    max_threads_per_block: int = Field(gt=0)
    max_dynamic_shared_size_bytes: int = Field(ge=0)


class OccupancyRow(StrictModel):
    """One launch configuration: kernel (index into ``kernels``), block size, dynamic shared memory, what the
    driver's occupancy API said and what the calculator said at record time (``None``: it raised ValueError)."""

    kernel: int = Field(ge=0)
    block_size: int = Field(gt=0)
    dynamic_smem: int = Field(ge=0)
    runtime_blocks: int = Field(ge=0)
    runtime_error: str | None = None
    calculator_blocks: int | None
    calculator_limit: str


class TritonLimit(StrictModel):
    """The shared-memory limit in Triton's ``OutOfResources`` error, and the device's opt-in figure."""

    required: int
    limit: int
    message: str
    shared_mem_per_block_optin: int
    kernel: str


class OccupancyCheck(Record):
    """The calculator against the driver on real kernels."""

    kind: Literal["cuda.occupancy-check"] = "cuda.occupancy-check"
    schema_version: Literal[1] = 1
    api: str
    compute_capability: str
    kernels: list[CompiledKernel]
    rows: list[OccupancyRow]
    triton: TritonLimit | None


class CopyRow(StrictModel):
    """One copy kernel: element type, elements per thread access (1 or a 16-byte vector), bytes moved (read +
    write), its time (``ms``; the run of schema 1 kept the median and the 20th and 80th percentiles of
    ``triton.testing.do_bench``), bandwidth at the median, ratio to torch's copy, and the clocks while it ran."""

    kernel: str
    dtype: str
    element_bytes: int = Field(gt=0)
    access_bytes: int = Field(gt=0)
    bytes_moved: int = Field(gt=0)
    ms: RecordedSummary
    gbps: float = Field(gt=0)
    ratio_to_torch: float = Field(gt=0)
    clocks: WindowClocks | None = None


class CopyWidth(Record):
    """Device-to-device copies by element width, with torch's ``Tensor.copy_`` of the same bytes as the peer.

    Schema 2 keeps every time as a summary (schema 1 kept ``median_ms``, ``p20_ms`` and ``p80_ms`` fields)."""

    kind: Literal["cuda.copy-width"] = "cuda.copy-width"
    schema_version: Literal[2] = 2
    buffer_bytes: int = Field(gt=0)
    torch_copy_gbps: float = Field(gt=0)
    torch_copy_ms: RecordedSummary
    rows: list[CopyRow]


class TransferRow(StrictModel):
    """One host↔device copy: direction (``"H2D"``/``"D2H"``), host memory kind, size, its time (the run of schema
    1 kept the median and its count), bandwidth at the median, and the clocks while it ran."""

    direction: Literal["H2D", "D2H"]
    host_memory: Literal["pageable", "pinned"]
    bytes: int = Field(gt=0)
    ms: RecordedSummary
    gbps: float = Field(gt=0)
    clocks: WindowClocks | None = None


class Transfers(Record):
    """Host↔device copy bandwidth by transfer size, pageable against pinned host memory.

    Schema 2 keeps each time as a summary (schema 1 kept ``median_ms``)."""

    kind: Literal["cuda.transfers"] = "cuda.transfers"
    schema_version: Literal[2] = 2
    link: str
    rows: list[TransferRow]


class KernelRow(StrictModel):
    """One kernel against its peer, timed in the same run: the times of both (each sample the mean of several
    back-to-back launches; the run of schema 1 kept only the medians), the peer, bandwidth or FLOP rate at the
    medians, and the clocks while the kernel ran."""

    group: str
    kernel: str
    framework: str
    size: str
    ms: RecordedSummary
    peer: str
    peer_ms: RecordedSummary
    unit: Literal["GB/s", "TFLOP/s"]
    rate: float = Field(gt=0)
    peer_rate: float = Field(gt=0)
    ratio: float = Field(gt=0)
    correct: bool
    clocks: WindowClocks | None = None


class KernelBench(Record):
    """The chapter's kernels (numba CUDA, Triton) against torch and cuBLAS on one GPU.

    Schema 2 keeps each time as a summary (schema 1 kept ``median_ms`` and ``peer_median_ms``)."""

    kind: Literal["cuda.kernels"] = "cuda.kernels"
    schema_version: Literal[2] = 2
    rows: list[KernelRow]


#: The ways :class:`HostMemory` measures, by id: what the timed window holds.
HOST_MEMORY_METHODS = {
    "pinned-copy": "cudaMemcpyAsync from pinned memory alone",
    "pinned-copy-kernel": "pinned copy, then the kernel on device memory",
    "device-kernel": "the kernel on device memory alone",
    "mapped-kernel": "the kernel reading mapped (zero-copy) host memory",
    "managed-fault-kernel": "the kernel on managed memory, pages on the host (page faults)",
    "managed-prefetch": "cudaMemPrefetchAsync of the managed pages alone",
    "managed-prefetch-kernel": "prefetch, then the kernel",
    "managed-resident-kernel": "the kernel on managed memory after the prefetch",
}


def _summarizes(summary: Summary, samples: list[float], what: str) -> None:
    """Refuse a summary that is not the one of the samples stored beside it."""
    if summary != summarize(samples):
        raise ValueError(f"{what} is not the summary of the samples stored with it ({summarize(samples)})")


class HostMemoryRow(StrictModel):
    """One way of getting ``bytes`` of host data into a kernel: every sample (ms), their summary, and the bytes per
    median as GB/s; ``correct``: the kernel's output equalled the source."""

    method: Literal[
        "pinned-copy",
        "pinned-copy-kernel",
        "device-kernel",
        "mapped-kernel",
        "managed-fault-kernel",
        "managed-prefetch",
        "managed-prefetch-kernel",
        "managed-resident-kernel",
    ]
    bytes: int = Field(gt=0)
    samples_ms: list[float] = Field(min_length=1)
    ms: Summary
    gbps: float = Field(gt=0)
    correct: bool

    @model_validator(mode="after")
    def _summary_of_samples(self) -> HostMemoryRow:
        _summarizes(self.ms, self.samples_ms, f"ms of {self.method} at {self.bytes} bytes")
        return self


class HostMemory(Record):
    """Pinned copies, mapped (zero-copy) reads and managed memory (faulting or prefetched), by size.

    Schema 2 keeps each row's summary of its samples (schema 1 kept their ``median_ms``)."""

    kind: Literal["cuda.host-memory"] = "cuda.host-memory"
    schema_version: Literal[2] = 2
    free_bytes_at_start: int = Field(gt=0)
    apis: dict[str, str] = Field(default_factory=dict)
    rows: list[HostMemoryRow]

    def row(self, method: str, nbytes: int) -> HostMemoryRow | None:
        """The row of one method and size, or ``None`` where the run has none."""
        return next((r for r in self.rows if r.method == method and r.bytes == nbytes), None)


class TimelineOp(StrictModel):
    """One operation on the timeline: ``H2D`` copy, ``kernel`` or ``D2H`` copy of one chunk on one stream, its start
    and end in ms after the variant's common start event."""

    op: Literal["H2D", "kernel", "D2H"]
    chunk: int = Field(ge=0)
    stream: int = Field(ge=0)
    start_ms: float = Field(ge=0)
    end_ms: float = Field(ge=0)


class OverlapVariant(StrictModel):
    """One way of issuing the work: ``chunks`` pieces on ``streams`` streams; the total (common start to last end)
    of every repeat and their summary, and the operations of the repeat whose total is the median."""

    name: str
    streams: int = Field(gt=0)
    chunks: int = Field(gt=0)
    totals_ms: list[float] = Field(min_length=1)
    ms: Summary
    ops: list[TimelineOp] = Field(min_length=3)
    correct: bool

    @model_validator(mode="after")
    def _summary_of_totals(self) -> OverlapVariant:
        _summarizes(self.ms, self.totals_ms, f"ms of {self.name!r}")
        return self


class Overlap(Record):
    """Host-to-device copy, kernel, device-to-host copy of one buffer, issued whole, in chunks on one stream, and
    in chunks on several streams.

    Schema 2 adds each variant's summary of its totals."""

    kind: Literal["cuda.overlap"] = "cuda.overlap"
    schema_version: Literal[2] = 2
    total_bytes: int = Field(gt=0)
    kernel: str
    kernel_iters: int = Field(gt=0)
    async_engine_count: int = Field(ge=0)
    variants: list[OverlapVariant] = Field(min_length=1)


#: What each conversion from schema 1 did, in words; the converted record's ``run.notes`` end with it.
CONVERSION_NOTES = {
    "cuda.copy-width": "Converted from schema 1 (gpukb.cuda.results.upgrade): each row's median_ms, p20_ms and "
    "p80_ms became ms.median, ms.p20 and ms.p80, and torch_copy_ms became torch_copy_ms.median; "
    "triton.testing.do_bench returned only those quantiles, so no count, quartiles or extremes are given.",
    "cuda.transfers": "Converted from schema 1 (gpukb.cuda.results.upgrade): each row's median_ms became ms.median, "
    "and ms.n the number of copies the script timed for that size (20, or 5 for 256 MiB); the samples were not "
    "kept, so no quartiles or extremes are given.",
    "cuda.kernels": "Converted from schema 1 (gpukb.cuda.results.upgrade): median_ms and peer_median_ms became "
    "ms.median and peer_ms.median; the run kept neither the samples nor their count (15, or 5 for a kernel slower "
    "than 5 ms), so no count, quartiles or extremes are given.",
    "cuda.host-memory": "Converted from schema 1 (gpukb.cuda.results.upgrade): each row's ms is the summary "
    "(gpukb.measuring.stats.summarize) of the samples_ms the run recorded, whose median the row's median_ms was.",
    "cuda.overlap": "Converted from schema 1 (gpukb.cuda.results.upgrade): each variant's ms is the summary "
    "(gpukb.measuring.stats.summarize) of the totals_ms the run recorded.",
}


def _same(a: float, b: float, what: str) -> None:
    if abs(a - b) > 1e-12 * max(abs(a), abs(b)):
        raise ValueError(f"{what}: the recorded {a!r} is not the median of the recorded samples ({b!r})")


def upgrade(data: dict) -> dict:
    """A schema-1 record of this chapter (parsed JSON) as schema 2: every time as a summary, nothing invented.

    What was recorded moves into the summary's fields; what was not (quartiles and extremes of runs that kept
    only a median) stays absent, and the run's notes end with :data:`CONVERSION_NOTES` of the kind. A record
    already at schema 2, or of a kind with no schema 2, is returned as it was.

    Raises:
        ValueError: If a stored median is not the median of the samples stored beside it.
    """
    kind, version = data.get("kind"), data.get("schema_version")
    if kind not in CONVERSION_NOTES or version != 1:
        return data
    out = {**data, "schema_version": 2}
    if kind == "cuda.copy-width":
        out["torch_copy_ms"] = {"median": data["torch_copy_ms"]}
        out["rows"] = [
            {k: v for k, v in r.items() if k not in ("median_ms", "p20_ms", "p80_ms")}
            | {"ms": {"median": r["median_ms"], "p20": r["p20_ms"], "p80": r["p80_ms"]}}
            for r in data["rows"]
        ]
    elif kind == "cuda.transfers":
        out["rows"] = [
            {k: v for k, v in r.items() if k != "median_ms"}
            | {"ms": {"median": r["median_ms"], "n": 5 if r["bytes"] >= 2**28 else 20}}
            for r in data["rows"]
        ]
    elif kind == "cuda.kernels":
        out["rows"] = [
            {k: v for k, v in r.items() if k not in ("median_ms", "peer_median_ms")}
            | {"ms": {"median": r["median_ms"]}, "peer_ms": {"median": r["peer_median_ms"]}}
            for r in data["rows"]
        ]
    elif kind == "cuda.host-memory":
        rows = []
        for r in data["rows"]:
            summary = summarize(r["samples_ms"])
            _same(r["median_ms"], summary.median, f"{r['method']} at {r['bytes']} bytes")
            rows.append({k: v for k, v in r.items() if k != "median_ms"} | {"ms": summary.model_dump()})
        out["rows"] = rows
    else:
        out["variants"] = [v | {"ms": summarize(v["totals_ms"]).model_dump()} for v in data["variants"]]
    out["run"] = {**data["run"], "notes": [*data["run"].get("notes", []), CONVERSION_NOTES[kind]]}
    return out
