"""Encoding float32 to every format agrees bit for bit with ml_dtypes and torch casts, except where documented.

The inputs cover random values across all exponents, every tie between neighbouring values of the target
format, the subnormal boundaries, the overflow thresholds, NaN, signed zeros and infinities.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from gpukb.formats import codec
from gpukb.formats.arrays import decode_array, encode_array
from gpukb.formats.codec import encode, floor_log2, nan_bits, to_fraction
from gpukb.formats.library_casts import (
    ml_dtypes_bits,
    ml_dtypes_type,
    probe_inputs,
    same_values,
    torch_bits,
    torch_dtype,
)
from gpukb.formats.spec import formats, get_format

torch = pytest.importorskip("torch")
pytest.importorskip("ml_dtypes")

NARROW = [f.name for f in formats().values() if f.bits <= 19]  # every format float32 can feed exactly


def _ml_dtypes_disagreements(name: str, x: np.ndarray, ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Inputs where ml_dtypes' bits differ from the format's rules, after removing the documented differences.

    NaNs must stay NaN with their sign; their payload may differ (numpy's FP16 cast keeps the top payload bits,
    the encoder writes the canonical quiet NaN).
    """
    fmt = get_format(name)
    nan = np.isnan(x)
    sign_bit = 1 << (fmt.bits - 1)
    nan_ok = np.isnan(decode_array(theirs, fmt)) & ((ours & sign_bit) == (theirs & sign_bit))
    differ = np.where(nan, ~nan_ok, ours != theirs)
    if name == "e8m0":
        # ml_dtypes (and torch) treat a float32 subnormal input as if it were normal: values in (2**-127,
        # 1.5 * 2**-127) round up to 2**-126 instead of down to 2**-127. Exact rounding is checked below.
        tiny = (np.abs(x) > 2.0**-127) & (np.abs(x) < 1.5 * 2.0**-127) & (x > 0)
        differ &= ~tiny
    return x[differ]


@pytest.mark.parametrize("name", [n for n in NARROW if ml_dtypes_type(n) is not None])  # TF32: see the bit trick
def test_encoding_matches_ml_dtypes(name: str) -> None:
    fmt = get_format(name)
    x = probe_inputs(fmt)
    theirs = ml_dtypes_bits(x, fmt)
    ours = encode_array(x, fmt)
    # Bit for bit: NaN patterns (sign kept, quiet bit set) and signed zeros included.
    assert _ml_dtypes_disagreements(name, x, ours, theirs).size == 0


def test_e8m0_rounds_float32_subnormals_exactly() -> None:
    x = np.array([2.0**-127, 1.05 * 2.0**-127, 1.49 * 2.0**-127, 1.5 * 2.0**-127, 1.51 * 2.0**-127], np.float32)
    # E8M0 has no mantissa bits: a tie between two powers of two goes up, as ml_dtypes does for normal inputs
    # (3.0 becomes 4.0); below the tie the exact answer is 2**-127, field 0.
    assert encode_array(x, "e8m0").tolist() == [0, 0, 0, 1, 1]
    assert [encode(float(v), "e8m0") for v in x] == [0, 0, 0, 1, 1]


@pytest.mark.parametrize("name", [n for n in NARROW if torch_dtype(n) is not None])
def test_encoding_matches_torch(name: str) -> None:
    """torch agrees with the format's rules, or consistently with the saturating rules (documented per version)."""
    fmt = get_format(name)
    x = probe_inputs(fmt)
    theirs = torch_bits(x, fmt)
    default, saturating = encode_array(x, fmt), encode_array(x, fmt, saturate=True)
    if name == "e8m0":
        # torch ignores the sign and maps 0 to 2**-127 (ml_dtypes and the rules: NaN); compare positive inputs.
        keep = (x > 0) & ~((x > 2.0**-127) & (x < 1.5 * 2.0**-127))
        x, theirs, default, saturating = x[keep], theirs[keep], default[keep], saturating[keep]
    matches_default = same_values(default, theirs, fmt).all()
    matches_saturating = same_values(saturating, theirs, fmt).all()
    assert matches_default or (name == "e4m3" and matches_saturating)


@pytest.mark.parametrize("name", NARROW)
def test_scalar_encoder_agrees_with_the_vectorized_one(name: str) -> None:
    fmt = get_format(name)
    x = probe_inputs(fmt)
    x = np.random.default_rng(1).choice(x, size=min(x.size, 3000), replace=False)
    for rounding in ("nearest-even", "toward-zero"):
        for saturate in (False, True):
            vectorized = encode_array(x, fmt, rounding=rounding, saturate=saturate)
            scalar = [encode(float(v), fmt, rounding=rounding, saturate=saturate) for v in x]
            assert vectorized.tolist() == scalar, (rounding, saturate)


def test_42_5_across_formats() -> None:
    expected = {
        "fp32": 0x422A0000,
        "fp16": 0x5150,
        "bf16": 0x422A,
        "e4m3": 0x63,
        "e5m2": 0x51,
        "e4m3fnuz": 0x6B,
    }
    assert {name: encode(42.5, name) for name in expected} == expected
    assert decode_array(np.array([0x63]), "e4m3")[0] == 44.0


@pytest.mark.parametrize(
    ("value", "name", "saturate", "expected"),
    [
        (1e6, "e4m3", False, 0x7F),  # overflow: NaN (no infinity in E4M3)
        (1e6, "e4m3", True, 0x7E),  # saturate: 448
        (-1e6, "e5m2", False, 0xFC),  # overflow: -infinity
        (464.0, "e4m3", False, 0x7E),  # the tie above 448 rounds to even: 448
        (465.0, "e4m3", False, 0x7F),  # just above it overflows
        (float("inf"), "e4m3fnuz", False, 0x80),  # the single NaN
        (-0.0, "e4m3fnuz", False, 0x00),  # no negative zero
        (-1e-30, "e4m3fnuz", False, 0x00),  # underflow to (unsigned) zero
        (float("inf"), "e2m1", False, 0x07),  # no infinity or NaN: saturate to 6
    ],
)
def test_overflow_and_special_cases(value: float, name: str, saturate: bool, expected: int) -> None:
    assert encode(value, name, saturate=saturate) == expected
    assert encode_array(np.array([value], np.float32), name, saturate=saturate).tolist() == [expected]


def test_toward_zero_never_overflows() -> None:
    assert encode(1e6, "e4m3", rounding="toward-zero") == 0x7E
    assert encode(1e6, "e5m2", rounding="toward-zero") == 0x7B


def test_stochastic_rounding_is_unbiased() -> None:
    rng = np.random.default_rng(3)
    x = np.full(200_000, 1 + 0.3 * 2.0**-7, dtype=np.float32)  # 0.3 of the way from 1 to the next bf16
    stored = decode_array(encode_array(x, "bf16", rounding="stochastic", rng=rng), "bf16")
    assert set(np.unique(stored)) == {1.0, 1 + 2.0**-7}
    up = (stored > 1).mean()
    assert abs(up - 0.3) < 4 * np.sqrt(0.3 * 0.7 / x.size)  # within four standard errors


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="e2m1 has no NaN"):
        encode_array(np.array([np.nan], np.float32), "e2m1")
    with pytest.raises(ValueError, match="e2m1 has no NaN"):
        encode(float("nan"), "e2m1")
    with pytest.raises(TypeError, match="float16, float32 or float64 array, got dtype int64"):
        encode_array(np.array([1, 2]), "e4m3")
    with pytest.raises(ValueError, match=r"unknown rounding 'up'; choose one of \['nearest-even'"):
        encode(1.0, "e4m3", rounding="up")
    with pytest.raises(ValueError, match="is not a number"):
        encode("forty-two", "e4m3")
    with pytest.raises(TypeError, match="expected a real number"):
        encode(1j, "e4m3")


def test_tf32_matches_the_integer_rounding_trick() -> None:
    """Round-half-even of float32 to 10 mantissa bits, done on the integer bits (as CUTLASS converts)."""
    x = probe_inputs(get_format("tf32"))
    x = x[np.isfinite(x) & (np.abs(x) < 3.4e38)]
    bits = x.view(np.uint32).astype(np.uint64)
    trick = ((bits + 0xFFF + ((bits >> 13) & 1)) >> 13).astype(np.uint32)
    assert np.array_equal(encode_array(x, "tf32"), trick)


@pytest.mark.parametrize("name", ["bf16", "tf32"])
@pytest.mark.parametrize("rounding", ["nearest-even", "toward-zero"])
@pytest.mark.parametrize("saturate", [False, True])
def test_float32_fast_path_matches_the_general_path(name: str, rounding: str, saturate: bool) -> None:
    """float32 inputs to BF16/TF32 take an integer fast path; float64 copies of them take the general one."""
    x = probe_inputs(name)
    fast = encode_array(x, name, rounding=rounding, saturate=saturate)
    with np.errstate(invalid="ignore"):  # the probes include signalling NaNs
        wide = x.astype(np.float64)
    general = encode_array(wide, name, rounding=rounding, saturate=saturate)
    assert np.array_equal(fast, general)


def test_float32_to_fp32_is_the_identity_on_numbers() -> None:
    x = probe_inputs("bf16")  # random float32 patterns of every exponent, and the BF16 edges
    numbers = ~np.isnan(x)
    assert np.array_equal(encode_array(x, "fp32")[numbers], x.view(np.uint32)[numbers])


# Inputs the page tables and the float property tests never give the exact codec, each with the answer the format's
# definition fixes (IEEE 754 patterns; E8M0's single NaN, 0xFF, in the OCP MX specification).


def test_integer_inputs_of_every_kind_encode_as_the_same_number() -> None:
    assert encode(0, "fp16") == 0x0000  # an integer zero is +0, not -0
    assert encode(-0.0, "fp16") == 0x8000
    for value in (3, np.int8(3), np.int16(3), np.uint64(3), np.int64(3)):
        assert encode(value, "fp16") == 0x4200, type(value)  # 3 = 1.5 × 2**1
    assert encode(np.int32(-3), "e4m3") == 0xC4  # sign, exponent 1 + 7, mantissa .100


def test_e8m0_has_no_zero_and_no_negative_numbers() -> None:
    for value in (0, -0.0, -1, -1.5, "-2", -math.inf):
        assert encode(value, "e8m0") == 0xFF, value
    assert encode(1, "e8m0") == 127  # 2**0: the bias


def test_a_seeded_stochastic_rounding_repeats_and_the_seed_matters() -> None:
    x = 1 + 1 / 16  # halfway between two E4M3 neighbours (1 and 1.125)
    runs = [[encode(x, "e4m3", rounding="stochastic", rng=seed) for seed in range(64)] for _ in range(2)]
    assert runs[0] == runs[1]  # the same seed, the same choice
    assert set(runs[0]) == {0x38, 0x39}  # both neighbours chosen over 64 seeds
    rng = np.random.default_rng(7)
    drawn = [encode(x, "e4m3", rounding="stochastic", rng=rng) for _ in range(64)]
    again = np.random.default_rng(7)
    assert drawn == [encode(x, "e4m3", rounding="stochastic", rng=again) for _ in range(64)]


def test_a_wrong_rng_is_refused_whatever_the_rounding() -> None:
    for rounding in ("nearest-even", "toward-zero", "stochastic"):
        for rng in ("x", 1.5, True, np.random.RandomState(0)):
            with pytest.raises(TypeError, match=r"^rng must be None, an int seed or a numpy.random.Generator"):
                encode(1.0, "e4m3", rounding=rounding, rng=rng)


def test_number_text_is_read_up_to_its_length_limit() -> None:
    one = "1." + "0" * 1998  # 2,000 characters: the limit
    assert encode(one, "fp16") == 0x3C00
    with pytest.raises(ValueError, match="at most 2,000 characters; got 2,001"):
        encode(one + "0", "fp16")


# --- the codec's helpers and messages (the formats chapter's mutation run, 2026-11-27) ----------------------------


@pytest.mark.parametrize(
    ("x", "want"),
    [(Fraction(8), 3), (Fraction(1, 2**24), -24), (Fraction(3), 1), (Fraction(1, 3), -2), (Fraction(1), 0)],
)
def test_floor_log2_exact_powers(x: Fraction, want: int) -> None:
    assert floor_log2(x) == want == math.floor(math.log2(x))


def test_encode_does_not_saturate_by_default() -> None:
    assert encode(1e6, "fp16") == 0x7C00  # fp16 overflows to +inf
    assert encode(1e6, "fp16", saturate=True) == 0x7BFF  # 65504


def test_messages_show_the_value_given() -> None:
    with pytest.raises(ValueError, match=r"^'1e99999' lies beyond 10\*\*±1000"):
        to_fraction("1e99999")
    text = "1e" + "9" * 25
    with pytest.raises(ValueError, match=rf"^'{text}' has an exponent of 25 digits"):
        to_fraction(text)
    with pytest.raises(ValueError, match=r"e2m1 has no NaN: every one of its 16 bit patterns"):
        nan_bits(get_format("e2m1"))


def test_short_keeps_reprs_of_up_to_40_characters() -> None:
    assert codec._short("a" * 38) == repr("a" * 38)  # 40 characters with the quotes
    assert codec._short("a" * 39) == "'" + "a" * 29 + "...(41 characters)"
