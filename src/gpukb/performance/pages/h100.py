"""The H100 page (docs/performance/h100.md): what the committed sweep measured (products, copies, attention, the
project's kernels) against the datasheet, and the figures. ``gpukb bench`` prints :func:`run_summary` after a run
and for ``--show FILE``.
"""

from __future__ import annotations

import statistics

import numpy as np

from gpukb.measuring.counting import element_bytes
from gpukb.measuring.stats import Summary
from gpukb.performance import specs
from gpukb.performance.ceilings import gemm_best, measured_ridge, quoted_ceilings, sweep
from gpukb.performance.pages import STATUS_MARK, Sweep, _datasheet, _num, _pct, quantity
from gpukb.performance.pages.measuring import mistake_table, one_run_table
from gpukb.performance.results import GEMM_DTYPES, H100_CEILINGS, H100_SWEEP, CeilingsRecord
from gpukb.performance.roofline import fraction, measured_points
from gpukb.performance.suites.gemm import row_alignment
from gpukb.records import clock_text, load
from gpukb.tables import bytes_text
from gpukb.tables import markdown_table as table


def _spread(ms: Summary | None) -> str:
    return "–" if ms is None else f"±{50 * ms.spread:.1f}%"


def meta_table(record: Sweep = H100_SWEEP) -> str:
    """The GPU, software, clocks, date and command of a run."""
    record = sweep(record)
    run, gpu = record.run, record.run.gpu
    rows = [
        ("GPU", gpu.name),
        ("SMs", gpu.sm_count),
        ("compute capability", gpu.compute_capability),
        ("memory", f"{gpu.memory_bytes / 2**30:.1f} GiB"),
        ("L2 cache", f"{gpu.l2_bytes / 2**20:g} MiB"),
        ("driver", gpu.driver or "not readable"),
        ("CUDA (torch build)", run.versions.torch_cuda or "none"),
        ("torch", run.versions.torch or "not installed"),
        ("triton", run.versions.triton or "not installed"),
        ("Python", run.versions.python),
        ("date (UTC)", run.started.isoformat() if run.started else run.date.isoformat()),
        ("mode", record.mode),
        ("duration", "not recorded" if run.duration_s is None else f"{run.duration_s:.0f} s"),
        ("command", f"`{run.command}`"),
    ]
    if "start" in run.clocks:
        rows.append(("clocks at start", clock_text(run.clocks["start"])))
        for key, reading in run.clocks.items():
            if key != "start":
                rows.append((f"clocks {key.replace('_', ' ')}", clock_text(reading)))
    else:
        rows.append(("clocks", "not readable"))
    return table(["item", "value"], rows)


def notes_list(record: Sweep = H100_SWEEP) -> str:
    """The suites' notes of a run (what each suite called and how), as a Markdown list."""
    return "\n".join(f"- {note}" for note in sweep(record).suite_notes())


def gemm_peaks(record: Sweep = H100_SWEEP) -> str:
    """Per element type: the best rate measured, its shape, and the fraction of the datasheet's dense peak."""
    record = sweep(record)
    gpu = _datasheet(record)
    best = gemm_best(record)
    errors = {r.dtype: r.rel_error for r in record.gemm if r.rel_error is not None}
    rows = []
    for dtype in GEMM_DTYPES:
        if dtype not in best:
            continue
        r = best[dtype]
        peak = specs.datasheet_peak(gpu, dtype)
        rows.append(
            (
                dtype,
                _num(r.tflops),
                f"{r.m}×{r.n}×{r.k}",
                _spread(r.ms),
                "–" if peak is None else _num(peak.dense) + STATUS_MARK[peak.status],
                "–" if peak is None else _pct(fraction(r.tflops, peak.dense)),
                "–" if dtype not in errors else f"{errors[dtype]:.1e}",
            )
        )
    headers = ["type", "best TFLOP/s", "at M×N×K", "spread", "datasheet TFLOP/s", "of datasheet", "rel. error"]
    return table(headers, rows)


def gemm_squares(record: Sweep = H100_SWEEP) -> str:
    """TFLOP/s of square products: one row per size, one column per element type."""
    grid: dict[int, dict[str, float | None]] = {}
    for r in sweep(record).gemm:
        if r.sweep == "square":
            grid.setdefault(r.m, {})[r.dtype] = r.tflops
    dtypes = [d for d in GEMM_DTYPES if any(d in row for row in grid.values())]
    rows = [(f"{n}", *(_num(grid[n].get(d)) for d in dtypes)) for n in sorted(grid)]
    return table(["N (M = N = K)", *dtypes], rows)


def alignment_table(record: Sweep = H100_SWEEP) -> str:
    """TFLOP/s of bf16 square products around 8192: sizes that are and are not multiples of 8 elements."""
    rows = [
        (
            f"{r.m}",
            "yes" if r.m % 8 == 0 else "no",
            f"{row_alignment(r.m, element_bytes(r.dtype))} B",
            _num(r.tflops),
            _spread(r.ms),
        )
        for r in sweep(record).gemm
        if r.sweep == "alignment"
    ]
    return table(["N (M = N = K, bf16)", "multiple of 8", "row alignment", "TFLOP/s", "spread"], rows)


def copy_sizes(record: Sweep = H100_SWEEP) -> str:
    """Bandwidth of ``copy_`` (a device-to-device memcpy) by size, L2 flushed before each call."""
    record = sweep(record)
    gpu = _datasheet(record)
    bw = None if gpu is None else gpu.figure("memory_bandwidth")
    rows = []
    seen = set()
    for r in record.copies:
        if r.method != "memcpy" or r.dtype != "uint8" or r.bytes in seen:
            continue
        seen.add(r.bytes)
        share = "–" if bw is None else _pct(fraction(r.gbps, bw.value))
        rows.append((bytes_text(r.bytes), f"{r.ms.median * 1e3:,.1f}", _num(r.gbps, 0), share))
    return table(["copied", "median µs", "GB/s (read + write)", "of datasheet bandwidth"], rows)


def copy_widths(record: Sweep = H100_SWEEP) -> str:
    """Bandwidth of the same number of bytes copied as 1-, 2-, 4- and 8-byte elements, two ways."""
    records = sweep(record).copies
    elementwise = [r for r in records if r.method == "elementwise"]
    if not elementwise:
        return "This run has no element-width measurements."
    nbytes = elementwise[0].bytes
    cells: dict[str, dict[str, float]] = {}
    for r in records:
        if r.bytes == nbytes:
            cells.setdefault(r.dtype, {})[r.method] = r.gbps
    rows = [
        (dtype, element_bytes(dtype), _num(cells[dtype].get("memcpy"), 0), _num(cells[dtype].get("elementwise"), 0))
        for dtype in ("uint8", "int16", "int32", "int64")
        if dtype in cells
    ]
    return table([f"element ({bytes_text(nbytes)} per copy)", "bytes", "copy_ GB/s", "bitwise_not GB/s"], rows)


def host_device_table(record: Sweep = H100_SWEEP) -> str:
    """Host-device copy bandwidth by size, direction and kind of host memory."""
    cells: dict[int, dict[tuple[str, str], float]] = {}
    for r in sweep(record).host_device:
        cells.setdefault(r.bytes, {})[(r.direction, r.memory)] = r.gbps
    keys = [("h2d", "pageable"), ("h2d", "pinned"), ("d2h", "pageable"), ("d2h", "pinned")]
    rows = [(bytes_text(n), *(_num(cells[n].get(k)) for k in keys)) for n in sorted(cells)]
    headers = ["copied", "host→device pageable", "host→device pinned", "device→host pageable", "device→host pinned"]
    return table(headers, rows)


def attention_table(head_dim: int = 128, causal: bool = False, record: Sweep = H100_SWEEP) -> str:
    """TFLOP/s of each SDPA backend by sequence length, for one head dimension and mask."""
    cells: dict[int, dict[str, str]] = {}
    for r in sweep(record).attention:
        if r.head_dim != head_dim or r.causal != causal:
            continue
        if r.tflops is not None:
            text = _num(r.tflops)
        else:
            text = "not run" if "not run" in (r.error or "") else "refused"
        cells.setdefault(r.seq, {})[r.backend] = text
    backends = ["flash", "efficient", "cudnn", "math"]
    rows = [(f"{s}", f"{16384 // s}", *(cells[s].get(b, "–") for b in backends)) for s in sorted(cells)]
    return table(["sequence", "batch", *backends], rows)


def attention_errors(record: Sweep = H100_SWEEP) -> str:
    """The distinct reasons backends refused a case, as a bullet list (empty when none refused)."""
    reasons: dict[str, list[str]] = {}
    for r in sweep(record).attention:
        if r.error and not r.error.startswith("not run"):
            case = f"{r.backend} s={r.seq} d={r.head_dim}{' causal' if r.causal else ''}"
            reasons.setdefault(r.error, []).append(case)
    return "\n".join(f"- `{err}` ({len(cases)} cases, e.g. {cases[0]})" for err, cases in reasons.items())


def h100_answer() -> str:
    """The page's answer in two sentences: the H100's copy and bf16/fp16 ceilings (the quoted figures, marked) as
    fractions of its datasheet's bandwidth and dense peak."""
    from gpukb.performance.ceilings import H100_CEILING_QUANTITIES

    gpu = _datasheet(sweep(H100_SWEEP))
    ceilings = quoted_ceilings(H100_SWEEP)
    bandwidth, peak = gpu.figure("memory_bandwidth"), specs.datasheet_peak(gpu, "bf16")
    return (
        f"It copies device memory at {quantity(H100_CEILING_QUANTITIES['bandwidth'], unit=True)} "
        f"({_pct(fraction(ceilings['bandwidth'], bandwidth.value))} of the datasheet's {bandwidth.value:,.0f} GB/s), "
        f"and cuBLAS multiplies dense bf16 matrices at {quantity(H100_CEILING_QUANTITIES['bf16'], unit=True)} and "
        f"fp16 at {quantity(H100_CEILING_QUANTITIES['fp16'], unit=True)} "
        f"({_pct(fraction(ceilings['bf16'], peak.dense))} and {_pct(fraction(ceilings['fp16'], peak.dense))} of "
        f"the dense peak of {peak.dense:,.1f} TFLOP/s the datasheet gives both). Small products, small copies and "
        "sizes that are not multiples of 8 fall far below these ceilings; the tables below show by how much.\n"
    )


def fp16_bf16_note() -> str:
    """What the interleaved ceilings run says about fp16 against bf16: the rate of each at both shapes, the
    median SM clock while each ran, and why the dense peak does not differ."""
    record = load(H100_CEILINGS, CeilingsRecord)

    def clock(dtype: str) -> float:
        return statistics.median(
            t.clocks.sm_mhz_median for t in record.timings if t.item.startswith(f"gemm-{dtype}-") and t.clocks
        )

    shapes = sorted({t.item.split("-", 2)[2] for t in record.timings if t.item.startswith("gemm-")})
    rates = {
        (d, shape): statistics.median(record.rates(f"gemm-{d}-{shape}")) for d in ("fp16", "bf16") for shape in shapes
    }
    ratios = ", ".join(
        f"{shape.replace('x', '×')}: bf16 {rates[('bf16', shape)]:.1f}, fp16 {rates[('fp16', shape)]:.1f} TFLOP/s"
        for shape in shapes
    )
    return (
        f"In every one of the {record.rounds} rounds bf16 ran a little faster than fp16 ({ratios}; medians of the "
        f"rounds). The median SM clock while the fp16 products ran was {clock('fp16'):.0f} MHz, against "
        f"{clock('bf16'):.0f} MHz for bf16: the H100 lowers its SM clock when it reaches its power limit, and the "
        "products ran at the clock the limit left them. NVIDIA's datasheet gives fp16 and bf16 one and the same dense "
        "tensor-core rate, so a few percent between them in one run is the clock and the operands, not the format's "
        "peak; pages that bound fp16 work use the fp16 figure and bf16 work the bf16 figure, both from this run.\n"
    )


def ceilings_table(record: Sweep = H100_SWEEP) -> str:
    """Measured ceilings next to the datasheet's, with the ridge point each pair implies."""
    measured = quoted_ceilings(record)
    record = sweep(record)
    gpu = _datasheet(record)
    sheet_bw = None if gpu is None else gpu.figure("memory_bandwidth")
    rows = []
    if "bandwidth" in measured:
        rows.append(
            (
                "memory bandwidth (GB/s)",
                _num(measured["bandwidth"], 0),
                "–" if sheet_bw is None else _num(sheet_bw.value, 0) + STATUS_MARK[sheet_bw.status],
                "–" if sheet_bw is None else _pct(fraction(measured["bandwidth"], sheet_bw.value)),
                "–",
                "–",
            )
        )
    for dtype in GEMM_DTYPES:
        if dtype not in measured:
            continue
        peak = specs.datasheet_peak(gpu, dtype)
        rows.append(
            (
                f"{dtype} matrix product (TFLOP/s)",
                _num(measured[dtype]),
                "–" if peak is None else _num(peak.dense) + STATUS_MARK[peak.status],
                "–" if peak is None else _pct(fraction(measured[dtype], peak.dense)),
                _num(measured_ridge(measured, dtype), 0),
                _num(specs.datasheet_ridge(gpu, dtype), 0),
            )
        )
    headers = ["ceiling", "measured", "datasheet", "of datasheet", "ridge, measured (FLOP/B)", "ridge, datasheet"]
    return table(headers, rows)


def kernels_table(record: Sweep = H100_SWEEP) -> str:
    """Each registered project kernel against its peer, or a sentence saying there are none yet."""
    records = sweep(record).kernels
    if not records:
        return "No project kernel was registered when this run was made, so there is nothing to compare yet."
    rows = [
        (r.name, r.peer, r.case, f"{r.kernel_ms.median:.4g}", f"{r.peer_ms.median:.4g}", f"{r.ratio:.2f}×")
        for r in records
    ]
    return table(["kernel", "peer", "case", "kernel ms", "peer ms", "speed vs peer"], rows)


def kernels_summary(record: Sweep = H100_SWEEP) -> str:
    """Per registered project kernel: its peer, how many cases it ran, and the geometric mean, lowest and highest of
    its speed against the peer (peer time over kernel time)."""
    by_name: dict[str, list] = {}
    for r in sweep(record).kernels:
        by_name.setdefault(r.name, []).append(r)
    if not by_name:
        return "No project kernel was registered when this run was made, so there is nothing to compare yet."
    rows = []
    for name, runs in by_name.items():
        low, high = min(runs, key=lambda r: r.ratio), max(runs, key=lambda r: r.ratio)
        geomean = float(np.exp(np.mean(np.log([r.ratio for r in runs]))))
        rows.append((name, runs[0].peer, str(len(runs)), f"{geomean:.2f}×", f"{low.ratio:.2f}× ({low.case})",
                     f"{high.ratio:.2f}× ({high.case})"))  # fmt: skip
    headers = ["kernel", "peer", "cases", "geometric mean speed vs peer", "lowest (case)", "highest (case)"]
    return table(headers, rows)


def kernels_against_peers(record: Sweep = H100_SWEEP) -> str:
    """The H100 page's "project kernels against their peers": the sweep's ``kernels`` table when it has one, else a
    sentence saying so and linking the Triton page, whose own run measured the Triton GEMM against cuBLAS on the
    same GPU (a measurement stated once, on its page). Links are written as the browser resolves them from
    ``/performance/h100/``: MkDocs does not rewrite links in markdown-exec output."""
    swept = sweep(record)
    if swept.kernels:
        return kernels_table(record)
    return (
        f"The `kernels` suite of this run ({swept.run.date.isoformat()}) had no project kernel to measure. The "
        "project's Triton GEMM was measured against cuBLAS on this H100 in a run of its own, with its clocks and "
        "power draw: see [A Triton GEMM](../../gemm/triton/). The [H200 run](#h200) below has it in its `kernels` "
        "suite."
    )


def run_summary(record: Sweep) -> str:
    """What ``gpukb bench`` prints after a run and ``--show`` prints for a file: the main tables."""
    record = sweep(record)
    parts = ["## Run", meta_table(record)]
    if record.gemm:
        parts += ["## Matrix products: best per type", gemm_peaks(record)]
    if record.copies:
        parts += ["## Device copies", copy_sizes(record), "", copy_widths(record)]
    if record.host_device:
        parts += ["## Host-device copies (GB/s)", host_device_table(record)]
    if record.attention:
        parts += ["## Attention, bf16, head dim 128, no mask (TFLOP/s)", attention_table(record=record)]
    for mistake in ("sync", "cold_start", "zeros", "idle_gpu", "l2_cache"):
        if record.mistake(mistake):
            parts += [f"## Mistake: {mistake}", mistake_table(mistake, record)]
    if record.mistake("one_run"):
        parts += ["## Mistake: one run", one_run_table(record)]
    if "kernels" in record.suites:
        parts += ["## Project kernels", kernels_table(record)]
    return "\n\n".join(parts)


def gemm_figure(record: Sweep = H100_SWEEP) -> str:
    """Inline SVG: TFLOP/s of square matrix products against N, one line per element type."""
    from gpukb.figures import new_figure, to_svg

    record = sweep(record)
    fig, ax = new_figure()
    for dtype in GEMM_DTYPES:
        points = sorted(
            (r.m, r.tflops) for r in record.gemm if r.dtype == dtype and r.sweep == "square" and r.tflops is not None
        )
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", label=dtype)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("N (M = N = K)")
    ax.set_ylabel("TFLOP/s (median)")
    ax.set_title(f"Matrix products on {record.run.gpu.name}")
    ax.legend()
    return to_svg(fig)


def copy_figure(record: Sweep = H100_SWEEP) -> str:
    """Inline SVG: device copy bandwidth against size, with the datasheet bandwidth."""
    from gpukb.figures import new_figure, to_svg

    record = sweep(record)
    gpu = _datasheet(record)
    fig, ax = new_figure()
    points = sorted({(r.bytes, r.gbps) for r in record.copies if r.method == "memcpy" and r.dtype == "uint8"})
    if points:
        ax.plot(*zip(*points, strict=True), marker="o", label="copy_ (memcpy), L2 flushed")
    bw = None if gpu is None else gpu.figure("memory_bandwidth")
    if bw is not None:
        ax.axhline(bw.value, linestyle="--", color="grey", label=f"datasheet {bw.value:g} GB/s")
    l2 = record.run.gpu.l2_bytes
    if l2:
        ax.axvline(l2, linestyle=":", color="grey", label="L2 size")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes copied")
    ax.set_ylabel("GB/s (read + write)")
    ax.set_title("Device memory copies")
    ax.legend()
    return to_svg(fig)


def roofline_figure(record: Sweep = H100_SWEEP) -> str:
    """Inline SVG: measured and datasheet rooflines (bf16 and fp32), with the measured operations on them."""
    from gpukb.figures import new_figure, to_svg

    measured = quoted_ceilings(record)
    record = sweep(record)
    gpu = _datasheet(record)
    fig, ax = new_figure(7.0, 4.8)
    x = np.logspace(-1, 4, 200)
    bandwidth = measured.get("bandwidth")
    for dtype, colour in (("bf16", "tab:blue"), ("fp32", "tab:orange")):
        if dtype in measured and bandwidth:
            ax.plot(x, np.minimum(measured[dtype], bandwidth * x / 1e3), color=colour, label=f"measured roof, {dtype}")
        peak = specs.datasheet_peak(gpu, dtype)
        sheet_bw = None if gpu is None else gpu.figure("memory_bandwidth")
        if peak is not None and sheet_bw is not None:
            ax.plot(
                x,
                np.minimum(peak.dense, sheet_bw.value * x / 1e3),
                color=colour,
                linestyle="--",
                label=f"datasheet roof, {dtype}",
            )
    points = measured_points(record)
    for group, marker, label in (
        ("gemm", "o", "bf16 GEMM (square sizes)"),
        ("attention", "s", "flash attention, d=128"),
        ("kernel", "*", "project kernels"),
    ):
        pts = [(p.intensity, p.tflops) for p in points if p.group == group]
        if pts:
            ax.scatter(*zip(*pts, strict=True), marker=marker, zorder=3, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte of device memory)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"Roofline of {record.run.gpu.name}")
    ax.legend(fontsize=8, loc="lower right")
    return to_svg(fig)


def sustained_clocks(record: Sweep = H100_SWEEP, dtype: str = "bf16") -> str:
    """The SM clock and power sampled during the timed calls of the smallest and the largest square products of
    one type: what a sustained load did to the clock, in one sentence."""
    record = sweep(record)
    rows = [r for r in record.gemm if r.dtype == dtype and r.sweep == "square" and r.clocks is not None]
    if not rows:
        return "This run sampled no clocks during its timed calls (runs recorded before the harness did)."
    start = record.run.clocks.get("start")
    top = start.max_sm_mhz if start is not None and start.max_sm_mhz else max(r.clocks.sm_mhz_median for r in rows)
    limit = start.power_limit_w if start is not None else None
    small, large = min(rows, key=lambda r: r.m), max(rows, key=lambda r: r.m)
    lowest = min(rows, key=lambda r: r.clocks.sm_mhz_median)

    def at(r) -> str:
        power = "" if r.clocks.power_w_median is None else f" drawing {r.clocks.power_w_median:.0f} W"
        return f"{r.m}³ at a median {r.clocks.sm_mhz_median:.0f} MHz{power}"

    text = (
        f"During the timed calls of the {dtype} squares the SM clock (maximum {top:.0f} MHz) ran {at(small)}, and "
        f"{at(large)}; the lowest median was {lowest.clocks.sm_mhz_median:.0f} MHz, at {lowest.m}³. Small products "
        "run at the peak clock; long ones hold the board at its power limit, where the clock drops."
    )
    powers = [r.clocks.power_w_median for r in rows if r.clocks.power_w_median is not None]
    if limit and powers and max(powers) > limit:
        text += (
            f" The limit is {limit:.0f} W; the readings above it are NVML's instantaneous power, which overshoots "
            "a limit the board enforces on average."
        )
    return text


def flush_note(record: Sweep = H100_SWEEP) -> str:
    """How a run flushed L2, in one sentence, with what that means for its figures."""
    record = sweep(record)
    if record.l2_flush == "read":
        return (
            "This run flushed L2 by reading a buffer four times its size, which leaves clean lines, and sampled the "
            "SM clock and power during every measurement."
        )
    return (
        "This run predates the read flush: L2 was flushed by writing a buffer, which leaves dirty lines that the "
        "next timed call writes back, so its figures for work that fits in L2 (small copies and products) read "
        "low; see [caches that flatter](../measuring/#caches-that-flatter). No clocks were sampled during its "
        "timed calls."
    )
