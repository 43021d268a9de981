"""The Triton GEMM page (docs/gemm/triton.md): the kernel's run against cuBLAS, its sweep, tuning and
figures (records ``gemm/triton-gemm-*``, ``gemm/triton-tuning-*``).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from gpukb.arguments import flag, positive_int
from gpukb.figures import to_svg
from gpukb.gemm import figures as gemm_figures
from gpukb.gemm.triton import peer_kernels
from gpukb.gemm.triton import results as triton_results
from gpukb.gemm.triton import tuning as triton_tuning
from gpukb.gemm.triton.configs import DEFAULT_CONFIGS, Config, current_choice
from gpukb.gemm.triton.results import Compare, SweepRow, TritonGemm
from gpukb.gemm.triton.results import TritonGemmSweep as TritonSweepRecord
from gpukb.records import clock_text, measured_on
from gpukb.tables import markdown_table


def _triton(record: TritonGemm | None) -> TritonGemm:
    return triton_results.committed() if record is None else record


def _triton_tflops(value: float | None) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.0f}"


def _triton_ratio(value: float | None) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.3f}"


def triton_goal(record: TritonGemm | None = None) -> str:
    """The bar of this step (≥ 0.95 of cuBLAS at bf16 4096³ and 8192³), what was measured, and whether it was
    reached."""
    ceiling = triton_results.measured_ceiling()
    rows = [
        (
            f"{r.size}³",
            f"`{r.config.label}`",
            _triton_tflops(r.kernel_tflops),
            _triton_tflops(r.cublas_tflops),
            _triton_ratio(r.ratio),
            f"{100 * r.of_ceiling:.0f}%",
            "yes" if r.met else "**no**",
        )
        for r in triton_results.goal_rows(_triton(record), ceiling)
    ]
    headers = [
        "bf16 size",
        "configuration",
        "Triton TFLOP/s",
        "cuBLAS TFLOP/s",
        "Triton / cuBLAS",
        f"of the measured ceiling ({ceiling:.0f} TFLOP/s)",
        f"≥ {triton_results.GOAL} of cuBLAS?",
    ]
    return markdown_table(headers, rows)


def triton_sweep(record: TritonGemm | None = None) -> str:
    """Every configuration tried: its check against float64, and its rate and ratio to cuBLAS at each size."""
    record = _triton(record)
    sizes = record.sweep.sizes
    chosen = {c.config: name for name, c in (("large", record.chosen.large), ("small", record.chosen.small)) if c}
    rows = []
    for entry in record.sweep.configs:
        label = f"`{entry.config.label}`" + (f" (chosen: {chosen[entry.config]})" if entry.config in chosen else "")
        if entry.error:
            rows.append((label, "–", *["–"] * len(sizes), entry.error.split(". ")[0]))
            continue
        cells = []
        for size in sizes:
            case = entry.case(size)
            cells.append("–" if case is None else f"{_triton_tflops(case.tflops)} ({_triton_ratio(case.ratio)})")
        check = entry.check
        error = "–" if check is None else f"{check.rel_error:.3g} / {check.rel_error_of_rounded_reference:.3g}"
        rows.append((label, error, *cells, ""))
    headers = ["configuration", "error / floor", *[f"{s}³ TFLOP/s (÷ cuBLAS)" for s in sizes], "note"]
    return markdown_table(headers, rows)


def _triton_compare(record: TritonGemm) -> Compare:
    if record.compare is None:
        raise ValueError(f"the Triton GEMM run of {record.run.date} has no comparison phase")
    return record.compare


def triton_compare(record: TritonGemm | None = None) -> str:
    """``matmul``'s default path against cuBLAS per size, eager and as CUDA-graph replays, with the
    configuration each row measured next to the one the code picks now."""
    record = _triton(record)
    rows = []
    for r in _triton_compare(record).records:
        if r.error or r.config is None:
            rows.append((r.dtype, r.layout, f"{r.m}³", "–", "–", "–", "–", "–", "–", r.error or ""))
            continue
        now = current_choice(r.m, record.sm_count)
        picked = f"`{r.config.label}`" + ("" if now == r.config else f" (now: `{now.label}`)")
        rows.append(
            (
                r.dtype,
                r.layout,
                f"{r.m}³",
                picked,
                _triton_tflops(r.kernel_tflops),
                _triton_tflops(r.cublas_tflops),
                _triton_ratio(r.ratio),
                _triton_ratio(r.graph_ratio),
                "yes" if r.identical_to_cublas else "no",
                "",
            )
        )
    headers = [
        "type",
        "B",
        "size",
        "configuration measured",
        "Triton TFLOP/s",
        "cuBLAS TFLOP/s",
        "Triton / cuBLAS",
        "same, graph replays",
        "output identical to cuBLAS's",
        "note",
    ]
    return markdown_table(headers, rows)


def triton_mismatch_note(record: TritonGemm | None = None) -> str:
    """A sentence naming the comparison's sizes that measured a tiling the code no longer picks, or saying none
    did."""
    record = _triton(record)
    compare, sms = _triton_compare(record), record.sm_count
    sizes = compare.mismatched_sizes(sms)
    if not sizes:
        return "Every row of the comparison measured the configuration the code picks today."
    measured = sorted({r.config.label for r in compare.records if r.config is not None and r.m in sizes})
    now = sorted({current_choice(size, sms).label for size in sizes})
    listed = ", ".join(f"{s}³" for s in sizes)
    text = (
        f"The rows for {listed} measured `{'`, `'.join(measured)}`: the run used an earlier rule that counted rounds "
        f"of tiles without weighing the small tiles' lower rate. The rule now picks `{'`, `'.join(now)}` there."
    )
    swept = [s for s in sizes if record.sweep.case(current_choice(s, sms), s)]
    if swept:
        text += f" For {', '.join(f'{s}³' for s in swept)} the sweep above measured it against cuBLAS in the same run."
    return text


def triton_fp8(record: TritonGemm | None = None) -> str:
    """FP8 (E4M3, bf16 out) configurations against ``torch._scaled_mm`` in the same accumulation mode."""
    record = _triton(record)
    if record.fp8 is None:
        raise ValueError(f"the Triton GEMM run of {record.run.date} has no FP8 phase")
    fp8 = record.fp8
    chosen = record.chosen.fp8.config if record.chosen.fp8 else None
    default = DEFAULT_CONFIGS.get("float8_e4m3fn")
    rows = []
    for entry in fp8.configs:
        marks = [m for m, c in (("chosen by this run", chosen), ("the code's default", default)) if entry.config == c]
        label = f"`{entry.config.label}`" + (f" ({', '.join(marks)})" if marks else "")
        acc = entry.config.fp8_imprecise_acc
        mode = "fast" if acc is None else f"promoted every {acc}"
        if entry.error:
            rows.append((label, mode, "–", "–", "–", "–", "–", "–"))
            continue
        for r in entry.results:
            peer = fp8.peer_for(r.m, r.peer_use_fast_accum)
            rows.append(
                (
                    label,
                    mode,
                    f"{r.m}³",
                    _triton_tflops(r.tflops),
                    _triton_tflops(r.peer_tflops),
                    _triton_ratio(r.ratio),
                    f"{r.rel_error:.3g}",
                    f"{peer.rel_error:.3g} (floor {peer.rel_error_of_rounded_reference:.3g})",
                )
            )
    headers = [
        "configuration",
        "accumulation",
        "size",
        "Triton TFLOP/s",
        "_scaled_mm TFLOP/s",
        "Triton / _scaled_mm",
        "Triton error",
        "_scaled_mm error, same mode",
    ]
    return markdown_table(headers, rows)


def triton_compiled(record: TritonGemm | None = None) -> str:
    """What Triton compiled: registers, spills, shared memory, and the Hopper instructions in the PTX."""
    rows = []
    for c in _triton_compare(_triton(record)).compiled:
        if c.error or c.config is None or c.ptx is None or c.shared_bytes is None:
            rows.append((c.dtype, f"{c.m}³", "–", "–", "–", "–", "–", "–", "–"))
            continue
        rows.append(
            (
                c.dtype,
                f"{c.m}³",
                f"`{c.config.label}`",
                c.registers,
                c.spills,
                f"{c.shared_bytes / 1024:.0f}",
                c.ptx["wgmma.mma_async"],
                c.ptx["cp.async.bulk.tensor"],
                "yes" if c.warp_specialized else "no",
            )
        )
    headers = [
        "type",
        "size",
        "configuration",
        "registers / thread",
        "spills",
        "shared KiB",
        "`wgmma.mma_async` in PTX",
        "`cp.async.bulk.tensor` in PTX",
        "warp-specialized IR",
    ]
    return markdown_table(headers, rows)


def triton_overhead(record: TritonGemm | None = None) -> str:
    """Host time per call of a small product, split into the wrapper's parts, against ``torch.matmul``."""
    compare = _triton_compare(_triton(record))
    h = compare.host_overhead
    if h is None:
        return f"The host time was not measured: {compare.host_overhead_error}."
    parts = [
        ("`matmul` (whole call)", h.matmul),
        ("checks and picking a configuration", h.checks_and_config),
        ("building three tensor descriptors", h.descriptors),
        ("Triton launch, TMA kernel, descriptors prebuilt", h.triton_launch_tma),
        ("Triton launch, blocked kernel", h.triton_launch_blocked),
        ("`torch.matmul` (cuBLAS)", h.torch_matmul),
    ]
    return markdown_table(["host work per call", "µs"], [(name, f"{us:.1f}") for name, us in parts])


def triton_run(record: TritonGemm | None = None) -> str:
    """The GPU, software, date, exact command and clocks of the run."""
    record = _triton(record)
    run, v = record.run, record.run.versions

    def clocks(key: str) -> str:
        return clock_text(run.clocks[key]) if key in run.clocks else "not read"

    gpu = run.gpu
    rows = [
        (
            "GPU",
            "none" if gpu is None else f"{gpu.name} ({gpu.sm_count} SMs, compute capability {gpu.compute_capability})",
        ),
        ("driver", "–" if gpu is None or gpu.driver is None else gpu.driver),
        ("torch / CUDA", f"{v.torch} / {v.torch_cuda}"),
        ("triton", v.triton),
        ("python", v.python),
        ("date (UTC)", run.started.isoformat() if run.started else run.date.isoformat()),
        ("command", f"`{run.command}`"),
        ("timing", record.timing),
        ("inputs", record.inputs),
        ("clocks, start of sweep", clocks("sweep_start")),
        ("clocks, end of comparison", clocks("compare_end")),
    ]
    return markdown_table(["", ""], rows)


def triton_shared_memory(record: TritonGemm | None = None) -> str:
    """For the TMA candidates: shared memory by count, what the compiler reported (when it refused a
    configuration, or in the compiled kernels of the comparison), and the limit."""
    record = _triton(record)
    limit = record.sweep.compiler_limit()
    rows = [
        (
            f"`{r.config.label}`",
            f"{r.by_count:,}",
            "–" if r.reported is None else f"{r.reported:,}",
            "–" if r.fits is None else ("yes" if r.fits else "no"),
        )
        for r in triton_results.shared_memory_rows(record)
    ]
    limit_text = "unknown" if limit is None else f"{limit:,} bytes"
    return markdown_table(
        ["configuration", "bytes by count", "bytes the compiler reported", f"fits ({limit_text})"], rows
    )


def triton_drift(record: TritonGemm | None = None) -> str:
    """What the two squares' ratios mean next to the run-to-run drift of cuBLAS's own rate, and what clocks their
    pairs ran at, from the record (the sampled SM clock and power of each paired window)."""
    from gpukb.performance.pages import quantity
    from gpukb.performance.quantities import reconcile

    record = _triton(record)
    rows = triton_results.goal_rows(record, triton_results.measured_ceiling())
    cublas = reconcile("h100-cublas-bf16-8192")
    parts = []
    for r in rows:
        case = record.sweep.case(r.config, r.size)
        clocks = case.clocks if case is not None else None
        where = (
            ""
            if clocks is None
            else f", its pairs at a median SM clock of {clocks.sm_mhz_median:.0f} MHz (lowest {clocks.sm_mhz_min:.0f})"
            + ("" if clocks.power_w_median is None else f" and {clocks.power_w_median:.0f} W")
        )
        parts.append(f"{r.size}³: {r.ratio:.3f}{where}")
    big = next((r for r in rows if r.size == 8192), None)
    text = "Triton / cuBLAS in the pairs timed on the two squares: " + "; ".join(parts) + ". "
    if big is not None:
        inside = cublas.inside_drift(big.ratio)
        text += (
            f"cuBLAS's own bf16 8192³ rate is {quantity('h100-cublas-bf16-8192', unit=True)} over "
            f"{len(cublas.readings)} runs, which ranged {cublas.low:.0f}–{cublas.high:.0f} (a drift of "
            f"{100 * cublas.drift:.0f}%; [how](../../performance/measuring/#one-figure-per-quantity)). The ratio of "
            f"{big.ratio:.3f} at 8192³ is {'inside' if inside else 'outside'} that drift"
            + (
                ": set against a cuBLAS figure from another run it would mean nothing. It stands because kernel "
                "and cuBLAS were timed in alternation, each pair at the same clock."
                if inside
                else "."
            )
        )
        if record.compare is not None:
            ratios = [
                p.ratio
                for row in record.compare.records
                if row.m == 8192 and row.dtype == "bfloat16" and row.error is None
                for p in row.rounds
            ]
            if ratios:
                text += (
                    f" The comparison's {len(ratios)} rounds at bf16 8192³ (eager calls, both layouts) gave "
                    f"{min(ratios):.3f}–{max(ratios):.3f}."
                )
    return text


def triton_defaults_note(record: TritonGemm | None = None) -> str:
    """Whether the code's default configurations and ``SMALL_RATE`` are this run's choices, and where one is
    not, how far apart the two are in the run's own ratios."""
    from gpukb.gemm.triton.configs import SMALL_CONFIGS, SMALL_RATE

    record = _triton(record)
    chosen = record.chosen
    notes = []
    for name, code, choice in (
        ("16-bit default", DEFAULT_CONFIGS["bfloat16"], chosen.large),
        ("small tiling", SMALL_CONFIGS["bfloat16"], chosen.small),
    ):
        if choice is not None and code != choice.config:
            notes.append(f"the {name} in the code is `{code.label}`, this run chose `{choice.config.label}`")
    fp8_code, fp8_choice = DEFAULT_CONFIGS.get("float8_e4m3fn"), chosen.fp8
    if fp8_choice is not None and record.fp8 is not None and fp8_code != fp8_choice.config:
        ratios = [c.ratio for e in record.fp8.configs if e.config == fp8_code for c in e.results]
        mean = statistics.geometric_mean(ratios) if ratios else None
        notes.append(
            f"the FP8 default in the code is `{fp8_code.label}` (chosen by an earlier run), this run chose "
            f"`{fp8_choice.config.label}`: geometric means of the ratio to `_scaled_mm` "
            + ("–" if mean is None else f"{mean:.3f}")
            + f" against {fp8_choice.geomean_ratio:.3f}"
            + ("" if mean is None else f", {100 * (fp8_choice.geomean_ratio / mean - 1):.1f}% apart")
        )
    if chosen.small_rate is not None and abs(chosen.small_rate - SMALL_RATE) >= 0.005:
        notes.append(
            f"`SMALL_RATE` in the code is {SMALL_RATE:g} (from an earlier run); this run measured "
            f"{chosen.small_rate:.3f}"
        )
    if not notes:
        return "The code's defaults are this run's choices."
    return "The code's defaults and this run's choices: " + "; ".join(notes) + "."


_DTYPE_SHORT = {"bfloat16": "bf16", "float16": "fp16", "float8_e4m3fn": "FP8 E4M3"}


def _sweep(record: TritonSweepRecord | str | None) -> TritonSweepRecord:
    """The committed sweep (the default record), a sweep record by id, or the record given.

    Raises:
        TypeError: For a ``record`` that is none of these (a bool or a number would fail later, on an attribute).
    """
    if record is None:
        return triton_results.sweep_committed()
    if isinstance(record, str):
        return triton_results.sweep_committed(record)
    if not isinstance(record, TritonSweepRecord):
        raise TypeError(f"record must be a sweep record's id or a TritonGemmSweep; got {type(record).__name__}")
    return record


def _shape(r: SweepRow) -> str:
    return f"{r.m}×{r.n}×{r.k}"


def _config_cell(r: SweepRow) -> str:
    if r.config is None:
        return "–"
    text = f"`{r.config.label}`"
    if r.config.kernel == "splitk" and r.config.split_k is None and r.split_k is not None:
        text = text.replace("split auto", f"split {r.split_k}")
    if r.staged:
        text += f", copied: {', '.join(r.staged)}"
    return text


#: How the page names the sets of shapes of a sweep record (:data:`gpukb.gemm.triton.results.SweepName`).
_SWEEP_NAMES = {
    "first": "first sweep",
    "issue": "reported products",
    "random": "random sweep",
    "held-out": "held-out sweep",
    "held-out-2": "second held-out sweep",
    "held-out-3": "third held-out sweep",
    "held-out-4": "fourth held-out sweep",
    "held-out-5": "fifth held-out sweep",
    "held-out-6": "sixth held-out sweep",
    "held-out-7": "seventh held-out sweep",
    "held-out-8": "eighth held-out sweep",
    "held-out-9": "ninth held-out sweep",
    "tokens": "65–320-row draw",
    "tokens-2": "second 65–320-row draw",
    "tokens-3": "third 65–320-row draw",
    "mid-rows": "321–2048-row draw",
    "tokens-4": "fourth 65–320-row draw",
    "tiny": "tiny",
}


def triton_sweep_goal(record: TritonSweepRecord | str | None = None) -> str:
    """The sweep's speed and error targets per set of shapes and input type: the ratio to the peer (geometric mean,
    lowest, lowest of the large products) and the error ratio."""
    rows = []
    for g in triton_results.sweep_goal_rows(_sweep(record)):
        large = g.lowest_large
        rows.append(
            (
                _SWEEP_NAMES[g.sweep],
                _DTYPE_SHORT[g.dtype],
                len(g.rows),
                f"{g.geomean:.3f}",
                f"{g.lowest.ratio:.3f} ({_shape(g.lowest)})",
                "–" if large is None else f"{large.ratio:.3f} ({_shape(large)})",
                g.goal,
                "reached" if g.met else "**missed**",
                f"{g.worst_error_ratio:.2f}",
                "yes" if g.errors_met else "**no**",
            )
        )
    headers = [
        "shapes",
        "type",
        "count",
        "geometric mean of Triton / peer",
        "lowest (M×N×K)",
        "lowest with M·N·K ≥ 2^30",
        "speed target",
        "speed",
        "largest error / peer's error",
        f"errors ≤ {triton_results.ERROR_GOAL:g}× the peer's?",
    ]
    return markdown_table(headers, rows)


def triton_sweep_figure(record: TritonSweepRecord | None = None) -> str:
    """Inline SVG: the ratio to the peer of every measured shape, one point per shape and type, by group."""
    from matplotlib.ticker import FuncFormatter

    from gpukb.figures import new_figure, to_svg

    record = _sweep(record)
    index: dict[tuple[str, str], int] = {}  # one place along x per shape and layout, in the record's order
    for r in record.rows:
        index.setdefault((r.label, r.layout), len(index))
    fig, ax = new_figure(9.0, 4.2)
    for dtype, marker in (("bfloat16", "o"), ("float16", "s"), ("float8_e4m3fn", "^")):
        points = [(index[(r.label, r.layout)], r.ratio) for r in record.rows if r.dtype == dtype and r.ratio]
        if points:
            ax.scatter(*zip(*points, strict=True), marker=marker, s=18, label=_DTYPE_SHORT[dtype])
    ax.axhline(1.0, color="grey", linestyle=":")
    geomean, floor = triton_results.SWEEP_GEOMEAN_GOAL, triton_results.SWEEP_FLOOR_GOAL
    ax.axhline(geomean, color="grey", linestyle="--", linewidth=0.8, label=f"{geomean:.2f}: geometric-mean target")
    large = f"M·N·K ≥ 2^{triton_results.FLOOR_MIN_MNK.bit_length() - 1}"
    ax.axhline(floor, color="grey", linestyle="-.", linewidth=0.8, label=f"{floor:.2f}: target for 16-bit {large}")
    # Over a hundred shape names cannot be read along one axis (they overlapped); the tables below name them.
    ax.set_xticks([])
    ax.set_xlim(-1, len(index))
    ax.set_xlabel(f"{len(index)} shapes and layouts (the tables below name them)")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if round(v * 10) in (2, 3, 5, 7, 20, 30) else ""))
    ax.set_ylabel("peer time / Triton time")
    ax.set_title("The Triton GEMM against cuBLAS (bf16, fp16) and _scaled_mm (FP8), H100")
    ax.legend(fontsize=8)
    return to_svg(fig)


def triton_sweep_table(
    dtype: str = "bfloat16", sweep: str = "first", record: TritonSweepRecord | str | None = None
) -> str:
    """Every measured shape of one input type and set of shapes (``"first"``, ``"issue"``, ``"random"``,
    ``"held-out"``, ``"tiny"``): the configuration chosen, the rates, the ratio, the errors."""
    if sweep not in _SWEEP_NAMES:
        raise ValueError(f"sweep must be one of {list(_SWEEP_NAMES)}; got {sweep!r}")
    record = _sweep(record)
    rows = []
    for r in record.rows:
        if r.dtype != dtype or r.sweep != sweep:
            continue
        rows.append(
            (
                r.group,
                f"{r.label} (tuned)" if r.tuned_on else r.label,
                _shape(r),
                r.layout,
                _config_cell(r),
                _triton_tflops(r.kernel_tflops),
                _triton_tflops(r.peer_tflops),
                "–" if r.ratio is None else f"{r.ratio:.3f}",
                ("–" if r.rel_error is None else f"{r.rel_error:.3g}")
                + " / "
                + ("–" if r.peer_rel_error is None else f"{r.peer_rel_error:.3g}"),
                r.error or r.peer_error or "",
            )
        )
    peer = "_scaled_mm" if dtype == "float8_e4m3fn" else "cuBLAS"
    headers = [
        "group",
        "shape",
        "M×N×K",
        "layout",
        "configuration (split, copies)",
        "Triton TFLOP/s",
        f"{peer} TFLOP/s",
        f"Triton / {peer}",
        f"error, Triton / {peer}",
        "note",
    ]
    if not any(row[-1] for row in rows):  # an empty column would only widen the table past the page
        headers, rows = headers[:-1], [row[:-1] for row in rows]
    # the group goes into the shape's cell: a column of its own would widen the table past a 1400 px screen
    one_group = len({row[0] for row in rows}) == 1  # the set itself, as for the reported products: no group to name
    headers = headers[1:]
    rows = [(row[1] if one_group else f"{row[0]}: {row[1]}", *row[2:]) for row in rows]
    return markdown_table(headers, rows)


def triton_sweep_losses(
    record: TritonSweepRecord | str | None = None, below: float = triton_results.SWEEP_GEOMEAN_GOAL
) -> str:
    """The shapes below ``below`` (by default the geometric-mean goal), lowest first, as a list (rendered from the
    record)."""
    record = _sweep(record)
    losing = triton_results.losing_rows(record, below)
    if not losing:
        return f"No shape of the sweep ran below {below} of its peer."
    items = [
        f"- {_SWEEP_NAMES[r.sweep]}, {_DTYPE_SHORT[r.dtype]} {r.label} ({_shape(r)}, {r.layout}): {r.ratio:.3f}, "
        f"with {_config_cell(r)}"
        for r in losing
    ]
    return f"The shapes below {below} of their peer, lowest first:\n\n" + "\n".join(items)


def triton_host_path(tiny: bool = False, record: TritonSweepRecord | None = None) -> str:
    """Host time per call of a tiny product of a shape seen before, against ``torch.matmul``: 64³, or with ``tiny``
    the run's second host measurement (3×5×7, whose rows are not 16-byte aligned)."""
    record = _sweep(record)
    host = record.tiny_host if tiny else record.host
    if host is None:
        return "The host path was not measured in this run."
    rows = [
        (f"`{h.what}`", f"{h.wall_us:.1f}", f"{h.enqueue_us:.1f}", f"{h.kernel_us:.1f}", f"{h.host_us:.1f}")
        for h in host.rows
    ]
    headers = [
        f"call ({host.calls} back to back, {_DTYPE_SHORT[host.dtype]} {host.shape[0]}×{host.shape[1]}×{host.shape[2]})",
        "wall µs per call",
        "µs per call until the last returned",
        "device µs per call",
        "wall − device, µs",
    ]
    return markdown_table(headers, rows)


def triton_tuning_table(record_id: str = triton_tuning.TABLE_RECORD) -> str:
    """A committed tuning table (one of ``tuning.TABLE_RECORDS``): each class, its representative shape, the fastest
    candidate and the runner-up."""
    if record_id not in triton_tuning.TABLE_RECORDS:
        raise ValueError(f"record_id must be one of {list(triton_tuning.TABLE_RECORDS)}; got {record_id!r}")
    record = triton_tuning.committed(record_id)
    rows = []
    for c in record.classes:
        timed = sorted((t for t in c.trials if t.ms is not None), key=lambda t: t.ms or 0.0)
        best = timed[0]
        second = timed[1] if len(timed) > 1 else None
        rows.append(
            (
                c.shape_class.label,
                f"{c.shape[0]}×{c.shape[1]}×{c.shape[2]}",
                f"`{c.config.label}`" + (f" (split {best.split_k})" if best.split_k else ""),
                f"{best.ms:.4f}",
                "–" if second is None else f"`{second.config.label}` {second.ms:.4f}",
                "–" if c.cublas_ms is None else f"{c.cublas_ms:.4f}",
                len(c.trials),
            )
        )
    headers = ["class", "tuned on", "fastest", "ms", "runner-up, ms", "peer ms", "candidates"]
    return markdown_table(headers, rows)


def triton_layout_checks(record: TritonSweepRecord | None = None) -> str:
    """Products in every layout, strided views and unaligned operands on the GPU, against float64 and cuBLAS."""
    rows = []
    for c in _sweep(record).checks:
        rows.append(
            (
                c.what,
                _DTYPE_SHORT.get(c.dtype, c.dtype),
                "–" if c.config is None else f"`{c.config.label}`",
                ", ".join(c.staged) or "none",
                "–" if c.all_written is None else ("yes" if c.all_written else "**no**"),
                "–" if c.rel_error is None else f"{c.rel_error:.3g}",
                "–" if c.peer_rel_error is None else f"{c.peer_rel_error:.3g}",
                c.error or "",
            )
        )
    headers = ["product", "type", "configuration", "copied", "every element written", "error", "peer error", "note"]
    return markdown_table(headers, rows)


def triton_sweep_run(record: TritonSweepRecord | None = None) -> str:
    """Where and how the sweep and its tuning tables were measured."""
    record = _sweep(record)
    tables = " ".join(
        f"The tuning table `{record_id}`: {measured_on(t.run)} Timing: {t.timing}."
        for record_id in triton_tuning.TABLE_RECORDS
        for t in (triton_tuning.committed(record_id),)
    )
    held_out = f" The held-out draw: {record.held_out}." if record.held_out else ""
    return (
        f"The sweep: {measured_on(record.run)} Timing: {record.timing}. Inputs: {record.inputs}. Errors on "
        f"{record.error_rows} sampled rows of C.{held_out} {tables}"
    )


def triton_trials(layout: str, m: int, n: int, k: int, record_id: str | None = None) -> str:
    """Every candidate a tuning run timed on one class's representative (bf16), fastest first: how it reads the
    operands, its work units and rounds on the H100's multiprocessors, its time and cuBLAS's over it. The run is
    ``record_id``, else the latest of ``tuning.TABLE_RECORDS`` that tuned a class on that shape and layout."""
    if record_id is None:
        record_id = next(
            (
                r
                for r in triton_tuning.TABLE_RECORDS
                if any(c.layout == layout and tuple(c.shape) == (m, n, k) for c in triton_tuning.committed(r).classes)
            ),
            triton_tuning.TABLE_RECORDS[0],
        )
    rows = [
        (
            f"`{t.config.label}`"
            + (
                f" (split {t.split_k})"
                if t.split_k and t.config.split_k is None and t.config.kernel == "splitk"
                else ""
            )
            + (f" (tail split {t.split_k})" if t.config.split_tail else ""),
            t.reads,
            t.units,
            t.rounds,
            f"{t.ms * 1e3:.1f}",
            "–" if t.ratio is None else f"{t.ratio:.3f}",
        )
        for t in triton_results.class_trials(record_id, layout, (m, n, k))
    ]
    headers = ["configuration", "reads A and B", "tiles × slices", "rounds on 132 SMs", "µs", "cuBLAS / Triton"]
    return markdown_table(headers, rows)


def triton_sweep_changes(before_id: str = triton_results.SWEEP_ISSUE29_ID, after_id: str | None = None) -> str:
    """The first sweep's shapes whose configuration changed between the run ``before_id`` and ``after_id`` (by default
    the committed sweep record), or whose ratio to the peer moved by more than 0.05, before and after (two runs, each
    against cuBLAS in its own process)."""
    before = triton_results.sweep_committed(before_id)
    after = _sweep(after_id)
    rows = [
        (
            _DTYPE_SHORT[c.after.dtype],
            c.after.label,
            c.after.layout,
            _config_cell(c.before),
            f"{c.before.ratio:.3f}",
            _config_cell(c.after),
            f"{c.after.ratio:.3f}",
        )
        for c in triton_results.sweep_changes(before, after)
    ]
    headers = ["type", "shape", "layout", "before: configuration", "before", "after: configuration", "after"]
    return markdown_table(headers, rows)


def triton_sweep_kernels(record: TritonSweepRecord | None = None) -> str:
    """The GPU kernels each side launched for the profiled rows (bf16, M ≤ 64 and K-heavy), by name."""
    rows = []
    for r in _sweep(record).rows:
        if r.kernels is None and r.peer_kernels is None:
            continue
        peer = [name for name in (r.peer_kernels or []) if not name.startswith("Memset")]
        rows.append(
            (
                r.label,
                _shape(r),
                "–" if r.ratio is None else f"{r.ratio:.3f}",
                ", ".join(f"`{name}`" for name in r.kernels or []) or "–",
                ", ".join(f"`{name.split('<')[0]}`" for name in peer) or "–",
            )
        )
    return markdown_table(["shape", "M×N×K", "Triton / cuBLAS", "Triton's kernels", "cuBLAS's kernels"], rows)


def triton_sweep_notes(record: TritonSweepRecord | None = None) -> str:
    """What the record says beyond the ratios: rows whose error exceeds twice the peer's, and bf16/fp16 twins (same
    shape, same configuration) whose ratios differ by more than 0.2, a sign of noise in one of them."""
    record = _sweep(record)
    items = []
    over = [r for r in record.rows if r.error_ratio is not None and r.error_ratio > triton_results.ERROR_GOAL]
    for r in over:
        items.append(
            f"- {_DTYPE_SHORT[r.dtype]} {r.label} ({_shape(r)}): error {r.rel_error:.3g}, {r.error_ratio:.2f}× the "
            f"peer's {r.peer_rel_error:.3g}."
        )
    by_shape = {(r.m, r.n, r.k, r.layout, r.dtype): r for r in record.rows if r.ratio is not None}
    for (m, n, k, layout, dtype), r in by_shape.items():
        twin = by_shape.get((m, n, k, layout, "float16")) if dtype == "bfloat16" else None
        if twin is None or twin.config != r.config or r.ratio is None or twin.ratio is None:
            continue
        if abs(r.ratio - twin.ratio) > 0.2:
            items.append(
                f"- {_shape(r)} ran the same configuration in bf16 and fp16, at {r.ratio:.3f} and {twin.ratio:.3f} "
                "of cuBLAS: the same kernel on the same element size, so the gap says more about the measurement "
                "than about the kernel."
            )
    if not items:
        return "No row's error exceeds twice its peer's, and no bf16/fp16 pair of one shape disagrees by over 0.2."
    return "\n".join(items)


def tiling_figure() -> str:
    """Inline SVG: one tile of C, the strips of A and B it reads and one K step, for the default bf16 tiling."""
    return to_svg(gemm_figures.tiling_figure())


def pipeline_figure() -> str:
    """Inline SVG: the software-pipelined K loop with the default bf16 configuration's stages, and with two."""
    return to_svg(gemm_figures.pipeline_figure())


def triton_arc() -> str:
    """The page's arc as one table: each change, its ratio to cuBLAS on bf16 4096³ and 8192³ (the first run), and
    for the tuning steps the bf16 geometric mean on each set of shapes their run measured."""
    rows = []
    for i, step in enumerate(triton_results.arc_steps(), start=1):
        rows.append(
            (
                i,
                step.change,
                "–" if step.config is None else f"`{step.config.label}`",
                *("–" if x is None else f"{x:.3f}" for x in step.squares),
                *(
                    f"{step.sweeps[name]:.3f}" if name in step.sweeps else "–"
                    for name in ("first", "random", "held-out", "held-out-2", "held-out-3", "held-out-4", "held-out-5")
                ),
            )
        )
    headers = ["step", "change", "configuration", "4096³", "8192³", "first sweep", "random sweep", "held-out sweep",
               "second held-out sweep", "third held-out sweep", "fourth held-out sweep",
               "fifth held-out sweep"]  # fmt: skip
    return markdown_table(headers, rows)


def triton_random_before_after(dtype: str = "bfloat16") -> str:
    """Every product of the random sweep, before the third tuning (the second tuning's sweep run) and after it (the
    committed run): configuration and ratio to cuBLAS in each (two runs, each against cuBLAS in its own process)."""
    return triton_before_after("random", triton_results.SWEEP_ISSUE29_ID, triton_results.SWEEP_RECORD_ID, dtype)


def triton_uneven_rows(record_id: str = triton_results.SWEEP_RECORD_ID) -> str:
    """The rows of a sweep whose slowest kernel round took over :data:`~gpukb.gemm.triton.results.UNEVEN_ROUNDS`
    times their fastest: the three rounds' medians of each side and the ratio the row reports."""
    record = triton_results.sweep_committed(record_id)
    rows = [
        (
            _SWEEP_NAMES[r.sweep],
            _DTYPE_SHORT[r.dtype],
            _shape(r),
            r.layout,
            ", ".join(f"{x * 1e3:.1f}" for x in r.kernel_ms),
            ", ".join(f"{x * 1e3:.1f}" for x in r.peer_ms),
            f"{r.ratio:.3f}",
            f"{min(r.peer_ms) / min(r.kernel_ms):.3f}",
        )
        for r in triton_results.uneven_rows(record)
    ]
    if not rows:
        return f"No row's slowest kernel round took over {triton_results.UNEVEN_ROUNDS:g} times its fastest."
    headers = ["shapes", "type", "M×N×K", "layout", "Triton µs, 3 rounds", "cuBLAS µs, 3 rounds", "ratio (medians)",
               "fastest / fastest"]  # fmt: skip
    return markdown_table(headers, rows)


def triton_cards() -> str:
    """The same code and tables on the H100 (the committed run) and on an H200: the geometric mean of the ratio to
    the peer on each set of shapes and type, each against its peer on its own card."""
    h100 = {(g.sweep, g.dtype): g for g in triton_results.sweep_goal_rows(_sweep(None))}
    h200_record = triton_results.sweep_committed(triton_results.SWEEP_H200_ID)
    h200 = {(g.sweep, g.dtype): g for g in triton_results.sweep_goal_rows(h200_record)}
    rows = [
        (
            _SWEEP_NAMES[key[0]],
            _DTYPE_SHORT[key[1]],
            f"{g.geomean:.3f}",
            f"{g.lowest.ratio:.3f}",
            "–" if key not in h200 else f"{h200[key].geomean:.3f}",
            "–" if key not in h200 else f"{h200[key].lowest.ratio:.3f}",
        )
        for key, g in h100.items()
    ]
    headers = ["shapes", "type", "H100: geometric mean", "H100: lowest", "H200: geometric mean", "H200: lowest"]
    return markdown_table(headers, rows)


# --- why rounds disagreed: the diagnostic run ---------------------------------------------------------------------


def _peer_name(dtype: str) -> str:
    return "`_scaled_mm`" if dtype == "float8_e4m3fn" else "cuBLAS"


def triton_rounds(record_id: str = triton_results.ROUNDS_RECORD_ID) -> str:
    """Each product and side of the diagnostic run: how far apart its rounds were by each method (slowest round over
    fastest), the held timer's and the graph replay's times, and do_bench's loop traced: the host's time per call
    and the share of calls before whose flush the GPU sat idle."""
    record = triton_results.rounds_committed(record_id)
    rows = [
        (
            f"{_DTYPE_SHORT[r.dtype]} {r.shape[0]}×{r.shape[1]}×{r.shape[2]} {r.layout}",
            "Triton" if r.side == "kernel" else _peer_name(r.dtype),
            f"{r.spread['do_bench, clocks sampled']:.2f}",
            f"{r.spread['do_bench']:.2f}",
            f"{r.spread['held']:.2f}",
            f"{r.held_us:.1f}",
            f"{r.graph_us:.1f}",
            f"{r.host_us:.1f}",
            f"{r.waited:.2f}",
        )
        for r in triton_results.rounds_rows(record)
    ]
    headers = [
        "product",
        "side",
        "do_bench, sampler on: slowest / fastest round",
        "do_bench: slowest / fastest",
        "held: slowest / fastest",
        "held µs",
        "graph replay µs",
        "host µs per call (do_bench's loop)",
        "calls the GPU waited for (worst round)",
    ]
    return markdown_table(headers, rows)


def triton_rounds_counts(record_id: str = triton_results.ROUNDS_RECORD_ID) -> str:
    """For each method, how many rounds of the diagnostic run were slow (over
    :data:`~gpukb.gemm.triton.results.SLOW_ROUND` times the fastest round of the same product, side and method)."""
    counts = triton_results.slow_rounds(triton_results.rounds_committed(record_id))
    rows = [(f"`{method}`", slow, total) for method, (slow, total) in counts.items()]
    return markdown_table(["method", f"rounds over {triton_results.SLOW_ROUND:g}× the fastest", "rounds"], rows)


def triton_rounds_delays(record_id: str = triton_results.ROUNDS_RECORD_ID) -> str:
    """The delay product with a host delay added to each call: each method's round medians (µs)."""
    record = triton_results.rounds_committed(record_id)
    by_delay: dict[float, dict[str, list[float]]] = {}
    for d in record.delays:
        by_delay.setdefault(d.delay_us, {})[d.method] = d.rounds_ms
    rows = [
        (
            f"{delay:g}",
            ", ".join(f"{x * 1e3:.1f}" for x in methods.get("do_bench", [])) or "–",
            ", ".join(f"{x * 1e3:.1f}" for x in methods.get("held", [])) or "–",
        )
        for delay, methods in by_delay.items()
    ]
    layout, m, n, k = record.delay_shape
    return markdown_table(
        [f"host delay per call, µs (bf16 {m}×{n}×{k} {layout})", "do_bench: rounds, µs", "held: rounds, µs"], rows
    )


def triton_rounds_flush(record_id: str = triton_results.ROUNDS_RECORD_ID) -> str:
    """What a flush costs on the device in the diagnostic run, and how long a clock-sampler reading took."""
    record = triton_results.rounds_committed(record_id)
    reads = record.sampler_read_us
    sampler = (
        f" A reading of the clock sampler (NVML) took {statistics.median(reads):.1f} µs (median of {len(reads)})."
        if reads
        else ""
    )
    return (
        f"In this run do_bench's flush (`zero_()` of 256 MiB) took {record.flush_us['zero_ 256 MiB']:.0f} µs of device "
        f"time, the project's flush (a read) {record.flush_us['read']:.0f} µs.{sampler} {measured_on(record.run)}"
    )


def triton_before_after(
    sweep: str = "held-out",
    before_id: str = triton_results.SWEEP_RECORD_ID,
    after_id: str = triton_results.SWEEP_FINAL_ID,
    dtype: str = "bfloat16",
) -> str:
    """Every product of one set in two sweep runs, each against cuBLAS in its own run: configuration and ratio. A
    product a draw holds twice is paired by its order: its first row in one run with its first in the other."""
    before = _by_occurrence(r for r in _sweep(before_id).rows if r.sweep == sweep and r.dtype == dtype)
    after = _by_occurrence(r for r in _sweep(after_id).rows if r.sweep == sweep and r.dtype == dtype)
    rows = []
    for key, r in after.items():
        old = before.get(key)
        if old is None:
            continue
        rows.append(
            (
                r.label,
                _shape(r),
                r.layout,
                _config_cell(old),
                "–" if old.ratio is None else f"{old.ratio:.3f}",
                _config_cell(r),
                "–" if r.ratio is None else f"{r.ratio:.3f}",
            )
        )
    headers = ["product", "M×N×K", "layout", "before: configuration", "before", "after: configuration", "after"]
    return markdown_table(headers, rows)


def _by_occurrence(rows: Any) -> dict[tuple[str, int, int, int, int], SweepRow]:
    # rows by product and by how many rows of the same product came before it in the run
    out: dict[tuple[str, int, int, int, int], SweepRow] = {}
    for r in rows:
        seen = sum(1 for layout, m, n, k, _ in out if (layout, m, n, k) == (r.layout, r.m, r.n, r.k))
        out[(r.layout, r.m, r.n, r.k, seen)] = r
    return out


def triton_wave_rates() -> str:
    """The rates the look-up's wave rule weighs tilings by (:func:`gpukb.gemm.triton.tuning.wave_rates`): each tiling
    of the wave ladder and the default, its median rate per busy tile slot relative to the default's, and on how many
    tuned classes that kept the GPU full it was measured."""
    samples = triton_tuning.wave_rate_samples()
    configs = (DEFAULT_CONFIGS["bfloat16"], *triton_tuning.WAVE_LADDER)
    rows = [
        (
            f"`{c.label}`",
            f"{statistics.median(samples[c.label]):.3f}",
            "(the reference)" if c == DEFAULT_CONFIGS["bfloat16"] else len(samples[c.label]),
        )
        for c in configs
        if c.label in samples
    ]
    return markdown_table(["tiling", "rate per busy tile slot / 128×256's", "classes measured"], rows)


# --- step 10: decode steps and the fifth tuning ---------------------------------------------------------------------


def _us_and_rate(ms: float | None, nbytes: int) -> str:
    """``"17.7 (1.90)"``: µs, and in brackets the weight's bytes over that time in TB/s."""
    return "–" if ms is None else f"{ms * 1e3:.1f} ({nbytes / (ms * 1e-3) / 1e12:.2f})"


def triton_fill_alternatives(decode: bool = True) -> str:
    """What each kind of candidate reached on each class of the fifth tuning run (bf16, best of its kind, µs):
    ``decode``: the classes with M ≤ 64, with the weight's bytes over each time; otherwise the products above 64
    rows, where the only new candidates were the one-launch split-K tilings.

    Raises:
        TypeError: For a ``decode`` that is not a bool.
    """
    decode = flag("decode", decode)
    rows = []
    for a in triton_results.fill_alternatives():
        m, n, k = a.shape
        if (m <= triton_tuning.SMALL_M) != decode:
            continue
        shape = f"{a.layout} {m}×{n}×{k}"
        fastest = f"`{a.best.label}`"
        if a.best.kernel == "splitk" and a.best.split_k is None:  # the split the rule chose there
            fastest = fastest.replace("split auto", f"split {a.best_split}")
        if decode:
            pair = "–" if a.split is None else f"{a.fused_ms * 1e3:.1f} / {a.unfused_ms * 1e3:.1f} (split {a.split})"
            rows.append(
                (
                    shape,
                    f"{a.weight_bytes / 2**20:.1f}",
                    _us_and_rate(a.cublas_ms, a.weight_bytes),
                    _us_and_rate(a.earlier_ms, a.weight_bytes),
                    _us_and_rate(a.narrow_ms, a.weight_bytes),
                    _us_and_rate(a.swapped_ms, a.weight_bytes),
                    fastest,
                    pair,
                )
            )
        else:
            rows.append(
                (
                    shape,
                    "–" if a.cublas_ms is None else f"{a.cublas_ms * 1e3:.1f}",
                    "–" if a.earlier_ms is None else f"{a.earlier_ms * 1e3:.1f}",
                    f"{a.best_ms * 1e3:.1f}",
                    fastest,
                )
            )
    if decode:
        headers = ["product", "B (MiB)", "cuBLAS µs (TB/s)", "64-row tiles, as before", "16- or 32-row tiles",
                   "transposed (swap_ab)", "fastest", "16×64×128: one launch / two kernels, µs"]  # fmt: skip
    else:
        headers = ["product", "cuBLAS µs", "earlier candidates, best µs", "fastest µs", "fastest"]
    return markdown_table(headers, rows)


def triton_fill_note() -> str:
    """The decode classes of the fifth tuning run in three counts: narrow tiles against the 64-row ones, the fastest
    candidate's slices, one launch against two kernels by the number of slices."""
    f = triton_results.fill_summary()
    splits = "; ".join(f"{split} slices: {wins} of {pairs}" for split, (pairs, wins) in f.by_split.items())
    return (
        f"Over the {f.classes} decode classes, the best 16- or 32-row tiling beat the best 64-row candidate in "
        f"{f.narrow_faster}, and the fastest candidate cut K into one slice in {f.one_slice}. The transposed "
        f"product's best was within {100 * f.swap_gap:.0f} % of the plain narrow tiles' best in every class. 16×64×128 "
        f"tiles in one launch against the same tiles and split with the second kernel, classes where the one launch "
        f"was faster: {splits}."
    )


def _us(ms: float | None) -> str:
    return "–" if ms is None else f"{ms * 1e3:.1f}"


def triton_streamk_pairs(record_id: str = triton_results.STREAMK_TABLE_ID) -> str:
    """Step 12's evidence: each tiling timed without and with one stream-K round on each product (bf16, µs), with
    the round it shares: its tiles × K steps over the 132 programs, and the most programs that meet on one tile."""
    rows = []
    for p in triton_results.streamk_pairs(record_id):
        m, n, k = p.shape
        whole = p.tiles // 132
        shared = (
            "none (whole rounds)"
            if not p.shared
            else f"{p.shared} × {p.k_steps} steps, up to {p.contributors} programs a tile"
        )
        gain = "–" if not (p.plain_ms and p.stream_k_ms) else f"{p.plain_ms / p.stream_k_ms:.2f}"
        rows.append(
            (
                f"{p.layout} {m}×{n}×{k}",
                f"`{p.config.label}`",
                f"{p.tiles} ({whole} whole rounds)",
                shared,
                _us(p.plain_ms),
                _us(p.stream_k_ms),
                gain,
                _us(p.cublas_ms),
            )
        )
    headers = ["product", "tiling", "tiles", "shared round", "without, µs", "with stream-K, µs",
               "without / with", "cuBLAS µs"]  # fmt: skip
    return markdown_table(headers, rows)


def _peer_ratio(ms: float | None, peer: float | None) -> str:
    # cuBLAS's time over the kernel's, three decimals; "–" where either is missing
    return "–" if not (ms and peer) else f"{peer / ms:.3f}"


def triton_streamk_choices(record_id: str = triton_results.STREAMK_TABLE_ID) -> str:
    """Step 12's products: the look-up's configuration and the fastest with one stream-K round, each against cuBLAS
    in the same run (bf16, µs; the ratio is cuBLAS's time over the kernel's)."""
    rows = []
    for c in triton_results.streamk_choices(record_id):
        m, n, k = c.shape

        best = "–" if c.best_stream_k is None else f"`{c.best_stream_k.label}`"
        rows.append(
            (
                f"{c.layout} {m}×{n}×{k}",
                _us(c.cublas_ms),
                f"`{c.chosen.label}`",
                _us(c.chosen_ms),
                _peer_ratio(c.chosen_ms, c.cublas_ms),
                best,
                _us(c.best_stream_k_ms),
                _peer_ratio(c.best_stream_k_ms, c.cublas_ms),
            )
        )
    headers = ["product", "cuBLAS µs", "look-up's choice", "its µs", "its cuBLAS / Triton", "fastest with stream-K",
               "stream-K µs", "stream-K cuBLAS / Triton"]  # fmt: skip
    return markdown_table(headers, rows)


def _fill_cell(f: peer_kernels.Fill) -> str:
    return f"{f.tiles} in {f.rounds} ({f.useful:.2f})"


def triton_peer_tiles(record_id: str = peer_kernels.PEER_TILES_ID, below: float = 0.9) -> str:
    """Step 13: the bf16 products on which cuBLAS did not cut K, the look-up ran its persistent kernel (which does
    not either) and ran below ``below`` of cuBLAS, with the tile each side ran and how its tiles fill rounds of the
    GPU's multiprocessors: the tiles, the rounds they take, and the share of the work those rounds could do that is
    the product's (:attr:`~gpukb.gemm.triton.peer_kernels.Fill.useful`)."""
    rows = []
    for r in peer_kernels.peer_tile_rows(record_id):
        if r.peer.split_k or r.row.config.kernel != "tma" or r.row.ratio >= below:
            continue
        assert r.peer_fill is not None  # cuBLAS did not cut K, so its tiles were counted
        cluster = "×".join(map(str, r.peer.cluster))
        rows.append(
            (
                f"{r.row.layout} {r.row.m}×{r.row.n}×{r.row.k}",
                r.row.label,
                f"{r.row.ratio:.3f}",
                f"{r.peer.tile_m}×{r.peer.tile_n} (cluster {cluster})",
                _fill_cell(r.peer_fill),
                f"{r.row.config.block_m}×{r.row.config.block_n}",
                _fill_cell(r.own_fill),
            )
        )
    headers = ["product", "layer", "cuBLAS / Triton", "cuBLAS's tile M×N (cluster, as named)",
               "cuBLAS's tiles in rounds (useful share)", "look-up's tile",
               "look-up's tiles in rounds (useful share)"]  # fmt: skip
    return markdown_table(headers, rows)


def triton_peer_tile_groups(record_id: str = peer_kernels.PEER_TILES_ID) -> str:
    """Step 13: the bf16 products grouped by cuBLAS's tile (powers of two on both sides or not) and whether it cut
    K: how many, and the Triton GEMM's ratio to cuBLAS on them (geometric mean, lowest)."""
    rows = []
    for g in peer_kernels.tile_groups(peer_kernels.peer_tile_rows(record_id)):
        rows.append(
            (
                "powers of two" if g.powers_of_two else "another size",
                "split" if g.split_k else "whole",
                len(g.rows),
                "–" if g.geomean is None else f"{g.geomean:.3f}",
                "–" if not g.rows else f"{g.rows[0].row.ratio:.3f}",
            )
        )
    headers = ["cuBLAS's tile", "cuBLAS's K", "products", "cuBLAS / Triton, geometric mean", "lowest"]
    return markdown_table(headers, rows)


def triton_two_block(record_id: str = triton_results.TWO_BLOCK_TABLE_ID) -> str:
    """Step 14's products: cuBLAS's time, then each side's ratio to it (cuBLAS's time over the kernel's, bf16): the
    look-up's choice, the fastest tiling of one block, the 192×128 tile of two blocks with its loops flattened and not,
    and the fastest tile of two blocks."""

    rows = []
    for r in triton_results.two_block_rows(record_id):
        m, n, k = r.shape
        peer = r.cublas_ms
        rows.append(
            (
                f"{r.layout} {m}×{n}×{k}",
                _us(peer),
                _peer_ratio(r.chosen_ms, peer),
                f"{r.one_block.block_m}×{r.one_block.block_n}: {_peer_ratio(r.one_block_ms, peer)}",
                _peer_ratio(r.flat_ms, peer),
                _peer_ratio(r.unflat_ms, peer),
                f"{r.two_block.block_m}×{r.two_block.block_n}: {_peer_ratio(r.two_block_ms, peer)}",
            )
        )
    headers = ["product", "cuBLAS µs", "look-up", "best one block", "192×128 flattened", "192×128 unflattened",
               "best two blocks"]  # fmt: skip
    return markdown_table(headers, rows)


def _zeros(m: int, tile_m: int) -> int:
    # rows of zeros under the last row of tiles: M rounded up to whole tiles, less M
    return -(-m // tile_m) * tile_m - m


def triton_tokens(record_id: str = triton_results.TOKEN_TABLE_ID) -> str:
    """Step 16's products: cuBLAS's time and tile (turned to M×N, :mod:`gpukb.gemm.triton.peer_kernels`), the rows of
    zeros under the last row of 128-row, 64-row and cuBLAS's tiles, then each side's ratio to cuBLAS (cuBLAS's time
    over the kernel's, bf16): the look-up's choice, 128×128, 64×256, the fastest tile holding all the rows in one row
    of tiles, and in two, and the fastest of all the candidates."""
    rows = []
    for r in triton_results.token_rows(record_id):
        m, n, k = r.shape
        peer = r.cublas_ms
        cublas = peer_kernels.peer_gemm(r.cublas_kernels)
        tile = "–" if cublas is None else cublas.tile.replace("x", "×") + (" split-K" if cublas.split_k else "")
        zeros = f"{_zeros(m, 128)}/{_zeros(m, 64)}/" + ("–" if cublas is None else f"{_zeros(m, cublas.tile_m)}")
        rows.append(
            (
                f"{r.layout} {m}×{n}×{k}",
                _us(peer),
                tile,
                zeros,
                _peer_ratio(r.chosen_ms, peer),
                _peer_ratio(r.tall_128x128_ms, peer),
                _peer_ratio(r.wide_64x256_ms, peer),
                f"{r.one_row.block_m}×{r.one_row.block_n}: {_peer_ratio(r.one_row_ms, peer)}",
                f"{r.two_rows.block_m}×{r.two_rows.block_n}: {_peer_ratio(r.two_rows_ms, peer)}",
                f"`{r.best.label}`: {_peer_ratio(r.best_ms, peer)}",
            )
        )
    headers = ["product", "cuBLAS µs", "cuBLAS's tile", "rows of zeros: 128/64/cuBLAS", "look-up", "128×128",
               "64×256", "one row of tiles", "two rows of tiles", "fastest"]  # fmt: skip
    return markdown_table(headers, rows)


def _default_groups() -> list[tuple[str, list[triton_results.DefaultRow]]]:
    # step 17's products by the rounds the default's tiles fill, and whether step 17's rule takes the default
    rows = triton_results.default_rows()
    return [
        ("under one", [r for r in rows if r.rounds < 1]),
        ("one to four", [r for r in rows if 1 <= r.rounds < 4]),
        ("four or more; the rule takes the default", [r for r in rows if r.rounds >= 4 and r.ruled]),
        ("four or more; the choice is 128×256 already", [r for r in rows if r.rounds >= 4 and not r.ruled]),
    ]


def triton_default_rounds() -> str:
    """Step 17's run by the rounds the default's tiles fill: how many products, on how many the default was faster
    than the look-up's choice, the difference (default − look-up, each as cuBLAS's time over the kernel's, bf16) from
    its lowest to its highest, and each side's geometric mean."""
    table = []
    for name, rows in _default_groups():
        peer = [(r.cublas_ms or math.nan) for r in rows]
        chosen = [p / r.chosen_ms for p, r in zip(peer, rows, strict=True)]
        default = [p / r.default_ms for p, r in zip(peer, rows, strict=True)]
        diffs = [d - c for d, c in zip(default, chosen, strict=True)]
        table.append(
            (
                name,
                str(len(rows)),
                str(sum(r.default_ms < r.chosen_ms for r in rows)),
                f"{round(min(diffs), 2) + 0:+.2f} to {round(max(diffs), 2) + 0:+.2f}",  # (+ 0: no "-0.00")
                f"{statistics.geometric_mean(chosen):.3f}",
                f"{statistics.geometric_mean(default):.3f}",
            )
        )
    headers = ["rounds of 128×256 tiles", "products", "default faster", "default − look-up",
               "look-up, geometric mean", "default, geometric mean"]  # fmt: skip
    return markdown_table(headers, table)


def triton_default_products() -> str:
    """Step 17's products one by one, by the rounds the default's tiles fill: the look-up's choice and each side's
    ratio to cuBLAS (cuBLAS's time over the kernel's, bf16)."""
    table = []
    for _, rows in _default_groups():
        for r in rows:
            m, n, k = r.shape
            table.append(
                (
                    f"{r.layout} {m}×{n}×{k}",
                    f"{r.rounds:.2f}",
                    "yes" if r.ruled else "no",
                    f"`{r.chosen.label}`",
                    _peer_ratio(r.chosen_ms, r.cublas_ms),
                    _peer_ratio(r.default_ms, r.cublas_ms),
                )
            )
    headers = ["product", "rounds of 128×256 tiles", "rule takes the default", "look-up's choice", "look-up",
               "default"]  # fmt: skip
    return markdown_table(headers, table)


#: A swapped tile counts as faster or slower than the look-up's choice beyond this fraction (a tuning run's two passes
#: agree within about 2 %).
SWAP_MARGIN = 0.02


def _choice_kind(config: Any) -> str:
    # the look-up's choice by kernel and tile: "persistent 64×128", "split-K 64×64", "blocked 64×64", "... swapped"
    kernel = {"splitk": "split-K", "blocked": "blocked"}.get(config.kernel, "persistent")
    return f"{kernel} {config.block_m}×{config.block_n}" + (" swapped" if config.swap_ab else "")


def triton_swap_by_choice(record_id: str = triton_results.SWAP_TABLE_ID) -> str:
    """Step 19's products by the look-up's choice: how many, on how many the fastest swapped tile was faster or slower
    than the choice by more than :data:`SWAP_MARGIN`, and what always taking the faster of the two would give (the
    geometric mean of choice time over best time, and its share of the whole record's mean), largest share first."""
    rows = triton_results.swap_rows(record_id)
    groups: dict[str, list[Any]] = {}
    for r in rows:
        groups.setdefault(_choice_kind(r.chosen), []).append(r)
    table = []
    for kind, members in groups.items():
        logs = [math.log(max(1.0, r.gain)) for r in members]
        table.append(
            (
                sum(logs),
                kind,
                str(len(members)),
                str(sum(r.gain > 1 + SWAP_MARGIN for r in members)),
                str(sum(r.gain < 1 - SWAP_MARGIN for r in members)),
                f"×{math.exp(sum(logs) / len(logs)):.3f}",
                f"+{100 * (math.exp(sum(logs) / len(rows)) - 1):.1f} %",
            )
        )
    table.sort(key=lambda row: -row[0])
    headers = ["look-up's choice", "products", "swapped faster", "swapped slower", "best of both",
               "share of the mean"]  # fmt: skip
    return markdown_table(headers, [row[1:] for row in table])


def triton_swap_extremes(record_id: str = triton_results.SWAP_TABLE_ID, count: int = 5) -> str:
    """Step 19's ``count`` largest gains and ``count`` largest losses of the fastest swapped tile over the look-up's
    choice, each against cuBLAS (cuBLAS's time over the kernel's, bf16)."""
    count = positive_int("count", count)
    rows = sorted(triton_results.swap_rows(record_id), key=lambda r: -r.gain)
    picked = rows[:count] + rows[-count:] if len(rows) > 2 * count else rows
    table = [
        (
            f"{r.layout} {r.shape[0]}×{r.shape[1]}×{r.shape[2]}",
            f"`{r.chosen.label}`: {_peer_ratio(r.chosen_ms, r.cublas_ms)}",
            f"`{r.swapped.label}`: {_peer_ratio(r.swapped_ms, r.cublas_ms)}",
            f"×{r.gain:.2f}",
        )
        for r in picked
    ]
    return markdown_table(["product", "look-up's choice", "fastest swapped tile", "time, choice over swapped"], table)


def triton_swap_holdout(record_id: str = triton_results.SWAP_TABLE_ID) -> str:
    """Step 19's leave-one-out test of a rule that copies the nearest seen product's verdict
    (:func:`~gpukb.gemm.triton.results.swap_leave_one_out`), the nearest among all the other products and among those
    of the product's own shape class."""
    table = []
    for same_class, where in ((False, "any other product"), (True, "another of its shape class")):
        h = triton_results.swap_leave_one_out(record_id, same_class=same_class, margin=SWAP_MARGIN)
        table.append((where, f"{h.changed} of {h.products}", str(h.faster), str(h.slower), f"×{h.mean_gain:.3f}"))
    return markdown_table(["nearest seen product among", "given a swapped tile", "faster", "slower", "mean"], table)


def triton_token_split(record_id: str = triton_results.TOKEN_SPLIT_TABLE_ID) -> str:
    """Step 18's products: the 64×128 tiles, whether step 18's rule takes them, and each side's ratio to cuBLAS
    (cuBLAS's time over the kernel's, bf16): the look-up's split-K choice (with the K slices it ran), the persistent
    kernel's 64×128 tiles, the fastest split-K trial."""
    rows = []
    for r in triton_results.token_split_rows(record_id):
        m, n, k = r.shape
        rows.append(
            (
                f"{r.layout} {m}×{n}×{k}",
                str(r.tiles),
                "yes" if r.ruled else "no",
                f"`{r.chosen.label}` ({r.chosen_slices} slice{'s' * (r.chosen_slices != 1)}): "
                f"{_peer_ratio(r.chosen_ms, r.cublas_ms)}",
                _peer_ratio(r.persistent_ms, r.cublas_ms),
                f"{r.split.block_m}×{r.split.block_n}, {r.slices} slice{'s' * (r.slices != 1)}: "
                f"{_peer_ratio(r.split_ms, r.cublas_ms)}",
            )
        )
    headers = ["product", "64×128 tiles", "rule takes them", "look-up's choice", "persistent 64×128",
               "fastest split-K"]  # fmt: skip
    return markdown_table(headers, rows)


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def triton_mid_candidates(record_id: str = triton_results.MID_TABLE_ID) -> str:
    """Step 20's candidates (``tuning.CANDIDATES_16_MID``) against the look-up's choice on each product of its record:
    on how many each was the fastest trial, faster or slower than the choice by more than :data:`SWAP_MARGIN`, and its
    median time over the choice's; then the fastest trial product by product (the most a perfect choice among them
    would give: the geometric mean of the choice's time over the fastest's)."""
    rows = triton_results.mid_rows(record_id)
    table = []
    for config in triton_tuning.CANDIDATES_16_MID:
        ratios = [r.times[r.as_timed(config)] / r.chosen_ms for r in rows if r.as_timed(config) in r.times]
        if not ratios:  # it ran on no product (the record keeps each error)
            table.append((f"`{config.label}`", "failed on every product", "–", "–", "–"))
            continue
        table.append(
            (
                f"`{config.label}`",
                str(sum(r.fastest == r.as_timed(config) for r in rows)),
                str(sum(x < 1 - SWAP_MARGIN for x in ratios)),
                str(sum(x > 1 + SWAP_MARGIN for x in ratios)),
                f"{statistics.median(ratios):.2f}",
            )
        )
    mid = triton_tuning.CANDIDATES_16_MID
    others = sum(r.fastest == r.chosen and r.chosen not in map(r.as_timed, mid) for r in rows)
    table.append(("the look-up's choice, none of these", str(others), "–", "–", "1.00"))
    best = [r.times[r.fastest] / r.chosen_ms for r in rows]
    table.append(
        (
            "the fastest trial, product by product",
            str(len(rows)),
            str(sum(x < 1 - SWAP_MARGIN for x in best)),
            "0",
            f"{statistics.median(best):.2f} (mean {_geomean(best):.3f})",
        )
    )
    headers = ["tiling", "fastest on", "faster than the choice", "slower than the choice",
               "time over the choice's (median)"]  # fmt: skip
    return markdown_table(headers, table)


#: Step 20's pairs of tilings of the same area, the 64-row one first: two candidates timed on every product of its
#: record, each against the 128-row one, then against the look-up's own 128-row choices (5 stages), where it made them.
MID_PAIRS = (
    (triton_tuning.CANDIDATES_16_MID[2], triton_tuning.CANDIDATES_16_MID[1]),  # 64×256 w4 and 128×128 w8
    (triton_tuning.CANDIDATES_16_MID[2], Config("tma", 128, 128, 64, num_stages=5, num_warps=8)),
    (triton_tuning.CANDIDATES_16_MID[3], triton_tuning.CANDIDATES_16_MID[4]),  # 64×128 and 128×64, both w4 s6
    (triton_tuning.CANDIDATES_16_MID[3], Config("tma", 128, 64, 64, num_stages=5, num_warps=4)),
)


def triton_mid_pairs(record_id: str = triton_results.MID_TABLE_ID) -> str:
    """Step 20's tilings of the same area, 64 rows against 128 (:data:`MID_PAIRS`): on how many products the 64-row
    one ran faster, and the taller one's time over it (median, least and most)."""
    rows = triton_results.mid_rows(record_id)
    table = []
    for wide, tall in MID_PAIRS:
        timed = [(r.as_timed(wide), r.as_timed(tall), r.times) for r in rows]
        ratios = [times[t] / times[w] for w, t, times in timed if w in times and t in times]
        spread = ("–", "–")  # no product timed both: the look-up made no such 128-row choice, or a trial failed
        if ratios:
            spread = (f"×{statistics.median(ratios):.3f}", f"×{min(ratios):.3f} to ×{max(ratios):.3f}")
        table.append((f"`{wide.label}`", f"`{tall.label}`", f"{sum(x > 1 for x in ratios)} of {len(ratios)}", *spread))
    headers = ["64 rows", "128 rows", "64 rows faster on", "time, 128 over 64 (median)", "least to most"]
    return markdown_table(headers, table)


def triton_mid_rule(record_id: str = triton_results.MID_TABLE_ID) -> str:
    """The products of step 20's record whose look-up choice its rule (``tuning.mid_tiles``) changes: the choice and
    the rule's tiles, each with cuBLAS's time over its own, and the choice's time over the rule's tiles'."""
    table = [
        (
            f"{r.layout} {r.shape[0]}×{r.shape[1]}×{r.shape[2]}",
            f"`{r.chosen.label}`: {_peer_ratio(r.chosen_ms, r.cublas_ms)}",
            f"`{r.ruled.label}`: {_peer_ratio(r.times[r.ruled], r.cublas_ms)}",
            f"×{r.chosen_ms / r.times[r.ruled]:.3f}",
        )
        for r in triton_results.mid_rows(record_id)
        if r.ruled != r.chosen
    ]
    return markdown_table(["product", "look-up's choice", "the rule's tiles", "time, choice over rule's"], table)


def triton_mid_by_count(record_id: str = triton_results.MID_TABLE_ID) -> str:
    """Step 19's count of work (``tuning.tile_work``) as a rule over step 20's persistent tilings, at step 19's margin
    and at a wider one (:func:`~gpukb.gemm.triton.results.mid_by_count`), scored with each product's own times."""
    table = []
    for margin in (triton_tuning.SWAP_TALL_MARGIN, 0.2):
        h = triton_results.mid_by_count(record_id, margin)
        table.append((f"{100 * margin:.0f} %", f"{h.changed} of {h.products}", str(h.faster), str(h.slower),
                      f"×{h.mean_gain:.3f}"))  # fmt: skip
    return markdown_table(["at least this much less work", "changed", "faster", "slower", "mean"], table)


#: Step 21's bands of K steps (at least, at most; ``None``: no bound), as its page reads them: the last starts where
#: its rule does.
DEPTH_BANDS = ((1, 31), (32, triton_tuning.DEEP_MIN_K_STEPS - 1), (triton_tuning.DEEP_MIN_K_STEPS, None))


def triton_depth_by_steps(record_id: str = triton_results.DEPTH_TABLE_ID) -> str:
    """Step 21's tilings timed at their own depth and at their deepest pipeline
    (:func:`~gpukb.gemm.triton.results.depth_pairs`), by the product's K steps (:data:`DEPTH_BANDS`): how many ran
    faster, or slower, by more than 2 % at the deepest, their time at their own depth over it (median, least and
    most), and the same median over the look-up's own choices alone."""
    pairs = triton_results.depth_pairs(record_id)
    table = []
    for low, high in DEPTH_BANDS:
        band = [p for p in pairs if p.k_steps >= low and (high is None or p.k_steps <= high)]
        if not band:
            continue
        gains = [p.gain for p in band]
        chosen = [p.gain for p in band if p.chosen]
        table.append((
            f"{low} or more" if high is None else f"{low} to {high}",
            str(len(band)),
            str(sum(g > 1.02 for g in gains)),
            str(sum(g < 0.98 for g in gains)),
            f"×{statistics.median(gains):.3f}",
            f"×{min(gains):.3f} to ×{max(gains):.3f}",
            f"×{statistics.median(chosen):.3f} ({len(chosen)})" if chosen else "–",
        ))  # fmt: skip
    headers = ["K steps", "tilings", "deeper faster", "deeper slower", "time, own depth over deepest (median)",
               "least to most", "the look-up's choices (median, count)"]  # fmt: skip
    return markdown_table(headers, table)


def triton_depth_rule(record_id: str = triton_results.DEPTH_TABLE_ID) -> str:
    """Step 21's rule (``tuning.deep_tokens``) on its run's products (:func:`~gpukb.gemm.triton.results.depth_rule`),
    scored with each product's own times."""
    h = triton_results.depth_rule(record_id)
    row = (f"{h.changed} of {h.products}", str(h.faster), str(h.slower), f"×{h.mean_gain:.3f}")
    return markdown_table(["changed", "faster", "slower", "mean"], [row])


def triton_two_block_host(
    before_id: str = "gemm/triton-gemm-sweep-h100-mid-rows",
    after_id: str = "gemm/triton-gemm-sweep-h100-mid-rows-direct-two-block",
    sweep: str = "mid-rows",
) -> str:
    """The host's time to queue one timed sample (µs, the median of the rounds' medians), Triton's and cuBLAS's, on
    each bf16 product of ``sweep`` that runs a tile of two blocks in the run ``after_id``, in that run and in
    ``before_id``, the same products measured before the two-block kernel's direct launch; and the kernel's device
    time after."""
    if sweep not in _SWEEP_NAMES:
        raise ValueError(f"sweep must be one of {list(_SWEEP_NAMES)}; got {sweep!r}")
    before = _by_occurrence(r for r in _sweep(before_id).rows if r.sweep == sweep and r.dtype == "bfloat16")
    rows = []
    after = _by_occurrence(r for r in _sweep(after_id).rows if r.sweep == sweep and r.dtype == "bfloat16")
    for key, r in after.items():
        if r.config is None or not r.config.two_part:
            continue
        old = before.get(key)
        if old is None or old.config != r.config or not (r.kernel_host_us and old.kernel_host_us):
            raise ValueError(f"{before_id} has no like row of {r.m}×{r.n}×{r.k} {r.layout} with host times")
        rows.append(
            (
                _shape(r),
                f"`{r.config.label}`",
                f"{statistics.median(old.kernel_host_us):.0f} / {statistics.median(old.peer_host_us):.0f}",
                f"{statistics.median(r.kernel_host_us):.0f} / {statistics.median(r.peer_host_us):.0f}",
                f"{1e3 * statistics.median(r.kernel_ms):.1f}",
            )
        )
    if not rows:  # an empty table would say nothing, silently
        raise ValueError(f"{after_id} runs no bf16 product of {sweep!r} on tiles of two blocks")
    headers = ["product", "tiles", "before: Triton / cuBLAS, host µs", "after: Triton / cuBLAS, host µs",
               "device µs (after)"]  # fmt: skip
    return markdown_table(headers, rows)
