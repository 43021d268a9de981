"""The formats chapter's page layer: the only code that returns Markdown or SVG for ``docs/formats/``.

Library modules return values or ``(headers, rows)`` (``gpukb.formats.tables``, ``mx.error_table``, ...) and
figures as matplotlib figures (``gpukb.formats.figures``); the functions here render them, and load recorded
results by id (``gpukb.formats.results``), so a page calls them with no path::

    from gpukb.formats.pages import tf32_check
    print(tf32_check())
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gpukb import tables as render
from gpukb.calculators import Field, calculator_html
from gpukb.figures import to_svg
from gpukb.formats import figures, mixed_precision, mx, nvfp4, tables
from gpukb.formats.codec import ROUNDING_MODES
from gpukb.formats.problems import problems as chapter_problems
from gpukb.formats.results import CODEC_SPEED_ID, GPU_CHECKS_ID, CodecSpeed, GpuChecks
from gpukb.formats.spec import formats, name_sources
from gpukb.problems import markdown as problems_markdown
from gpukb.records import load, measured_table

# --- tables computed from the formats ------------------------------------------------------------------------


def value_table(value: object, names: Iterable[str] | None = None) -> str:
    """One number stored in each format (default: all): bits, fields, stored value, error and outcome."""
    return render.markdown_table(*tables.value_table(value, names))


def properties_table(
    names: Iterable[str] | None = None,
    int8: bool = False,
    transpose: bool = False,
    columns: Sequence[str] | None = None,
) -> str:
    """Range and precision of each format (default: all), with an INT8 row if asked.

    Args:
        names: The formats, in order (default: all).
        int8: Add an INT8 row for comparison.
        transpose: Put the formats in columns, for a few formats with many properties.
        columns: The properties to show, by header (default: all); the format's name always comes first. A page
            with many formats splits the table in two this way, so that neither needs scrolling.

    Raises:
        ValueError: If a name in ``columns`` is not a property the table has.
    """
    headers, rows = tables.properties_table(names, int8=int8)
    if columns is not None:
        unknown = [c for c in columns if c not in headers]
        if unknown:
            raise ValueError(f"unknown properties {unknown}; the table has {headers}")
        keep = [0, *(headers.index(c) for c in columns if c != headers[0])]
        headers, rows = [headers[i] for i in keep], [[row[i] for i in keep] for row in rows]
    if transpose:
        headers, rows = render.transposed(headers, rows)
    return render.markdown_table(headers, rows)


def reinterpretation_table(patterns: Iterable[int], names: Iterable[str]) -> str:
    """The same bit patterns read as different formats."""
    return render.markdown_table(*tables.reinterpretation_table(patterns, names))


def names_table() -> str:
    """What each library calls each format, followed by the list of where those names were checked.

    A blank line separates the table from the list (without it, the list's lines would be read as table rows), and
    each source is a link.
    """

    def linked(source: str) -> str:
        title, sep, url = source.rpartition(": ")
        return f"[{title}]({url})" if sep and url.startswith(("http://", "https://")) else source

    sources = "\n".join(f"- {library}: {linked(source)}" for library, source in name_sources().items())
    return f"{render.markdown_table(*tables.names_table())}\n\n{sources}"


def cast_table(name: str, values: Iterable[float]) -> str:
    """float32 inputs cast to ``name`` by the format's rules and by the installed ml_dtypes and torch."""
    return render.markdown_table(*tables.cast_table(name, values))


def relative_gap_figure(names: Iterable[str], title: str) -> str:
    """The gap between neighbouring values relative to the value, against the value, one line per format, as
    inline SVG."""
    return to_svg(figures.relative_gap_figure(names, title))


# --- mixed precision -----------------------------------------------------------------------------------------

#: What each autocast list runs in, and why, as the page says it.
_AUTOCAST_ROWS = (
    ("lower-precision", "float16 / bfloat16",
     "products of 16-bit inputs, summed by tensor cores in an FP32 accumulator"),
    ("float32", "float32",
     "long sums (reductions, norms, softmax, losses) and functions whose output range outgrows FP16"),
    ("widest", "the widest input type", "several inputs that must share a dtype"),
)  # fmt: skip


def autocast_table() -> str:
    """PyTorch's CUDA autocast op lists (``gpukb/data/autocast.toml``): what runs in 16 bits, what in FP32, and why."""

    def ops(names: Sequence[str]) -> str:
        return ", ".join(f"`{name}`" for name in names)  # code spans, so that `__matmul__` does not turn bold

    rows = [[runs_in, ops(mixed_precision.autocast_ops(list_id)), why] for list_id, runs_in, why in _AUTOCAST_ROWS]
    return render.markdown_table(["autocast runs them in", "ops (CUDA)", "why"], rows)


# --- MX formats ----------------------------------------------------------------------------------------------


def outlier_data(model: mx.OutlierModel | None = None) -> str:
    """One sentence saying what the MX comparison's weight-like data is (default: ``mx.OutlierModel()``)."""
    m = model or mx.OutlierModel()
    return (
        f"A {m.rows} × {m.cols} float32 matrix (seed {m.seed}): row \\(i\\) is Gaussian with standard "
        f"deviation \\({m.std}\\,e^{{z_i}}\\), \\(z_i \\sim N(0, {m.row_spread}^2)\\), and "
        f"{m.outlier_channels} randomly chosen columns are multiplied by {m.outlier_scale:g}. "
        f"Blocks of 32 run along the rows, so most blocks hold no outlier and some hold one."
    )


def mx_error_table(model: mx.OutlierModel | None = None) -> str:
    """The error of every storage scheme the MX page compares, on the weight-like data."""
    return render.markdown_table(*mx.error_table(model))


def nvfp4_error_table(model: mx.OutlierModel | None = None) -> str:
    """Per-tensor FP4, MXFP4 (both scale rules) and NVFP4 on the MX page's weight-like data."""
    return render.markdown_table(*nvfp4.error_table(model))


# --- recorded results ----------------------------------------------------------------------------------------


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


def cuda_casts(record_id: str = GPU_CHECKS_ID) -> str:
    """How torch's recorded CUDA casts compared with the format rules, per format, and the E4M3 overflow probe."""
    record = load(record_id, expect=GpuChecks)
    rows = [
        [c.format, c.inputs, c.cuda_matches_rules, c.cuda_matches_saturating, c.cuda_matches_cpu] for c in record.casts
    ]
    table = render.markdown_table(
        ["format", "inputs", "CUDA = format rules", "CUDA = saturating rules", "CUDA = CPU"], rows
    )
    probe = record.e4m3_overflow
    probe_rows = [[value, probe.cuda[value], probe.cpu[value]] for value in probe.cuda]
    probe_headers = ["float32 input", "E4M3 on CUDA", "E4M3 on CPU"]
    return f"{table}\n\n" + measured_table(probe_headers, probe_rows, record.run, command=False)


def codec_speed(record_id: str = CODEC_SPEED_ID) -> str:
    """The recorded codec timing as a table: gpukb's numpy code against ml_dtypes' C++ casts."""
    record = load(record_id, expect=CodecSpeed)
    rows = [
        [
            r.format,
            f"{r.gpukb_encode_s * 1e3:.1f}",
            f"{r.ml_dtypes_encode_s * 1e3:.1f}",
            f"{r.gpukb_decode_s * 1e3:.1f}",
            f"{r.ml_dtypes_decode_s * 1e3:.1f}",
            f"{r.round_trip_ratio:.1f}×",
        ]
        for r in record.rows
    ]
    headers = ["format", "encode, gpukb (ms)", "encode, ml_dtypes (ms)", "decode, gpukb (ms)", "decode, ml_dtypes (ms)",
               "round trip, gpukb / ml_dtypes"]  # fmt: skip
    n = record.rows[0].n if record.rows else 0
    return measured_table(
        headers,
        rows,
        record.run,
        f"{n:,} float32 values, medians of {record.repeats} runs after a warm-up, one CPU core "
        f"({record.run.cpu_count} present). ",
    )


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.formats.problems`)."""
    return problems_markdown(chapter_problems())


def bit_layout_figure() -> str:
    """Inline SVG: the sign, exponent and mantissa bits of each format, with its bias and largest value."""
    return to_svg(figures.bit_layout_figure())


# --- the calculator ------------------------------------------------------------------------------------------


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
