"""Tables and figures rendered from results files when the site is built (and by ``gpukb bench --show``).

Every number on the performance pages comes from here: a committed results file under ``bench/results/`` and
the datasheet table ``gpukb/data/gpu_specs.toml``. Functions take a results file's name (looked up under
``bench/results/``), a path, or already-loaded results, and return Markdown (tables) or inline SVG (figures).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from gpukb.bench import specs
from gpukb.bench.counting import attention_bytes, attention_flops, element_bytes, gemm_bytes, gemm_flops
from gpukb.bench.results import GEMM_DTYPES, committed, load_results, validate
from gpukb.bench.roofline import fraction
from gpukb.bench.stats import Summary
from gpukb.tables import markdown_table as table

Source = str | Path | Mapping

#: Below this size a copy is not used as the bandwidth ceiling (launch overhead dominates small copies).
CEILING_MIN_BYTES = 2**28
STATUS_MARK = {"confirmed": "", "secondary": " †", "unconfirmed": " ?"}


def data(source: Source) -> dict:
    """Load results from a committed file's name, a path, or a mapping (validated in every case)."""
    if isinstance(source, Mapping):
        return validate(source)
    path = Path(source)
    return load_results(path if path.is_file() else committed(str(source)))


def _num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


def _spread(ms: Mapping | None) -> str:
    return "–" if ms is None else f"±{50 * Summary.from_dict(ms).spread:.1f}%"


def spec_for(results: Mapping) -> specs.Gpu | None:
    """The datasheet entry of the GPU a results file was measured on, or ``None``."""
    return specs.load().for_device(results["meta"]["gpu"])


# --- what the run was ---------------------------------------------------------------------------------------
def meta_table(source: Source) -> str:
    """The GPU, software, clocks, date and command of a run."""
    meta = data(source)["meta"]
    clocks = meta["clocks"] or {}
    start = clocks.get("start") or {}
    rows = [
        ("GPU", meta["gpu"]),
        ("SMs", meta["sm_count"]),
        ("compute capability", meta["compute_capability"]),
        ("memory", f"{meta['memory_bytes'] / 2**30:.1f} GiB"),
        ("L2 cache", f"{meta['l2_bytes'] / 2**20:g} MiB"),
        ("driver", meta["driver"] or "not readable"),
        ("CUDA (torch build)", meta["cuda"] or "none"),
        ("torch", meta["torch"]),
        ("triton", meta["triton"] or "not installed"),
        ("Python", meta["python"]),
        ("date (UTC)", meta["date"]),
        ("mode", meta["mode"]),
        ("duration", f"{meta['duration_s']:.0f} s"),
        ("command", f"`{meta['command']}`"),
    ]
    if start:
        rows.append(("clocks at start", _clock_text(start)))
        later = [k for k in clocks if k != "start" and clocks[k]]
        for key in later:
            rows.append((f"clocks {key.replace('_', ' ')}", _clock_text(clocks[key])))
    else:
        rows.append(("clocks", "not readable"))
    return table(["item", "value"], rows)


def run_line(source: Source) -> str:
    """One sentence naming a run: GPU, mode, how long the measuring took, the date and the command."""
    meta = data(source)["meta"]
    return (
        f"{meta['gpu']}, {meta['mode']} mode: {meta['duration_s']:.0f} s of measuring on {meta['date'][:10]} "
        f"(torch {meta['torch']}, driver {meta['driver'] or 'not readable'}), with `{meta['command']}`."
    )


def notes_list(source: Source) -> str:
    """The run's notes (what each suite called and how), as a Markdown list."""
    return "\n".join(f"- {note}" for note in data(source)["meta"]["notes"])


def _clock_text(c: Mapping) -> str:
    def get(key: str, unit: str) -> str:
        value = c.get(key)
        return f"{value:g} {unit}" if isinstance(value, float) else str(value)

    return (
        f"SM {get('clocks.sm', 'MHz')} (max {get('clocks.max.sm', 'MHz')}), memory {get('clocks.mem', 'MHz')}, "
        f"{get('power.draw', 'W')} of {get('power.limit', 'W')}, {get('temperature.gpu', '°C')}, {c.get('pstate')}"
    )


# --- matrix products ----------------------------------------------------------------------------------------
def gemm_best(results: Mapping) -> dict[str, dict]:
    """The fastest measured record per element type (the maximum achievable matmul rate)."""
    best: dict[str, dict] = {}
    for record in results.get("gemm", []):
        if record["tflops"] is None:
            continue
        if record["dtype"] not in best or record["tflops"] > best[record["dtype"]]["tflops"]:
            best[record["dtype"]] = record
    return best


def datasheet_peak(gpu: specs.Gpu | None, dtype: str) -> specs.Figure | None:
    """The datasheet figure that bounds a matrix product of ``dtype`` on ``gpu``, if the table has it."""
    return None if gpu is None else gpu.figure(specs.GEMM_QUANTITY[dtype])


def gemm_peaks(source: Source) -> str:
    """Per element type: the best rate measured, its shape, and the fraction of the datasheet's dense peak."""
    results = data(source)
    gpu = spec_for(results)
    best = gemm_best(results)
    errors = {r["dtype"]: r["rel_error"] for r in results.get("gemm", []) if r.get("rel_error") is not None}
    rows = []
    for dtype in GEMM_DTYPES:
        if dtype not in best:
            continue
        record = best[dtype]
        peak = datasheet_peak(gpu, dtype)
        rows.append(
            (
                dtype,
                _num(record["tflops"]),
                f"{record['m']}×{record['n']}×{record['k']}",
                _spread(record["ms"]),
                "–" if peak is None else _num(peak.dense) + STATUS_MARK[peak.status],
                "–" if peak is None else _pct(fraction(record["tflops"], peak.dense)),
                "–" if dtype not in errors else f"{errors[dtype]:.1e}",
            )
        )
    headers = ["type", "best TFLOP/s", "at M×N×K", "spread", "datasheet TFLOP/s", "of datasheet", "rel. error"]
    return table(headers, rows)


def gemm_squares(source: Source) -> str:
    """TFLOP/s of square products: one row per size, one column per element type."""
    results = data(source)
    grid: dict[int, dict[str, float | None]] = {}
    for r in results.get("gemm", []):
        if r["sweep"] == "square":
            grid.setdefault(r["m"], {})[r["dtype"]] = r["tflops"]
    dtypes = [d for d in GEMM_DTYPES if any(d in row for row in grid.values())]
    rows = [(f"{n}", *(_num(grid[n].get(d)) for d in dtypes)) for n in sorted(grid)]
    return table(["N (M = N = K)", *dtypes], rows)


def row_alignment(elements: int, elem_bytes: int) -> int:
    """The largest power of two, up to 16 bytes, that divides a row of ``elements`` elements."""
    nbytes = elements * elem_bytes
    return next(d for d in (16, 8, 4, 2, 1) if nbytes % d == 0)


def alignment_table(source: Source) -> str:
    """TFLOP/s of bf16 square products around 8192: sizes that are and are not multiples of 8 elements."""
    rows = [
        (
            f"{r['m']}",
            "yes" if r["m"] % 8 == 0 else "no",
            f"{row_alignment(r['m'], 2)} B",
            _num(r["tflops"]),
            _spread(r["ms"]),
        )
        for r in data(source).get("gemm", [])
        if r["sweep"] == "alignment"
    ]
    return table(["N (M = N = K, bf16)", "multiple of 8", "row alignment", "TFLOP/s", "spread"], rows)


# --- memory -------------------------------------------------------------------------------------------------
def copy_ceiling(results: Mapping) -> float | None:
    """The measured device-memory ceiling: the fastest large copy, GB/s (bytes read plus written)."""
    rates = [r["gbps"] for r in results.get("copy", []) if r["bytes"] >= CEILING_MIN_BYTES]
    return max(rates) if rates else None


def copy_sizes(source: Source) -> str:
    """Bandwidth of ``copy_`` (a device-to-device memcpy) by size, L2 flushed before each call."""
    results = data(source)
    gpu = spec_for(results)
    bw = None if gpu is None else gpu.figure("memory_bandwidth")
    rows = []
    seen = set()
    for r in results.get("copy", []):
        if r["method"] != "memcpy" or r["dtype"] != "uint8" or r["bytes"] in seen:
            continue
        seen.add(r["bytes"])
        share = "–" if bw is None else _pct(fraction(r["gbps"], bw.value))
        rows.append((_size(r["bytes"]), f"{r['ms']['median'] * 1e3:,.1f}", _num(r["gbps"], 0), share))
    return table(["copied", "median µs", "GB/s (read + write)", "of datasheet bandwidth"], rows)


def copy_widths(source: Source) -> str:
    """Bandwidth of the same number of bytes copied as 1-, 2-, 4- and 8-byte elements, two ways."""
    records = data(source).get("copy", [])
    elementwise = [r for r in records if r["method"] == "elementwise"]
    if not elementwise:
        return "This run has no element-width measurements."
    nbytes = elementwise[0]["bytes"]
    cells: dict[str, dict[str, float]] = {}
    for r in records:
        if r["bytes"] == nbytes:
            cells.setdefault(r["dtype"], {})[r["method"]] = r["gbps"]
    rows = [
        (dtype, element_bytes(dtype), _num(cells[dtype].get("memcpy"), 0), _num(cells[dtype].get("elementwise"), 0))
        for dtype in ("uint8", "int16", "int32", "int64")
        if dtype in cells
    ]
    return table([f"element ({_size(nbytes)} per copy)", "bytes", "copy_ GB/s", "bitwise_not GB/s"], rows)


def host_device_table(source: Source) -> str:
    """Host-device copy bandwidth by size, direction and kind of host memory."""
    results = data(source)
    cells: dict[int, dict[tuple[str, str], float]] = {}
    for r in results.get("host_device", []):
        cells.setdefault(r["bytes"], {})[(r["direction"], r["memory"])] = r["gbps"]
    keys = [("h2d", "pageable"), ("h2d", "pinned"), ("d2h", "pageable"), ("d2h", "pinned")]
    rows = [(_size(n), *(_num(cells[n].get(k)) for k in keys)) for n in sorted(cells)]
    headers = ["copied", "host→device pageable", "host→device pinned", "device→host pageable", "device→host pinned"]
    return table(headers, rows)


# --- attention ----------------------------------------------------------------------------------------------
def attention_table(source: Source, head_dim: int = 128, causal: bool = False) -> str:
    """TFLOP/s of each SDPA backend by sequence length, for one head dimension and mask."""
    results = data(source)
    cells: dict[int, dict[str, str]] = {}
    for r in results.get("attention", []):
        if r["head_dim"] != head_dim or r["causal"] != causal:
            continue
        text = (
            _num(r["tflops"])
            if r["tflops"] is not None
            else "refused"
            if "not run" not in (r.get("error") or "")
            else "not run"
        )
        cells.setdefault(r["seq"], {})[r["backend"]] = text
    backends = ["flash", "efficient", "cudnn", "math"]
    rows = [(f"{s}", f"{16384 // s}", *(cells[s].get(b, "–") for b in backends)) for s in sorted(cells)]
    return table(["sequence", "batch", *backends], rows)


def attention_errors(source: Source) -> str:
    """The distinct reasons backends refused a case, as a bullet list (empty when none refused)."""
    reasons: dict[str, list[str]] = {}
    for r in data(source).get("attention", []):
        if r.get("error") and not r["error"].startswith("not run"):
            case = f"{r['backend']} s={r['seq']} d={r['head_dim']}{' causal' if r['causal'] else ''}"
            reasons.setdefault(r["error"], []).append(case)
    return "\n".join(f"- `{err}` ({len(cases)} cases, e.g. {cases[0]})" for err, cases in reasons.items())


# --- mistakes -----------------------------------------------------------------------------------------------
def mistakes(results: Mapping, mistake: str) -> list[dict]:
    """The records of one mistake, in the order measured."""
    return [r for r in results.get("mistakes", []) if r["mistake"] == mistake]


def mistake_table(source: Source, mistake: str) -> str:
    """One classic mistake next to the right way: median time, the rate it implies and its share of the
    datasheet ceiling (fp32 for the lab's fp32 product, bf16 for bf16 products, bandwidth for copies)."""
    results = data(source)
    gpu = spec_for(results)
    rows = []
    for r in mistakes(results, mistake):
        if gpu is None:
            ceiling = None
        elif r["unit"] == "GB/s":
            ceiling = gpu.figure("memory_bandwidth")
        else:
            ceiling = datasheet_peak(gpu, "bf16" if "bf16" in r["variant"] else "fp32")
        share = "–" if ceiling is None else _pct(fraction(r["rate"], ceiling.dense))
        rows.append((r["variant"], f"{r['ms']['median']:,.4g}", f"{r['rate']:,.4g} {r['unit']}", share, r["ms"]["n"]))
    return table(["how it was timed", "median ms", "implied rate", "of datasheet ceiling", "samples"], rows)


def one_run_table(source: Source) -> str:
    """How far single timed calls land from the median of many."""
    rows = []
    for r in mistakes(data(source), "one_run"):
        samples = np.asarray(r.get("samples") or [r["ms"]["median"]])
        median = float(np.median(samples))
        off = np.abs(samples - median) / median
        rows.append(
            (
                r["variant"],
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
def ceilings(results: Mapping) -> dict[str, float]:
    """Measured ceilings: ``<dtype>`` in TFLOP/s (best matrix product) and ``bandwidth`` in GB/s."""
    out = {dtype: record["tflops"] for dtype, record in gemm_best(results).items()}
    bw = copy_ceiling(results)
    if bw is not None:
        out["bandwidth"] = bw
    return out


def ceilings_table(source: Source) -> str:
    """Measured ceilings next to the datasheet's, with the ridge point each pair implies."""
    results = data(source)
    gpu = spec_for(results)
    measured = ceilings(results)
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
        peak = datasheet_peak(gpu, dtype)
        ridge_measured = measured[dtype] * 1e3 / measured["bandwidth"] if "bandwidth" in measured else None
        ridge_sheet = None if peak is None or sheet_bw is None else peak.dense * 1e3 / sheet_bw.value
        rows.append(
            (
                f"{dtype} matrix product (TFLOP/s)",
                _num(measured[dtype]),
                "–" if peak is None else _num(peak.dense) + STATUS_MARK[peak.status],
                "–" if peak is None else _pct(fraction(measured[dtype], peak.dense)),
                _num(ridge_measured, 0),
                _num(ridge_sheet, 0),
            )
        )
    headers = ["ceiling", "measured", "datasheet", "of datasheet", "ridge, measured (FLOP/B)", "ridge, datasheet"]
    return table(headers, rows)


def spec_table(source: Source, gpu_ids: Sequence[str] = ("v100-sxm2", "a100-sxm4-40gb", "h100-sxm5")) -> str:
    """Datasheet figures of several GPUs, with the H100's measured values next to them."""
    results = data(source)
    table_ = specs.load()
    gpus = [table_.gpu(g) for g in gpu_ids]
    measured = ceilings(results)
    meta = results["meta"]
    measured_of = {
        "sm_count": f"{meta['sm_count']}",
        "memory": f"{meta['memory_bytes'] / 2**30:.1f} GiB",
        "l2_cache": f"{meta['l2_bytes'] / 2**20:g} MiB",
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
    headers = ["figure", *[g.name for g in gpus], f"measured on this {meta['gpu']}"]
    return table(headers, rows)


def spec_sources(gpu_ids: Sequence[str] = ("v100-sxm2", "a100-sxm4-40gb", "h100-sxm5")) -> str:
    """Sources of the datasheet figures, the date checked, and where figures were read when not in the source."""
    table_ = specs.load()
    used = {f.source for g in gpu_ids for f in table_.gpu(g).figures.values()}
    lines = [f"Checked {table_.checked}. Sources:", ""]
    lines += [f"- [{s.title}]({s.url})" for sid, s in sorted(table_.sources.items()) if sid in used]
    lines += ["", "Where the figures were read:", ""]
    lines += [f"- **{table_.gpu(g).name}**: {table_.gpu(g).evidence}" for g in gpu_ids]
    return "\n".join(lines)


def intensity_examples() -> list[tuple[str, int, int]]:
    """The operations of the notes' table of arithmetic intensities (FP16 data), as (name, FLOPs, bytes) counted
    from each operation's definition."""
    linear = [(512, "batch 512"), (1, "batch 1")]
    rows = [
        (f"linear layer, 1024 → 4096, {label}", gemm_flops(m, 4096, 1024), gemm_bytes(m, 4096, 1024, 2))
        for m, label in linear
    ]
    rows.append(("3×3 max pooling, unit stride (per output)", 9, 2 + 2))
    rows.append(("ReLU (per element)", 1, 2 + 2))
    return rows


def intensity_table(source: Source) -> str:
    """The example operations' intensities and what limits each: on a V100 (datasheet FP16 tensor-core rate
    and bandwidth) and on the H100 of a results file (measured bf16 ceiling and copy bandwidth)."""
    results = data(source)
    v100 = specs.load().gpu("v100-sxm2")
    v100_ridge = v100.figure("fp16_tensor").dense * 1e3 / v100.figure("memory_bandwidth").value
    measured = ceilings(results)
    h100_ridge = measured["bf16"] * 1e3 / measured["bandwidth"]
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


def kernels_table(source: Source) -> str:
    """Each registered project kernel against its peer, or a sentence saying there are none yet."""
    records = data(source).get("kernels", [])
    if not records:
        return "No project kernel was registered when this run was made, so there is nothing to compare yet."
    rows = [
        (
            r["name"],
            r["peer"],
            r["case"],
            f"{r['kernel_ms']['median']:.4g}",
            f"{r['peer_ms']['median']:.4g}",
            f"{r['ratio']:.2f}×",
        )
        for r in records
    ]
    return table(["kernel", "peer", "case", "kernel ms", "peer ms", "speed vs peer"], rows)


def summary(source: Source) -> str:
    """What ``gpukb bench`` prints after a run and ``--show`` prints for a file: the main tables."""
    results = data(source)
    parts = ["## Run", meta_table(results)]
    if results.get("gemm"):
        parts += ["## Matrix products: best per type", gemm_peaks(results)]
    if results.get("copy"):
        parts += ["## Device copies", copy_sizes(results), "", copy_widths(results)]
    if results.get("host_device"):
        parts += ["## Host-device copies (GB/s)", host_device_table(results)]
    if results.get("attention"):
        parts += ["## Attention, bf16, head dim 128, no mask (TFLOP/s)", attention_table(results)]
    for mistake in ("sync", "cold_start", "zeros", "idle_gpu", "l2_cache"):
        if mistakes(results, mistake):
            parts += [f"## Mistake: {mistake}", mistake_table(results, mistake)]
    if mistakes(results, "one_run"):
        parts += ["## Mistake: one run", one_run_table(results)]
    if "kernels" in results["meta"]["suites"]:
        parts += ["## Project kernels", kernels_table(results)]
    return "\n\n".join(parts)


# --- figures ------------------------------------------------------------------------------------------------
def gemm_figure(source: Source) -> str:
    """Inline SVG: TFLOP/s of square matrix products against N, one line per element type."""
    from gpukb.figures import new_figure, to_svg

    results = data(source)
    fig, ax = new_figure()
    for dtype in GEMM_DTYPES:
        points = sorted(
            (r["m"], r["tflops"])
            for r in results.get("gemm", [])
            if r["dtype"] == dtype and r["sweep"] == "square" and r["tflops"] is not None
        )
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", label=dtype)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("N (M = N = K)")
    ax.set_ylabel("TFLOP/s (median)")
    ax.set_title(f"Matrix products on {results['meta']['gpu']}")
    ax.legend()
    return to_svg(fig)


def copy_figure(source: Source) -> str:
    """Inline SVG: device copy bandwidth against size, with the datasheet bandwidth."""
    from gpukb.figures import new_figure, to_svg

    results = data(source)
    gpu = spec_for(results)
    fig, ax = new_figure()
    points = sorted(
        {(r["bytes"], r["gbps"]) for r in results.get("copy", []) if r["method"] == "memcpy" and r["dtype"] == "uint8"}
    )
    if points:
        ax.plot(*zip(*points, strict=True), marker="o", label="copy_ (memcpy), L2 flushed")
    bw = None if gpu is None else gpu.figure("memory_bandwidth")
    if bw is not None:
        ax.axhline(bw.value, linestyle="--", color="grey", label=f"datasheet {bw.value:g} GB/s")
    l2 = results["meta"]["l2_bytes"]
    if l2:
        ax.axvline(l2, linestyle=":", color="grey", label="L2 size")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes copied")
    ax.set_ylabel("GB/s (read + write)")
    ax.set_title("Device memory copies")
    ax.legend()
    return to_svg(fig)


def roofline_points(results: Mapping) -> list[tuple[str, float, float]]:
    """Measured operations placed on the roofline: (label, FLOP per byte, TFLOP/s)."""
    points = []
    for r in results.get("gemm", []):
        if r["sweep"] == "square" and r["dtype"] == "bf16" and r["tflops"] is not None:
            intensity = gemm_flops(r["m"], r["n"], r["k"]) / gemm_bytes(r["m"], r["n"], r["k"], 2)
            points.append((f"bf16 GEMM {r['m']}", intensity, r["tflops"]))
    for r in results.get("attention", []):
        if r["backend"] == "flash" and r["tflops"] is not None and r["head_dim"] == 128 and not r["causal"]:
            args = (r["batch"], r["heads"], r["seq"], r["seq"], r["head_dim"])
            intensity = attention_flops(*args) / attention_bytes(*args, 2)
            points.append((f"flash attention s={r['seq']}", intensity, r["tflops"]))
    for r in results.get("kernels", []):
        if r["flops"] and r["bytes"]:
            points.append((r["name"], r["flops"] / r["bytes"], r["flops"] / (r["kernel_ms"]["median"] * 1e-3) / 1e12))
    return points


def roofline_figure(source: Source) -> str:
    """Inline SVG: measured and datasheet rooflines (bf16 and fp32), with the measured operations on them."""
    from gpukb.figures import new_figure, to_svg

    results = data(source)
    gpu = spec_for(results)
    measured = ceilings(results)
    fig, ax = new_figure(7.0, 4.8)
    x = np.logspace(-1, 4, 200)
    bandwidth = measured.get("bandwidth")
    for dtype, colour in (("bf16", "tab:blue"), ("fp32", "tab:orange")):
        if dtype in measured and bandwidth:
            ax.plot(x, np.minimum(measured[dtype], bandwidth * x / 1e3), color=colour, label=f"measured roof, {dtype}")
        peak = datasheet_peak(gpu, dtype)
        sheet_bw = None if gpu is None else gpu.figure("memory_bandwidth")
        if peak is not None and sheet_bw is not None:
            ax.plot(
                x,
                np.minimum(peak.dense, sheet_bw.value * x / 1e3),
                color=colour,
                linestyle="--",
                label=f"datasheet roof, {dtype}",
            )
    gemm = [(i, t) for label, i, t in roofline_points(results) if label.startswith("bf16")]
    attn = [(i, t) for label, i, t in roofline_points(results) if label.startswith("flash")]
    own = [(i, t) for label, i, t in roofline_points(results) if not label.startswith(("bf16", "flash"))]
    for pts, marker, label in (
        (gemm, "o", "bf16 GEMM (square sizes)"),
        (attn, "s", "flash attention, d=128"),
        (own, "*", "project kernels"),
    ):
        if pts:
            ax.scatter(*zip(*pts, strict=True), marker=marker, zorder=3, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte of device memory)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"Roofline of {results['meta']['gpu']}")
    ax.legend(fontsize=8, loc="lower right")
    return to_svg(fig)
