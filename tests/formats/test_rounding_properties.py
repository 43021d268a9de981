"""Properties every format's encoder must have, checked by hypothesis on the exact (scalar) codec."""

from __future__ import annotations

import bisect
import decimal
import functools
import math
from fractions import Fraction

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpukb.formats.codec import decode, encode, floor_log2
from gpukb.formats.spec import formats, get_format

NAMES = list(formats())
finite_floats = st.floats(allow_nan=False, allow_infinity=False, width=64)


def _value(bits: int, name: str) -> Fraction | None:
    d = decode(bits, name)
    if d.value is None:
        return None
    return -d.value if d.sign else d.value


def _ulp(x: Fraction, name: str) -> Fraction:
    fmt = get_format(name)
    return Fraction(2) ** (max(floor_log2(abs(x)), fmt.min_exponent) - fmt.mantissa_bits)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(NAMES), st.integers(min_value=0, max_value=2**64 - 1))
def test_representable_values_round_trip(name: str, raw: int) -> None:
    fmt = get_format(name)
    bits = raw % (1 << fmt.bits)
    d = decode(bits, name)
    assume(d.kind not in ("nan",))
    assert encode(d.as_float(), name) == bits  # as_float is exact: every format here fits in float64


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(NAMES), finite_floats, finite_floats)
def test_rounding_is_monotonic(name: str, a: float, b: float) -> None:
    fmt = get_format(name)
    lo, hi = sorted((a, b))
    if not fmt.signed:
        assume(lo > 0)
    v_lo, v_hi = _value(encode(lo, name, saturate=True), name), _value(encode(hi, name, saturate=True), name)
    assert v_lo <= v_hi


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(NAMES), finite_floats)
def test_nearest_even_error_is_at_most_half_an_ulp(name: str, x: float) -> None:
    fmt = get_format(name)
    exact = Fraction(x)
    assume(exact != 0 and abs(exact) <= fmt.max_value)
    if not fmt.signed:
        assume(exact >= fmt.min_normal)
    stored = _value(encode(x, name), name)
    assert abs(stored - exact) <= _ulp(exact, name) / 2


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(NAMES), finite_floats)
def test_toward_zero_never_grows_the_magnitude(name: str, x: float) -> None:
    fmt = get_format(name)
    assume(fmt.signed and math.isfinite(x))
    stored = _value(encode(x, name, rounding="toward-zero"), name)
    assert abs(stored) <= abs(Fraction(x))
    assert abs(Fraction(x)) - abs(stored) < _ulp(Fraction(x), name) or abs(stored) == fmt.max_value


# Decimal strings are read exactly, so most of them lie between two representable values, where a float input (a
# dyadic rational) often does not reach: the oracle below rounds them with exact arithmetic over every value the
# format has, listed by ml_dtypes (or numpy's float16), not by this codec.
NEAREST_FORMATS = ["fp16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e4m3ieee", "e2m3", "e3m2", "e2m1"]


@functools.cache
def _positive_values(name: str) -> tuple[list[Fraction], list[int]]:
    """Every non-negative finite value of the format, ascending, with its bit pattern (sign bit clear)."""
    import ml_dtypes
    import numpy as np

    fmt = get_format(name)
    dtype = np.float16 if name == "fp16" else getattr(ml_dtypes, fmt.library_names["ml_dtypes"])
    patterns = np.arange(1 << (fmt.bits - 1), dtype=np.uint16 if fmt.bits > 8 else np.uint8)
    with np.errstate(invalid="ignore"):  # the NaN patterns, dropped below
        values = patterns.view(dtype).astype(np.float64)
    pairs = sorted((Fraction(float(v)), int(b)) for v, b in zip(values, patterns, strict=True) if np.isfinite(v))
    return [v for v, _ in pairs], [b for _, b in pairs]


def _nearest_even(name: str, x: Fraction) -> int:
    """The pattern of the value nearest to x ≥ 0 (at most the largest finite value); ties go to the even pattern."""
    values, patterns = _positive_values(name)
    i = bisect.bisect_left(values, x)
    if values[i] == x:
        return patterns[i]
    below, above = x - values[i - 1], values[i] - x
    if below == above:
        return patterns[i - 1] if patterns[i - 1] % 2 == 0 else patterns[i]
    return patterns[i - 1] if below < above else patterns[i]


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(NEAREST_FORMATS),
    st.integers(min_value=0, max_value=10**9),
    st.integers(min_value=-17, max_value=5),
    st.booleans(),
)
def test_decimal_strings_round_to_the_nearest_value(name: str, digits: int, exponent: int, negative: bool) -> None:
    fmt = get_format(name)
    exact = Fraction(digits) * Fraction(10) ** exponent
    assume(exact <= _positive_values(name)[0][-1])
    magnitude = _nearest_even(name, exact)
    bits = encode(f"{'-' if negative else ''}{digits}e{exponent}", name)
    sign = negative and (magnitude != 0 or fmt.has_negative_zero)
    assert bits == (sign << (fmt.bits - 1)) | magnitude, (name, digits, exponent, hex(bits), hex(magnitude))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(NEAREST_FORMATS), st.integers(min_value=1, max_value=2**15))
def test_decimal_midpoints_round_to_even(name: str, index: int) -> None:
    values, patterns = _positive_values(name)
    i = 1 + index % (len(values) - 1)
    midpoint = (values[i - 1] + values[i]) / 2
    with decimal.localcontext(prec=1000):  # a dyadic fraction has a finite decimal expansion: enough digits, exact
        text = str(decimal.Decimal(midpoint.numerator) / decimal.Decimal(midpoint.denominator))
    assert Fraction(text) == midpoint
    even = patterns[i - 1] if patterns[i - 1] % 2 == 0 else patterns[i]
    assert encode(text, name) == even, (name, text)
