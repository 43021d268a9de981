"""FP32 fields against numpy's float32, bit for bit, and the exact values they encode."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpukb.formats.float32 import fields_from_bits, float32_fields


def test_42_5_is_stored_exactly() -> None:
    f = float32_fields(42.5)
    assert (f.sign, f.exponent_field, f.exponent, f.mantissa_field) == (
        0,
        0b10000100,
        5,
        0b01010100000000000000000,
    )
    assert f.kind == "normal"
    assert f.value == Fraction(85, 2)
    assert f.error == 0


def test_subnormals_have_no_implicit_leading_one() -> None:
    """Decides the erratum 'fp32-formula-normal-only'."""
    smallest = fields_from_bits(0x00000001)
    assert smallest.kind == "subnormal"
    assert smallest.value == Fraction(1, 2**149)
    assert smallest.value == Fraction(float(np.array(1, dtype=np.uint32).view(np.float32)))
    notes_formula = (
        (-1) ** smallest.sign
        * (1 + Fraction(smallest.mantissa_field, 2**23))
        * Fraction(2) ** (smallest.exponent_field - 127)
    )
    assert notes_formula != smallest.value


def test_random_bit_patterns_match_numpy() -> None:
    rng = np.random.default_rng(0)
    patterns = np.concatenate(
        [
            rng.integers(0, 2**32, size=20_000, dtype=np.uint64),
            [0, 1, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x80000000],
        ]
    ).astype(np.uint32)
    values = patterns.view(np.float32)
    for bits, value in zip(patterns.tolist(), values.tolist(), strict=True):
        f = fields_from_bits(bits)
        if math.isnan(value):
            assert f.kind == "nan"
            assert f.value is None
        elif math.isinf(value):
            assert f.kind == "inf"
            assert f.value is None
        else:
            assert f.value == Fraction(value)
            assert (f.value < 0 or (f.value == 0 and f.sign)) == bool(math.copysign(1, value) < 0)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_rounding_matches_a_float32_cast(x: float) -> None:
    with np.errstate(over="ignore"):
        cast = np.float32(x)
    f = float32_fields(x)
    assert f.bits == int(np.array(cast).view(np.uint32))
    if np.isfinite(cast):
        assert f.error == Fraction(float(cast)) - Fraction(x)


@pytest.mark.parametrize(
    ("x", "kind", "sign"),
    [
        (0.0, "zero", 0),
        (-0.0, "zero", 1),
        (math.inf, "inf", 0),
        (-math.inf, "inf", 1),
        (math.nan, "nan", 0),
        (3.5e38, "inf", 0),
        (-3.5e38, "inf", 1),
        (np.float32(1.5), "normal", 0),
    ],
)
def test_special_values(x: float, kind: str, sign: int) -> None:
    f = float32_fields(x)
    assert (f.kind, f.sign) == (kind, sign)


@pytest.mark.parametrize("bad", ["42.5", True, 1 + 2j, None])
def test_non_real_input_is_refused(bad) -> None:
    with pytest.raises(TypeError, match="expects a real number"):
        float32_fields(bad)


@pytest.mark.parametrize("bits", [-1, 2**32])
def test_out_of_range_patterns_are_refused(bits: int) -> None:
    with pytest.raises(ValueError, match=r"0\.\.0xFFFFFFFF"):
        fields_from_bits(bits)


def test_non_integer_pattern_is_refused() -> None:
    with pytest.raises(TypeError, match="bits must be an integer"):
        fields_from_bits(1.0)
