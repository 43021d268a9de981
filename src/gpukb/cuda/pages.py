"""Markdown for the CUDA chapter's pages; the only module of the chapter that returns page text.

Every table comes from :mod:`gpukb.cuda.tables` (data files and records) or from the library (the occupancy
calculator, the index arithmetic); every "measured on" sentence from :func:`gpukb.records.measured_on`.
"""

from __future__ import annotations

from gpukb import records
from gpukb.calculators import Field, calculator_html
from gpukb.cuda import banks, figures, indexing, limits, overlap, tables
from gpukb.cuda.occupancy import occupancy_table
from gpukb.cuda.problems import problems as chapter_problems
from gpukb.cuda.results import (
    COPY_WIDTH_ID,
    HOST_MEMORY_METHODS,
    KERNELS_ID,
    TRANSFERS_ID,
    CopyWidth,
    KernelBench,
    Transfers,
)
from gpukb.figures import to_svg
from gpukb.problems import markdown as problems_markdown
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
    # How the copies were timed decides what a small copy's time means: say it beside the table.
    (method,) = [note for note in record.run.notes if "host clock" in note]
    return (
        markdown_table(*tables.transfers_table())
        + f"\n\nTimed as: {method[0].lower()}{method[1:]} Link: {record.link}. "
        + records.measured_on(record.run)
        + "\n"
    )


def kernels(group: str | None = None) -> str:
    """The chapter's kernels against their peers, timed in one run."""
    record = records.load(KERNELS_ID, KernelBench)
    return markdown_table(*tables.kernels_table(group=group)) + "\n\n" + records.measured_on(record.run) + "\n"


def copy_width_verdict() -> str:
    """What the copy-width table shows, in words, with its ratios computed from the record."""
    from gpukb.performance.pages import quantity

    s = tables.copy_width_summary()
    return (
        f"With one element per thread, the u16 copy takes {quantity('h100-copy-u16-over-u32')}× as long as the u32 "
        "copy (the median of rounds interleaved in one run, "
        "[the H100's ceilings](../../performance/h100/#the-h100s-ceilings-one-figure-each); the table's run gave "
        f"{s['u16_over_u32_one']:.2f}×) and the u8 copy {s['u8_over_u32_one']:.2f}×. Let every thread move 16 bytes "
        "and the ratios fall to "
        f"{s['u16_over_u32_16b']:.2f}× and {s['u8_over_u32_16b']:.2f}×; the 16-byte vector copy runs at "
        f"{s['vector_vs_torch']:.2f} of torch's copy.\n"
    )


def transfers_verdict() -> str:
    """What the transfer table shows, in words, with its figures computed from the record."""
    s = tables.transfers_summary()
    return (
        f"Pinned memory reached {s['pinned_best']:.1f} GB/s, pageable memory at best {s['pageable_best']:.1f} GB/s. "
        f"A {tables.kib(int(s['smallest_bytes']))} copy takes about {s['smallest_us']:.0f} µs either way, as the "
        "host sees it (launch and synchronization included): small copies cost their fixed overhead, so batch them "
        "into fewer, larger ones.\n"
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


def bank_conflicts() -> str:
    """Passes a warp's shared-memory reads take, by access pattern (:mod:`gpukb.cuda.banks`)."""
    return markdown_table(*banks.patterns_table())


def host_memory() -> str:
    """A kernel reading host data by the four ways, by size: the table and where it was measured."""
    record = tables.host_memory_record()
    apis = "; ".join(f"{kind}: {api}" for kind, api in sorted(record.apis.items()))
    return (
        markdown_table(*tables.host_memory_table())
        + f"\n\nEach cell: the median time of the timed window and the size divided by it. Allocations: {apis}. "
        + records.measured_on(record.run)
        + "\n"
    )


def host_memory_figure() -> str:
    """Inline SVG: bytes per second against size for each way of getting host data into a kernel."""
    from gpukb.figures import new_figure, to_svg

    record = tables.host_memory_record()
    fig, ax = new_figure(7.0, 3.8)
    for method, label in tables.HOST_MEMORY_COLUMNS:
        points = sorted((row.bytes, row.gbps) for row in record.rows if row.method == method)
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes read by the kernel")
    ax.set_ylabel("size / time (GB/s)")
    ax.set_title("Host data into a kernel, by the way it gets there")
    ax.legend(fontsize=8)
    return to_svg(fig)


def host_memory_verdict() -> str:
    """What the host-memory table shows at its largest size, in words, with figures from the record."""
    s = tables.host_memory_summary()
    size = tables.kib(int(s["bytes"]))
    parts = [f"At {size}:"]
    named = {
        "pinned-copy": "a pinned copy alone moved {:.1f} GB/s",
        "pinned-copy-kernel": "copy plus kernel came to {:.1f} GB/s",
        "mapped-kernel": "the kernel reading mapped host memory {:.1f} GB/s",
        "managed-fault-kernel": "the kernel faulting managed pages in {:.1f} GB/s",
        "managed-prefetch-kernel": "prefetch plus kernel {:.1f} GB/s",
        "managed-resident-kernel": "and the kernel on the prefetched (resident) pages {:,.0f} GB/s",
    }
    parts.append(", ".join(text.format(s[m]) for m, text in named.items() if m in s) + ".")
    if "fault_over_prefetch" in s:
        parts.append(
            f"Letting the kernel fault the pages in took {s['fault_over_prefetch']:.1f}× as long as prefetching "
            "them first."
        )
    return " ".join(parts) + "\n"


def host_memory_methods() -> str:
    """What each timed window of the host-memory run holds."""
    return markdown_table(["method id", "the timed window"], [[f"`{k}`", v] for k, v in HOST_MEMORY_METHODS.items()])


_STAGE_COLOURS = {"H2D": "tab:blue", "kernel": "tab:orange", "D2H": "tab:green"}


def overlap_figure() -> str:
    """Inline SVG: the measured timeline of each variant, one lane per engine, bars from CUDA events."""
    from gpukb.figures import new_figure, to_svg

    record = tables.overlap_record()
    bounds = tables.overlap_bounds()
    n = len(record.variants)
    fig, _ = new_figure(8.0, 1.25 * n + 0.8)
    fig.clear()
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    stages = list(overlap.STAGES)
    for ax, v in zip(axes, record.variants, strict=True):
        lanes = overlap.engine_lanes([(o.op, o.chunk, o.start_ms, o.end_ms) for o in v.ops])
        for y, stage in enumerate(stages):
            for chunk, start, end in lanes[stage]:
                ax.broken_barh(
                    [(start, end - start)],
                    (len(stages) - 1 - y - 0.4, 0.8),
                    facecolor=_STAGE_COLOURS[stage],
                    edgecolor="white",
                    linewidth=0.6,
                )
                if v.chunks > 1 and end - start > 0.02 * bounds["sequential_ms"]:
                    ax.text((start + end) / 2, len(stages) - 1 - y, str(chunk), ha="center", va="center", fontsize=7)
        total = max(o.end_ms for o in v.ops)
        ax.axvline(total, color="grey", linestyle=":")
        ax.set_yticks(range(len(stages)), list(reversed(stages)), fontsize=8)
        ax.set_title(f"{v.name}: {total:.2f} ms", fontsize=9, loc="left")
        ax.grid(True, axis="x", alpha=0.3)
        if v.chunks > 1:
            ax.axvline(bounds["bound_ms"], color="tab:red", linestyle="--", label="ideal pipeline bound")
    axes[-1].legend(fontsize=7, loc="lower right")
    axes[-1].set_xlabel("ms after the common start event (bars: CUDA events; numbers: chunk)")
    fig.set_layout_engine("constrained")
    return to_svg(fig)


def overlap_timings() -> str:
    """The variants' totals, and where they were measured."""
    record = tables.overlap_record()
    return (
        markdown_table(*tables.overlap_table())
        + f"\n\nBuffer: {tables.kib(record.total_bytes)} of float32; kernel: {record.kernel}; "
        f"{record.variants[0].ms.n} runs of each. The device reports "
        f"`asyncEngineCount` = {record.async_engine_count}. " + records.measured_on(record.run) + "\n"
    )


def overlap_verdict() -> str:
    """Sequential against overlapped against the ideal bound, in words, from the record."""
    record = tables.overlap_record()
    b = tables.overlap_bounds()
    medians = {v.name: v.ms.median for v in record.variants}
    first = record.variants[0]
    best = min(record.variants, key=lambda v: medians[v.name])
    return (
        f"Issued whole on one stream the work took {medians[first.name]:.2f} ms; the fastest way, "
        f"{best.name}, took {medians[best.name]:.2f} ms ({medians[first.name] / medians[best.name]:.2f}× faster). "
        f"From the {b['chunks']} chunks' operations timed one at a time (the chunked one-stream run), the sum of "
        f"all operations is {b['sequential_ms']:.3f} ms (copies in {b['h2d_ms']:.3f} ms, kernels "
        f"{b['kernel_ms']:.3f} ms, copies out {b['d2h_ms']:.3f} ms), and the ideal bound for a pipeline of three "
        f"engines is {b['bound_ms']:.2f} ms: the fastest way reached {b['bound_ms'] / medians[best.name]:.0%} of "
        "the ideal speed.\n"
    )


def bytes_in_flight() -> str:
    """What each numba copy and vector add reached against torch's copy, in words, from the kernel record."""
    record = records.load(KERNELS_ID, KernelBench)
    rows = [r for r in record.rows if r.framework == "numba"]

    def ratio(group: str, kernel: str) -> str:
        """The ratio of the row named ``kernel`` (or, ending in ``*``, starting so)."""
        found = [
            r
            for r in rows
            if r.group == group and (r.kernel.startswith(kernel[:-1]) if kernel.endswith("*") else r.kernel == kernel)
        ]
        return ", ".join(f"{r.ratio:.2f}" for r in found) if found else "not measured"

    return (
        f"- One element per thread: copy {ratio('copy', 'copy, one element per thread')}, vector add "
        f"{ratio('vector add', 'one element per thread')} of torch's copy bandwidth.\n"
        "- Several elements per thread, each stored right after it is loaded (4, then 8 per thread): copy "
        f"{ratio('copy', 'copy, 4 elements per thread')} and {ratio('copy', 'copy, 8 elements per thread')}, "
        f"vector add {ratio('vector add', '4 elements per thread')} and "
        f"{ratio('vector add', '8 elements per thread')}.\n"
        "- All loads first, then the stores (4, then 8 per thread): copy "
        f"{ratio('copy', 'copy, 4 loads then 4 stores')} and {ratio('copy', 'copy, 8 loads then 8 stores')}, "
        f"vector add {ratio('vector add', '4 loads of each input, then 4 stores')} and "
        f"{ratio('vector add', '8 loads of each input, then 8 stores')}.\n"
        "- The same as 8-byte words (the float32 buffer viewed as float64, 4 loads first): copy "
        f"{ratio('copy', 'copy, 8-byte words, 4 loads then 4 stores')}.\n"
        "- Loads first in a grid-stride loop over 8 blocks of 256 threads per SM: copy "
        f"{ratio('copy', 'copy, 4 loads then 4 stores, grid-stride*')}, vector add "
        f"{ratio('vector add', '4 loads of each input then 4 stores, grid-stride*')}.\n"
    )


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.cuda.problems`)."""
    return problems_markdown(chapter_problems())


def hierarchy_figure() -> str:
    """Inline SVG: the memory hierarchy with the recorded H100's sizes and its measured and datasheet bandwidths."""
    return to_svg(figures.hierarchy_figure())


def launch_figure() -> str:
    """Inline SVG: an example launch from grid to blocks to warps to SMs, with its residency."""
    return to_svg(figures.launch_figure())


def occupancy_calculator(cc: str = "9.0") -> str:
    """The occupancy calculator: :func:`gpukb.cuda.occupancy.occupancy` computed in the browser, with every compute
    capability's limits exported from ``cuda/limits.toml``."""
    caps = [limits.capability(c) for c in reversed(limits.known())]
    data = {"capabilities": [c.model_dump(exclude={"sources"}) for c in caps]}
    fields = [
        Field("cc", "compute capability", "select", cc, [(c.cc, f"{c.cc}: {c.name}") for c in caps]),
        Field("threads", "threads per block", default="256"),
        Field("registers", "registers per thread", default="64", hint="cudaFuncAttributes::numRegs"),
        Field("static_shared", "static shared memory (bytes)", default="0"),
        Field("dynamic_shared", "dynamic shared memory (bytes)", default="16384"),
        Field("opt_in", "opted in above 48 KiB", "checkbox", "on", hint="cudaFuncAttributeMaxDynamicSharedMemorySize"),
        Field("carveout", "carveout preference (%)", hint="empty: the default (largest)"),
        Field("cluster_size", "cluster size", hint="empty: no cluster (9.0 only)"),
        Field("nonportable_cluster", "non-portable cluster size allowed", "checkbox"),
    ]
    return calculator_html("occupancy", "Occupancy of one kernel launch", fields, data)
