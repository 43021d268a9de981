"""The GEMM chapter's page layer: the only code that turns its data, models and records into Markdown.

Pages call these functions with no file paths (``from gpukb.gemm.pages import fp8_acceptance``); each loads what
it renders (a type table by library, a results record by id) and renders it. Library modules
(:mod:`gpukb.gemm.types`, :mod:`gpukb.gemm.emulator`, :mod:`gpukb.gemm.fp8_hardware`, ...) return values or
``(headers, rows)``; labels a reader sees live here.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from gpukb.gemm import blas, blocking, type_tables
from gpukb.gemm.emulator import FP8_TYPES, error_table
from gpukb.gemm.fp8_hardware import documented, probe_bits_needed, requested_scale_errors
from gpukb.gemm.results import (
    FP8_H100,
    GROUND_UP_H100,
    Comparison,
    Fp8Hardware,
    GroundUp,
    TimingEntry,
)
from gpukb.gemm.triton import results as triton_results
from gpukb.gemm.triton import tuning as triton_tuning
from gpukb.gemm.triton.configs import DEFAULT_CONFIGS, current_choice
from gpukb.gemm.triton.results import Compare, SweepRow, TritonGemm
from gpukb.gemm.triton.results import TritonGemmSweep as TritonSweepRecord
from gpukb.gemm.types import sources_of, table
from gpukb.performance.ceilings import measured_ceilings
from gpukb.performance.results import H100_SWEEP
from gpukb.records import clock_text, load, measured_on
from gpukb.tables import markdown_table

# --- type tables (docs/gemm/type-tables.md) -----------------------------------------------------------------


def type_answers() -> str:
    """The quick answers: each common combination on MI300X, MI355X and H100."""
    return markdown_table(*type_tables.answers_table())


def type_library(library: str, groups: Sequence[str] | None = None) -> str:
    """A library's table, one section per vendor table (group): caption, table, conditions and notes, sources.

    Args:
        library: ``"hipblaslt"`` or ``"cublaslt"``.
        groups: Group ids to render, in this order (default: all, in table order).
    """
    tab = table(library)
    out = []
    for gid, rows in type_tables.group_rows(library, groups):
        title, compact, note = tab.groups[gid]
        headers, cells, caption = type_tables.group_table(rows, compact)
        out.append(f"**{title}** ({len(rows)} combinations)" + (f": {'; '.join(caption)}." if caption else "."))
        out.append("")
        out.append(markdown_table(headers, cells))
        out.append("")
        constraints = {r.constraints for r in rows if r.constraints}
        extra = [*(f"Conditions: {c}." for c in sorted(constraints)), *([note] if note else [])]
        extra += sorted({r.note for r in rows if r.note and r.note != note})
        cited = ", ".join(f"[{s.id}]({s.url})" for s in sources_of(rows))
        out.append(" ".join([*extra, f"Sources: {cited}."]))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def type_sources(library: str) -> str:
    """The library's sources as a list: id, title, version, repository path and commit, date checked."""
    lines = []
    for src in table(library).sources.values():
        where = f" `{src.path}` at `{src.commit[:12]}`." if src.path and src.commit else ""
        lines.append(f"- **{src.id}**: [{src.title}]({src.url}). {src.version}.{where} Checked {src.checked}.")
    return "\n".join(lines) + "\n"


def type_compute(library: str) -> str:
    """The library's compute types: id, enumerator, accumulator, what A and B are rounded to."""
    return markdown_table(*type_tables.compute_table(library))


def type_architectures() -> str:
    """Every architecture of both tables, with the names it answers to and what its FP8 is."""
    return markdown_table(*type_tables.arch_table())


def type_names() -> str:
    """The canonical type names the tables use, with the format and the HIP and CUDA names behind each."""
    return markdown_table(*type_tables.names_table())


def type_comparison() -> str:
    """hipBLASLt and cuBLASLt side by side: a count, then every combination with where each library has it."""
    total, both, only = type_tables.comparison_counts()
    summary = (
        f"{total} combinations without block scaling: {both} in both libraries, "
        + ", ".join(f"{n} only in {t}" for t, n in only.items())
        + "."
    )
    return summary + "\n\n" + markdown_table(*type_tables.comparison_table())


def type_notes_errata() -> str:
    """Claims of a widely shared explanation of hipBLASLt's types: claim, truth, deciding test, errata link.

    Each is a collapsed note, so the page states its facts first and the corrections stay out of the way. MkDocs
    does not rewrite links in markdown-exec's output, so the link is the URL the browser resolves from the built
    page (``/gemm/type-tables/``), not a path to a ``.md`` file; tests/site/test_links.py checks it resolves.
    """
    out = []
    for e in type_tables.notes_errata():
        out.append(f'??? note "A claim you may meet: {e.claim}"')
        out.append(f"    {e.truth}")
        out.append("")
        out.append(f"    Decided by `{e.test}`; [errata entry](../../about/errata/#{e.id}).")
        out.append("")
    return "\n".join(out)


# --- the emulator (docs/gemm/accuracy.md) ------------------------------------------------------------------


def emulator_errors(m: int = 256, n: int = 256, k: int = 1024, seed: int = 0) -> str:
    """The error of every combination family against FP64, with a line saying what was multiplied."""
    return (
        f"{markdown_table(*error_table(m, n, k, seed))}\n\nA is {m}×{k} and B is {k}×{n}, both standard normal (numpy "
        f"`default_rng({seed})`), compared with their float64 product before any rounding. Computed by "
        "`gpukb.gemm.emulator.error_rows` when this page was built."
    )


# --- BLAS levels and blocking (docs/gemm/ground-up.md) -----------------------------------------------------


def blas_examples(n: int, dtype: str = "fp32") -> str:
    """The BLAS examples at size n: operations, bytes, and intensity per element and per byte."""
    rows = [
        (
            f"`{op.routine}`",
            op.level,
            op.operation,
            f"{op.flops:,}",
            f"{op.nbytes:,}",
            f"{op.per_element:,.2f}",
            f"{op.intensity:,.2f}",
            f"{blas.growth(name, n, dtype):.2f}",
        )
        for name, op in zip(blas.EXAMPLES, blas.examples(n, dtype), strict=True)
    ]
    headers = ["routine", "level", "computes", "FLOPs", "bytes", "FLOP/element", "FLOP/byte", "× when n doubles"]
    return markdown_table(headers, rows)


def blas_roofline(sizes: tuple[int, ...] = (256, 4096), dtype: str = "fp32", record_id: str = H100_SWEEP) -> str:
    """Each BLAS example bounded on a measured GPU: the larger of the compute and the memory bound, and which.

    Args:
        sizes: The sizes n to show.
        dtype: The element type; its measured matrix-product rate is the compute ceiling.
        record_id: A committed ``gpukb bench`` sweep: its best ``dtype`` product and fastest large copy are the
            ceilings (:func:`gpukb.performance.ceilings.measured_ceilings`).
    """
    roof = measured_ceilings(record_id)
    if dtype not in roof or "bandwidth" not in roof:
        raise ValueError(f"{record_id} has no measured {dtype} product or copy bandwidth; it has {sorted(roof)}")
    rows = [
        (
            f"`{op.routine}`",
            f"{n:,}",
            f"{op.intensity:,.2f}",
            f"{floor.time_s * 1e6:,.3g}",
            f"{op.flops / floor.time_s / 1e12:,.2f}",
            floor.limiter,
        )
        for n, op, floor in blas.floors(sizes, dtype, roof[dtype] * 1e12, roof["bandwidth"] * 1e9)
    ]
    headers = ["routine", "n", "FLOP/byte", "floor (µs)", "at most TFLOP/s", "limited by"]
    ridge = roof[dtype] * 1e3 / roof["bandwidth"]
    note = (
        f"Ceilings: {roof[dtype]:.1f} TFLOP/s ({dtype} matrix product) and {roof['bandwidth']:,.0f} GB/s (copy), "
        f"ridge point {ridge:.0f} FLOP/byte."
    )
    return markdown_table(headers, rows) + "\n\n" + note


def blocking_traffic(n: int = 64, block_sizes: Sequence[int] = (1, 2, 4, 8, 16, 32, 64)) -> str:
    """Element moves of a blocked n×n×n product, counted and from the textbook formula ``(2N + 2)·n²``."""
    headers = ["block size b", "blocks per side N", "moves counted", "(2N+2)·n²", "fast memory 3b²", "q = 2n³ / moves"]
    rows = [
        (b, blocks, f"{moves:,}", f"{formula:,}", f"{fits:,}", f"{q:.2f}")
        for b, blocks, moves, formula, fits, q in blocking.traffic_rows(n, block_sizes)
    ]
    return markdown_table(headers, rows)


def blocking_levels(m: int, n: int, k: int, tiles: Sequence[int | blocking.Tile]) -> str:
    """Traffic at each level of a nested tiling, counted by ``blocked_matmul`` next to the closed form."""
    rows = [
        (
            counted.level,
            "×".join(map(str, counted.tile)),
            f"{counted.a_loads:,} / {formula.a_loads:,}",
            f"{counted.b_loads:,} / {formula.b_loads:,}",
            f"{counted.c_loads:,} + {counted.c_stores:,} / {formula.c_loads:,} + {formula.c_stores:,}",
            f"{counted.footprint:,}",
            f"{blocking.intensity(2 * m * n * k, counted.moves):.1f}",
        )
        for counted, formula in blocking.level_comparison(m, n, k, tiles)
    ]
    headers = ["level", "tile bm×bn×bk", "A loads (counted / formula)", "B loads", "C loads + stores", "held", "q"]
    return markdown_table(headers, rows)


def blocking_capacity(block_sizes: Sequence[int] = (2, 4, 8, 16)) -> str:
    """What fast memory each block size needs: three tiles, and what an LRU cache replaying the loop needs."""
    rows = [
        (b, f"{three:,}", f"{needed:,}", f"{needed / (b * b):.2f}")
        for b, three, needed in blocking.capacity_rows(block_sizes)
    ]
    headers = ["block size b", "three tiles, 3b²", "LRU cache needs", "LRU need / one tile b²"]
    return markdown_table(headers, rows)


# --- FP8 on the H100 (docs/gemm/accuracy.md; record gemm/fp8-h100) -----------------------------------------


def _fp8(record_id: str) -> Fp8Hardware:
    return load(record_id, expect=Fp8Hardware)


def _first_line(text: str | None, limit: int = 140) -> str:
    if not text:
        return ""
    line = text.strip().splitlines()[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _code(text: str) -> str:
    """A Markdown code span that survives backticks inside the text."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _combination(r: Comparison) -> str:
    return f"{r.a} × {r.b} → {r.out}" + ("" if r.bias == "none" else f" + {r.bias} bias")


def fp8_measured_on(record_id: str = FP8_H100) -> str:
    """Where the FP8 results come from (:func:`gpukb.records.measured_on`)."""
    return measured_on(_fp8(record_id).run)


#: The bias columns of the acceptance table: ``Attempt.bias`` values.
BIAS_COLUMNS = ("none", "bf16", "fp16", "fp32")


def fp8_acceptance(record_id: str = FP8_H100) -> str:
    """Which A, B, D and bias types ``torch._scaled_mm`` accepted, next to cuBLASLt's table, and the refusals."""
    cells_by_key: dict[tuple[str, str, str], dict[str, str]] = {}
    refusals: dict[str, list[str]] = {}
    for r in _fp8(record_id).acceptance:
        cells_by_key.setdefault((r.a, r.b, r.out), {})[r.bias] = "yes" if r.accepted else "refused"
        if not r.accepted:
            bias = "" if r.bias == "none" else f" + {r.bias} bias"
            refusals.setdefault(f"{r.error_type}: {_first_line(r.error)}", []).append(f"{r.a}×{r.b}→{r.out}{bias}")
    headers = ["A", "B", "D", "in cuBLASLt's table", "no bias", "bf16 bias", "fp16 bias", "fp32 bias"]
    rows = [
        [a, b, out, "yes" if documented(a, b, out) else "no", *(cells.get(x, "") for x in BIAS_COLUMNS)]
        for (a, b, out), cells in cells_by_key.items()
    ]
    messages = [[_code(message), ", ".join(cases)] for message, cases in refusals.items()]
    return f"{markdown_table(headers, rows)}\n\n{markdown_table(['refused with', 'combinations'], messages)}"


def fp8_layout(record_id: str = FP8_H100) -> str:
    """E4M3 × E4M3 → BF16 with each layout of A and B: accepted or refused, and the message."""
    rows = [
        [r.a_layout, r.b_layout, "yes" if r.accepted else "refused", _code(_first_line(r.error)) if r.error else ""]
        for r in _fp8(record_id).layout
    ]
    return markdown_table(["A", "B", "accepted", "error"], rows)


def fp8_agreement(record_id: str = FP8_H100) -> str:
    """GPU against emulator for every accepted combination with a 16- or 32-bit D: the difference, the FP32 bound
    on it, how many elements came out identical, and both results' error against FP64."""
    records = [r for r in _fp8(record_id).agreement if r.out not in FP8_TYPES]
    rows = []
    for r in records:
        fast = "on" if r.fast_accum else "off"
        if not r.emulated:
            rows.append([_combination(r), fast, "not in cuBLASLt's table", "", "", f"{r.hw_vs_fp64:.2e}", ""])
            continue
        rows.append(
            [
                _combination(r),
                fast,
                f"{r.hw_vs_emulator:.1e}",
                f"{r.bound:.1e}",
                f"{r.identical_fraction:.1%}",
                f"{r.hw_vs_fp64:.2e}",
                f"{r.emulator_vs_fp64:.2e}",
            ]
        )
    headers = ["combination", "fast accumulation", "GPU vs emulator", "FP32 bound", "identical elements",
               "GPU vs FP64", "emulator vs FP64"]  # fmt: skip
    first = records[0]
    return (
        f"{markdown_table(headers, rows)}\n\nA is {first.m}×{first.k} and B {first.k}×{first.n}, standard "
        "normal, quantized with per-tensor amax scales; all figures are relative Frobenius norms."
    )


def fp8_output(record_id: str = FP8_H100) -> str:
    """For each FP8 D (no bias, fast accumulation off): the GPU's error against FP64 after dividing by the requested
    ``scale_result``, next to the emulator's with that scale applied and with it ignored (recomputed from the
    record's seed), and the verdict."""
    rows, gaps = [], []
    for r in _fp8(record_id).agreement:
        if r.out not in FP8_TYPES or r.fast_accum or r.bias != "none":
            continue
        gpu, applied, ignored = requested_scale_errors(r)
        verdict = "ignored" if abs(gpu - ignored) < abs(gpu - applied) else "applied"
        gaps.append(abs(gpu - (ignored if verdict == "ignored" else applied)))
        rows.append([_combination(r), f"{gpu:.4f}", f"{applied:.4f}", f"{ignored:.4f}", verdict])
    headers = ["combination", "GPU", "emulator, scale_result applied", "emulator, scale_result ignored",
               "scale_result was"]  # fmt: skip
    return (
        f"{markdown_table(headers, rows)}\n\nRelative Frobenius error against FP64 of D divided by the requested "
        f"`scale_result`; the GPU's figure is within {max(gaps):.1e} of the emulator's under the verdict in every row."
    )


def fp8_accumulation(record_id: str = FP8_H100) -> str:
    """The K sweep with fast accumulation off and on, and the ``1 + (K - 1) delta`` probe."""
    data = _fp8(record_id)
    sweep = [
        [
            str(r.k),
            "on" if r.fast_accum else "off",
            f"{r.hw_vs_exact:.1e}",
            f"{r.emulator_vs_exact:.1e}",
            f"{r.fp32_bound:.1e}",
            f"{r.max_error_per_abs_sum:.1e}",
            f"{r.gamma_k:.1e}",
        ]
        for r in data.accumulation
    ]
    headers = ["K", "fast accumulation", "GPU vs exact", "emulator vs exact", "FP32 bound", "max error / Σ|a·b|",
               "γ(K) for FP32"]  # fmt: skip
    probe = [
        [
            f"2^{round(math.log2(r.delta))}",
            f"{r.exact:.9g}",
            f"{r.emulator:.9g}",
            f"{r.fast_accum_off:.9g}",
            f"{r.fast_accum_on:.9g}",
        ]
        for r in data.accumulation_probe
    ]
    k = data.accumulation_probe[0].k
    probe_headers = ["δ", f"exact 1 + {k - 1}δ", "emulator", "GPU, fast accumulation off", "GPU, fast accumulation on"]
    return (
        f"{markdown_table(headers, sweep)}\n\n{markdown_table(probe_headers, probe)}\n\nEvery partial sum of the probe "
        f"needs at most {probe_bits_needed(k)} significant bits."
    )


def fp8_overflow(record_id: str = FP8_H100) -> str:
    """What D became past its largest value on the GPU, next to the saturating and the format's own rules; and
    ``torch._int_mm`` past INT32's range."""
    data = _fp8(record_id)
    rows = []
    for r in data.overflow:
        label = f"{r.a} × {r.b} → {r.out}"
        if not r.accepted or r.hardware is None:
            rows.append([label, "refused", "", "", ""])
            continue
        for s, hw, sat, rules in zip(r.sums, r.hardware, r.emulator_saturating, r.emulator_format_rules, strict=True):
            rows.append([label, f"{s:g}", str(hw), str(sat), str(rules)])
    table_md = markdown_table(["combination", "exact D", "GPU", "saturating", "format rules"], rows)
    ints = [
        [
            str(r.k),
            str(r.exact),
            "refused" if r.hardware is None else str(r.hardware),
            "" if r.emulator_wrap is None else str(r.emulator_wrap),
            "" if r.emulator_saturate is None else str(r.emulator_saturate),
        ]
        for r in data.int32_overflow
    ]
    int_table = markdown_table(["K", "exact", "GPU (torch._int_mm)", "wrap (two's complement)", "saturate"], ints)
    return f"{table_md}\n\n{int_table}"


def fp8_scale_result(record_id: str = FP8_H100) -> str:
    """Whether ``scale_result`` was applied (D's norm halves at 0.5), ignored (ratio 1) or refused, per D type."""
    rows = [
        [
            r.out,
            f"{r.norm_ratio:.4g}" if r.accepted and r.norm_ratio is not None else "refused",
            "" if r.accepted else _code(_first_line(r.error)),
        ]
        for r in _fp8(record_id).scale_result
    ]
    return markdown_table(["D", "‖D(scale_result=0.5)‖ / ‖D(scale_result=1)‖", "error"], rows)


def fp8_tf32(record_id: str = FP8_H100) -> str:
    """TF32 and FP32 matmul errors against FP64 for each recorded size."""
    rows = [
        [
            f"{r.n}",
            f"{r.tf32_vs_exact:.2e}",
            f"{r.fp32_vs_exact:.2e}",
            f"{r.tf32_vs_exact / r.fp32_vs_exact:.0f}×",
            f"{r.tf32_vs_nearest_even_inputs:.1e}",
        ]
        for r in _fp8(record_id).tf32
    ]
    headers = ["n (n×n×n)", "TF32 vs FP64", "FP32 vs FP64", "TF32 / FP32", "TF32 vs inputs rounded to TF32 in float64"]
    return markdown_table(headers, rows)


# --- the ground-up and timing pages' GPU run (record gemm/ground-up-h100) ----------------------------------

#: How each product was timed, as the timing page names it (keys: :data:`gpukb.gemm.results.TimingMethod`).
TIMING_LABELS = {
    "lab_first_call": "lab: first call, host clock, no synchronize",
    "first_call_synchronized": "first call, host clock, synchronized",
    "warm_call_no_sync": "warm call, host clock, no synchronize",
    "warm_calls_no_sync": "warm calls, host clock, no synchronize (median)",
    "warm_call_synchronized": "warm call, host clock, synchronized (one run)",
    "warm_calls_synchronized": "warm calls, host clock, synchronized (median)",
    "warm_calls_events": "warm calls, CUDA events (median)",
    "back_to_back": "{calls} calls back to back, one synchronize at the end (mean)",
    "do_bench": "triton.testing.do_bench (median, L2 flushed)",
    "numpy_first_call": "lab: numpy, host clock (first call)",
    "numpy_after_first": "numpy, host clock (median of {samples} after it)",
}

#: The batched variants in the order the page shows them, with their labels.
BATCHED_LABELS = {
    "loop": "loop of torch.mm",
    "loop_graph": "same loop, CUDA graph",
    "bmm": "torch.bmm",
    "one_gemm": "one torch.mm (shared B)",
}


def _ground_up(record_id: str) -> GroundUp:
    return load(record_id, expect=GroundUp)


def timing_label(entry: TimingEntry) -> str:
    """How one product was timed, in the page's words."""
    return TIMING_LABELS[entry.method].format(calls=entry.calls, samples=entry.ms.n)


def ground_up_measured_on(record_id: str = GROUND_UP_H100) -> str:
    """Where the ground-up and timing pages' results come from (:func:`gpukb.records.measured_on`)."""
    return measured_on(_ground_up(record_id).run)


def cublaslt_build(record_id: str = GROUND_UP_H100) -> str:
    """The compile command and the nvcc that ran it, as a code block."""
    c = _ground_up(record_id).cublaslt
    version = c.nvcc_version.splitlines()[-2:] if c.nvcc_version else ["nvcc not found"]
    lines = ["$ nvcc --version | tail -2", *version]
    if c.compile is not None:
        lines += [f"$ {c.compile.command}", f"(exit status {c.compile.returncode})"]
    return "```text\n" + "\n".join(lines) + "\n```"


def cublaslt_output(record_id: str = GROUND_UP_H100, index: int = 0) -> str:
    """What one run of the compiled snippet printed (the first run is the check at the default size)."""
    runs = _ground_up(record_id).cublaslt.runs
    if not runs:
        return "The snippet did not compile on the GPU machine, so it did not run."
    r = runs[index]
    return "```text\n" + f"$ {r.command}\n" + r.stdout.rstrip() + f"\n(exit status {r.returncode})\n```"


def _spread(rates: list[float]) -> str:
    """``median (lowest–highest)`` of a few rates, or the one rate, or a dash."""
    if not rates:
        return "–"
    if len(rates) == 1:
        return f"{rates[0]:.0f}"
    return f"{statistics.median(rates):.0f} ({min(rates):.0f}–{max(rates):.0f})"


def cublaslt_speed(record_id: str = GROUND_UP_H100) -> str:
    """The snippet's own timing next to ``torch.mm`` on the same bf16 shapes, with each BLAS preference: the
    median TFLOP/s over the rounds, and the lowest and highest round."""
    c = _ground_up(record_id).cublaslt
    rows = []
    for shape, rates in sorted(c.snippet_rates().items()):
        cells = [f"{shape[0]}×{shape[1]}×{shape[2]}", str(len(rates)), _spread(rates)]
        cells += [_spread(c.torch_rates(shape, library)) for library in ("cublas", "cublaslt")]
        rows.append(cells)
    headers = ["bf16 M×N×K", "rounds", "snippet (cublasLtMatmul), TFLOP/s", "torch.mm, cuBLAS preferred",
               "torch.mm, cuBLASLt preferred"]  # fmt: skip
    return markdown_table(headers, rows)


def batched_table(record_id: str = GROUND_UP_H100) -> str:
    """Microseconds per batch for each way of computing it, and how many times faster ``torch.bmm`` is."""
    data = _ground_up(record_id)
    rows = []
    for size, count in data.batched_cases():
        by = data.batched_by_variant(size, count)
        cells = [f"{size}³", f"{count:,}"]
        for name in BATCHED_LABELS:
            r = by.get(name)
            if r is None:
                cells.append("–")
            elif name.startswith("loop"):  # per product: what one iteration of the loop costs
                cells.append(f"{r.ms.median * 1e3:,.0f} ({r.ms.median * 1e3 / count:,.1f} per product)")
            else:
                cells.append(f"{r.ms.median * 1e3:,.1f} ({r.tflops:,.3g} TFLOP/s)")
        ratio = data.loop_over_bmm(size, count)
        cells.append("–" if ratio is None else f"{ratio:,.0f}×")
        rows.append(cells)
    headers = ["m = n = k", "batch", *(f"{label} (µs)" for label in BATCHED_LABELS.values())]
    return markdown_table([*headers, "loop time / bmm time"], rows)


def batched_agreement(record_id: str = GROUND_UP_H100) -> str:
    """One sentence: the largest difference between the variants' results, relative to the largest output."""
    worst = _ground_up(record_id).worst_batched_difference()
    return (
        f"Before timing, every variant's result was compared with `torch.bmm`'s on the same operands: the largest "
        f"difference, relative to the largest output element, was {worst:.1e} (bf16 outputs carry 8 significant "
        f"bits, a relative step of {2**-8:.1e})."
    )


def batched_figure(record_id: str = GROUND_UP_H100) -> str:
    """Inline SVG: how many times faster one ``torch.bmm`` is than the loop, against batch count, per size."""
    from gpukb.figures import new_figure, to_svg

    data = _ground_up(record_id)
    fig, ax = new_figure(6.5, 3.6)
    for size in sorted({m for m, _ in data.batched_cases()}):
        points = [
            (count, ratio)
            for m, count in data.batched_cases()
            if m == size and (ratio := data.loop_over_bmm(m, count)) is not None
        ]
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", label=f"{size}×{size}×{size}")
    ax.axhline(1.0, color="grey", linestyle=":")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("matrices in the batch")
    ax.set_ylabel("loop time / bmm time")
    ax.set_title("One batched call against a loop of GEMMs (bf16)")
    ax.legend(fontsize=8, title="each product")
    return to_svg(fig)


def timing_table(dtype: str = "fp32", n: int = 6000, record_id: str = GROUND_UP_H100) -> str:
    """One product timed every way: median milliseconds, the GFLOP/s the lab's formula makes of it, samples.

    Raises:
        ValueError: If the record has no timing of that type and size (naming those it has).
    """
    data = _ground_up(record_id)
    entries = data.timings(dtype, n)
    if not entries:
        have = sorted({(t.dtype, t.n) for t in data.timing})
        raise ValueError(f"no timing of {dtype} at n={n} in {record_id}; it has {have}")
    rows = [(timing_label(t), f"{t.ms.median:,.4g}", f"{t.gflops:,.0f}", t.ms.n) for t in entries]
    return markdown_table(["how it was timed", "median ms", "2n³ / time (GFLOP/s)", "samples"], rows)


def timing_summary(record_id: str = GROUND_UP_H100) -> str:
    """Every GPU case: what the lab's method reported against the events median, and the error check."""
    data = _ground_up(record_id)
    rows = []
    for dtype, n in data.gpu_cases():
        by = data.by_method(dtype, n)
        error = next((t.rel_error_vs_fp64 for t in by.values() if t.rel_error_vs_fp64 is not None), None)
        rows.append(
            (
                f"{dtype}, n = {n:,}",
                *(
                    "–" if by.get(method) is None else f"{by[method].gflops:,.0f}"
                    for method in ("lab_first_call", "warm_calls_no_sync", "warm_calls_events")
                ),
                "–" if error is None else f"{error:.1e}",
            )
        )
    headers = ["product", "lab's method, first call (GFLOP/s)", "no sync, warm (GFLOP/s)",
               "CUDA events, median (GFLOP/s)", "relative error vs fp64"]  # fmt: skip
    return markdown_table(headers, rows)


def first_call_table(record_id: str = GROUND_UP_H100) -> str:
    """Each GPU case's first call (read without and with synchronization) against its warm events median."""
    data = _ground_up(record_id)
    rows = []
    for dtype, n in data.gpu_cases():
        by = data.by_method(dtype, n)
        if not {"lab_first_call", "first_call_synchronized", "warm_calls_events"} <= set(by):
            continue
        lab, first = by["lab_first_call"].ms.median, by["first_call_synchronized"].ms.median
        warm = by["warm_calls_events"].ms.median
        rows.append((f"{dtype}, n = {n:,}", f"{lab:,.3g}", f"{first:,.3g}", f"{warm:,.3g}", f"{first / warm:,.1f}×"))
    headers = ["product (in the order run)", "first call, no sync (ms)", "first call, synchronized (ms)",
               "warm, events median (ms)", "first / warm"]  # fmt: skip
    return markdown_table(headers, rows)


def cpu_lab_table(record_id: str = GROUND_UP_H100) -> str:
    """The lab's CPU half (numpy, fp32) on the GPU machine's processor."""
    rows = [
        (f"{t.n:,}", timing_label(t), f"{t.ms.median:,.1f}", f"{t.gflops:,.0f}")
        for t in _ground_up(record_id).timing
        if t.device == "cpu"
    ]
    return markdown_table(["n", "how it was timed", "median ms", "GFLOP/s"], rows)


# === Triton GEMM page (docs/gemm/triton.md): its page functions follow this line ===

# --- A Triton GEMM (docs/gemm/triton.md) ---


def _triton(record: TritonGemm | None) -> TritonGemm:
    return triton_results.committed() if record is None else record


def _triton_tflops(value: float | None) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.0f}"


def _triton_ratio(value: float | None) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.3f}"


def triton_goal(record: TritonGemm | None = None) -> str:
    """The goal (≥ 0.95 of cuBLAS at bf16 4096³ and 8192³), what was measured, and whether it was met."""
    ceiling = triton_results.measured_ceiling()
    rows = [
        (
            f"{r.size}³",
            f"`{r.config.label}`",
            _triton_tflops(r.kernel_tflops),
            _triton_tflops(r.cublas_tflops),
            _triton_ratio(r.ratio),
            f"{100 * r.of_ceiling:.0f}%",
            "met" if r.met else "**not met**",
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
        f"goal ≥ {triton_results.GOAL}",
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
    """What the goal's ratios mean next to the run-to-run drift of cuBLAS's own rate, and what clocks the goal's
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
    text = "Triton / cuBLAS in the goal's pairs: " + "; ".join(parts) + ". "
    if big is not None:
        inside = cublas.inside_drift(big.ratio)
        text += (
            f"cuBLAS's own bf16 8192³ rate is {quantity('h100-cublas-bf16-8192', unit=True)} over "
            f"{len(cublas.readings)} runs, which ranged {cublas.low:.0f}–{cublas.high:.0f} (a drift of "
            f"{100 * cublas.drift:.0f}%; [how](../../performance/measuring/#one-figure-per-quantity)). The goal's "
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


# --- A Triton GEMM across shapes (docs/gemm/triton.md, the shape sweep) ---

_DTYPE_SHORT = {"bfloat16": "bf16", "float16": "fp16", "float8_e4m3fn": "FP8 E4M3"}


def _sweep(record: TritonSweepRecord | None) -> TritonSweepRecord:
    return triton_results.sweep_committed() if record is None else record


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
_SWEEP_NAMES = {"first": "first sweep", "issue": "issue 29's products", "random": "random sweep", "tiny": "tiny"}


def triton_sweep_goal(record: TritonSweepRecord | None = None) -> str:
    """The sweep's goals per set of shapes and input type: the ratio to the peer (geometric mean, lowest, lowest of
    the large products) and the error ratio."""
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
                "met" if g.met else "**not met**",
                f"{g.worst_error_ratio:.2f}",
                "met" if g.errors_met else "**not met**",
            )
        )
    headers = [
        "shapes",
        "type",
        "count",
        "geometric mean of Triton / peer",
        "lowest (M×N×K)",
        "lowest with M·N·K ≥ 2^30",
        "speed goal",
        "speed",
        "largest error / peer's error",
        f"error goal ≤ {triton_results.ERROR_GOAL:g}×",
    ]
    return markdown_table(headers, rows)


def triton_sweep_figure(record: TritonSweepRecord | None = None) -> str:
    """Inline SVG: the ratio to the peer of every measured shape, one point per shape and type, by group."""
    from gpukb.figures import new_figure, to_svg

    record = _sweep(record)
    labels: list[str] = []
    index: dict[tuple[str, str], int] = {}
    for r in record.rows:
        key = (r.label, r.layout)
        if key not in index:
            index[key] = len(labels)
            labels.append(r.label.replace("Llama-3-8B ", "") + (f" ({r.layout})" if r.layout != "NN" else ""))
    fig, ax = new_figure(9.0, 4.2)
    for dtype, marker in (("bfloat16", "o"), ("float16", "s"), ("float8_e4m3fn", "^")):
        points = [(index[(r.label, r.layout)], r.ratio) for r in record.rows if r.dtype == dtype and r.ratio]
        if points:
            ax.scatter(*zip(*points, strict=True), marker=marker, s=18, label=_DTYPE_SHORT[dtype])
    ax.axhline(1.0, color="grey", linestyle=":")
    ax.axhline(triton_results.SWEEP_GEOMEAN_GOAL, color="grey", linestyle="--", linewidth=0.8)
    ax.axhline(triton_results.SWEEP_FLOOR_GOAL, color="grey", linestyle="-.", linewidth=0.8)
    ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=6)
    ax.set_yscale("log")
    ax.set_ylabel("peer time / Triton time")
    ax.set_title("The Triton GEMM against cuBLAS (bf16, fp16) and _scaled_mm (FP8), H100")
    ax.legend(fontsize=8)
    return to_svg(fig)


def triton_sweep_table(dtype: str = "bfloat16", sweep: str = "first", record: TritonSweepRecord | None = None) -> str:
    """Every measured shape of one input type and set of shapes (``"first"``, ``"issue"``, ``"random"``,
    ``"tiny"``): the configuration chosen, the rates, the ratio, the errors."""
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
    return markdown_table(headers, rows)


def triton_sweep_losses(
    record: TritonSweepRecord | None = None, below: float = triton_results.SWEEP_GEOMEAN_GOAL
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
    return (
        f"The sweep: {measured_on(record.run)} Timing: {record.timing}. Inputs: {record.inputs}. Errors on "
        f"{record.error_rows} sampled rows of C. {tables}"
    )


def triton_trials(layout: str, m: int, n: int, k: int) -> str:
    """Every candidate the issue-29 tuning run timed on one class's representative (bf16), fastest first: how it
    reads the operands, its work units and rounds on the H100's multiprocessors, its time and cuBLAS's over it."""
    record_id = triton_tuning.TABLE_RECORDS[0]
    rows = [
        (
            f"`{t.config.label}`" + (f" (split {t.split_k})" if t.split_k and t.config.split_k is None else ""),
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


def triton_sweep_changes() -> str:
    """The first sweep's shapes whose configuration changed with issue 29's tuning, or whose ratio to the peer moved
    by more than 0.05, before and after (two runs, each against cuBLAS in its own process)."""
    before = triton_results.sweep_committed(triton_results.SWEEP_BEFORE_ID)
    after = _sweep(None)
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
