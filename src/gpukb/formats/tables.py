"""The formats chapter's tables, as rows: the CLI prints them as text and ``gpukb.formats.pages`` as Markdown."""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from gpukb.arguments import flag, given
from gpukb.arguments import names as name_list
from gpukb.formats.codec import Decoded, decode, split
from gpukb.formats.explain import explain
from gpukb.formats.properties import properties
from gpukb.formats.spec import LIBRARIES, FloatFormat, formats, get_format

Table = tuple[list[str], list[list[str]]]


def format_value(value: Fraction | None, kind: str = "", sign: int = 0) -> str:
    """A stored value as the shortest decimal that identifies it (exact for every format up to FP64)."""
    if value is None:
        return {"nan": "NaN", "inf": "-inf" if sign else "inf"}.get(kind, "-")
    if value.denominator == 1 and abs(value) < 10**16:
        text = str(abs(value.numerator))
    else:
        text = repr(float(abs(value)))
    return f"-{text}" if sign or value < 0 else text


def fields(d: Decoded, fmt: FloatFormat) -> str:
    """The pattern split into sign, exponent and mantissa, e.g. ``0 1100 011``."""
    exponent = format(d.exponent_field, f"0{fmt.exponent_bits}b")
    parts = [str(d.sign)] if fmt.signed else []
    parts.append(exponent)
    if fmt.mantissa_bits:
        parts.append(format(d.mantissa_field, f"0{fmt.mantissa_bits}b"))
    return " ".join(parts)


def hex_bits(bits: int, fmt: FloatFormat) -> str:
    return f"0x{bits:0{max(1, math.ceil(fmt.bits / 4))}X}"


def _names(names: Iterable[str] | None) -> list[FloatFormat]:
    """The formats named (all of them for ``None``), each once.

    Raises:
        TypeError: For a lone string (give a list) or a non-string name.
        ValueError: For an unknown name, an empty list, or a format named twice.
    """
    chosen = name_list("names", names)
    if chosen is None:
        return list(formats().values())
    fmts = [get_format(n) for n in chosen]
    if not fmts:
        raise ValueError("names is empty; give at least one format, or None for all of them")
    seen: dict[str, str] = {}
    for given_name, fmt in zip(chosen, fmts, strict=True):
        if fmt.name in seen:
            raise ValueError(f"format {fmt.name} is named twice ({seen[fmt.name]!r} and {given_name!r})")
        seen[fmt.name] = given_name
    return fmts


def value_table(value: object, names: Iterable[str] | None = None, **options: object) -> Table:
    """One number stored in each format: bits, fields, stored value, error and outcome.

    Args:
        value: A real number or decimal string.
        names: Formats to include (default: all).
        **options: ``rounding``, ``saturate``, ``rng``, as for ``gpukb.formats.explain.explain``.
    """
    headers = ["format", "bits", "sign exponent mantissa", "stored value", "relative error", "outcome"]
    rows = []
    fmts = _names(names)
    is_nan = split(value)[2] == "nan"  # also refuses a bad value before any row is made
    for fmt in fmts:
        if not fmt.has_nan and is_nan:
            rows.append([fmt.name, "-", "-", "-", "-", "no NaN in this format"])
            continue
        e = explain(value, fmt, **options)
        d = e.stored
        relative = "-" if e.relative_error is None else f"{e.relative_error:.3g}"
        rows.append(
            [
                fmt.name,
                hex_bits(d.bits, fmt),
                fields(d, fmt),
                format_value(d.signed_value, d.kind, d.sign),
                relative,
                e.outcome,
            ]
        )
    return headers, rows


def pattern_table(bits: int, name: str) -> Table:
    """What one bit pattern of one format means."""
    fmt = get_format(name)
    d = decode(bits, fmt)
    exponent = (
        "-"
        if d.kind in ("nan", "inf")
        else str(fmt.min_exponent if d.kind in ("zero", "subnormal") else d.exponent_field - fmt.bias)
    )
    headers = ["format", "bits", "sign exponent mantissa", "kind", "unbiased exponent", "value"]
    return headers, [
        [fmt.name, hex_bits(bits, fmt), fields(d, fmt), d.kind, exponent, format_value(d.signed_value, d.kind, d.sign)]
    ]


def _short(x: Fraction) -> str:
    return f"{float(x):.6g}" if x < 1e6 or x.denominator != 1 else f"{float(x):.4g}"


def properties_table(names: Iterable[str] | None = None, int8: bool = False) -> Table:
    """Range and precision of each format, computed from its parameters.

    Args:
        names: Formats to include (default: all).
        int8: Add a row for INT8 (a step of 1 everywhere, up to 127), the integer type FP8 competes with.
    """
    int8 = flag("int8", int8)
    headers = [
        "format",
        "bits",
        "E",
        "M",
        "bias",
        "specials",
        "max",
        "min normal",
        "min subnormal",
        "epsilon",
        "decimal digits",
        "range (decades)",
        "finite values",
    ]
    specials = {"ieee": "inf, NaN", "fn": "NaN", "fnuz": "NaN (0x80), no -0", "finite": "none", "e8m0": "NaN"}
    rows = []
    for fmt in _names(names):
        p = properties(fmt)
        rows.append(
            [
                fmt.name,
                fmt.bits,
                fmt.exponent_bits,
                fmt.mantissa_bits,
                fmt.bias,
                specials[fmt.encoding],
                _short(p.max_value),
                _short(p.min_normal),
                _short(p.min_subnormal),
                _short(p.epsilon),
                f"{p.decimal_digits:.2f}",
                f"{p.dynamic_range:.1f}",
                f"{p.finite_values:,}",
            ]
        )
    if int8:
        info = np.iinfo(np.int8)
        rows.append(
            [
                "int8",
                8,
                "-",
                "-",
                "-",
                "none",
                info.max,
                1,
                1,
                1,
                f"{8 * math.log10(2):.2f}",
                f"{math.log10(info.max):.1f}",
                f"{1 << 8:,}",
            ]
        )
    return headers, rows


# --8<-- [start:names-table]
def names_table(names: Iterable[str] | None = None) -> Table:
    """What each library calls each format."""
    headers = ["format", *LIBRARIES]
    rows = [[fmt.name, *(fmt.library_names.get(lib, "-") for lib in LIBRARIES)] for fmt in _names(names)]
    return headers, rows
    # --8<-- [end:names-table]


def _cast_cell(value: float | None) -> str:
    if value is None:
        return "no such dtype"
    if value != value:  # NaN
        return "NaN"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    return format_value(Fraction(value)) if abs(value) != float("inf") else ("-inf" if value < 0 else "inf")


def cast_table(name: str, values: Iterable[float]) -> Table:
    """float32 inputs cast to ``name`` by the format's rules and by ml_dtypes and torch, with the installed versions."""
    from gpukb.environment import library_version
    from gpukb.formats.library_casts import compare_casts

    headers = [
        "float32 input",
        "format rules",
        "rules, saturating",
        f"ml_dtypes {library_version('ml_dtypes') or '(missing)'}",
        f"torch {library_version('torch') or '(missing)'} (CPU)",
    ]
    rows = [
        [_cast_cell(r.input), *(_cast_cell(v) for v in (r.rules, r.rules_saturating, r.ml_dtypes, r.torch))]
        for r in compare_casts(list(values), name)
    ]
    return headers, rows


def reinterpretation_table(patterns: Iterable[int], names: Iterable[str]) -> Table:
    """The same bit patterns read as different formats: what mixing up OCP and FNUZ FP8 does to a number."""
    fmts = _names(names)
    headers = ["bits", *(f.name for f in fmts)]
    if isinstance(patterns, str | bytes):
        raise TypeError(f"patterns must be a list of integers; got {given(patterns)}")
    rows = []
    for bits in patterns:
        decoded = [decode(bits, f) for f in fmts]  # checks the pattern against every format first
        cells = [f"0x{int(bits):02X}"]
        for d in decoded:
            cells.append(format_value(d.signed_value, d.kind, d.sign))
        rows.append(cells)
    return headers, rows
