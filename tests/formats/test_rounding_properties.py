"""Properties every format's encoder must have, checked by hypothesis on the exact (scalar) codec."""

from __future__ import annotations

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
