"""Bit patterns to exact values and back, for any ``FloatFormat``, one number at a time.

Decoding is exact: the value comes back as a ``Fraction``. Encoding rounds an exact input (a float, an int,
a ``Fraction``, a ``Decimal`` or a decimal string such as ``"0.1"``) to the format, by one of ``ROUNDING_MODES``:

* ``"nearest-even"``: IEEE 754's default, and what every library cast here does.
* ``"toward-zero"``: truncation; it never overflows to infinity or NaN (it stops at the largest finite value).
* ``"stochastic"``: round up with probability equal to the distance from the value below, in ulps; unbiased in
  expectation, which is why low-precision training uses it for weight updates.

Overflow does what the format defines (infinity for IEEE-style formats, NaN for the finite-only ones) unless
``saturate=True``, which clamps to the largest finite value as OCP's saturating conversion does. Formats with
neither infinity nor NaN (FP6, FP4) always saturate.

Parsing is bounded: a decimal string is at most ``gpukb.arguments.MAX_TEXT_LENGTH`` characters, and a decimal
whose exponent lies beyond ``±DECIMAL_EXPONENT_LIMIT`` (far outside every format's range) is never expanded into
an exact fraction: ``encode`` overflows (or saturates) or underflows it at once, as the exact value would.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from decimal import MAX_EMAX, Decimal, InvalidOperation
from fractions import Fraction
from typing import Literal

import numpy as np

from gpukb.arguments import MAX_TEXT_LENGTH, choice, flag, given, random_generator, text
from gpukb.formats.spec import FloatFormat, get_format

#: Decimal inputs are exact within ``10**±DECIMAL_EXPONENT_LIMIT``, a range far wider than any format's (FP64
#: spans about ``10**-324 .. 10**308``); beyond it a value only overflows or underflows, so no fraction is built.
DECIMAL_EXPONENT_LIMIT = 1000

#: What stands in for a magnitude beyond the limit: powers of two outside every format's range by far.
_HUGE, _TINY = Fraction(2) ** 4000, Fraction(1, 2**4000)

ROUNDING_MODES = ("nearest-even", "toward-zero", "stochastic")

Kind = Literal["zero", "subnormal", "normal", "inf", "nan"]


@dataclass(frozen=True)
class Decoded:
    """What one bit pattern means.

    Attributes:
        bits: The pattern.
        kind: ``"zero"``, ``"subnormal"``, ``"normal"``, ``"inf"`` or ``"nan"``.
        sign: 1 for negative (always 0 for unsigned formats and for NaN in fnuz formats).
        exponent_field: The stored exponent bits.
        mantissa_field: The stored fraction bits.
        value: The exact value, or ``None`` for infinity and NaN. Zeros are ``Fraction(0)``: see ``sign``.
    """

    bits: int
    kind: Kind
    sign: int
    exponent_field: int
    mantissa_field: int
    value: Fraction | None

    @property
    def signed_value(self) -> Fraction | None:
        """The exact value with its sign (``-0`` is ``Fraction(0)``), or ``None`` for infinity and NaN."""
        if self.value is None:
            return None
        return -self.value if self.sign else self.value

    def as_float(self) -> float:
        """The value as a Python float (NaN, signed infinity and signed zero included)."""
        if self.kind == "nan":
            return math.nan
        if self.kind == "inf":
            return -math.inf if self.sign else math.inf
        magnitude = float(abs(self.value))
        return -magnitude if self.sign else magnitude


def check_bits(bits: int, fmt: FloatFormat) -> int:
    """Validate a bit pattern for a format.

    Raises:
        TypeError: If ``bits`` is not an integer.
        ValueError: If it does not fit in the format's width.
    """
    if isinstance(bits, bool) or not isinstance(bits, numbers.Integral | np.integer):
        raise TypeError(f"a bit pattern is an integer (e.g. 0x63); got {given(bits)}")
    bits = int(bits)
    if not 0 <= bits < 1 << fmt.bits:
        raise ValueError(
            f"bit pattern {bits:#x} does not fit {fmt.name} ({fmt.bits} bits: 0..{(1 << fmt.bits) - 1:#x})"
        )
    return bits


#: The longest text read as a bit pattern (a 64-bit pattern in binary, ``0b`` and a sign fit).
MAX_BITS_TEXT = 68


def parse_bits(written: object) -> int:
    """A bit pattern written as Python writes an integer: ``0x63``, ``0b1100011``, ``0o143`` or ``99``
    (underscores between digits allowed). Whether it fits a format is :func:`check_bits`'s question.

    Raises:
        TypeError: If ``written`` is not a string.
        ValueError: If it is longer than ``MAX_BITS_TEXT`` characters or is not an integer literal.

    Example:
        >>> parse_bits("0x63")
        99
    """
    written = text("bit pattern", written, max_length=MAX_BITS_TEXT)
    stripped = written.strip()
    try:
        # Python's literals have ASCII digits only (int() would also read '٣' as 3); a sign is read, and
        # check_bits refuses a negative pattern with the format's range
        if not stripped.isascii():
            raise ValueError
        return int(stripped, 0)
    except ValueError:
        raise ValueError(f"a bit pattern is written like 0x63, 0b1100011 or 99; got {_short(written)}") from None


def decode(bits: int, fmt: str | FloatFormat) -> Decoded:
    """The exact meaning of one bit pattern.

    Args:
        bits: The pattern, ``0 .. 2**fmt.bits - 1``.
        fmt: A format or a name ``get_format`` accepts.

    Raises:
        ValueError: For an unknown format or a pattern that does not fit.

    Example:
        >>> decode(0x7E, "e4m3").value
        Fraction(448, 1)
    """
    fmt = get_format(fmt)
    bits = check_bits(bits, fmt)
    m_bits = fmt.mantissa_bits
    sign = (bits >> (fmt.exponent_bits + m_bits)) & 1 if fmt.signed else 0
    magnitude = bits & fmt.magnitude_mask
    exponent_field, mantissa_field = magnitude >> m_bits, magnitude & ((1 << m_bits) - 1)

    def result(kind: Kind, value: Fraction | None) -> Decoded:
        return Decoded(bits, kind, sign, exponent_field, mantissa_field, value)

    all_ones_exponent = exponent_field == (1 << fmt.exponent_bits) - 1
    if fmt.encoding == "e8m0":
        if all_ones_exponent:
            return result("nan", None)
        return result("normal", Fraction(2) ** (exponent_field - fmt.bias))
    if fmt.encoding == "fnuz" and sign and magnitude == 0:
        return result("nan", None)
    if fmt.encoding == "ieee" and all_ones_exponent:
        return result("nan", None) if mantissa_field else result("inf", None)
    if fmt.encoding == "fn" and magnitude == fmt.magnitude_mask:
        return result("nan", None)
    if exponent_field == 0:
        value = Fraction(mantissa_field, 1 << m_bits) * Fraction(2) ** fmt.min_exponent
        return result("subnormal" if mantissa_field else "zero", value)
    value = (1 + Fraction(mantissa_field, 1 << m_bits)) * Fraction(2) ** (exponent_field - fmt.bias)
    return result("normal", value)


def to_fraction(value: object) -> tuple[int, Fraction | None, str]:
    """Split a real number into (sign, exact magnitude, kind) with kind ``"finite"``, ``"inf"`` or ``"nan"``.

    Strings are read as exact decimals, so ``"0.1"`` is one tenth, not the float nearest to it.

    Raises:
        TypeError: For ``bool``, complex numbers and other non-real objects.
        ValueError: For a string that is not a number or is longer than ``MAX_TEXT_LENGTH``, and for a decimal
            beyond ``10**±DECIMAL_EXPONENT_LIMIT`` (its exact value is not built).
    """
    sign, magnitude, kind, beyond = split(value)
    if beyond:
        raise ValueError(
            f"{_short(value)} lies beyond 10**±{DECIMAL_EXPONENT_LIMIT}, the range read exactly "
            "(every format's range is far inside it)"
        )
    return sign, magnitude, kind


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}...({len(text)} characters)"


#: A decimal in exponent notation; group 1 is the exponent (to tell an over-long exponent from a non-number).
_EXPONENT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)[eE]([+-]?\d+)")


def _parse_decimal(text: str) -> Decimal:
    if len(text) > MAX_TEXT_LENGTH:
        raise ValueError(f"a number is at most {MAX_TEXT_LENGTH:,} characters; got {len(text):,}")
    try:
        return Decimal(text.strip())
    except InvalidOperation:
        exponent = _EXPONENT.fullmatch(text.strip())
        if exponent:  # well formed, but the exponent is past what decimal holds (about 10**18)
            raise ValueError(
                f"{_short(text)} has an exponent of {len(exponent.group(1).lstrip('+-'))} digits; at most "
                f"{len(str(MAX_EMAX))} are read (numbers that far out are beyond every format anyway)"
            ) from None
        raise ValueError(f"{_short(text)} is not a number (write e.g. '42.5', '-1e-3', 'inf', 'nan')") from None


def split(value: object) -> tuple[int, Fraction | None, str, bool]:
    """``to_fraction``, bounded: ``(sign, magnitude, kind, beyond)``.

    For a decimal beyond ``10**±DECIMAL_EXPONENT_LIMIT`` ``beyond`` is True and ``magnitude`` is a stand-in
    (``2**4000`` or ``2**-4000``) that every format rounds exactly as it rounds the true value: to overflow, to
    its largest value, to zero or (stochastically, with probability below ``2**-3000``) to its smallest.

    Raises:
        TypeError: For ``bool``, complex numbers and other non-real objects.
        ValueError: For a string that is not a number or is longer than ``MAX_TEXT_LENGTH``.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(
        value, str | numbers.Real | Decimal | np.floating | np.integer
    ):
        raise TypeError(f"expected a real number or a decimal string; got {given(value)}")
    if isinstance(value, str):
        value = _parse_decimal(value)
    if isinstance(value, Decimal):
        if value.is_nan():
            return 0, None, "nan", False
        sign = int(value.is_signed())
        if value.is_infinite():
            return sign, None, "inf", False
        if value.is_zero():
            return sign, Fraction(0), "finite", False
        exponent = value.adjusted()  # the decimal exponent of the leading digit: |value| in [10**e, 10**(e+1))
        if exponent > DECIMAL_EXPONENT_LIMIT:
            return sign, _HUGE, "finite", True
        if exponent < -DECIMAL_EXPONENT_LIMIT:
            return sign, _TINY, "finite", True
        return sign, abs(Fraction(value)), "finite", False
    if isinstance(value, float | np.floating):
        sign = int(np.signbit(value))
        if np.isnan(value):
            return sign, None, "nan", False
        if np.isinf(value):
            return sign, None, "inf", False
        # as_integer_ratio is exact for every numpy float (longdouble too), where float() would round.
        return sign, abs(Fraction(*value.as_integer_ratio())), "finite", False
    exact = Fraction(int(value)) if isinstance(value, np.integer) else Fraction(value)
    return int(exact < 0), abs(exact), "finite", False


def floor_log2(x: Fraction) -> int:
    """``floor(log2(x))`` for a positive fraction, exactly."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e if Fraction(2) ** e <= x else e - 1


def round_integer(q: Fraction, rounding: str, rng: np.random.Generator | int | None = None) -> int:
    """Round a non-negative fraction to an integer.

    Raises:
        ValueError: For an unknown rounding mode.
        TypeError: For an ``rng`` that is not ``None``, an int seed or a ``numpy.random.Generator``.
    """
    whole = q.numerator // q.denominator
    frac = q - whole
    if rounding == "nearest-even":
        return whole + (frac > Fraction(1, 2) or (frac == Fraction(1, 2) and whole % 2 == 1))
    if rounding == "toward-zero":
        return whole
    if rounding == "stochastic":
        u = random_generator("rng", rng).random()
        return whole + (Fraction(u) < frac)
    raise ValueError(f"unknown rounding {rounding!r}; choose one of {list(ROUNDING_MODES)}")


def nan_bits(fmt: FloatFormat, sign: int = 0) -> int:
    """The NaN pattern an encoder writes (quiet NaN with the sign kept, where the format has a choice).

    Raises:
        ValueError: For formats with no NaN (FP6, FP4).
    """
    if fmt.encoding == "ieee":
        quiet = 1 << (fmt.mantissa_bits - 1) if fmt.mantissa_bits else 0
        return _with_sign(fmt, sign, (((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits) | quiet)
    if fmt.encoding == "fn":
        return _with_sign(fmt, sign, fmt.magnitude_mask)
    if fmt.encoding == "fnuz":
        return 1 << (fmt.bits - 1)
    if fmt.encoding == "e8m0":
        return fmt.magnitude_mask
    raise ValueError(f"{fmt.name} has no NaN: every one of its {1 << fmt.bits} bit patterns is a finite number")


def _with_sign(fmt: FloatFormat, sign: int, magnitude: int) -> int:
    return (sign << (fmt.bits - 1)) | magnitude if fmt.signed else magnitude


def _overflow_bits(fmt: FloatFormat, sign: int, saturate: bool) -> int:
    if saturate or fmt.encoding == "finite":
        return _with_sign(fmt, sign, fmt.max_magnitude_bits)
    if fmt.encoding == "ieee":
        return _with_sign(fmt, sign, ((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits)
    return nan_bits(fmt, sign)


def encode(
    value: object,
    fmt: str | FloatFormat,
    rounding: str = "nearest-even",
    saturate: bool = False,
    rng: np.random.Generator | int | None = None,
) -> int:
    """Round a number to a format and return the bit pattern.

    Args:
        value: A real number or decimal string (read exactly).
        fmt: A format or a name ``get_format`` accepts.
        rounding: One of ``ROUNDING_MODES``.
        saturate: Clamp overflow (and infinity) to the largest finite value instead of infinity/NaN (a bool).
        rng: Random source for stochastic rounding: ``None`` (fresh entropy), an int seed or a
            ``numpy.random.Generator``.

    Raises:
        ValueError: For an unknown format or rounding mode, or NaN into a format that has no NaN.
        TypeError: For an input that is not a real number, a ``saturate`` that is not a bool, a ``rounding`` that
            is not a string, or an ``rng`` that is none of the above.

    Example:
        >>> hex(encode(42.5, "e4m3"))
        '0x63'
    """
    fmt = get_format(fmt)
    choice("rounding", rounding, ROUNDING_MODES)
    saturate = flag("saturate", saturate)
    if rounding == "stochastic":
        rng = random_generator("rng", rng)
    elif rng is not None:
        random_generator("rng", rng)  # refuse a wrong type even where it is not used
    sign, magnitude, kind, _ = split(value)
    if kind == "nan":
        return nan_bits(fmt, sign)
    if not fmt.signed and sign and (kind == "inf" or magnitude != 0):
        return nan_bits(fmt)  # an unsigned format has no negative numbers
    if kind == "inf":
        return _overflow_bits(fmt, sign, saturate)  # infinity is exact: no rounding mode changes it
    if magnitude == 0:
        if fmt.encoding == "e8m0":
            return nan_bits(fmt)  # E8M0 has no zero
        return _with_sign(fmt, sign if fmt.has_negative_zero else 0, 0)

    exponent = max(floor_log2(magnitude), fmt.min_exponent)
    quantum = Fraction(2) ** (exponent - fmt.mantissa_bits)
    n = round_integer(magnitude / quantum, rounding, rng)
    if fmt.encoding == "e8m0":
        # n is 0, 1 or 2 units of 2**exponent; there is no zero, so tiny values stop at 2**-127.
        bits = exponent - fmt.min_exponent + max(n, 1) - 1
    else:
        # Subnormals continue into normals without a seam: n = 2**mantissa_bits at the minimum exponent is
        # the pattern of the smallest normal, and n = 2**(mantissa_bits + 1) carries into the next binade.
        bits = ((exponent - fmt.min_exponent) << fmt.mantissa_bits) + n
    if bits > fmt.max_magnitude_bits:
        return _overflow_bits(fmt, sign, saturate or rounding == "toward-zero")
    if bits == 0 and not fmt.has_negative_zero:
        sign = 0
    return _with_sign(fmt, sign, bits)
