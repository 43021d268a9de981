"""What storing one number in a format does to it: fields, stored value, error, and what went wrong."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from gpukb.formats.codec import Decoded, decode, encode, split
from gpukb.formats.spec import FloatFormat, get_format


@dataclass(frozen=True)
class Explanation:
    """The story of one number stored in one format.

    Attributes:
        format: The format.
        input: The exact input, or ``None`` for NaN, infinity and a decimal beyond
            ``10**±DECIMAL_EXPONENT_LIMIT`` (see ``beyond_exact_range``).
        stored: The decoded result (bits, fields, exact value).
        unbiased_exponent: ``exponent_field - bias`` (``1 - bias`` for subnormals), ``None`` for Inf/NaN.
        error: ``stored - input`` exactly, where both are finite and the input is known exactly.
        relative_error: ``|error| / |input|`` as a float, where the input is finite and non-zero.
        subnormal: The stored value is subnormal.
        saturated: The input (infinity included) was beyond the largest finite value and was clamped to it.
        overflow: The input was finite but became infinity or NaN.
        underflow: The input was non-zero but became zero.
        not_representable: Why the format cannot hold the input at all (a negative number or zero in an unsigned
            format with no zero, E8M0), or ``None``.
        beyond_exact_range: The input was a decimal beyond ``10**±DECIMAL_EXPONENT_LIMIT``, read only as "far
            beyond every format's range"; ``input`` and ``error`` are then ``None``.
    """

    format: FloatFormat
    input: Fraction | None
    stored: Decoded
    unbiased_exponent: int | None
    error: Fraction | None
    relative_error: float | None
    subnormal: bool
    saturated: bool
    overflow: bool
    underflow: bool
    not_representable: str | None = None
    beyond_exact_range: bool = False

    @property
    def outcome(self) -> str:
        """What happened: exact, rounded, subnormal, saturated, overflow, underflow, nan or inf; for a value the
        format cannot hold at all, why (e.g. ``"negative values are not representable"``)."""
        if self.not_representable:
            return self.not_representable
        for flag in ("overflow", "saturated", "underflow"):
            if getattr(self, flag):
                return flag
        if self.stored.kind in ("nan", "inf"):
            return self.stored.kind
        if self.subnormal:
            return "subnormal" if self.error == 0 else "subnormal, rounded"
        return "exact" if self.error == 0 else "rounded"


def explain(
    value: object,
    fmt: str | FloatFormat,
    rounding: str = "nearest-even",
    saturate: bool = False,
    rng: np.random.Generator | int | None = None,
) -> Explanation:
    """Store ``value`` in ``fmt`` and explain the result.

    Args:
        value: A real number or a decimal string (read exactly, so ``"0.1"`` is one tenth).
        fmt: A format or a name ``get_format`` accepts.
        rounding: As for ``gpukb.formats.codec.encode``.
        saturate: As for ``gpukb.formats.codec.encode``.
        rng: As for ``gpukb.formats.codec.encode``.

    Raises:
        ValueError: For an unknown format or rounding mode, or NaN into a format without NaN.
        TypeError: For an input that is not a real number.

    Example:
        >>> e = explain("42.5", "e4m3")
        >>> float(e.stored.value), e.outcome
        (44.0, 'rounded')
    """
    fmt = get_format(fmt)
    sign, magnitude, kind, beyond = split(value)
    stored = decode(encode(value, fmt, rounding=rounding, saturate=saturate, rng=rng), fmt)
    exact = None if magnitude is None else (-magnitude if sign else magnitude)
    finite_out = stored.value is not None
    signed_out = stored.signed_value
    error = signed_out - exact if (finite_out and exact is not None) else None
    relative = None
    if error is not None and exact:
        if beyond:  # |stored - x| / |x| with x astronomically far out: 1 to float precision, or unbounded
            relative = 1.0 if abs(signed_out) <= magnitude else math.inf
        else:
            ratio = abs(error) / abs(exact)  # E8M0 stores 2**-127 for 1e-300: a ratio beyond float's range
            relative = float(ratio) if ratio < 2**1023 else math.inf
    unbiased = None
    if finite_out:
        unbiased = fmt.min_exponent if stored.kind in ("zero", "subnormal") else stored.exponent_field - fmt.bias
    beyond_max = kind == "inf" or (exact is not None and abs(exact) > fmt.max_value)
    reason = None
    if not fmt.signed and sign and (kind == "inf" or exact != 0) and kind != "nan":
        reason = "negative values are not representable"
    elif fmt.encoding == "e8m0" and kind == "finite" and exact == 0:
        reason = "zero is not representable"
    return Explanation(
        format=fmt,
        input=None if beyond else exact,
        stored=stored,
        unbiased_exponent=unbiased,
        error=None if beyond else error,
        relative_error=relative,
        subnormal=stored.kind == "subnormal",
        saturated=beyond_max and finite_out and abs(signed_out) == fmt.max_value,
        overflow=kind == "finite" and not finite_out and reason is None,
        underflow=exact is not None and exact != 0 and finite_out and signed_out == 0,
        not_representable=reason,
        beyond_exact_range=beyond,
    )
