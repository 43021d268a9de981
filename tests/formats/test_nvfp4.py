"""NVFP4 (gpukb.formats.nvfp4), checked against computations that do not use it.

Every element code times every E4M3 scale is decoded with ml_dtypes; the scale rule and the element rounding are
recomputed with exact fractions and a nearest-even search over the formats' values (ml_dtypes' decoding of every
code), not with gpukb's encoder; round trips, saturation, zero blocks and the per-tensor scale are pinned, and the
comparison with MXFP4 is checked across seeds because it is empirical.
"""

from __future__ import annotations

import doctest
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpukb.formats import mx, nvfp4

# Every non-negative value of each format by code, decoded by ml_dtypes: E2M1 codes 0..7, E4M3 codes 0..0x7E.
E2M1 = np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float64)
E4M3 = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
E2M1_POSITIVE = [Fraction(float(v)) for v in E2M1[:8]]
E4M3_POSITIVE = [Fraction(float(v)) for v in E4M3[:0x7F]]  # 0x7F is NaN


def nearest_even(q: Fraction, grid: list[Fraction]) -> int:
    """The code of the value of ``grid`` (ascending, codes 0, 1, ...) nearest to ``q >= 0``: ties to the even
    code, and anything above the largest value saturates to it."""
    if q >= grid[-1]:
        return len(grid) - 1
    best = min(range(len(grid)), key=lambda i: (abs(grid[i] - q), i % 2))
    return best


def fp32(q: Fraction) -> Fraction:
    # Fraction -> float64 rounds correctly, and float64 -> float32 after it is innocuous double rounding
    # (53 >= 2 * 24 + 2): the result is q rounded once to FP32.
    return Fraction(float(np.float32(float(q))))


def spec_quantize(x: np.ndarray) -> tuple[Fraction, list[int], list[list[Fraction]]]:
    """The NVFP4 rule, in exact fractions: per-tensor scale, block-scale codes, and the values read back."""
    values = [[Fraction(float(v)) for v in block] for block in x.reshape(-1, 16)]
    amax = max(abs(v) for block in values for v in block)
    g = Fraction(1) if amax == 0 else fp32(amax / (6 * 448))
    g = g or Fraction(2) ** -149  # amax / 2688 below half of FP32's smallest subnormal: that subnormal
    codes, restored = [], []
    for block in values:
        code = nearest_even(max(abs(v) for v in block) / (6 * g), E4M3_POSITIVE)
        s = E4M3_POSITIVE[code]
        codes.append(code)
        if s == 0:
            restored.append([Fraction(0)] * 16)
            continue
        back = []
        for v in block:
            e = E2M1_POSITIVE[nearest_even(abs(v) / (s * g), E2M1_POSITIVE)]
            back.append((e if v >= 0 else -e) * s * g)
        restored.append(back)
    return g, codes, restored


finite32 = st.floats(allow_nan=False, allow_infinity=False, width=32, min_value=-(2.0**100), max_value=2.0**100)
tensors = st.lists(finite32, min_size=16, max_size=64).map(lambda v: np.array(v[: len(v) // 16 * 16], dtype=np.float32))


def test_docstring_examples() -> None:
    assert doctest.testmod(nvfp4).failed == 0


def test_format_constants_follow_the_formats() -> None:
    assert (nvfp4.BLOCK_SIZE, nvfp4.ELEMENT_MAX, nvfp4.SCALE_MAX, nvfp4.AMAX_TARGET) == (16, 6.0, 448.0, 2688.0)
    assert float(ml_dtypes.finfo(ml_dtypes.float4_e2m1fn).max) == nvfp4.ELEMENT_MAX
    assert float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).max) == nvfp4.SCALE_MAX
    assert nvfp4.bits_per_element(16) == 4 + 0.5 + 2
    with pytest.raises(ValueError, match="size must be a positive integer, got 0"):
        nvfp4.bits_per_element(0)


@pytest.mark.parametrize("g", [1.0, 2.0**-20, float(np.float32(3 / 2688)), float(np.float32(1e6))])
def test_every_element_times_every_scale_decodes(g: float) -> None:
    """All 16 E2M1 codes in one block, once for each of the 126 positive finite E4M3 scales (and zero)."""
    scales = np.arange(0x7F, dtype=np.uint8)  # 0x00 (zero) .. 0x7E (448)
    elements = np.tile(np.arange(16, dtype=np.uint8), (scales.size, 1))
    q = nvfp4.NVFP4Tensor(elements=elements, scales=scales[:, None], global_scale=g, shape=elements.shape)
    expected = (
        elements.view(ml_dtypes.float4_e2m1fn).astype(np.float64)
        * scales.view(ml_dtypes.float8_e4m3fn).astype(np.float64)[:, None]
        * g
    )
    got = nvfp4.dequantize(q)
    assert np.array_equal(got, expected)  # exact: 2 + 4 + 24 significant bits fit a float64
    assert np.array_equal(np.signbit(got[1:]), np.signbit(expected[1:]))


@settings(max_examples=300, deadline=None)
@given(
    st.floats(min_value=0, max_value=2.0**100, allow_nan=False, width=32),
    st.floats(min_value=2.0**-100, max_value=2.0**100, allow_nan=False, width=32),
)
def test_block_scale_is_the_exact_rule(amax: float, g: float) -> None:
    code = int(nvfp4.block_scales(np.array([amax]), g)[0])
    assert code == nearest_even(Fraction(amax) / (6 * Fraction(g)), E4M3_POSITIVE)


@settings(max_examples=200, deadline=None)
@given(tensors)
def test_quantize_is_the_exact_rule(x: np.ndarray) -> None:
    if x.size == 0:
        return
    q = nvfp4.quantize(x)
    g, codes, restored = spec_quantize(x)
    assert Fraction(q.global_scale) == g
    assert q.scales.tolist() == codes
    assert [Fraction(float(v)) for v in nvfp4.dequantize(q)] == [v for block in restored for v in block]


@settings(max_examples=200, deadline=None)
@given(tensors)
def test_elements_agree_with_ml_dtypes(x: np.ndarray) -> None:
    if x.size == 0:
        return
    q = nvfp4.quantize(x)
    step = (q.block_scales * q.global_scale)[:, None]
    blocks = x.astype(np.float64).reshape(-1, 16)
    scaled = np.clip(blocks / np.where(step == 0, 1, step), -6, 6)  # saturating, then ml_dtypes' nearest-even cast
    expected = np.where(step == 0, 0, scaled.astype(ml_dtypes.float4_e2m1fn).astype(np.float64))
    assert np.array_equal(q.elements.view(ml_dtypes.float4_e2m1fn).astype(np.float64).reshape(-1, 16), expected)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=15), min_size=64, max_size=64),
    st.lists(st.integers(min_value=1, max_value=0x7E), min_size=4, max_size=4),
    st.floats(min_value=2.0**-100, max_value=2.0**100, width=32),
    st.lists(st.integers(min_value=0, max_value=15), min_size=4, max_size=4),
    st.booleans(),
)
def test_representable_tensors_round_trip(codes, scales, g, where, negative) -> None:
    """E2M1 values times E4M3 scales times an FP32 scale come back exactly, scales and all, when every block holds
    a +-6 and one block has the largest scale, 448: then the rule recomputes the scales it was built with."""
    elements = np.array(codes, dtype=np.uint8).reshape(4, 16)
    elements[np.arange(4), where] = 0x7 | (0x8 if negative else 0)  # +-6 in every block
    block_scales = np.array(scales, dtype=np.uint8)
    block_scales[0] = 0x7E  # 448
    built = nvfp4.NVFP4Tensor(elements, block_scales[:, None], float(g), (4, 16))
    x = nvfp4.dequantize(built)
    q = nvfp4.quantize(x)
    assert q.global_scale == g
    assert np.array_equal(q.scales, block_scales[:, None])
    assert np.array_equal(nvfp4.dequantize(q), x)


def test_global_scale_arithmetic() -> None:
    rng = np.random.default_rng(0)
    for amax in rng.uniform(0, 1, 50) * 10.0 ** rng.integers(-30, 30, 50):
        g = nvfp4.global_scale(amax)
        assert Fraction(g) == fp32(Fraction(float(amax)) / 2688)
    assert nvfp4.global_scale(0.0) == 1.0  # an all-zero tensor: Transformer Engine and Model Optimizer use 1
    assert nvfp4.global_scale(1e-45) == float(np.finfo(np.float32).smallest_subnormal)  # 1e-45 / 2688 underflows
    with pytest.raises(ValueError, match="above FP32's largest value"):
        nvfp4.global_scale(1e300)
    with pytest.raises(ValueError, match=r"amax must be finite and non-negative, got -1\.0"):
        nvfp4.global_scale(-1.0)


@pytest.mark.parametrize("seed", range(3))
def test_the_tensor_amax_maps_to_6_times_448(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((8, 64)) * 10.0 ** rng.uniform(-8, 8)).astype(np.float32)
    q = nvfp4.quantize(x)
    i = np.unravel_index(np.argmax(np.abs(x)), x.shape)
    assert q.block_scales.reshape(8, 4)[i[0], i[1] // 16] == 448
    assert abs(nvfp4.dequantize(q)[i]) == 6 * 448 * q.global_scale
    assert abs(nvfp4.dequantize(q)[i] / x[i] - 1) <= 2.0**-24  # only g's rounding to FP32 separates them


def test_a_block_scale_rounded_down_saturates_its_largest_value() -> None:
    # g = 1 (tensor amax 2688); the second block's amax 6.375 gives 6.375 / 6 = 1.0625, a tie between E4M3's 1
    # and 1.125 that goes to the even 1: its largest value, 6.375, becomes 6 (saturated), a loss of 1/17.
    x = np.zeros(32)
    x[0], x[16], x[17] = 2688.0, 6.375, 3.0
    q = nvfp4.quantize(x)
    assert (q.global_scale, *q.block_scales) == (1.0, 448.0, 1.0)
    back = nvfp4.dequantize(q)
    assert (back[16], back[17]) == (6.0, 3.0)
    assert 1 - back[16] / x[16] == pytest.approx(1 / 17)


@settings(max_examples=200, deadline=None)
@given(tensors)
def test_saturation_loses_at_most_one_seventeenth(x: np.ndarray) -> None:
    """A normal E4M3 scale is within 2**-4 of amax / (6g), so the block's largest value scales to at most
    6 * 17/16 and loses at most 1/17 of itself to saturation; every other element rounds to the nearest."""
    if x.size == 0 or not np.any(x):
        return
    q = nvfp4.quantize(x)
    blocks = x.astype(np.float64).reshape(-1, 16)
    back = nvfp4.dequantize(q).reshape(-1, 16)
    for block, restored, s in zip(blocks, back, q.block_scales, strict=True):
        if s < 2.0**-6:  # a subnormal scale has fewer significant bits
            continue
        k = np.argmax(np.abs(block))
        assert abs(restored[k] - block[k]) <= abs(block[k]) / 17 * (1 + 1e-12)


def test_zero_blocks() -> None:
    q = nvfp4.quantize(np.zeros((2, 32), dtype=np.float32))
    assert q.global_scale == 1.0
    assert not q.scales.any()
    assert not q.elements.any()
    assert not nvfp4.dequantize(q).any()
    # A zero block, and a block too small for E4M3's smallest scale 2**-9 (amax / 6g below 2**-10), read back as 0.
    x = np.zeros(48)
    x[0], x[16], x[32] = 2688.0, 6 * 2.0**-10, 6 * 2.0**-10 * 1.001
    q = nvfp4.quantize(x)
    assert q.scales.tolist() == [0x7E, 0x00, 0x01]  # the tie at 2**-10 goes to the even code 0x00
    back = nvfp4.dequantize(q)
    assert back[16] == 0
    assert back[32] == 3 * 2.0**-9


def test_blocks_run_along_the_last_axis() -> None:
    x = np.zeros((3, 2, 32), dtype=np.float32)
    x[1, 1, 20] = 5.0
    x[0, 0, 0] = 1.0
    q = nvfp4.quantize(x)
    assert q.scales.shape == (3, 2, 2)
    assert q.elements.shape == (3, 2, 32)
    assert q.block_scales[1, 1, 1] == 448
    assert q.block_scales[0, 0, 0] == 88
    assert np.array_equal(nvfp4.dequantize(q) != 0, x != 0)


def test_pad_fills_the_last_block_with_zeros() -> None:
    x = np.arange(1, 21, dtype=np.float32)
    q = nvfp4.quantize(x, pad=True)
    assert q.elements.shape == (32,)
    assert q.scales.shape == (2,)
    assert q.shape == (20,)
    assert nvfp4.dequantize(q).shape == (20,)
    assert not q.elements[20:].any()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: nvfp4.quantize(np.arange(16)), TypeError, "expected a float16, float32 or float64 array, got dtype"),
        (lambda: nvfp4.quantize(np.float32(1.0)), ValueError, "at least one axis, got a 0-d scalar"),
        (lambda: nvfp4.quantize(np.ones(20)), ValueError, "length 20, not a multiple of the NVFP4 block size 16"),
        (lambda: nvfp4.quantize(np.full(16, np.nan)), ValueError, "holds 16 NaN or infinite value"),
        (lambda: nvfp4.quantize(np.ones(16), pad=1), TypeError, "pad must be True or False, got 1"),
        (lambda: nvfp4.quantize(np.ones(16), tensor_amax=-2), ValueError, "amax must be finite and non-negative"),
        (lambda: nvfp4.dequantize(np.ones(16)), TypeError, "expected an NVFP4Tensor"),
        (lambda: nvfp4.block_scales(np.ones(2), 0.0), ValueError, "per-tensor scale must be positive and finite"),
        (lambda: nvfp4.compare_with_mxfp4("data"), TypeError, "expected a gpukb.formats.mx.OutlierModel"),
    ],
)
def test_bad_input_is_refused_with_a_useful_message(call, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_a_calibrated_amax_below_the_data_saturates() -> None:
    x = np.linspace(-10, 10, 16)
    q = nvfp4.quantize(x, tensor_amax=5.0)
    assert q.global_scale == float(np.float32(5 / 2688))
    assert np.abs(nvfp4.dequantize(q)).max() == pytest.approx(5.0, rel=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_transformer_engine_float32_arithmetic_rarely_differs(seed: int) -> None:
    """Transformer Engine computes the scales in FP32 (a reciprocal and two products); the exact rule differs
    from it in rare blocks, by one E4M3 step, and in the per-tensor scale by at most one FP32 step."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((256, 1024)) * 10.0 ** rng.uniform(-5, 5)).astype(np.float32)
    amax = np.abs(x.reshape(256, 64, 16)).max(-1)
    g = nvfp4.global_scale(float(amax.max()))
    exact = nvfp4.block_scales(amax, g).astype(int)
    te, te_g = nvfp4.te_block_scales(amax, float(amax.max()))
    assert np.abs(exact - te).max() <= 1
    assert np.mean(exact != te) < 1e-3
    assert abs(te_g - g) <= float(np.spacing(np.float32(g)))


def check_comparison(rows: list[mx.ErrorRow]) -> None:
    """What the MX page says of its NVFP4 table: NVFP4 beats both MXFP4 rules and per-tensor FP4, overall and on
    the ordinary columns, for a quarter of a bit more per value than MXFP4."""
    by_label = {(r.label, r.scaling): r for r in rows}
    nv = by_label["NVFP4 (E2M1)", "per block of 16 (E4M3) and per tensor (FP32)"]
    for other in rows[:-1]:
        assert nv.relative_rms_error < other.relative_rms_error
        assert nv.relative_rms_error_ordinary < other.relative_rms_error_ordinary
    assert nv.bits_per_element - rows[1].bits_per_element == pytest.approx(0.25 + 32 / 262144)


def test_comparison_on_the_page_data() -> None:
    rows = nvfp4.compare_with_mxfp4()
    assert [r.label for r in rows] == ["FP4 E2M1", "MXFP4 (E2M1)", "MXFP4 (E2M1)", "NVFP4 (E2M1)"]
    check_comparison(rows)
    headers, table = nvfp4.error_table()
    assert (len(headers), len(table)) == (6, 4)


@pytest.mark.parametrize("seed", range(1, 4))
def test_comparison_across_seeds(seed: int) -> None:
    """Empirical, not proved: checked on other draws too."""
    rows = nvfp4.compare_with_mxfp4(mx.OutlierModel(rows=64, cols=1024, seed=seed))
    by_label = {(r.label, r.scaling): r for r in rows}
    nv = by_label["NVFP4 (E2M1)", "per block of 16 (E4M3) and per tensor (FP32)"]
    assert all(nv.relative_rms_error < r.relative_rms_error for r in rows[:-1])
    assert all(nv.relative_rms_error_ordinary < r.relative_rms_error_ordinary for r in rows[:-1])
