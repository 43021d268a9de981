"""explain(): fields, stored value, error and what happened, for the cases a reader asks about."""

from __future__ import annotations

from fractions import Fraction

import pytest

from gpukb.formats.explain import explain


def test_42_5_in_e4m3_becomes_44() -> None:
    e = explain("42.5", "e4m3")
    assert (e.stored.sign, e.stored.exponent_field, e.stored.mantissa_field) == (0, 0b1100, 0b011)
    assert e.unbiased_exponent == 5
    assert e.stored.value == 44
    assert e.error == Fraction(3, 2)
    assert e.relative_error == pytest.approx(1.5 / 42.5)
    assert e.outcome == "rounded"


def test_decimal_strings_are_exact() -> None:
    e = explain("0.1", "fp32")
    assert e.input == Fraction(1, 10)
    assert e.stored.value == Fraction(13421773, 2**27)
    assert e.error == Fraction(13421773, 2**27) - Fraction(1, 10)


@pytest.mark.parametrize(
    ("value", "fmt", "options", "outcome"),
    [
        ("42.5", "fp32", {}, "exact"),
        ("1000", "e4m3", {}, "overflow"),
        ("1000", "e4m3", {"saturate": True}, "saturated"),
        ("1e6", "e5m2", {}, "overflow"),
        ("1e-10", "e4m3", {}, "underflow"),
        ("0.001953125", "e4m3", {}, "subnormal"),  # 2**-9, the smallest E4M3 subnormal
        ("0.0025", "e4m3", {}, "subnormal, rounded"),
        ("inf", "fp16", {}, "inf"),
        ("nan", "bf16", {}, "nan"),
        ("100", "e2m1", {}, "saturated"),  # FP4 has no infinity or NaN: it always saturates
    ],
)
def test_outcomes(value: str, fmt: str, options: dict, outcome: str) -> None:
    assert explain(value, fmt, **options).outcome == outcome


def test_overflow_flags() -> None:
    e = explain(1e6, "e4m3")
    assert e.overflow
    assert e.stored.kind == "nan"
    assert e.error is None
    s = explain(1e6, "e4m3", saturate=True)
    assert s.saturated
    assert not s.overflow
    assert s.stored.value == 448


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("1", "fp7"), ValueError, "unknown format 'fp7'"),
        (("1", "e4m3"), None, None),
        (("x", "e4m3"), ValueError, "is not a number"),
        ((True, "e4m3"), TypeError, r"got True \(bool\)"),
        (("nan", "e2m3"), ValueError, "e2m3 has no NaN"),
    ],
)
def test_bad_input(args, error, message) -> None:
    if error is None:
        assert explain(*args).stored.value == 1
        return
    with pytest.raises(error, match=message):
        explain(*args)


def test_42_5_in_fp8_is_not_0_1010_010() -> None:
    """Decides the erratum 'fp8-42-5-row': the notes' FP8 pattern 0 1010 010 is 10, not 42.5."""
    notes_pattern = 0b0_1010_010
    assert explain("42.5", "e4m3").stored.bits != notes_pattern
    from gpukb.formats.codec import decode

    assert decode(notes_pattern, "e4m3").value == 10
    assert explain("42.5", "e4m3").stored.bits == 0b0_1100_011
    assert explain("42.5", "e5m2").stored.bits == 0b0_10100_01
    assert explain("42.5", "e5m2").stored.value == 40
