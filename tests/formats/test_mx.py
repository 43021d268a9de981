"""The OCP MX block conversion of gpukb.formats.mx, checked against computations that do not use it.

The shared exponent is recomputed with exact fractions, the elements with the scalar exact codec and with
ml_dtypes' casts, and the error comparison's orderings are either proved (grid inclusion, stated at each test) or
checked across seeds where they are only empirical.
"""

from __future__ import annotations

import doctest
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpukb.formats import mx
from gpukb.formats.arrays import decode_array
from gpukb.formats.codec import encode
from gpukb.formats.spec import get_format

FORMATS = list(mx.ELEMENT_FORMATS)
# Largest value and its exponent (emax_elem) of each element format, as the OCP MX v1.0 spec's tables give them.
SPEC_MAX = {"e4m3": 448.0, "e5m2": 57344.0, "e3m2": 28.0, "e2m3": 7.5, "e2m1": 6.0}
SPEC_EMAX = {"e4m3": 8, "e5m2": 15, "e3m2": 4, "e2m3": 2, "e2m1": 2}
ML_DTYPES = {
    "e4m3": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
    "e3m2": "float6_e3m2fn",
    "e2m3": "float6_e2m3fn",
    "e2m1": "float4_e2m1fn",
}

block_floats = st.floats(allow_nan=False, allow_infinity=False, width=32)
blocks = st.lists(block_floats, min_size=32, max_size=32).map(lambda v: np.array(v, dtype=np.float32))


def spec_exponent(block: np.ndarray, name: str) -> int:
    """X = floor(log2(amax)) - emax, clamped to [-127, 127]; -127 for an all-zero block. Exact fractions."""
    amax = max(abs(Fraction(float(v))) for v in block)
    if amax == 0:
        return -127
    e = amax.numerator.bit_length() - amax.denominator.bit_length()
    floor_log2 = e if Fraction(2) ** e <= amax else e - 1
    return min(max(floor_log2 - SPEC_EMAX[name], -127), 127)


def weights(seed: int, shape: tuple[int, ...] = (16, 256), outliers: int = 4) -> np.ndarray:
    """Gaussian values of varied size with a few outliers: the data these formats are made for."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 10.0 ** rng.uniform(-6, 3, size=(*shape[:-1], 1))
    x.flat[rng.choice(x.size, outliers, replace=False)] *= 300.0
    return x.astype(np.float32)


def test_docstring_examples() -> None:
    assert doctest.testmod(mx).failed == 0


def test_element_formats_have_the_spec_limits() -> None:
    for name in FORMATS:
        fmt = get_format(name)
        assert float(fmt.max_value) == SPEC_MAX[name]
        assert fmt.max_exponent == SPEC_EMAX[name]
    assert mx.BLOCK_SIZE == 32
    assert {n: mx.bits_per_element(n) for n in FORMATS} == {
        "e4m3": 8.25,
        "e5m2": 8.25,
        "e3m2": 6.25,
        "e2m3": 6.25,
        "e2m1": 4.25,
    }


# --- The shared scale -------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(FORMATS), blocks)
def test_shared_exponent_is_the_spec_formula(name: str, block: np.ndarray) -> None:
    q = mx.quantize(block, name)
    assert q.scales.dtype == np.uint8
    assert int(q.scales[0]) == spec_exponent(block, name) + 127


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("seed", range(3))
def test_shared_exponent_on_many_blocks(name: str, seed: int) -> None:
    x = weights(seed, (8, 512))
    q = mx.quantize(x, name)
    expected = [[spec_exponent(x[r, 32 * b : 32 * b + 32], name) for b in range(16)] for r in range(8)]
    assert q.scale_exponents.tolist() == expected


@pytest.mark.parametrize("name", FORMATS)
def test_scale_exponent_is_clamped_to_e8m0(name: str) -> None:
    tiny = np.full(32, 2.0**-160)  # float64: floor(log2) - emax < -127
    q = mx.quantize(tiny, name)
    assert q.scale_exponents.tolist() == [-127]
    # 2**-160 / 2**-127 = 2**-33 is below half of every element format's smallest subnormal: it flushes to zero
    assert np.all(mx.dequantize(q) == 0)
    huge = np.full(32, 2.0**200)  # float64 beyond float32's range: X would be 200 - emax > 127
    q = mx.quantize(huge, name)
    assert q.scale_exponents.tolist() == [127]
    assert np.all(mx.dequantize(q) == SPEC_MAX[name] * 2.0**127)  # the elements saturate


def test_all_zero_blocks_get_the_smallest_scale() -> None:
    x = np.zeros((2, 64), dtype=np.float32)
    x[1, 32:] = np.linspace(-1, 1, 32)
    q = mx.quantize(x, "e4m3")
    assert q.scales.tolist() == [[0, 0], [0, 127 + 0 - 8]]  # 2**-127 (E8M0's smallest) for the zero blocks
    assert np.all(q.elements[0] == 0)
    assert np.all(q.elements[1, :32] == 0)
    assert np.array_equal(mx.dequantize(q)[0], np.zeros(64))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(FORMATS), blocks)
def test_rounded_up_scale_is_the_smallest_that_does_not_saturate(name: str, block: np.ndarray) -> None:
    amax = max(abs(Fraction(float(v))) for v in block)
    floor_x = spec_exponent(block, name)
    x = int(mx.quantize(block, name, scale_rounding="ceil").scale_exponents[0])
    assert x in (floor_x, floor_x + 1)
    top = Fraction(SPEC_MAX[name])
    if amax > 0 and -127 < x < 127:
        assert amax <= top * Fraction(2) ** x  # nothing saturates ...
        assert amax > top * Fraction(2) ** (x - 1)  # ... and no smaller scale would do


# --- The elements -------------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FORMATS), blocks)
def test_elements_are_the_saturating_nearest_even_rounding(name: str, block: np.ndarray) -> None:
    q = mx.quantize(block, name)
    scale = 2.0 ** spec_exponent(block, name)
    # float32 / 2**X is exact in float64 (and keeps the sign of -0.0); the exact scalar codec does the rounding.
    expected = [encode(float(v) / scale, name, saturate=True) for v in block]
    assert q.elements.tolist() == expected


@pytest.mark.parametrize("name", FORMATS)
def test_elements_agree_with_ml_dtypes(name: str) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = weights(7, (64, 1024), outliers=64)
    q = mx.quantize(x, name)
    scaled = x.astype(np.float64).reshape(64, 32, 32) / np.ldexp(1.0, q.scale_exponents)[..., None]
    # ml_dtypes' FP6/FP4 casts saturate; its FP8 casts overflow to NaN/inf, so clamp first (the spec's rule).
    clamped = np.clip(scaled, -SPEC_MAX[name], SPEC_MAX[name]).astype(np.float32)
    reference = clamped.astype(getattr(ml_dtypes, ML_DTYPES[name])).view(np.uint8).reshape(64, 1024)
    assert np.array_equal(q.elements, reference)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(FORMATS), blocks)
def test_error_is_at_most_half_an_element_ulp_times_the_scale(name: str, block: np.ndarray) -> None:
    fmt = get_format(name)
    q = mx.quantize(block, name)
    restored = mx.dequantize(q)
    scale = math.ldexp(1.0, int(q.scale_exponents[0]))
    for v, r in zip(block.astype(np.float64), restored, strict=True):
        if abs(v) > SPEC_MAX[name] * scale:  # saturated: clamped to the largest element, keeping the sign
            assert r == math.copysign(SPEC_MAX[name] * scale, v)
            continue
        e = math.frexp(abs(v / scale))[1] - 1 if v else fmt.min_exponent
        ulp = math.ldexp(1.0, max(e, fmt.min_exponent) - fmt.mantissa_bits)
        assert abs(r - v) <= ulp / 2 * scale
    assert np.all(np.abs(restored) <= SPEC_MAX[name] * scale)  # never beyond the element max times the scale


def test_saturation_under_the_floor_rule() -> None:
    # 0.95 = 1.9 * 2**-1: X = -1 - 8 = -9 for E4M3, and 0.95 * 2**9 = 486.4 > 448, so the largest value clamps.
    block = np.full(32, 0.01)
    block[3] = 0.95
    q = mx.quantize(block, "e4m3")
    assert q.scale_exponents.tolist() == [-9]
    assert mx.dequantize(q)[3] == 448 * 2.0**-9 == 0.875
    up = mx.quantize(block, "e4m3", scale_rounding="ceil")  # one step up: 0.95 * 2**8 = 243.2 fits, rounds to 240
    assert up.scale_exponents.tolist() == [-8]
    assert mx.dequantize(up)[3] == 240 * 2.0**-8 == 0.9375


@pytest.mark.parametrize(
    ("name", "loss"), [("e4m3", 0.125), ("e5m2", 0.125), ("e3m2", 0.125), ("e2m3", 0.0625), ("e2m1", 0.25)]
)
def test_saturation_loses_at_most_one_minus_max_over_two_to_emax_plus_one(name: str, loss: float) -> None:
    assert loss == 1 - SPEC_MAX[name] / 2.0 ** (SPEC_EMAX[name] + 1)  # the figures the page quotes
    # Block maxima with significands spread over [1, 2): the relative loss of the maximum stays under the bound ...
    significands = np.linspace(1.0, 2.0, 4097)[:-1]
    x = np.zeros((significands.size, 32))
    x[:, 0] = significands * 2.0**-3
    x[:, 1:] = 2.0**-9
    restored = mx.dequantize(mx.quantize(x, name))[:, 0]
    relative_loss = (x[:, 0] - restored) / x[:, 0]
    assert np.all(relative_loss < loss)
    # ... and approaches it as the significand approaches 2.
    assert relative_loss[-1] > loss - 1e-3


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(FORMATS),
    st.lists(st.integers(min_value=0, max_value=255), min_size=32, max_size=32),
    st.integers(min_value=-127, max_value=127),
)
def test_representable_blocks_round_trip(name: str, raw: list[int], x: int) -> None:
    """Element values times a power of two come back exactly, with one exception.

    The quantizer may pick a smaller X than the block was built with (when no element is in the top binade), so
    every element is multiplied by 2**(X_built - X_chosen). That is exact, and stays within range unless the
    largest element's significand is above the top binade's largest: only E4M3 has that case, because its top
    binade loses the significand 1.875 (S.1111.111 is NaN), e.g. 240 = 1.875 * 2**7 becomes 480 > 448.
    """
    fmt = get_format(name)
    bits = np.array([b % (1 << fmt.bits) for b in raw], dtype=np.uint8)
    bits = np.where(np.isfinite(decode_array(bits, fmt)), bits, 0).astype(np.uint8)  # finite elements only
    block = decode_array(bits, fmt) * 2.0**x
    restored = mx.dequantize(mx.quantize(block, name))
    amax = np.abs(decode_array(bits, fmt)).max()
    if amax == 0:
        assert np.array_equal(restored, block)
        return
    # E8M0's smallest scale: a block this small is scaled by 2**-127, not by the 2**X it was built with; elements
    # then move down a binade (and a subnormal may lose a bit), which this test does not model.
    assume(math.floor(math.log2(amax)) + x - fmt.max_exponent >= mx.SCALE_MIN_EXPONENT)
    significand = amax / 2.0 ** math.floor(math.log2(amax))
    if significand * 2.0**fmt.max_exponent <= SPEC_MAX[name]:
        assert np.array_equal(restored, block)
    else:
        assert (name, significand) == ("e4m3", 1.875)
        largest = np.abs(block) == np.abs(block).max()
        assert np.array_equal(restored[~largest], block[~largest])
        assert np.all(np.abs(restored[largest]) == np.abs(block[largest]) * 448 / 480)


def test_e4m3_block_led_by_240_does_not_round_trip() -> None:
    block = np.zeros(32, dtype=np.float32)
    block[0] = 240.0  # an E4M3 value: 1.875 * 2**7
    q = mx.quantize(block, "e4m3")
    assert q.scale_exponents.tolist() == [7 - 8]
    assert mx.dequantize(q)[0] == 224.0  # 480 saturated to 448, times 2**-1


@pytest.mark.parametrize("name", FORMATS)
def test_negative_values_mirror_positive_ones(name: str) -> None:
    x = weights(3, (4, 128))
    pos, neg = mx.quantize(np.abs(x), name), mx.quantize(-np.abs(x), name)
    assert np.array_equal(pos.scales, neg.scales)
    sign = 1 << (get_format(name).bits - 1)
    nonzero = pos.elements != 0
    assert np.array_equal(neg.elements[nonzero], pos.elements[nonzero] | sign)
    assert np.array_equal(mx.dequantize(neg), -mx.dequantize(pos))


# --- Shapes -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(64,), (3, 96), (2, 3, 32)])
def test_blocks_run_along_the_last_axis(shape: tuple[int, ...]) -> None:
    x = weights(11, shape, outliers=2)
    q = mx.quantize(x, "e2m1")
    assert q.scales.shape == (*shape[:-1], shape[-1] // 32)
    assert q.elements.shape == shape
    assert q.shape == shape
    restored = mx.dequantize(q)
    assert (restored.shape, restored.dtype) == (shape, np.float64)
    flat = x.reshape(-1, 32)  # every run of 32 along the last axis, quantized on its own
    alone = np.concatenate([mx.dequantize(mx.quantize(b, "e2m1")) for b in flat])
    assert np.array_equal(restored.reshape(-1), alone)


def test_pad_fills_the_last_block_with_zeros() -> None:
    x = weights(5, (2, 40), outliers=1)
    q = mx.quantize(x, "e3m2", pad=True)
    assert (q.elements.shape, q.scales.shape, q.shape) == ((2, 64), (2, 2), (2, 40))
    explicit = mx.quantize(np.pad(x, [(0, 0), (0, 24)]), "e3m2")
    assert np.array_equal(q.scales, explicit.scales)
    assert np.array_equal(q.elements, explicit.elements)
    assert np.array_equal(mx.dequantize(q), mx.dequantize(explicit)[:, :40])


# --- Bad input ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: mx.quantize(np.zeros(32), "fp16"), ValueError, r"fp16 is not an MX element format.*e2m1"),
        (lambda: mx.quantize(np.zeros(32), "fp7"), ValueError, r"unknown element format 'fp7'.*MXFP4 \(E2M1\)"),
        (lambda: mx.quantize(np.zeros(32), 4), TypeError, r"format is named by a string"),
        (lambda: mx.quantize(np.zeros((2, 33)), "e4m3"), ValueError, r"length 33, not a multiple of .* 32.*pad=True"),
        (lambda: mx.quantize(np.zeros(32, dtype=np.int32), "e4m3"), TypeError, r"float16, float32 or float64.*int32"),
        (lambda: mx.quantize([1, 2], "e4m3"), TypeError, r"got dtype int64"),
        (lambda: mx.quantize(np.float32(1.0), "e4m3"), ValueError, r"0-d"),
        (lambda: mx.quantize(np.zeros(32), "e4m3", scale_rounding="up"), ValueError, r"'up'.*\['floor', 'ceil'\]"),
        (lambda: mx.dequantize(np.zeros(32)), TypeError, r"expected an MXTensor.*ndarray"),
        (lambda: mx.per_tensor_quantize(np.zeros(32), "bf16"), ValueError, r"at most 8 bits, got bf16"),
        (lambda: mx.per_tensor_quantize(np.array([1.0, np.inf]), "e4m3"), ValueError, r"NaN or infinite"),
        (lambda: mx.per_tensor_dequantize(np.zeros(3)), TypeError, r"expected a ScaledTensor"),
    ],
)
def test_bad_input_is_refused_with_a_useful_message(call, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("name", ["e3m2", "e2m3", "e2m1"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_fp6_and_fp4_refuse_nan_and_infinity(name: str, bad: float) -> None:
    x = np.ones(64, dtype=np.float32)
    x[40] = bad
    with pytest.raises(ValueError, match=rf"1 NaN or infinite value\(s\), and {name} .* has neither NaN nor infinity"):
        mx.quantize(x, name)


@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_fp8_blocks_with_nan_or_infinity_become_nan(name: str, bad: float) -> None:
    x = np.ones(64, dtype=np.float32)
    x[40] = bad
    q = mx.quantize(x, name)
    assert q.scales.tolist() == [127 - SPEC_EMAX[name], 0xFF]  # E8M0 NaN for the second block only
    restored = mx.dequantize(q)
    assert np.all(restored[:32] == 1.0)
    assert np.all(np.isnan(restored[32:]))


# --- Per-tensor scaling ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e2m1"])
def test_per_tensor_scale_maps_amax_to_the_format_max(name: str) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = weights(2, (8, 64))
    t = mx.per_tensor_quantize(x, name)
    amax = float(np.abs(x).max())
    assert t.scale == float(np.float32(amax / SPEC_MAX[name]))
    restored = mx.per_tensor_dequantize(t)
    assert abs(np.abs(restored).max() - amax) <= amax * 2.0**-20  # amax lands on max, up to the FP32 scale's rounding
    clamped = np.clip(x.astype(np.float64) / t.scale, -SPEC_MAX[name], SPEC_MAX[name])
    assert np.array_equal(t.bits, clamped.astype(getattr(ml_dtypes, ML_DTYPES[name])).view(np.uint8))


def test_per_tensor_zero_tensor() -> None:
    t = mx.per_tensor_quantize(np.zeros(8, dtype=np.float32), "e4m3")
    assert t.scale == 1.0
    assert np.all(mx.per_tensor_dequantize(t) == 0)


# --- The error comparison -------------------------------------------------------------------------------------------

# Some orderings are theorems. If every value of format B, times 2**(X_B - X_A), is a value of format A, and A's
# clamp is at least B's, then A's grid contains B's and rounding to the nearest point of a larger grid is never
# worse, value by value. With the OCP rule X = floor(log2 amax) - emax (and the same clamp at -127), that holds for
# A = E4M3, E5M2, E3M2, E2M3 over B = E2M1 (FP4's values 0.5..6 need one significand bit, and 6 * 2**(emaxA - 2)
# is within each max), for E4M3 over E3M2 (28 * 2**4 = 448), and for E5M2 over E3M2 (28 * 2**11 = 57344).
# E4M3 over E2M3 is *not* one: 7.5 * 2**6 = 480 is above 448.
CONTAINS = [("e4m3", "e2m1"), ("e5m2", "e2m1"), ("e3m2", "e2m1"), ("e2m3", "e2m1"), ("e4m3", "e3m2"), ("e5m2", "e3m2")]


@pytest.mark.parametrize(("finer", "coarser"), CONTAINS)
def test_finer_grids_are_never_worse_value_by_value(finer: str, coarser: str) -> None:
    for seed in range(3):
        x = weights(seed, (16, 512), outliers=16).astype(np.float64)
        err = {n: np.abs(mx.dequantize(mx.quantize(x, n)) - x) for n in (finer, coarser)}
        assert np.all(err[finer] <= err[coarser])


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(CONTAINS), blocks)
def test_grid_inclusion_on_arbitrary_blocks(pair: tuple[str, str], block: np.ndarray) -> None:
    finer, coarser = pair
    x = block.astype(np.float64)
    err = {n: np.abs(mx.dequantize(mx.quantize(block, n)) - x) for n in pair}
    assert np.all(err[finer] <= err[coarser])


def test_e4m3_is_not_always_finer_than_e2m3() -> None:
    block = np.zeros(32)
    block[0] = 7.5  # E2M3's max; E4M3's scale 2**-6 makes it 480, which saturates to 448
    err = {n: abs(mx.dequantize(mx.quantize(block, n))[0] - 7.5) for n in ("e4m3", "e2m3")}
    assert err == {"e4m3": 0.5, "e2m3": 0.0}


def test_comparison_rows_and_storage_cost() -> None:
    rows = mx.compare_errors(mx.OutlierModel(rows=32, cols=256))
    labels = [(r.label, r.scaling) for r in rows]
    assert labels[0] == ("BF16", "none (cast)")
    assert [r.bits_per_element for r in rows if r.scaling == "per block of 32 (E8M0)"] == [8.25, 8.25, 6.25, 6.25, 4.25]
    assert [r.bits_per_element for r in rows if r.scaling == "per tensor (FP32)"] == [8 + 32 / 8192] * 2 + [
        4 + 32 / 8192
    ]
    headers, table = mx.error_table(mx.OutlierModel(rows=32, cols=256))
    assert (len(headers), len(table), len(rows)) == (6, 11, 11)


def check_orderings(rows: list[mx.ErrorRow]) -> None:
    """The statements the MX page makes about its error table.

    - BF16 keeps 8 significant bits against at most 4 for the others.
    - Per-tensor FP4 flushes every ordinary value to zero: with outliers 100x larger, ordinary values fall under
      amax / 24 (half of E2M1's smallest subnormal, 0.5, relative to its max, 6); MXFP4's error there is under half.
    - The outliers hold most of the tensor's norm, so the OCP rule's saturation of block maxima (up to 12.5 % in
      E4M3) makes MXFP8 worse overall than per-tensor E4M3, whose scale maps amax exactly; rounding the MX scale
      up removes the saturation.
    - E2M3 (3 mantissa bits) wins overall, but E3M2's wider range keeps the small values of blocks that hold an
      outlier, so it wins on the ordinary columns.
    """
    by_key = {(r.label, r.scaling): r for r in rows}
    block, tensor = "per block of 32 (E8M0)", "per tensor (FP32)"
    rounded_up = "per block of 32 (E8M0), scale rounded up"
    bf16 = by_key["BF16", "none (cast)"].relative_rms_error
    assert all(bf16 < r.relative_rms_error for key, r in by_key.items() if key[0] != "BF16")
    assert by_key["FP4 E2M1", tensor].relative_rms_error_ordinary == 1.0  # exactly: every ordinary value became 0
    assert by_key["MXFP4 (E2M1)", block].relative_rms_error_ordinary < 0.5
    assert by_key["MXFP8 (E4M3)", block].relative_rms_error > by_key["FP8 E4M3", tensor].relative_rms_error
    assert by_key["MXFP8 (E4M3)", rounded_up].relative_rms_error < by_key["MXFP8 (E4M3)", block].relative_rms_error
    assert by_key["MXFP6 (E2M3)", block].relative_rms_error < by_key["MXFP6 (E3M2)", block].relative_rms_error
    assert (
        by_key["MXFP6 (E3M2)", block].relative_rms_error_ordinary
        < by_key["MXFP6 (E2M3)", block].relative_rms_error_ordinary
    )


def test_the_page_statements_hold_on_the_page_data() -> None:
    check_orderings(mx.compare_errors())


@pytest.mark.parametrize("seed", range(1, 4))
def test_the_page_statements_hold_across_seeds(seed: int) -> None:
    """Empirical, not proved: checked on other draws too, so that a lucky seed cannot make them pass."""
    check_orderings(mx.compare_errors(mx.OutlierModel(rows=32, cols=1024, seed=seed)))  # same outlier density


def test_a_block_below_the_smallest_scale_is_scaled_by_it() -> None:
    """1.875 * 2**-120 in E4M3 would take X = -120 - 8 = -128, below E8M0's range: X is clamped to -127, the element
    is stored as 240 (1.875 * 2**7, representable), not as 480 saturated to 448, and comes back exactly."""
    block = np.zeros(32)
    block[-1] = 1.875 * 2.0**-120
    q = mx.quantize(block, "e4m3")
    assert q.scale_exponents.tolist() == [-127]
    assert np.array_equal(mx.dequantize(q), block)
