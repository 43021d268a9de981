"""The page “Memory” (docs/cuda/memory.md): its tables, figures and text."""

from __future__ import annotations

from gpukb import records
from gpukb.cuda import banks, figures, overlap, tables
from gpukb.cuda.results import COPY_WIDTH_ID, HOST_MEMORY_METHODS, TRANSFERS_ID, CopyWidth, Transfers
from gpukb.figures import to_svg
from gpukb.tables import bytes_text, markdown_table


def memory_hierarchy() -> str:
    """The memory hierarchy with this GPU's sizes."""
    record = tables.device_record()
    name = record.properties["name"]
    return markdown_table(*tables.hierarchy_table()) + f"\n\nSizes as the CUDA runtime reported them on the {name}.\n"


def copy_width() -> str:
    """Copy throughput by element width, against torch's copy."""
    record = records.load(COPY_WIDTH_ID, CopyWidth)
    return (
        records.measured_table(
            *tables.copy_width_table(),
            record.run,
            f"Buffers of {bytes_text(record.buffer_bytes)}; torch's `copy_` of the same bytes: "
            f"{record.torch_copy_gbps:,.0f} GB/s. ",
        )
        + "\n"
    )


def transfers() -> str:
    """Host↔device bandwidth by transfer size, pageable against pinned."""
    record = records.load(TRANSFERS_ID, Transfers)
    # How the copies were timed decides what a small copy's time means: say it beside the table.
    (method,) = [note for note in record.run.notes if "host clock" in note]
    return (
        records.measured_table(
            *tables.transfers_table(), record.run, f"Timed as: {method[0].lower()}{method[1:]} Link: {record.link}. "
        )
        + "\n"
    )


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
        f"A {bytes_text(int(s['smallest_bytes']))} copy takes about {s['smallest_us']:.0f} µs either way, as the "
        "host sees it (launch and synchronization included): small copies cost their fixed overhead, so batch them "
        "into fewer, larger ones.\n"
    )


def bank_conflicts() -> str:
    """Passes a warp's shared-memory reads take, by access pattern (:mod:`gpukb.cuda.banks`)."""
    return markdown_table(*banks.patterns_table())


def host_memory() -> str:
    """A kernel reading host data by the four ways, by size: the table and where it was measured."""
    record = tables.host_memory_record()
    apis = "; ".join(f"{kind}: {api}" for kind, api in sorted(record.apis.items()))
    return (
        records.measured_table(
            *tables.host_memory_table(),
            record.run,
            f"Each cell: the median time of the timed window and the size divided by it. Allocations: {apis}. ",
        )
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
    size = bytes_text(int(s["bytes"]))
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
        records.measured_table(
            *tables.overlap_table(),
            record.run,
            f"Buffer: {bytes_text(record.total_bytes)} of float32; kernel: {record.kernel}; "
            f"{record.variants[0].ms.n} runs of each. The device reports "
            f"`asyncEngineCount` = {record.async_engine_count}. ",
        )
        + "\n"
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


def hierarchy_figure() -> str:
    """Inline SVG: the memory hierarchy with the recorded H100's sizes and its measured and datasheet bandwidths."""
    return to_svg(figures.hierarchy_figure())
