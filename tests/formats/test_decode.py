"""Every bit pattern of every format up to 16 bits (and TF32's 19) decodes to what ml_dtypes and torch say."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from gpukb.formats.arrays import decode_array
from gpukb.formats.codec import decode
from gpukb.formats.library_casts import ml_dtypes_type, torch_dtype
from gpukb.formats.spec import formats, get_format

torch = pytest.importorskip("torch")
SMALL = [f.name for f in formats().values() if f.bits <= 16]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values, NaN matched as NaN, zeros matched by sign."""
    nan = np.isnan(a)
    return bool(
        np.array_equal(nan, np.isnan(b))
        and np.array_equal(a[~nan], b[~nan])
        and np.array_equal(np.signbit(a[~nan]), np.signbit(b[~nan]))
    )


@pytest.mark.parametrize("name", SMALL)
def test_every_pattern_matches_ml_dtypes(name: str) -> None:
    fmt = get_format(name)
    target = ml_dtypes_type(fmt)
    if target is None:
        pytest.skip(f"ml_dtypes has no {name}")
    patterns = np.arange(1 << fmt.bits, dtype=fmt.uint_dtype if fmt.bits >= 8 else np.uint8)
    with np.errstate(invalid="ignore"):  # NaN payloads warn when widened
        reference = patterns.view(target).astype(np.float64)
    assert _same(decode_array(patterns, fmt), reference)


@pytest.mark.parametrize("name", [n for n in SMALL if torch_dtype(n) is not None])
def test_every_pattern_matches_torch(name: str) -> None:
    fmt = get_format(name)
    views = {8: torch.uint8, 16: torch.int16}
    patterns = np.arange(1 << fmt.bits, dtype=np.int64)
    as_torch = torch.from_numpy(patterns.astype(fmt.uint_dtype).view(f"int{fmt.bits}")).view(views[fmt.bits])
    reference = as_torch.view(torch_dtype(fmt)).to(torch.float64).numpy()
    assert _same(decode_array(patterns, fmt), reference)


@pytest.mark.parametrize("name", SMALL)
def test_scalar_and_vectorized_decoders_agree_exactly(name: str) -> None:
    fmt = get_format(name)
    vectorized = decode_array(np.arange(1 << fmt.bits), fmt)
    for bits, value in enumerate(vectorized.tolist()):
        d = decode(bits, fmt)
        if math.isnan(value):
            assert d.kind == "nan"
        elif math.isinf(value):
            assert d.kind == "inf"
            assert d.sign == (value < 0)
        else:
            assert d.value == abs(Fraction(value))
            assert d.as_float() == value
            assert math.copysign(1, d.as_float()) == math.copysign(1, value)


def test_tf32_patterns_are_the_top_19_bits_of_fp32() -> None:
    patterns = np.arange(1 << 19, dtype=np.uint32)
    with np.errstate(invalid="ignore"):
        as_fp32 = (patterns << 13).view(np.float32).astype(np.float64)
    assert _same(decode_array(patterns, "tf32"), as_fp32)


@pytest.mark.parametrize(("name", "view"), [("fp32", np.float32), ("fp64", np.float64)])
def test_random_wide_patterns_match_numpy(name: str, view: type) -> None:
    fmt = get_format(name)
    rng = np.random.default_rng(7)
    patterns = rng.integers(0, 1 << fmt.bits, size=3000, dtype=np.uint64).astype(fmt.uint_dtype)
    edges = np.array([0, 1, (1 << fmt.mantissa_bits) - 1, 1 << fmt.mantissa_bits, 1 << (fmt.bits - 1)])
    for bits, value in zip(
        np.concatenate([patterns, edges.astype(fmt.uint_dtype)]).tolist(),
        np.concatenate([patterns, edges.astype(fmt.uint_dtype)]).view(view).tolist(),
        strict=True,
    ):
        d = decode(bits, fmt)
        if math.isnan(value):
            assert d.kind == "nan"
        elif math.isinf(value):
            assert d.kind == "inf"
        else:
            assert d.value == abs(Fraction(value))
            assert d.sign == (math.copysign(1, value) < 0)


def test_42_5_in_fp32_fields() -> None:
    d = decode(0x422A0000, "fp32")
    assert (d.sign, d.exponent_field, d.mantissa_field) == (0, 0b10000100, 0b01010100000000000000000)
    assert d.value == Fraction(85, 2)


def test_subnormals_have_no_implicit_leading_one() -> None:
    """Decides the erratum 'fp32-formula-normal-only'."""
    smallest = decode(0x00000001, "fp32")
    assert smallest.kind == "subnormal"
    assert smallest.value == Fraction(1, 2**149)
    assert smallest.value == Fraction(float(np.array(1, dtype=np.uint32).view(np.float32)))
    notes_formula = (1 + Fraction(smallest.mantissa_field, 2**23)) * Fraction(2) ** (smallest.exponent_field - 127)
    assert notes_formula != smallest.value


@pytest.mark.parametrize(("bits", "message"), [(-1, "does not fit"), (256, r"0\.\.0xff"), (1.0, "is an integer")])
def test_bad_patterns_are_refused(bits, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        decode(bits, "e4m3")


def test_bad_arrays_are_refused() -> None:
    with pytest.raises(ValueError, match=r"must be in 0\.\.0x3f for e2m3"):
        decode_array(np.array([64]), "e2m3")
    with pytest.raises(TypeError, match="integer array"):
        decode_array(np.array([1.0]), "e4m3")


def test_special_patterns_as_floats() -> None:
    assert decode(0x7C, "e5m2").as_float() == math.inf  # IEEE: exponent all ones, mantissa zero
    assert decode(0xFC, "e5m2").as_float() == -math.inf
    assert math.isnan(decode(0x7E, "e5m2").as_float())
    assert math.isnan(decode(0xFF, "e4m3").as_float())  # E4M3 (fn): S.1111.111 is its only NaN
    assert decode(0x80, "e4m3").as_float() == 0.0
    assert math.copysign(1.0, decode(0x80, "e4m3").as_float()) == -1.0


def test_to_fraction_reads_text_exactly_and_refuses_what_it_cannot() -> None:
    from gpukb.formats.codec import DECIMAL_EXPONENT_LIMIT, to_fraction

    assert to_fraction("0.1") == (0, Fraction(1, 10), "finite")
    assert to_fraction("-0") == (1, Fraction(0), "finite")
    assert to_fraction(0) == (0, Fraction(0), "finite")
    assert to_fraction(np.int16(-3)) == (1, Fraction(3), "finite")
    assert to_fraction("nan") == (0, None, "nan")
    assert to_fraction("-inf") == (1, None, "inf")
    assert to_fraction(math.nan) == (0, None, "nan")
    assert to_fraction(-math.inf) == (1, None, "inf")
    assert to_fraction(f"1e{DECIMAL_EXPONENT_LIMIT}") == (0, Fraction(10) ** DECIMAL_EXPONENT_LIMIT, "finite")
    assert to_fraction(f"1e-{DECIMAL_EXPONENT_LIMIT}") == (0, Fraction(1, 10**DECIMAL_EXPONENT_LIMIT), "finite")
    for beyond in (f"1e{DECIMAL_EXPONENT_LIMIT + 1}", f"-1e-{DECIMAL_EXPONENT_LIMIT + 1}"):
        with pytest.raises(ValueError, match=r"lies beyond 10\*\*±1000, the range read exactly"):
            to_fraction(beyond)


@pytest.mark.parametrize(("text", "bits"), [("0x63", 99), ("0X7f", 127), ("0b1100011", 99), ("99", 99), (" 0o17 ", 15),
                                            ("0x_FF", 255), ("0", 0), ("-1", -1)])  # fmt: skip
def test_parse_bits_reads_integer_literals(text: str, bits: int) -> None:
    from gpukb.formats.codec import parse_bits

    assert parse_bits(text) == bits


def test_parse_bits_refuses_what_is_not_a_pattern() -> None:
    from gpukb.formats.codec import parse_bits

    with pytest.raises(ValueError, match="a bit pattern is written like 0x63, 0b1100011 or 99; got '0xzz'"):
        parse_bits("0xzz")
    with pytest.raises(ValueError, match="bit pattern is 69 characters long; at most 68 are read"):
        parse_bits("0b" + "1" * 67)
    with pytest.raises(TypeError, match="bit pattern must be a string"):
        parse_bits(99)
