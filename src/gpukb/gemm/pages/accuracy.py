"""The accuracy page (docs/gemm/accuracy.md): the FP8 emulator's errors and what the H100 accepted and
computed in FP8 (record ``gemm/fp8-h100``).
"""

from __future__ import annotations

import math

from gpukb.gemm.emulator import FP8_TYPES, error_table
from gpukb.gemm.fp8_hardware import documented, probe_bits_needed, requested_scale_errors
from gpukb.gemm.results import (
    FP8_H100,
    Comparison,
    Fp8Hardware,
)
from gpukb.records import load, measured_on
from gpukb.tables import markdown_table


def emulator_errors(m: int = 256, n: int = 256, k: int = 1024, seed: int = 0) -> str:
    """The error of every combination family against FP64, with a line saying what was multiplied."""
    return (
        f"{markdown_table(*error_table(m, n, k, seed))}\n\nA is {m}×{k} and B is {k}×{n}, both standard normal (numpy "
        f"`default_rng({seed})`), compared with their float64 product before any rounding. Computed by "
        "`gpukb.gemm.emulator.error_rows` when this page was built."
    )


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
