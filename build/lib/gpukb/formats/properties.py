"""The limits of a format, all computed from its parameters: range, precision, and how many values it has."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from gpukb.formats.spec import FloatFormat, get_format


@dataclass(frozen=True)
class Properties:
    """What a format can represent.

    Attributes:
        format: The format.
        max_value: Largest finite value.
        min_normal: Smallest positive normal value.
        min_subnormal: Smallest positive value.
        epsilon: Gap between 1 and the next value, ``2**-mantissa_bits``.
        decimal_digits: Precision in decimal digits, ``(mantissa_bits + 1) * log10(2)``.
        dynamic_range: ``log10(max_value / min_subnormal)``, in decades.
        finite_values: Number of bit patterns that encode a finite number (both zeros counted).
        nan_patterns: Number of bit patterns that encode NaN.
        has_infinity: Whether the format has infinities.
    """

    format: FloatFormat
    max_value: Fraction
    min_normal: Fraction
    min_subnormal: Fraction
    epsilon: Fraction
    decimal_digits: float
    dynamic_range: float
    finite_values: int
    nan_patterns: int
    has_infinity: bool


def nan_pattern_count(fmt: FloatFormat) -> int:
    """How many bit patterns are NaN, from the encoding rules."""
    if fmt.encoding == "ieee":
        return 2 * ((1 << fmt.mantissa_bits) - 1)  # all-ones exponent, non-zero mantissa, either sign
    return {"fn": 2, "fnuz": 1, "e8m0": 1, "finite": 0}[fmt.encoding]


def properties(fmt: str | FloatFormat) -> Properties:
    """Compute the limits of a format.

    Args:
        fmt: A format or a name ``get_format`` accepts.

    Raises:
        ValueError: For an unknown format.

    Example:
        >>> float(properties("e4m3").max_value)
        448.0
    """
    fmt = get_format(fmt)
    infinities = 2 if fmt.has_infinity else 0
    nans = nan_pattern_count(fmt)
    return Properties(
        format=fmt,
        max_value=fmt.max_value,
        min_normal=fmt.min_normal,
        min_subnormal=fmt.min_subnormal,
        epsilon=fmt.epsilon,
        decimal_digits=(fmt.mantissa_bits + 1) * math.log10(2),
        dynamic_range=math.log10(fmt.max_value) - math.log10(fmt.min_subnormal),
        finite_values=(1 << fmt.bits) - nans - infinities,
        nan_patterns=nans,
        has_infinity=fmt.has_infinity,
    )
