"""The performance chapter's page layer: every table (Markdown) and figure (inline SVG) its pages show.

The numbers come from committed ``gpukb bench`` sweeps, read by id through :mod:`gpukb.records`
(:data:`~gpukb.performance.results.H100_SWEEP` unless a page names another), the analysis in
:mod:`gpukb.performance.ceilings`, :mod:`gpukb.performance.roofline` and :mod:`gpukb.measuring.counting`, and
the datasheet table :mod:`gpukb.performance.specs`. Pages call these functions with no paths; ``gpukb bench`` prints
:func:`run_summary` after a run and for ``--show FILE``.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import numpy as np

from gpukb.calculators import Field, calculator_html
from gpukb.measuring.counting import ELEMENT_BYTES, element_bytes, intensity_examples
from gpukb.measuring.device import WindowClocks
from gpukb.measuring.stats import Summary
from gpukb.performance import layer_bound, specs
from gpukb.performance.ceilings import gemm_best, measured_ridge, quoted_ceilings, sweep
from gpukb.performance.problems import problems as chapter_problems
from gpukb.performance.quantities import QUANTITIES, reconcile
from gpukb.performance.results import GEMM_DTYPES, H100_CEILINGS, H100_SWEEP, CeilingsRecord, SweepRecord
from gpukb.performance.roofline import fraction, measured_points
from gpukb.performance.suites.gemm import row_alignment
from gpukb.problems import markdown as problems_markdown
from gpukb.records import clock_text, load
from gpukb.tables import markdown_table as table

Sweep = SweepRecord | str

STATUS_MARK = {"confirmed": "", "secondary": " †", "unconfirmed": " ?"}
#: The GPUs the datasheet page compares.
DATASHEET_GPUS = ("v100-sxm2", "a100-sxm4-40gb", "h100-sxm5", "h200-sxm", "b200-hgx", "mi300x")


def _num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


def _spread(ms: Summary | None) -> str:
    return "–" if ms is None else f"±{50 * ms.spread:.1f}%"


def _datasheet(record: SweepRecord) -> specs.Gpu | None:
    return specs.datasheet_for(record.run.gpu.name)


#: The header of a column of :func:`window_text` cells.
CLOCKS_HEADER = "SM MHz (min / median), W during the calls"


def window_text(clocks: WindowClocks | None) -> str:
    """The clocks sampled during a measurement's timed calls, as a table cell: ``"1485 / 1545 MHz, 767 W"``
    (the median power); a dash where none were sampled (runs recorded before clocks were)."""
    if clocks is None:
        return "–"
    power = "" if clocks.power_w_median is None else f", {clocks.power_w_median:.0f} W"
    return f"{clocks.sm_mhz_min:.0f} / {clocks.sm_mhz_median:.0f} MHz{power}"


# --- what the run was ---------------------------------------------------------------------------------------
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


def run_line(record: Sweep = H100_SWEEP) -> str:
    """One sentence naming a run: GPU, mode, how long the measuring took, the date and the command."""
    record = sweep(record)
    run = record.run
    duration = "an unrecorded time" if run.duration_s is None else f"{run.duration_s:.0f} s"
    return (
        f"{run.gpu.name}, {record.mode} mode: {duration} of measuring on {run.date.isoformat()} "
        f"(torch {run.versions.torch}, driver {run.gpu.driver or 'not readable'}), with `{run.command}`."
    )


def notes_list(record: Sweep = H100_SWEEP) -> str:
    """The suites' notes of a run (what each suite called and how), as a Markdown list."""
    return "\n".join(f"- {note}" for note in sweep(record).suite_notes())


# --- matrix products ----------------------------------------------------------------------------------------
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


# --- memory -------------------------------------------------------------------------------------------------
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
        rows.append((_size(r.bytes), f"{r.ms.median * 1e3:,.1f}", _num(r.gbps, 0), share))
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
    return table([f"element ({_size(nbytes)} per copy)", "bytes", "copy_ GB/s", "bitwise_not GB/s"], rows)


def host_device_table(record: Sweep = H100_SWEEP) -> str:
    """Host-device copy bandwidth by size, direction and kind of host memory."""
    cells: dict[int, dict[tuple[str, str], float]] = {}
    for r in sweep(record).host_device:
        cells.setdefault(r.bytes, {})[(r.direction, r.memory)] = r.gbps
    keys = [("h2d", "pageable"), ("h2d", "pinned"), ("d2h", "pageable"), ("d2h", "pinned")]
    rows = [(_size(n), *(_num(cells[n].get(k)) for k in keys)) for n in sorted(cells)]
    headers = ["copied", "host→device pageable", "host→device pinned", "device→host pageable", "device→host pinned"]
    return table(headers, rows)


# --- attention ----------------------------------------------------------------------------------------------
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


# --- mistakes -----------------------------------------------------------------------------------------------
def mistake_table(mistake: str, record: Sweep = H100_SWEEP) -> str:
    """One classic mistake next to the right way: median time, the rate it implies and its share of the
    datasheet ceiling (fp32 for the lab's fp32 product, bf16 for bf16 products, bandwidth for copies)."""
    record = sweep(record)
    gpu = _datasheet(record)
    rows = []
    for r in record.mistake(mistake):
        if gpu is None:
            ceiling = None
        elif r.unit == "GB/s":
            ceiling = gpu.figure("memory_bandwidth")
        else:
            ceiling = specs.datasheet_peak(gpu, "bf16" if "bf16" in r.variant else "fp32")
        share = "–" if ceiling is None else _pct(fraction(r.rate, ceiling.dense))
        rows.append((r.variant, f"{r.ms.median:,.4g}", f"{r.rate:,.4g} {r.unit}", share, r.ms.n, window_text(r.clocks)))
    headers = ["how it was timed", "median ms", "implied rate", "of datasheet ceiling", "samples", CLOCKS_HEADER]
    return table(headers, rows)


def one_run_table(record: Sweep = H100_SWEEP) -> str:
    """How far single timed calls land from the median of many."""
    rows = []
    for r in sweep(record).mistake("one_run"):
        samples = np.asarray(r.samples or [r.ms.median])
        median = float(np.median(samples))
        off = np.abs(samples - median) / median
        rows.append(
            (
                r.variant,
                len(samples),
                f"{median * 1e3:,.1f}",
                f"{samples.min() * 1e3:,.1f} – {samples.max() * 1e3:,.1f}",
                f"{np.percentile(samples, 5) * 1e3:,.1f} – {np.percentile(samples, 95) * 1e3:,.1f}",
                _pct(float((off > 0.05).mean())),
            )
        )
    headers = ["timed calls", "n", "median µs", "min – max µs", "5th – 95th percentile µs", "calls > 5% off"]
    return table(headers, rows)


# --- ceilings and datasheets --------------------------------------------------------------------------------
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


def spec_table(record: Sweep = H100_SWEEP, gpu_ids: Sequence[str] = DATASHEET_GPUS) -> str:
    """Datasheet figures of several GPUs, with the measured values of a run's GPU next to them."""
    measured = quoted_ceilings(record)
    record = sweep(record)
    sheet = specs.load()
    gpus = [sheet.gpu(g) for g in gpu_ids]
    gpu = record.run.gpu
    measured_of = {
        "sm_count": f"{gpu.sm_count}",
        "memory": f"{gpu.memory_bytes / 2**30:.1f} GiB",
        "l2_cache": f"{gpu.l2_bytes / 2**20:g} MiB",
        "memory_bandwidth": _num(measured.get("bandwidth"), 0),
        **{specs.GEMM_QUANTITY[d]: _num(measured.get(d)) for d in GEMM_DTYPES if d in measured},
    }
    rows = []
    for quantity, (unit, label) in specs.QUANTITIES.items():
        figures = [g.figure(quantity) for g in gpus]
        if all(f is None for f in figures):
            continue
        cells = ["–" if f is None else f"{f.dense:,g}{STATUS_MARK[f.status]}" for f in figures]
        rows.append((f"{label}{f' ({unit})' if unit else ''}", *cells, measured_of.get(quantity, "–")))
    headers = ["figure", *[g.name for g in gpus], f"measured on this {gpu.name}"]
    return table(headers, rows)


def spec_sources(gpu_ids: Sequence[str] = DATASHEET_GPUS) -> str:
    """Sources of the datasheet figures, the date checked, and where figures were read when not in the source."""
    sheet = specs.load()
    used = {f.source for g in gpu_ids for f in sheet.gpu(g).figures.values()}
    lines = [f"Checked {sheet.checked}. Sources:", ""]
    lines += [f"- [{s.title}]({s.url})" for sid, s in sorted(sheet.sources.items()) if sid in used]
    lines += ["", "Where the figures were read:", ""]
    lines += [f"- **{sheet.gpu(g).name}**: {sheet.gpu(g).evidence}" for g in gpu_ids]
    return "\n".join(lines)


def intensity_table(record: Sweep = H100_SWEEP) -> str:
    """The example operations' intensities and what limits each: on a V100 (datasheet FP16 tensor-core rate
    and bandwidth) and on the GPU of a run (its measured bf16 ceiling and copy bandwidth)."""
    v100_ridge = specs.datasheet_ridge(specs.load().gpu("v100-sxm2"), "fp16")
    h100_ridge = measured_ridge(quoted_ceilings(record), "bf16")
    rows = []
    for name, flops, nbytes in intensity_examples():
        intensity = flops / nbytes
        rows.append(
            (
                name,
                f"{flops:,}",
                f"{nbytes:,}",
                f"{intensity:,.2f}",
                "compute" if intensity > v100_ridge else "memory",
                "compute" if intensity > h100_ridge else "memory",
            )
        )
    headers = [
        "operation",
        "FLOPs",
        "bytes",
        "FLOP/B",
        f"limit on V100 (ridge {v100_ridge:.0f})",
        f"limit on this H100 (ridge {h100_ridge:.0f})",
    ]
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


# --- figures ------------------------------------------------------------------------------------------------
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


# --- one figure per quantity -------------------------------------------------------------------------------
def quantity(quantity_id: str, unit: bool = False) -> str:
    """A quantity's one figure (:func:`gpukb.performance.quantities.reconcile`) as inline HTML that marks what it is:
    ``<span class="gpukb-q" data-quantity="h100-cublas-bf16-8192">722</span>``. The site's tests check that
    every page gives one id one figure."""
    r = reconcile(quantity_id)
    shown = f"{r.text()} {r.quantity.unit}" if unit else r.text()
    return f'<span class="gpukb-q" data-quantity="{r.quantity.id}">{shown}</span>'


def quantity_sentence(quantity_id: str) -> str:
    """One sentence: the quantity, its figure, the spread of its runs and the SM clocks they ran at, and how it is
    timed."""
    r = reconcile(quantity_id)
    q = r.quantity
    digits = q.digits
    clocks = r.clock_range()
    if len(r.readings) == 1:
        clock = "" if clocks is None else f"; median SM clock {clocks[0]:.0f} MHz"
        runs = f"one run (`{r.readings[0].record_id}`{clock})"
    else:
        clock = "" if clocks is None else f"; the runs' median SM clocks {clocks[0]:.0f}–{clocks[1]:.0f} MHz"
        runs = (
            f"the median of {len(r.readings)} runs' medians (range {r.low:.{digits}f}–{r.high:.{digits}f}, a drift "
            f"of {100 * r.drift:.0f}%{clock})"
        )
    return f"{q.title}: **{quantity(quantity_id, unit=True)}**, {runs}. Timed by {q.method}."


def quantity_list(*quantity_ids: str) -> str:
    """A Markdown list of :func:`quantity_sentence` for each id."""
    return "\n".join(f"- {quantity_sentence(q)}" for q in quantity_ids)


def quantities_table() -> str:
    """Every quantity the pages quote: its figure, the range of its runs, how many, from which records."""
    rows = []
    for quantity_id, q in QUANTITIES.items():
        r = reconcile(quantity_id)
        clocks = r.clock_range()
        rows.append(
            (
                f"`{quantity_id}`",
                q.method,
                quantity(quantity_id, unit=True),
                f"{r.low:.{q.digits}f}–{r.high:.{q.digits}f} ({100 * r.drift:.0f}%)",
                len(r.readings),
                "–" if clocks is None else f"{clocks[0]:.0f}–{clocks[1]:.0f}",
                ", ".join(f"`{record_id}`" for record_id in r.records),
            )
        )
    headers = ["quantity", "method", "figure (median of runs)", "runs' range (drift)", "runs", "runs' median SM MHz",
               "records"]  # fmt: skip
    return table(headers, rows)


def quantity_runs(quantity_id: str) -> str:
    """Every run of one quantity: where it is recorded, its median, and the clocks during it."""
    r = reconcile(quantity_id)
    rows = [
        (f"`{x.record_id}`", x.where, f"{x.value:,.{r.quantity.digits}f}", window_text(x.clocks)) for x in r.readings
    ]
    return table(["record", "run", r.quantity.unit, CLOCKS_HEADER], rows)


# --- the flush and the clocks, in words ----------------------------------------------------------------------
def flush_effect(record: Sweep = H100_SWEEP) -> str:
    """What each L2 flush made of the work that fits in L2, from the ``l2_cache`` records: the warm cache, the
    read flush the harness uses and the write flush it replaced, as one sentence per case."""
    from gpukb.performance.suites.mistakes import FLUSHED, WRITE_FLUSHED

    record = sweep(record)
    by_case: dict[str, dict[str, object]] = {}
    for r in record.mistake("l2_cache"):
        what, how = r.variant.split(", ", 1)
        by_case.setdefault(what, {})[how] = r
    sentences = []
    for what, hows in by_case.items():
        warm = hows.get("cache warm (GPU kept busy between calls)")
        read, write = hows.get(FLUSHED), hows.get(WRITE_FLUSHED)
        if warm is None or read is None:
            continue
        text = (
            f"“{what}” ran at {warm.rate:,.0f} {warm.unit} with the cache warm and {read.rate:,.0f} after a "
            f"read flush, so the warm cache flattered it by {100 * (warm.rate / read.rate - 1):.0f}%"
        )
        if write is not None:
            text += (
                f"; after a write flush it measured {write.rate:,.0f}, {100 * (1 - write.rate / read.rate):.0f}% "
                "below the read-flushed figure: the cost of writing back the flush's own dirty lines"
            )
        sentences.append(text)
    if not sentences:
        return "This run has no L2 records."
    gpu = record.run.gpu.name if record.run.gpu else "the GPU"
    return f"On the {gpu} ({record.run.date.isoformat()}): " + "; ".join(sentences) + "."


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


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.performance.problems`)."""
    return problems_markdown(chapter_problems())


# --- the calculator ------------------------------------------------------------------------------------------


def _ceiling_figure(gpu: specs.Gpu, quantity: str) -> float:
    """A datasheet figure as :func:`~gpukb.performance.layer_bound.layer_bound` uses it: the dense rate, the
    bandwidth as published."""
    figure = gpu.figures[quantity]
    return figure.value if quantity == "memory_bandwidth" else figure.dense


def bound_calculator(gpu: str = "h100-sxm5", record: str = H100_SWEEP) -> str:
    """The bound of a layer: :func:`gpukb.performance.layer_bound.layer_bound` computed in the browser, with the
    datasheet figures exported from ``gpu_specs.toml`` and the measured ceilings from the committed sweep."""
    sheet = specs.load()
    quantities = [*specs.GEMM_QUANTITY.values(), "memory_bandwidth"]
    gpus = {
        g.id: {"name": g.name, "figures": {q: _ceiling_figure(g, q) for q in quantities if q in g.figures}}
        for g in sheet.gpus.values()
    }
    data = {
        "layers": {name: list(sizes) for name, sizes in layer_bound.LAYERS.items()},
        "dtypes": list(specs.GEMM_QUANTITY),
        "element_bytes": dict(ELEMENT_BYTES),
        "gemm_quantity": dict(specs.GEMM_QUANTITY),
        "quantity_labels": {q: specs.QUANTITIES[q][1] for q in quantities},
        "file": specs.FILE,
        "gpus": gpus,
        "measured": {"record": record, "ceilings": quoted_ceilings(record)},
    }
    gemm, conv, attention = ("gemm",), ("conv2d",), ("attention",)
    fields = [
        Field(
            "layer",
            "layer",
            "select",
            "gemm",
            [("gemm", "matrix product (GEMM)"), ("conv2d", "2-D convolution"), ("attention", "attention forward pass")],
        ),
        Field("dtype", "dtype", "select", "bf16", [(d, d) for d in specs.GEMM_QUANTITY]),
        Field("gpu", "GPU (datasheet)", "select", gpu, [(g.id, g.name) for g in sheet.gpus.values()]),
        Field("m", "m", default="4096", hint="rows of A and C", only=gemm),
        Field("n", "n", default="4096", hint="columns of B and C", only=gemm),
        Field("k", "k", default="4096", hint="the shared dimension", only=gemm),
        Field("conv_n", "n (batch)", default="1", only=conv),
        Field("c_in", "c_in", default="3", only=conv),
        Field("h", "h", default="416", only=conv),
        Field("w", "w", default="480", only=conv),
        Field("out_channels", "out_channels", default="16", only=conv),
        Field("kh", "kh", default="3", only=conv),
        Field("kw", "kw", default="3", only=conv),
        Field("stride", "stride", default="2", only=conv),
        Field("padding", "padding", default="1", only=conv),
        Field("bias", "bias", "checkbox", "on", only=conv),
        Field("batch", "batch", default="4", only=attention),
        Field("heads", "heads", default="32", only=attention),
        Field("kv_heads", "kv_heads", default="8", hint="empty: as many as heads", only=attention),
        Field("q_len", "q_len", default="4096", only=attention),
        Field("kv_len", "kv_len", default="4096", only=attention),
        Field("head_dim", "head_dim", default="128", only=attention),
        Field("causal", "causal", "checkbox", "on", only=attention),
    ]
    return calculator_html("bound", "The bound of one layer on one GPU", fields, data)
