"""The attention chapter's page layer: the only code that turns its library and its record into Markdown.

Pages call these functions with no file paths (``from gpukb.attention.pages import scaling``). The library
(:mod:`gpukb.attention.costs`, :mod:`gpukb.attention.flash`) returns values or ``(headers, rows)``; the benchmark
record is loaded by id (:data:`gpukb.attention.results.FLASH_FORWARD_ID`).
"""

from __future__ import annotations

import math

from gpukb.attention import costs
from gpukb.attention.kernel import DEFAULT_CONFIGS
from gpukb.attention.results import BACKENDS, FLASH_FORWARD_ID, Case, FlashForward
from gpukb.calculators import Field, calculator_html
from gpukb.measuring.counting import ELEMENT_BYTES
from gpukb.records import load, measured_on
from gpukb.tables import markdown_table

# --- the math (docs/attention/cost.md) ------------------------------------------------------------------------


def scaling() -> str:
    """Variance of q·k with and without the 1/√d scale, and how peaked the softmax gets."""
    return markdown_table(*costs.scaling_table())


def cost_table() -> str:
    """Operations and bytes of one forward pass over sequence lengths (batch 4, 32 heads of 128, bf16)."""
    return markdown_table(*costs.costs_table())


def kv_cache() -> str:
    """KV-cache sizes of a 32-layer model with 32 query heads of 128 at 8192 tokens."""
    return markdown_table(*costs.kv_cache_table())


# --- the kernel and its benchmark (docs/attention/kernel.md) ---------------------------------------------------


def _record() -> FlashForward:
    return load(FLASH_FORWARD_ID, FlashForward)


def _rate(case: Case, name: str) -> float | None:
    timings = [case.triton, *case.backends]
    return next((t.tflops for t in timings if t.name == name), None)


def _best_backend(case: Case) -> tuple[str, float]:
    name, rate = max(((t.name, t.tflops) for t in case.backends if t.tflops), key=lambda x: x[1])
    return name, rate


def _fmt(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def flash_standard() -> str:
    """The standard shape (B=4, H=32, S=4096, D=128, bf16): every implementation, causal and not, with spread."""
    rec = _record()
    rows = []
    for case in (c for c in rec.cases if c.group == "standard"):
        for t in (case.triton, *case.backends):
            label = f"Triton kernel ({case.config})" if t.name == "triton" else f"SDPA {t.name}"
            if t.ms is None:
                rows.append(["yes" if case.causal else "no", label, "-", "-", "-", "-", t.error or "-"])
                continue
            ratio = case.triton.tflops / t.tflops if case.triton.tflops and t.tflops else None
            difference = "-" if t.difference is None else f"{t.difference:.1e}"
            rows.append(["yes" if case.causal else "no", label, f"{t.ms.median:.3f}", f"{t.ms.spread * 100:.1f}",
                         _fmt(t.tflops), _fmt(ratio, 2), difference])  # fmt: skip
    headers = ["causal", "implementation", "median ms", "IQR %", "TFLOP/s", "kernel ÷ this",
               "difference from kernel"]  # fmt: skip
    return markdown_table(headers, rows) + "\n\n" + measured_on(rec.run)


def flash_goal() -> str:
    """The goals, each with the measured figure and whether it was met."""
    rec = _record()
    lines = []
    for case in (c for c in rec.cases if c.group == "standard"):
        name, best = _best_backend(case)
        ratio = case.triton.tflops / best
        kind = "causal" if case.causal else "non-causal"
        verdict = "met" if ratio >= 0.9 else "not met"
        lines.append(
            f"- Standard shape, {kind}: the kernel reaches {case.triton.tflops:.0f} TFLOP/s, {ratio:.2f} of the "
            f"best backend (SDPA {name}, {best:.0f} TFLOP/s); goal ≥ 0.9: **{verdict}**."
        )
    sweep = [c for c in rec.cases if c.group == "sweep"]
    ratios = [c.triton.tflops / _rate(c, "flash") for c in sweep if _rate(c, "flash")]
    below = [c for c in sweep if _rate(c, "flash") and c.triton.tflops < _rate(c, "flash")]
    verdict = "met" if not below else f"not met at {len(below)} of {len(ratios)} shapes"
    mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    lines.append(
        f"- Sweep ({len(sweep)} shapes): against SDPA's flash backend the kernel's ratio ranges from "
        f"{min(ratios):.2f} to {max(ratios):.2f} (geometric mean {mean:.2f}); goal ≥ 1.0 everywhere: **{verdict}**."
    )
    return "\n".join(lines)


def flash_sweep() -> str:
    """The sweep: TFLOP/s of the kernel and of each backend, and the kernel's ratio to flash and to the best."""
    rec = _record()
    rows = []
    for c in (c for c in rec.cases if c.group == "sweep"):
        name, best = _best_backend(c)
        flash = _rate(c, "flash")
        rows.append([c.head_dim, "yes" if c.causal else "no", c.seq, c.batch, c.heads, _fmt(c.triton.tflops),
                     *(_fmt(_rate(c, b)) for b in BACKENDS), _fmt(c.triton.tflops / flash if flash else None, 2),
                     f"{c.triton.tflops / best:.2f} ({name})"])  # fmt: skip
    headers = ["D", "causal", "S", "B", "H", "kernel", *BACKENDS, "kernel ÷ flash", "kernel ÷ best"]
    return markdown_table(headers, rows) + "\n\n" + measured_on(rec.run)


def flash_losses() -> str:
    """Where the kernel is slower than a backend, said plainly, computed from the record: per backend, at how many
    shapes it beat the kernel and the kernel's speed relative to it there, by head dim."""
    rec = _record()
    lines = []
    for name in BACKENDS:
        lost = [(c, c.triton.tflops / r) for c in rec.cases if (r := _rate(c, name)) and r > c.triton.tflops]
        if not lost:
            lines.append(f"- SDPA {name}: slower than the kernel at every one of the {len(rec.cases)} shapes.")
            continue
        parts = []
        for d in sorted({c.head_dim for c, _ in lost}, reverse=True):
            ratios = [x for c, x in lost if c.head_dim == d]
            parts.append(f"D={d}: {len(ratios)} shapes, the kernel at {min(ratios):.2f}× to {max(ratios):.2f}× of it")
        lines.append(f"- SDPA {name}: faster than the kernel at {len(lost)} of the {len(rec.cases)} shapes "
                     f"({'; '.join(parts)}).")  # fmt: skip
    return "\n".join(lines)


def flash_tuning() -> str:
    """Every tiling tried on the tuning shape, and which one each (head_dim, causal) took."""
    rec = _record()
    chosen = {(c.head_dim, c.causal): c.config for c in rec.cases}
    rows = []
    for c in rec.candidates:
        pick = "chosen" if chosen.get((c.head_dim, c.causal)) == c.config else ""
        rows.append([c.head_dim, "yes" if c.causal else "no", c.config, _fmt(c.tflops),
                     "-" if c.registers is None else c.registers, "-" if c.spills is None else c.spills,
                     c.error or pick])  # fmt: skip
    headers = ["D", "causal", "tiling (BLOCK_M×BLOCK_N, warps, stages)", "TFLOP/s", "registers", "spills", "note"]
    return f"Tuning shape: {rec.tuning_shape}.\n\n" + markdown_table(headers, rows)


def flash_defaults() -> str:
    """The kernel's default tilings for each head dimension and causality (``DEFAULT_CONFIGS``)."""
    rows = [[d, "yes" if causal else "no", cfg.label] for (d, causal), cfg in sorted(DEFAULT_CONFIGS.items())]
    return markdown_table(["D", "causal", "default tiling"], rows)


def attention_calculator() -> str:
    """The attention-cost calculator: :func:`gpukb.attention.costs.attention_summary` computed in the browser, with
    the element sizes exported from :data:`gpukb.measuring.counting.ELEMENT_BYTES`."""
    data = {"element_bytes": dict(ELEMENT_BYTES)}
    dtypes = [d for d in ELEMENT_BYTES if d.startswith(("fp", "tf", "bf"))]
    fields = [
        Field("batch", "batch", default="1"),
        Field("heads", "heads", default="32"),
        Field("kv_heads", "kv_heads", default="8", hint="empty: as many as heads"),
        Field("q_len", "q_len", default="8192"),
        Field("kv_len", "kv_len", default="8192"),
        Field("head_dim", "head_dim", default="128"),
        Field("causal", "causal", "checkbox", "on"),
        Field("dtype", "dtype", "select", "bf16", [(d, d) for d in dtypes]),
        Field("layers", "layers (for the cache)", default="32"),
    ]
    return calculator_html("attention", "The cost of one attention layer", fields, data)
