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

from pydantic import Field

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
    write), median time and its spread (20th to 80th percentile), bandwidth and ratio to torch's copy."""

    kernel: str
    dtype: str
    element_bytes: int = Field(gt=0)
    access_bytes: int = Field(gt=0)
    bytes_moved: int = Field(gt=0)
    median_ms: float = Field(gt=0)
    p20_ms: float = Field(gt=0)
    p80_ms: float = Field(gt=0)
    gbps: float = Field(gt=0)
    ratio_to_torch: float = Field(gt=0)


class CopyWidth(Record):
    """Device-to-device copies by element width, with torch's ``Tensor.copy_`` of the same bytes as the peer."""

    kind: Literal["cuda.copy-width"] = "cuda.copy-width"
    schema_version: Literal[1] = 1
    buffer_bytes: int = Field(gt=0)
    torch_copy_gbps: float = Field(gt=0)
    torch_copy_ms: float = Field(gt=0)
    rows: list[CopyRow]


class TransferRow(StrictModel):
    """One host↔device copy: direction (``"H2D"``/``"D2H"``), host memory kind, size, median time, bandwidth."""

    direction: Literal["H2D", "D2H"]
    host_memory: Literal["pageable", "pinned"]
    bytes: int = Field(gt=0)
    median_ms: float = Field(gt=0)
    gbps: float = Field(gt=0)


class Transfers(Record):
    """Host↔device copy bandwidth by transfer size, pageable against pinned host memory."""

    kind: Literal["cuda.transfers"] = "cuda.transfers"
    schema_version: Literal[1] = 1
    link: str
    rows: list[TransferRow]


class KernelRow(StrictModel):
    """One kernel against its peer, timed in the same run: medians, the peer, bandwidth or FLOP rate."""

    group: str
    kernel: str
    framework: str
    size: str
    median_ms: float = Field(gt=0)
    peer: str
    peer_median_ms: float = Field(gt=0)
    unit: Literal["GB/s", "TFLOP/s"]
    rate: float = Field(gt=0)
    peer_rate: float = Field(gt=0)
    ratio: float = Field(gt=0)
    correct: bool


class KernelBench(Record):
    """The chapter's kernels (numba CUDA, Triton) against torch and cuBLAS on one GPU."""

    kind: Literal["cuda.kernels"] = "cuda.kernels"
    schema_version: Literal[1] = 1
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


class HostMemoryRow(StrictModel):
    """One way of getting ``bytes`` of host data into a kernel: every sample (ms), their median, and the bytes per
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
    median_ms: float = Field(gt=0)
    gbps: float = Field(gt=0)
    correct: bool


class HostMemory(Record):
    """Pinned copies, mapped (zero-copy) reads and managed memory (faulting or prefetched), by size."""

    kind: Literal["cuda.host-memory"] = "cuda.host-memory"
    schema_version: Literal[1] = 1
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
    of every repeat, and the operations of the repeat whose total is the median."""

    name: str
    streams: int = Field(gt=0)
    chunks: int = Field(gt=0)
    totals_ms: list[float] = Field(min_length=1)
    ops: list[TimelineOp] = Field(min_length=3)
    correct: bool


class Overlap(Record):
    """Host-to-device copy, kernel, device-to-host copy of one buffer, issued whole, in chunks on one stream, and
    in chunks on several streams."""

    kind: Literal["cuda.overlap"] = "cuda.overlap"
    schema_version: Literal[1] = 1
    total_bytes: int = Field(gt=0)
    kernel: str
    kernel_iters: int = Field(gt=0)
    async_engine_count: int = Field(ge=0)
    variants: list[OverlapVariant] = Field(min_length=1)
