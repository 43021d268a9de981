"""The page “Anatomy of a float” (docs/formats/anatomy.md): its tables, figures and text."""

from __future__ import annotations

from collections.abc import Iterable

from gpukb import tables as render
from gpukb.calculators import Field, calculator_html
from gpukb.figures import to_svg
from gpukb.formats import figures, tables
from gpukb.formats.codec import ROUNDING_MODES
from gpukb.formats.results import GPU_CHECKS_ID, GpuChecks
from gpukb.formats.spec import formats
from gpukb.records import load, measured_table


def value_table(value: object, names: Iterable[str] | None = None) -> str:
    """One number stored in each format (default: all): bits, fields, stored value, error and outcome."""
    return render.markdown_table(*tables.value_table(value, names))


def relative_gap_figure(names: Iterable[str], title: str) -> str:
    """The gap between neighbouring values relative to the value, against the value, one line per format, as
    inline SVG."""
    return to_svg(figures.relative_gap_figure(names, title))


def tf32_check(record_id: str = GPU_CHECKS_ID) -> str:
    """The recorded TF32 check as a table of relative errors, with the hardware and versions it came from."""
    record = load(record_id, expect=GpuChecks)
    t = record.tf32
    rows = [
        ["TF32 matmul vs inputs rounded to TF32 (nearest-even), product in float64",
         f"{t.tf32_vs_nearest_even_inputs:.2e}"],
        ["TF32 matmul vs inputs truncated to TF32, product in float64", f"{t.tf32_vs_truncated_inputs:.2e}"],
        ["TF32 matmul vs exact product of the FP32 inputs", f"{t.tf32_vs_exact:.2e}"],
        ["FP32 matmul (TF32 off) vs exact product", f"{t.fp32_vs_exact:.2e}"],
    ]  # fmt: skip
    note = f"{t.n}×{t.n} matrices, {t.inputs} inputs. "
    return measured_table(["comparison", "relative error (Frobenius)"], rows, record.run, note, command=False)


def bit_layout_figure() -> str:
    """Inline SVG: the sign, exponent and mantissa bits of each format, with its bias and largest value."""
    return to_svg(figures.bit_layout_figure())


def format_calculator(value: str = "42.5", bits: str = "0x63", as_format: str = "e4m3") -> str:
    """The number-format calculator: what ``gpukb format VALUE`` and ``gpukb format BITS --as FORMAT`` print, computed
    in the browser by a port of :mod:`gpukb.formats.codec` and :func:`gpukb.formats.explain.explain`, with every
    format's parameters exported from ``formats.toml``. Stochastic rounding is left out: its result is random."""
    fmts = formats()
    parameters = ("name", "exponent_bits", "mantissa_bits", "bias", "encoding")
    data = {"formats": [{p: getattr(f, p) for p in parameters} for f in fmts.values()]}
    choices = [(name, name) for name in fmts]
    fields = [
        Field("value", "value", default=value, hint="a decimal, read exactly: 0.1, -1e-3, 65504, inf, nan"),
        Field("rounding", "rounding", "select", "nearest-even", [(r, r) for r in ROUNDING_MODES if r != "stochastic"]),
        Field("saturate", "saturate overflow", "checkbox"),
        Field("bits", "bit pattern", default=bits, hint="0x63, 0b1100011 or 99"),
        Field("as_format", "read as", "select", as_format, choices),
    ]
    return calculator_html("formats", "A number in every format, a bit pattern in one", fields, data)
