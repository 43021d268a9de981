"""What storing one number in a format does to it: fields, stored value, error, and what went wrong."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from gpukb.formats.codec import Decoded, decode, encode, to_fraction
from gpukb.formats.spec import FloatFormat, get_format


@dataclass(frozen=True)
class Explanation:
    """The story of one number stored in one format.

    Attributes:
        format: The format.
        input: The exact input, or ``None`` for NaN and infinity.
        stored: The decoded result (bits, fields, exact value).
        unbiased_exponent: ``exponent_field - bias`` (``1 - bias`` for subnormals), ``None`` for Inf/NaN.
        error: ``stored - input`` exactly, where both are finite.
        relative_error: ``|error| / |input|`` as a float, where the input is finite and non-zero.
        subnormal: The stored value is subnormal.
        saturated: The input was beyond the largest finite value and was clamped to it.
        overflow: The input was finite but became infinity or NaN.
        underflow: The input was non-zero but became zero.
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

    @property
    def outcome(self) -> str:
        """One word for what happened: exact, rounded, subnormal, saturated, overflow, underflow, nan or inf."""
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
    rng: np.random.Generator | None = None,
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
    sign, magnitude, kind = to_fraction(value)
    stored = decode(encode(value, fmt, rounding=rounding, saturate=saturate, rng=rng), fmt)
    exact = None if magnitude is None else (-magnitude if sign else magnitude)
    finite_out = stored.value is not None
    signed_out = stored.signed_value
    error = signed_out - exact if (finite_out and exact is not None) else None
    relative = float(abs(error) / abs(exact)) if error is not None and exact else None
    unbiased = None
    if finite_out:
        unbiased = fmt.min_exponent if stored.kind in ("zero", "subnormal") else stored.exponent_field - fmt.bias
    beyond_max = exact is not None and abs(exact) > fmt.max_value
    return Explanation(
        format=fmt,
        input=exact,
        stored=stored,
        unbiased_exponent=unbiased,
        error=error,
        relative_error=relative,
        subnormal=stored.kind == "subnormal",
        saturated=beyond_max and finite_out and abs(signed_out) == fmt.max_value,
        overflow=kind == "finite" and not finite_out,
        underflow=exact is not None and exact != 0 and finite_out and signed_out == 0,
    )
