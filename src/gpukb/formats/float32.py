"""IEEE 754 binary32 (FP32), taken apart into its three bit fields.

An FP32 number is 1 sign bit, 8 exponent bits and 23 mantissa (fraction) bits. With exponent field ``e``
and mantissa field ``m`` the stored value is

* normal (``0 < e < 255``): ``(-1)**s * 2**(e - 127) * (1 + m / 2**23)``
* subnormal (``e == 0``): ``(-1)**s * 2**(-126) * (m / 2**23)``, which includes the two zeros
* ``e == 255``: infinity when ``m == 0``, NaN otherwise.
"""

from __future__ import annotations

import math
import numbers
import struct
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

EXPONENT_BITS = 8
MANTISSA_BITS = 23
BIAS = 127

Kind = Literal["zero", "subnormal", "normal", "inf", "nan"]


@dataclass(frozen=True)
class Float32Fields:
    """The bit fields of one FP32 number and the exact value they encode.

    Attributes:
        bits: The 32-bit pattern as an unsigned integer.
        sign: Sign bit (1 for negative).
        exponent_field: The 8 stored exponent bits, 0..255.
        mantissa_field: The 23 stored fraction bits, 0..2**23-1.
        exponent: Unbiased exponent of the leading bit: ``exponent_field - 127`` for normals, ``-126`` for
            subnormals and zeros, ``None`` for Inf and NaN.
        kind: ``"zero"``, ``"subnormal"``, ``"normal"``, ``"inf"`` or ``"nan"``.
        value: The exact stored value as a fraction, or ``None`` for Inf and NaN.
        error: Stored value minus the input, exactly, or ``None`` when either is not finite.
    """

    bits: int
    sign: int
    exponent_field: int
    mantissa_field: int
    exponent: int | None
    kind: Kind
    value: Fraction | None
    error: Fraction | None


def float32_fields(x: float) -> Float32Fields:
    """Round ``x`` to the nearest FP32 (ties to even) and split it into sign, exponent and mantissa.

    Args:
        x: A real number (``int``, ``float`` or a numpy floating scalar). Values beyond the FP32 range
            round to infinity, as a float32 cast does.

    Returns:
        The fields, the exact stored value and the rounding error.

    Raises:
        TypeError: If ``x`` is not a real number (``bool``, ``str`` and ``complex`` are refused).

    Example:
        >>> f = float32_fields(42.5)
        >>> (f.sign, f.exponent, f.mantissa_field)
        (0, 5, 2752512)
    """
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(
            f"float32_fields expects a real number (int, float, numpy float), got {type(x).__name__}"
        )
    x = float(x)
    try:
        packed = struct.pack(">f", x)
    except OverflowError:  # struct refuses finite values above the FP32 range; a cast gives infinity
        packed = struct.pack(">f", math.copysign(math.inf, x))
    bits = int.from_bytes(packed, "big")
    return fields_from_bits(bits, exact_input=x)


def fields_from_bits(bits: int, exact_input: float | None = None) -> Float32Fields:
    """Decode a 32-bit pattern into its fields and exact value.

    Args:
        bits: An integer in ``0 .. 2**32 - 1``.
        exact_input: The number that was rounded to ``bits``, if any; used to report the rounding error.

    Raises:
        TypeError: If ``bits`` is not an integer.
        ValueError: If ``bits`` is outside ``0 .. 2**32 - 1``.
    """
    if isinstance(bits, bool) or not isinstance(bits, numbers.Integral):
        raise TypeError(f"bits must be an integer, got {type(bits).__name__}")
    if not 0 <= bits < 1 << 32:
        raise ValueError(f"bits must be in 0..0xFFFFFFFF for FP32, got {bits:#x}")
    sign = bits >> 31
    exponent_field = (bits >> MANTISSA_BITS) & 0xFF
    mantissa_field = bits & ((1 << MANTISSA_BITS) - 1)
    value: Fraction | None
    if exponent_field == 0xFF:
        kind: Kind = "nan" if mantissa_field else "inf"
        exponent, value = None, None
    elif exponent_field == 0:
        kind = "subnormal" if mantissa_field else "zero"
        exponent = 1 - BIAS
        value = Fraction(mantissa_field, 1 << MANTISSA_BITS) * Fraction(2) ** exponent
    else:
        kind = "normal"
        exponent = exponent_field - BIAS
        value = (1 + Fraction(mantissa_field, 1 << MANTISSA_BITS)) * Fraction(2) ** exponent
    if value is not None and sign:
        value = -value
    error = None
    if value is not None and exact_input is not None and math.isfinite(exact_input):
        error = value - Fraction(exact_input)
    return Float32Fields(bits, sign, exponent_field, mantissa_field, exponent, kind, value, error)
