"""The CUDA chapter's schematic figures: the memory hierarchy with the H100's sizes and bandwidths, and how a grid's
blocks and warps land on SMs.

Each figure is drawn from a data function (``*_levels``, ``launch_layout``) whose numbers come from the chapter's
committed device record, ``cuda/limits.toml``, the datasheet table and the H100 sweep; tests check those numbers.
:mod:`gpukb.cuda.pages` alone turns a figure into inline SVG.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from matplotlib.figure import Figure

from gpukb.arguments import positive_int
from gpukb.cuda import limits, tables
from gpukb.cuda.occupancy import occupancy
from gpukb.cuda.results import DEVICE_ID
from gpukb.figures import COLOURS, arrow, box, schematic
from gpukb.performance import ceilings, specs
from gpukb.performance.results import H100_SWEEP
from gpukb.tables import bytes_text


@dataclass(frozen=True)
class Level:
    """One level of the memory hierarchy as the figure shows it.

    Attributes:
        name: The memory.
        scope: Who shares one instance of it.
        size_bytes: The size of one instance.
        count: How many instances the GPU has (132 SMs' worth of registers, one L2).
        bandwidth: What the figure says about its bandwidth, or ``""`` where the site has no sourced figure.
    """

    name: str
    scope: str
    size_bytes: int
    count: int
    bandwidth: str = ""


def hierarchy_levels(record_id: str = DEVICE_ID, sweep_id: str = H100_SWEEP) -> list[Level]:
    """The levels from registers to host memory, sizes from the recorded ``cudaDeviceProp``, device-memory bandwidth
    from the datasheet and the sweep's copy ceiling, host-link bandwidth from the sweep's largest pinned copy."""
    record = tables.device_record(record_id)
    p = record.properties
    sms = int(p["multiProcessorCount"])
    gpu = specs.datasheet_for(record.run.gpu.name) if record.run.gpu else None
    sheet = gpu.figure("memory_bandwidth") if gpu else None
    copy = ceilings.quoted_ceilings(sweep_id).get("bandwidth")
    host = ceilings.sweep(sweep_id).host_device
    largest = max(r.bytes for r in host)
    pinned = next(r.gbps for r in host if r.direction == "h2d" and r.memory == "pinned" and r.bytes == largest)
    hbm = ", ".join(
        part
        for part in (
            f"{sheet.value:,.0f} GB/s datasheet" if sheet else "",
            f"{copy:,.0f} GB/s measured copy" if copy else "",
        )
        if part
    )
    return [
        Level("registers", "private to a thread", int(p["regsPerMultiprocessor"]) * 4, sms),
        # The size is the most an SM can configure as shared memory; the L1 data cache takes the rest of the same
        # on-chip store (256 KB per SM on the H100, Hopper Tuning Guide), so the box must not be called "L1".
        Level("shared memory", "shared by a block; carved from L1", int(p["sharedMemPerMultiprocessor"]), sms),
        Level("L2 cache", "shared by the whole GPU", int(p["l2CacheSize"]), 1),
        Level("device memory (HBM)", "the whole GPU; copied to and from the host", int(p["totalGlobalMem"]), 1, hbm),
        Level("host memory", "the CPU's", 0, 1, f"{pinned:,.1f} GB/s measured, pinned host → device copy"),
    ]


def hierarchy_figure(levels: list[Level] | None = None) -> Figure:
    """The hierarchy as a stack of boxes, each as wide as the log of its GPU-wide size, with sizes, scopes and the
    bandwidths between the levels."""
    levels = hierarchy_levels() if levels is None else levels
    fig, ax = schematic(5.2, 4.9)
    top, height, gap, centre = 4.55, 0.62, 0.34, 2.6
    sizes = [lv.size_bytes * lv.count for lv in levels if lv.size_bytes]
    low, high = math.log2(min(sizes)), math.log2(max(sizes))
    ax.text(0.05, 4.7, "smaller, closer, faster ↑      larger, shared, slower ↓", fontsize=9, color="black")
    for i, lv in enumerate(levels):
        total = lv.size_bytes * lv.count
        share = 1.0 if not lv.size_bytes else 0.66 + 0.3 * (math.log2(total) - low) / (high - low)
        width = 5.1 * share
        y = top - (i + 1) * height - i * gap
        per = f"{bytes_text(lv.size_bytes)} × {lv.count} SMs" if lv.count > 1 else bytes_text(lv.size_bytes)
        title = f"{lv.name}: {per}" if lv.size_bytes else lv.name  # the host's size is not the GPU's to report
        box(ax, centre - width / 2, y, width, height, f"{title}\n{lv.scope}", COLOURS[i], fontsize=10)
        if lv.bandwidth and i:
            arrow(ax, (0.35, y + height + gap - 0.03), (0.35, y + height + 0.03))
            ax.text(0.5, y + height + gap / 2, lv.bandwidth, fontsize=8.5, va="center", color="black", style="italic")
    return fig


@dataclass(frozen=True)
class LaunchLayout:
    """How an example launch maps onto the hardware.

    Attributes:
        threads: Threads per block.
        registers: Registers per thread assumed for the residency.
        blocks: Blocks in the grid.
        warp_size: Threads per warp.
        warps_per_block: Warps per block.
        blocks_per_sm: Resident blocks per SM (:func:`gpukb.cuda.occupancy.occupancy`).
        max_warps_per_sm: The SM's warp limit.
        sms: SMs of the recorded GPU.
    """

    threads: int
    registers: int
    blocks: int
    warp_size: int
    warps_per_block: int
    blocks_per_sm: int
    max_warps_per_sm: int
    sms: int


def launch_layout(n: int = 2**20, threads: int = 256, registers: int = 32, record_id: str = DEVICE_ID) -> LaunchLayout:
    """An elementwise launch over ``n`` elements, one per thread, and its residency on the recorded GPU."""
    n = positive_int("n", n)
    record = tables.device_record(record_id)
    cc = str(tables.device_value(record, "major.minor"))
    cap = limits.capability(cc)
    o = occupancy(cc, threads, registers)
    return LaunchLayout(
        threads=threads,
        registers=registers,
        blocks=-(-n // threads),
        warp_size=cap.warp_size,
        warps_per_block=o.warps_per_block,
        blocks_per_sm=o.active_blocks,
        max_warps_per_sm=cap.max_warps_per_sm,
        sms=int(tables.device_value(record, "multiProcessorCount")),
    )


def launch_figure(layout: LaunchLayout | None = None) -> Figure:
    """Grid → block → warps → SM: an example launch drawn at each level, with its counts."""
    lay = launch_layout() if layout is None else layout
    fig, ax = schematic(6.4, 3.7)
    # the grid: a row of blocks, the first one opened below
    ax.text(0.05, 3.45, f"grid: {lay.blocks:,} blocks", fontsize=10, color="black", weight="bold")
    for i in range(6):
        box(ax, 0.05 + i * 0.4, 2.85, 0.34, 0.42, "", COLOURS[0] if i == 0 else None)
    ax.text(2.5, 3.06, "…", fontsize=12, color="black", va="center")
    arrow(ax, (0.22, 2.85), (0.4, 2.5))
    ax.text(0.05, 2.25, f"block: {lay.threads} threads\n= {lay.warps_per_block} warps", fontsize=10, color="black",
            weight="bold", va="center")  # fmt: skip
    for w in range(lay.warps_per_block):
        box(ax, 0.05 + (w % 4) * 0.68, 1.35 - (w // 4) * 0.5, 0.62, 0.42, f"warp {w}", COLOURS[1], fontsize=8.5)
    ax.text(0.05, 0.45, f"warp: {lay.warp_size} threads that\nissue one instruction together", fontsize=9,
            color="black", va="center")  # fmt: skip
    arrow(ax, (2.8, 1.6), (3.25, 1.6))
    # the SMs: resident blocks
    ax.text(3.3, 3.45, f"{lay.sms} SMs, {lay.blocks_per_sm} blocks each", fontsize=10, color="black", weight="bold")
    ax.text(3.3, 3.15, f"{lay.blocks_per_sm * lay.warps_per_block} of {lay.max_warps_per_sm} warp slots "
            f"at {lay.registers} registers a thread", fontsize=9, color="black")  # fmt: skip
    for sm in range(2):
        x = 3.3 + sm * 1.4
        box(ax, x, 0.6, 1.3, 2.35, "", None)
        ax.text(x + 0.65, 2.72, f"SM {sm}", ha="center", fontsize=9, color="black")
        for b in range(lay.blocks_per_sm):
            box(ax, x + 0.1, 0.68 + b * (1.9 / lay.blocks_per_sm), 1.1, 1.9 / lay.blocks_per_sm - 0.05, "block",
                COLOURS[0], fontsize=7.5)  # fmt: skip
    ax.text(6.2, 1.75, "…", fontsize=12, color="black", va="center")
    ax.text(3.3, 0.3, f"{lay.sms * lay.blocks_per_sm:,} blocks resident at once;\nthe others wait for a slot",
            fontsize=9, color="black", va="center")  # fmt: skip
    return fig
