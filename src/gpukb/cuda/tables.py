"""The CUDA chapter's tables as ``(headers, rows)``: device facts, the memory hierarchy, the limits by compute
capability, and the recorded GPU runs (occupancy check, copies, transfers, kernels). Pages render them with
:mod:`gpukb.cuda.pages`; nothing here is typed in by hand: every number comes from a data file or a record."""

from __future__ import annotations

from collections import Counter, defaultdict

from gpukb import records
from gpukb.cuda import limits, overlap
from gpukb.cuda.occupancy import occupancy
from gpukb.cuda.results import (
    COPY_WIDTH_ID,
    DEVICE_ID,
    HOST_MEMORY_ID,
    KERNELS_ID,
    OCCUPANCY_ID,
    OVERLAP_ID,
    TRANSFERS_ID,
    CopyWidth,
    DeviceFacts,
    HostMemory,
    KernelBench,
    OccupancyCheck,
    Overlap,
    OverlapVariant,
    Transfers,
)
from gpukb.measuring.stats import RecordedSummary, Summary
from gpukb.tables import bytes_text

Table = tuple[list[str], list[list[object]]]


#: The device facts a page shows: (what, cudaDeviceProp field or cudaDeviceGetAttribute name, how to show it).
DEVICE_ROWS = (
    ("compute capability", "major.minor", "text"),
    ("streaming multiprocessors (SMs)", "multiProcessorCount", "int"),
    ("warp size (threads)", "warpSize", "int"),
    ("max threads per block", "maxThreadsPerBlock", "int"),
    ("max threads per SM", "maxThreadsPerMultiProcessor", "int"),
    ("max resident blocks per SM", "maxBlocksPerMultiProcessor", "int"),
    ("32-bit registers per SM", "regsPerMultiprocessor", "int"),
    ("32-bit registers per block", "regsPerBlock", "int"),
    ("shared memory per SM", "sharedMemPerMultiprocessor", "bytes"),
    ("shared memory per block (default)", "sharedMemPerBlock", "bytes"),
    ("shared memory per block (opt-in)", "sharedMemPerBlockOptin", "bytes"),
    ("shared memory reserved per block", "reservedSharedMemPerBlock", "bytes"),
    ("L2 cache", "l2CacheSize", "bytes"),
    ("L2 set-aside for persisting accesses (max)", "persistingL2CacheMaxSize", "bytes"),
    ("constant memory", "totalConstMem", "bytes"),
    ("global memory", "totalGlobalMem", "bytes"),
    ("memory bus width", "memoryBusWidth", "bits"),
    ("SM clock (max)", "ClockRate", "khz"),
    ("memory clock (max)", "MemoryClockRate", "khz"),
    ("copy engines", "asyncEngineCount", "int"),
    ("thread-block cluster launch", "clusterLaunch", "bool"),
)


def device_record(record_id: str = DEVICE_ID) -> DeviceFacts:
    """The recorded ``cudaGetDeviceProperties`` of the chapter's GPU."""
    return records.load(record_id, DeviceFacts)


def device_value(record: DeviceFacts, field: str) -> int | str:
    """One recorded value: a ``cudaDeviceProp`` field, else a ``cudaDeviceGetAttribute`` one."""
    if field == "major.minor":
        return f"{record.properties['major']}.{record.properties['minor']}"
    if field in record.properties:
        return record.properties[field]
    return record.attributes[field]


def _show(value: int | str, how: str) -> str:
    if how == "bytes":
        return f"{bytes_text(int(value))} ({int(value):,} B)"
    if how == "khz":
        return f"{int(value) / 1000:,.0f} MHz"
    if how == "bits":
        return f"{int(value):,} bits"
    if how == "bool":
        return "yes" if value else "no"
    return f"{value:,}" if isinstance(value, int) else str(value)


def device_table(record_id: str = DEVICE_ID) -> Table:
    """The device facts as read from the GPU, with the runtime field each comes from."""
    record = device_record(record_id)
    rows = [[what, _show(device_value(record, field), how), f"`{field}`"] for what, field, how in DEVICE_ROWS]
    return ["", "value", "reported as"], rows


def hierarchy_table(record_id: str = DEVICE_ID) -> Table:
    """The memory hierarchy from the thread outwards, sizes from the recorded device."""
    r = device_record(record_id)
    p = r.properties
    regs = int(p["regsPerMultiprocessor"])
    return (
        ["memory", "scope", "lifetime", "size on this GPU", "where the size comes from"],
        [
            [
                "registers",
                "one thread",
                "thread",
                f"{bytes_text(regs * 4)} per SM ({regs:,} × 32-bit); at most 255 per thread",
                "`regsPerMultiprocessor`",
            ],
            [
                "local memory",
                "one thread",
                "thread",
                "spills and large per-thread arrays, in device memory (cached)",
                "compiler report (`local_size_bytes`)",
            ],
            [
                "shared memory",
                "one block (a cluster on 9.0)",
                "block",
                f"{bytes_text(int(p['sharedMemPerMultiprocessor']))} per SM, up to "
                f"{bytes_text(int(p['sharedMemPerBlockOptin']))} per block",
                "`sharedMemPerMultiprocessor`, `sharedMemPerBlockOptin`",
            ],
            [
                "L1 / texture cache",
                "one SM",
                "—",
                "the part of the SM's data cache not configured as shared memory",
                "carveout (`cudaFuncAttributePreferredSharedMemoryCarveout`)",
            ],
            ["L2 cache", "whole GPU", "—", bytes_text(int(p["l2CacheSize"])), "`l2CacheSize`"],
            [
                "constant memory",
                "whole grid (read-only)",
                "application",
                bytes_text(int(p["totalConstMem"])),
                "`totalConstMem`",
            ],
            [
                "global memory",
                "whole grid and host",
                "application",
                bytes_text(int(p["totalGlobalMem"])),
                "`totalGlobalMem`",
            ],
        ],
    )


def limits_table() -> Table:
    """The per-compute-capability limits the calculator uses (from ``gpukb/data/cuda/limits.toml``)."""
    headers = [
        "compute capability",
        "GPUs",
        "warps / SM",
        "blocks / SM",
        "registers / SM",
        "shared / SM",
        "shared / block (opt-in)",
        "reserved / block",
        "allocation unit",
        "carveouts (KiB)",
    ]
    rows = []
    for cc in limits.known():
        c = limits.capability(cc)
        rows.append(
            [
                cc,
                c.name,
                c.max_warps_per_sm,
                c.max_blocks_per_sm,
                f"{c.registers_per_sm:,}",
                bytes_text(c.shared_per_sm),
                bytes_text(c.shared_per_block_optin),
                f"{c.reserved_shared_per_block:,} B",
                f"{c.shared_allocation_unit} B",
                ", ".join(str(k) for k in c.carveouts_kib),
            ]
        )
    return headers, rows


def occupancy_record(record_id: str = OCCUPANCY_ID) -> OccupancyCheck:
    """The recorded comparison of calculator and driver."""
    return records.load(record_id, OccupancyCheck)


def occupancy_agreement(record_id: str = OCCUPANCY_ID) -> dict[str, int]:
    """Counts over the recorded grid, recomputed with today's calculator: configurations, kernels, agreements (the
    driver's block count, or a ValueError exactly where the driver says 0), launches refused for exceeding the
    kernel's ``__launch_bounds__`` while the driver answered."""
    r = occupancy_record(record_id)
    agree = zero = bounds = 0
    for row in r.rows:
        k = r.kernels[row.kernel]
        try:
            got = occupancy(
                r.compute_capability, row.block_size, k.num_regs, k.shared_size_bytes, row.dynamic_smem
            ).active_blocks
        except ValueError:
            got = 0
        agree += got == row.runtime_blocks
        zero += row.runtime_blocks == 0
        bounds += row.block_size > k.max_threads_per_block and row.runtime_blocks > 0
    return {
        "configurations": len(r.rows),
        "kernels": len(r.kernels),
        "agree": agree,
        "differ": len(r.rows) - agree,
        "cannot_run": zero,
        "beyond_launch_bounds": bounds,
    }


def occupancy_kernels_table(record_id: str = OCCUPANCY_ID) -> Table:
    """Per compiled kernel: its attributes, the configurations tried, the driver's range of answers, agreements."""
    r = occupancy_record(record_id)
    by_kernel: dict[int, list] = defaultdict(list)
    for row in r.rows:
        by_kernel[row.kernel].append(row)
    rows = []
    for index, k in enumerate(r.kernels):
        mine = by_kernel[index]
        agree = 0
        for row in mine:
            try:
                got = occupancy(
                    r.compute_capability, row.block_size, k.num_regs, k.shared_size_bytes, row.dynamic_smem
                ).active_blocks
            except ValueError:
                got = 0
            agree += got == row.runtime_blocks
        blocks = [row.runtime_blocks for row in mine]
        rows.append(
            [
                k.name,
                k.num_regs,
                f"{k.shared_size_bytes:,}",
                k.local_size_bytes,
                k.max_threads_per_block,
                len(mine),
                f"{min(blocks)}–{max(blocks)}",
                f"{agree}/{len(mine)}",
            ]
        )
    return (
        [
            "kernel variant",
            "registers",
            "static shared (B)",
            "local (B)",
            "max threads",
            "launches",
            "driver's blocks/SM",
            "calculator agrees",
        ],
        rows,
    )


def occupancy_distribution(record_id: str = OCCUPANCY_ID) -> Table:
    """How many recorded launches got each block count from the driver."""
    r = occupancy_record(record_id)
    counts = Counter(row.runtime_blocks for row in r.rows)
    return ["active blocks per SM (driver)", "launches"], [[b, counts[b]] for b in sorted(counts)]


def band(ms: RecordedSummary) -> tuple[str, float, float]:
    """The spread a timing keeps, as ``(label, low, high)``: the quartiles of a summary (``"25–75 %"``), or the 20th
    and 80th percentiles that runs timed with ``triton.testing.do_bench`` kept instead (``"20–80 %"``).

    Raises:
        ValueError: For a timing that kept no spread (only its median).
    """
    if isinstance(ms, Summary):
        return "25–75 %", ms.q1, ms.q3
    if ms.p20 is None or ms.p80 is None:
        raise ValueError(f"this timing kept only its median ({ms.median} ms); there is no spread to show")
    return "20–80 %", ms.p20, ms.p80


def copy_width_table(record_id: str = COPY_WIDTH_ID) -> Table:
    """The copy kernels by element width and access, against torch's copy."""
    r = records.load(record_id, CopyWidth)
    bands = [band(row.ms) for row in r.rows]
    labels = {label for label, _, _ in bands}
    if len(labels) != 1:
        raise ValueError(f"the rows of {record_id} keep different spreads: {sorted(labels)}")
    rows = [
        [
            row.kernel,
            row.dtype,
            row.element_bytes,
            row.access_bytes,
            f"{row.ms.median * 1e3:,.0f}",
            f"{low * 1e3:,.0f}–{high * 1e3:,.0f}",
            f"{row.gbps:,.0f}",
            f"{row.ratio_to_torch:.2f}",
        ]
        for row, (_, low, high) in zip(r.rows, bands, strict=True)
    ]
    headers = ["kernel", "type", "element (B)", "bytes per access", "median (µs)", f"{labels.pop()} (µs)", "GB/s"]
    return [*headers, "× torch copy_"], rows


def transfers_table(record_id: str = TRANSFERS_ID) -> Table:
    """Host↔device bandwidth by size, pageable against pinned, one row per size and direction."""
    r = records.load(record_id, Transfers)
    by = {(row.direction, row.host_memory, row.bytes): row for row in r.rows}
    sizes = sorted({row.bytes for row in r.rows})
    rows = []
    for size in sizes:
        for direction in ("H2D", "D2H"):
            page, pin = by[(direction, "pageable", size)], by[(direction, "pinned", size)]
            rows.append(
                [bytes_text(size), direction, f"{page.gbps:.2f}", f"{pin.gbps:.2f}", f"{pin.gbps / page.gbps:.1f}"]
            )
    return ["transfer", "direction", "pageable (GB/s)", "pinned (GB/s)", "pinned ÷ pageable"], rows


def kernels_table(record_id: str = KERNELS_ID, group: str | None = None) -> Table:
    """The chapter's kernels against their peers (one group, or all)."""
    r = records.load(record_id, KernelBench)
    rows = [
        [
            row.group,
            row.framework,
            row.kernel,
            row.size,
            f"{row.ms.median:.3f}",
            f"{row.rate:,.1f} {row.unit}",
            row.peer,
            f"{row.peer_rate:,.1f} {row.unit}",
            f"{row.ratio:.2f}",
            "yes" if row.correct else "NO",
        ]
        for row in r.rows
        if group is None or row.group == group
    ]
    return (
        ["group", "framework", "kernel", "size", "median (ms)", "rate", "peer", "peer rate", "ratio", "checked"],
        rows,
    )


def copy_width_summary(record_id: str = COPY_WIDTH_ID) -> dict[str, float]:
    """Ratios the memory page states: per-element u16 and u8 time over u32, the same at 16 bytes per thread, and the
    16-byte vector copy against torch."""
    r = records.load(record_id, CopyWidth)
    t = {(row.kernel, row.dtype): row.ms.median for row in r.rows}
    one, narrow = "one per thread", "16 B per thread, narrow"
    vector = next(row for row in r.rows if row.kernel == "16 B per thread, vector")
    return {
        "u16_over_u32_one": t[(one, "u16")] / t[(one, "u32")],
        "u8_over_u32_one": t[(one, "u8")] / t[(one, "u32")],
        "u16_over_u32_16b": t[(narrow, "u16")] / t[(narrow, "u32")],
        "u8_over_u32_16b": t[(narrow, "u8")] / t[(narrow, "u32")],
        "vector_vs_torch": vector.ratio_to_torch,
    }


def transfers_summary(record_id: str = TRANSFERS_ID) -> dict[str, float]:
    """Figures the memory page states: the best pinned and pageable bandwidth, the smallest copy's time."""
    r = records.load(record_id, Transfers)
    smallest = min(row.bytes for row in r.rows)
    return {
        "pinned_best": max(row.gbps for row in r.rows if row.host_memory == "pinned"),
        "pageable_best": max(row.gbps for row in r.rows if row.host_memory == "pageable"),
        "smallest_bytes": smallest,
        "smallest_us": min(row.ms.median for row in r.rows if row.bytes == smallest) * 1e3,
    }


def kernels_summary(record_id: str = KERNELS_ID) -> dict[str, dict[str, float | str]]:
    """The best row of each (group, framework) of the kernel benchmark: its kernel, ratio to the peer and rate."""
    r = records.load(record_id, KernelBench)
    best: dict[str, dict[str, float | str]] = {}
    for row in r.rows:
        key = f"{row.group}/{row.framework}"
        if key not in best or row.ratio > best[key]["ratio"]:
            best[key] = {
                "kernel": row.kernel,
                "ratio": row.ratio,
                "rate": row.rate,
                "peer_rate": row.peer_rate,
                "unit": row.unit,
            }
    return best


#: The columns of the host-memory table: (method id, heading).
HOST_MEMORY_COLUMNS = (
    ("pinned-copy-kernel", "pinned: copy, then kernel"),
    ("mapped-kernel", "mapped (zero-copy): kernel"),
    ("managed-fault-kernel", "managed, first touch: kernel"),
    ("managed-prefetch-kernel", "managed: prefetch, then kernel"),
    ("device-kernel", "device memory: kernel alone"),
)


def _time(ms: float) -> str:
    return f"{ms * 1e3:,.0f} µs" if ms < 10 else f"{ms:,.1f} ms"


def host_memory_record(record_id: str = HOST_MEMORY_ID) -> HostMemory:
    """The recorded host-memory run."""
    return records.load(record_id, HostMemory)


def host_memory_table(record_id: str = HOST_MEMORY_ID) -> Table:
    """Per transfer size, each way of getting host data into a kernel: median time and bytes per second."""
    r = host_memory_record(record_id)
    rows = []
    for size in sorted({row.bytes for row in r.rows}):
        cells: list[object] = [bytes_text(size)]
        for method, _ in HOST_MEMORY_COLUMNS:
            row = r.row(method, size)
            cells.append("not measured" if row is None else f"{_time(row.ms.median)} ({row.gbps:,.1f} GB/s)")
        rows.append(cells)
    return ["size", *[heading for _, heading in HOST_MEMORY_COLUMNS]], rows


def host_memory_summary(record_id: str = HOST_MEMORY_ID) -> dict[str, float]:
    """Figures the memory page states, at the largest size: each way's GB/s, and how many times longer the faulting
    kernel takes than prefetch plus kernel."""
    r = host_memory_record(record_id)
    largest = max(row.bytes for row in r.rows)
    out: dict[str, float] = {"bytes": largest}
    for row in r.rows:
        if row.bytes == largest:
            out[row.method] = row.gbps
    fault, pre = r.row("managed-fault-kernel", largest), r.row("managed-prefetch-kernel", largest)
    if fault is not None and pre is not None:
        out["fault_over_prefetch"] = fault.ms.median / pre.ms.median
    smallest = min(row.bytes for row in r.rows)
    out["smallest"] = smallest
    for method in ("pinned-copy-kernel", "mapped-kernel"):
        row = r.row(method, smallest)
        if row is not None:
            out[f"{method}@smallest_us"] = row.ms.median * 1e3
    return out


def overlap_record(record_id: str = OVERLAP_ID) -> Overlap:
    """The recorded copy/compute overlap run."""
    return records.load(record_id, Overlap)


def _stage_durations(variant: OverlapVariant) -> tuple[list[float], list[float], list[float]]:
    by = {(o.op, o.chunk): o.end_ms - o.start_ms for o in variant.ops}
    chunks = range(variant.chunks)
    return tuple([by[(stage, c)] for c in chunks] for stage in overlap.STAGES)  # type: ignore[return-value]


def overlap_bounds(record_id: str = OVERLAP_ID) -> dict[str, float]:
    """The sequential sum and the pipeline bound, from the per-operation durations of the chunked one-stream variant
    (there every operation had its engine to itself, so its events time the operation alone)."""
    r = overlap_record(record_id)
    single = max((v for v in r.variants if v.streams == 1), key=lambda v: v.chunks)
    h2d, kernel, d2h = _stage_durations(single)
    return {
        "chunks": single.chunks,
        "sequential_ms": overlap.sequential_time(h2d, kernel, d2h),
        "bound_ms": overlap.pipeline_bound(h2d, kernel, d2h),
        "h2d_ms": sum(h2d),
        "kernel_ms": sum(kernel),
        "d2h_ms": sum(d2h),
    }


def overlap_table(record_id: str = OVERLAP_ID) -> Table:
    """Each way of issuing the work: streams, chunks, median total and range, and the median against the first
    variant's."""
    r = overlap_record(record_id)
    base = r.variants[0].ms.median
    rows = [
        [
            v.name,
            v.streams,
            v.chunks,
            f"{v.ms.median:.2f}",
            f"{v.ms.min:.2f}–{v.ms.max:.2f}",
            f"{base / v.ms.median:.2f}×",
        ]
        for v in r.variants
    ]
    return ["issued as", "streams", "chunks", "total (ms, median)", "range (ms)", "speed-up"], rows
