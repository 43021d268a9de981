"""Markdown for the CUDA chapter's pages; the only module of the chapter that returns page text.

Every table comes from :mod:`gpukb.cuda.tables` (data files and records) or from the library (the occupancy
calculator, the index arithmetic); every "measured on" sentence from :func:`gpukb.records.measured_on`.
"""

from __future__ import annotations

from gpukb import records
from gpukb.cuda import indexing, limits, tables
from gpukb.cuda.occupancy import occupancy_table
from gpukb.cuda.results import COPY_WIDTH_ID, KERNELS_ID, TRANSFERS_ID, CopyWidth, KernelBench, Transfers
from gpukb.tables import markdown_table


def device_facts() -> str:
    """The GPU's architecture facts as the CUDA runtime reported them, and where."""
    record = tables.device_record()
    return markdown_table(*tables.device_table()) + "\n\n" + records.measured_on(record.run) + "\n"


def memory_hierarchy() -> str:
    """The memory hierarchy with this GPU's sizes."""
    record = tables.device_record()
    name = record.properties["name"]
    return markdown_table(*tables.hierarchy_table()) + f"\n\nSizes as the CUDA runtime reported them on the {name}.\n"


def limits_by_capability() -> str:
    """The per-compute-capability limits the calculator uses, with their sources."""
    table = limits.table()
    sources = "; ".join(f"[{s.title}]({s.url})" for s in table.sources.values())
    return markdown_table(*tables.limits_table()) + f"\n\nSources (checked {table.checked}): {sources}.\n"


def occupancy_sweep(registers: int, static_shared: int = 0, dynamic_shared: int = 0) -> str:
    """The calculator's answer for one kernel on Hopper at several block sizes."""
    return markdown_table(
        *occupancy_table("9.0", registers, static_shared, dynamic_shared, block_sizes=(64, 128, 256, 512, 768, 1024))
    )


def occupancy_check() -> str:
    """The calculator against the driver: the headline counts, and where the run was made."""
    record = tables.occupancy_record()
    counts = tables.occupancy_agreement()
    regs = sorted({k.num_regs for k in record.kernels})
    text = (
        f"**{counts['agree']} of {counts['configurations']}** launch configurations agree "
        f"({counts['differ']} differ): {counts['kernels']} compiled kernel variants (registers from {regs[0]} to "
        f"{regs[-1]} per thread, static shared memory from 0 to "
        f"{max(k.shared_size_bytes for k in record.kernels):,} bytes), each at every block size and dynamic "
        f"shared memory size of the grid. In {counts['cannot_run']} of them the driver answers 0 blocks (the launch "
        "cannot run) and the calculator raises `ValueError` naming the limit. The driver was asked through "
        f"`{record.api}`.\n\n"
        f"{counts['beyond_launch_bounds']} configurations ask for more threads per block than the kernel's own "
        "`__launch_bounds__` allow: the occupancy API answers them as if the kernel had no bound (the calculator, "
        "given the same inputs, agrees), while the launch itself fails; `occupancy(..., kernel_max_threads=...)` "
        "refuses them.\n\n" + records.measured_on(record.run) + "\n"
    )
    return text


def occupancy_kernels() -> str:
    """Per compiled kernel variant: its attributes and how many of its launches agree."""
    return markdown_table(*tables.occupancy_kernels_table())


def occupancy_distribution() -> str:
    """How the recorded launches spread over block counts."""
    return markdown_table(*tables.occupancy_distribution())


def triton_limit() -> str:
    """Triton's shared-memory refusal next to the device's opt-in figure."""
    record = tables.occupancy_record()
    t = record.triton
    if t is None:
        return "The recorded run has no Triton refusal.\n"
    same = "equals" if t.limit == t.shared_mem_per_block_optin else "differs from"
    return markdown_table(
        ["what", "bytes"],
        [
            ["shared memory the kernel needed (Triton's `Required`)", f"{t.required:,}"],
            ["Triton's `Hardware limit`", f"{t.limit:,}"],
            ["`sharedMemPerBlockOptin` of the device", f"{t.shared_mem_per_block_optin:,}"],
        ],
    ) + (
        f"\n\nThe kernel: {t.kernel}. Triton's limit {same} the per-block opt-in figure. Its message: "
        f"``{t.message}``\n\n" + records.measured_on(record.run) + "\n"
    )


def launch_grid() -> str:
    """The 72-thread launch (3 × 2 blocks of 4 × 3 threads) laid out as the grid of threads: each cell is a thread's
    block-major index (its block's number × 12 + its number inside the block), at its (x, y) place."""
    grid, block = (3, 2), (4, 3)
    width, height = grid[0] * block[0], grid[1] * block[1]
    cells = [[0] * width for _ in range(height)]
    for b, t in indexing.threads(grid, block):
        x, y, _ = indexing.global_coordinates(b, block, t)
        cells[y][x] = indexing.block_major_index(b, block, t, grid)
    headers = ["y \\ x", *[str(x) for x in range(width)]]
    return markdown_table(headers, [[y, *cells[y]] for y in range(height)])


def copy_width() -> str:
    """Copy throughput by element width, against torch's copy."""
    record = records.load(COPY_WIDTH_ID, CopyWidth)
    return (
        markdown_table(*tables.copy_width_table())
        + f"\n\nBuffers of {tables.kib(record.buffer_bytes)}; torch's `copy_` of the same bytes: "
        f"{record.torch_copy_gbps:,.0f} GB/s. " + records.measured_on(record.run) + "\n"
    )


def transfers() -> str:
    """Host↔device bandwidth by transfer size, pageable against pinned."""
    record = records.load(TRANSFERS_ID, Transfers)
    return (
        markdown_table(*tables.transfers_table())
        + f"\n\nLink: {record.link}. "
        + records.measured_on(record.run)
        + "\n"
    )


def kernels(group: str | None = None) -> str:
    """The chapter's kernels against their peers, timed in one run."""
    record = records.load(KERNELS_ID, KernelBench)
    return markdown_table(*tables.kernels_table(group=group)) + "\n\n" + records.measured_on(record.run) + "\n"


def copy_width_verdict() -> str:
    """What the copy-width table shows, in words, with its ratios computed from the record."""
    s = tables.copy_width_summary()
    return (
        f"With one element per thread, the u16 copy takes {s['u16_over_u32_one']:.2f}× as long as the u32 copy and "
        f"the u8 copy {s['u8_over_u32_one']:.2f}×. Let every thread move 16 bytes and the ratios fall to "
        f"{s['u16_over_u32_16b']:.2f}× and {s['u8_over_u32_16b']:.2f}×; the 16-byte vector copy runs at "
        f"{s['vector_vs_torch']:.2f} of torch's copy.\n"
    )


def transfers_verdict() -> str:
    """What the transfer table shows, in words, with its figures computed from the record."""
    s = tables.transfers_summary()
    return (
        f"Pinned memory reached {s['pinned_best']:.1f} GB/s, pageable memory at best {s['pageable_best']:.1f} GB/s. "
        f"A {tables.kib(int(s['smallest_bytes']))} copy takes about {s['smallest_us']:.0f} µs either way: small "
        "copies cost their fixed overhead, so batch them into fewer, larger ones.\n"
    )


def kernels_verdict() -> str:
    """The goals of the chapter's kernels against what the record shows, in words."""
    b = tables.kernels_summary()

    def met(ratio: float, goal: float) -> str:
        return "meets" if ratio >= goal else "falls short of"

    lines = []
    for group in ("copy", "vector add"):
        for framework in ("numba", "triton"):
            row = b.get(f"{group}/{framework}")
            if row is None:
                continue
            lines.append(
                f"- **{group}, {framework}** (best: {row['kernel']}): {row['ratio']:.2f} of torch's copy bandwidth, "
                f"which {met(float(row['ratio']), 0.95)} the goal of 0.95."
            )
    red = b.get("reduction/numba")
    if red is not None:
        lines.append(
            f"- **reduction, numba** (best: {red['kernel']}): {red['ratio']:.2f} of `torch.sum`'s bandwidth, which "
            f"{met(float(red['ratio']), 0.9)} the goal of 0.9."
        )
    mm = b.get("matmul/numba")
    if mm is not None:
        lines.append(
            f"- **tiled matmul, numba**: {mm['rate']:.1f} {mm['unit']} against cuBLAS's {mm['peer_rate']:.1f}, "
            f"{mm['ratio']:.2f} of it."
        )
    return "\n".join(lines) + "\n"
