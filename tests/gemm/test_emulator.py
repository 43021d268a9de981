"""The GEMM emulator: exact where the arithmetic is exact, rounding like ml_dtypes, scales as cuBLASLt defines them."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from gpukb.gemm import types as gemm_types
from gpukb.gemm.emulator import (
    FLOAT_TYPES,
    amax_scale,
    emulate,
    error_rows,
    find_combination,
    fp32_accumulation_bound,
    relative_errors,
    round_to,
    supported_combinations,
    unit_roundoff,
)

ML_DTYPES = {
    "fp16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e5m2": ml_dtypes.float8_e5m2,
}


def _small(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-1, 2, size=shape).astype(np.float64)


@pytest.mark.parametrize("combo", supported_combinations(), ids=lambda c: f"{c.label()}")
def test_small_integers_are_exact(combo) -> None:
    # Entries in {-1, 0, 1} and K = 4: every input, product, partial sum and result (|D| <= 6) is exactly
    # representable in every type, so the emulator must return the float64 result to the bit.
    rng = np.random.default_rng(0)
    a, b = _small(rng, (5, 4)), _small(rng, (4, 3))
    expected = a @ b
    kwargs: dict = {
        "a_type": combo.a,
        "b_type": combo.b,
        "c_type": combo.c,
        "d_type": combo.d,
        "compute": combo.compute,
    }
    if combo.accumulate == "fp32":  # alpha and beta are floats; INT32 ones are tested in test_int8_is_exact
        c, bias = _small(rng, (5, 3)), _small(rng, (3,))
        kwargs.update(c=c, beta=1.0)
        expected = expected + c
        if combo.bias:
            kwargs.update(bias=bias, bias_type=combo.bias[0])
            expected = expected + bias
    d = emulate(a, b, **kwargs)
    np.testing.assert_array_equal(d, expected)


@pytest.mark.parametrize("type_name", sorted(ML_DTYPES))
def test_input_rounding_matches_ml_dtypes(type_name: str) -> None:
    rng = np.random.default_rng(1)
    top = float(ml_dtypes.finfo(ML_DTYPES[type_name]).max)
    x = (rng.standard_normal((8, 64)) * rng.choice([1e-3, 1.0, top / 8], size=(8, 64))).astype(np.float32)
    expected = x.astype(ML_DTYPES[type_name]).astype(np.float64)
    np.testing.assert_array_equal(round_to(x, type_name), expected)
    # Through the emulator: A @ I with an FP32 D returns A as stored (the accumulation adds exact zeros).
    b_type = "e4m3" if type_name == "e5m2" else type_name  # cuBLASLt has no E5M2 x E5M2
    np.testing.assert_array_equal(emulate(x, np.eye(64), a_type=type_name, b_type=b_type, d_type="fp32"), expected)


def test_tf32_compute_rounds_inputs_to_nearest_even() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 32)).astype(np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    # Keep 10 of FP32's 23 fraction bits, ties to even, directly on the bit pattern.
    rounded = ((bits + 0xFFF + ((bits >> 13) & 1)) >> 13 << 13).astype(np.uint32).view(np.float32)
    d = emulate(x, np.eye(32), a_type="fp32", b_type="fp32", d_type="fp32", compute="tf32")
    np.testing.assert_array_equal(d, rounded.astype(np.float64))
    assert not np.array_equal(rounded, x)  # the test data do need rounding


@pytest.mark.parametrize("d_type", ["fp16", "bf16", "e4m3"])
def test_d_is_rounded_once_from_fp32_like_ml_dtypes(d_type: str) -> None:
    rng = np.random.default_rng(3)
    a = round_to(rng.standard_normal((16, 32)) * 4, "e4m3")
    b = round_to(rng.standard_normal((32, 16)), "e4m3")
    acc = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float32)  # exact here: few, short products
    np.testing.assert_array_equal(acc.astype(np.float64), a @ b)
    c_type = {"fp16": "fp16", "bf16": "bf16", "e4m3": "bf16"}[d_type]
    d = emulate(a, b, a_type="e4m3", b_type="e4m3", c_type=c_type, d_type=d_type)
    with np.errstate(over="ignore"):
        expected = acc.astype(ML_DTYPES[d_type]).astype(np.float64)
    if d_type == "e4m3":  # ml_dtypes' cast follows the format's rules; an FP8 D saturates, so compare in range
        inside = np.abs(acc) < 464
        np.testing.assert_array_equal(d[inside], expected[inside])
        assert np.all(np.abs(d[~inside]) == 448)
    else:
        np.testing.assert_array_equal(d, expected)


def test_int8_is_exact() -> None:
    rng = np.random.default_rng(4)
    a = rng.integers(-128, 128, size=(16, 4096))
    b = rng.integers(-128, 128, size=(4096, 8))
    c = rng.integers(-1000, 1000, size=(16, 8))
    d = emulate(a, b, c, a_type="int8", b_type="int8", d_type="int32", compute="int32", alpha=3, beta=-2)
    assert d.dtype == np.int32
    np.testing.assert_array_equal(d, 3 * (a.astype(np.int64) @ b) - 2 * c)


def test_int32_overflow_is_an_error_unless_a_rule_is_chosen() -> None:
    # Every product of two INT8 values is at most 2**14 in magnitude: K = 131071 cannot overflow, 131072 can.
    k = 131072
    a, b = np.full((1, k), -128), np.full((k, 1), -128)
    kwargs = {"a_type": "int8", "b_type": "int8", "d_type": "int32", "compute": "int32"}
    assert emulate(a[:, :-1], b[:-1], **kwargs)[0, 0] == (k - 1) * 16384
    with pytest.raises(ValueError, match=r"A @ B reaches 2147483648, outside INT32 .* K > 131071"):
        emulate(a, b, **kwargs)
    assert emulate(a, b, int32_overflow="wrap", **kwargs)[0, 0] == -(2**31)
    assert emulate(a, b, int32_overflow="saturate", **kwargs)[0, 0] == 2**31 - 1
    with pytest.raises(ValueError, match="unknown int32_overflow 'modulo'; choose one of"):
        emulate(a, b, int32_overflow="modulo", **kwargs)


def test_int8_inputs_must_be_int8() -> None:
    kwargs = {"a_type": "int8", "b_type": "int8", "d_type": "int32", "compute": "int32"}
    with pytest.raises(ValueError, match=r"int8 values must be integers in \[-128, 127\]; got 0.5"):
        emulate(np.array([[0.5, 1.0]]), np.ones((2, 1)), **kwargs)
    with pytest.raises(ValueError, match=r"got 128\.0"):
        emulate(np.array([[128, 1]]), np.ones((2, 1)), **kwargs)
    with pytest.raises(ValueError, match=r"alpha=0\.5: with an INT32 scale type"):
        emulate(np.ones((1, 2)), np.ones((2, 1)), alpha=0.5, **kwargs)


def test_scales_are_applied_as_cublaslt_defines_them() -> None:
    # D = scale_d * (alpha * scale_a * scale_b * A @ B + beta * scale_c * C + bias): with powers of two every step
    # is exact, so the result must equal the formula evaluated in float64.
    rng = np.random.default_rng(5)
    a, b = _small(rng, (16, 32)) * 8, _small(rng, (32, 16)) * 4
    c, bias = _small(rng, (16, 16)) * 2, _small(rng, (16,))
    scales = {"scale_a": 0.25, "scale_b": 2.0**-3, "scale_c": 0.5, "scale_d": 4.0}
    d = emulate(a, b, c, a_type="e4m3", b_type="e5m2", c_type="bf16", d_type="e4m3", alpha=2.0, beta=-1.0,
                bias=bias, bias_type="bf16", **scales)  # fmt: skip
    expected = 4.0 * (2.0 * 0.25 * 2.0**-3 * (a @ b) - 1.0 * 0.5 * c + bias)
    assert 16 < np.abs(expected).max() < 448  # in range, not trivial
    np.testing.assert_array_equal(d, round_to(expected, "e4m3"))
    # scale_d multiplies (it quantizes); scale_a and scale_b multiply too (they de-quantize).
    base = emulate(a, b, a_type="e4m3", b_type="e4m3", d_type="fp32")
    np.testing.assert_array_equal(emulate(a, b, a_type="e4m3", b_type="e4m3", d_type="fp32", scale_a=2.0), 2 * base)


def test_non_power_of_two_scales_cost_one_fp32_rounding() -> None:
    rng = np.random.default_rng(6)
    a, b = round_to(rng.standard_normal((8, 64)) * 100, "e4m3"), round_to(rng.standard_normal((64, 8)), "e4m3")
    d = emulate(a, b, a_type="e4m3", b_type="e4m3", d_type="fp32", scale_a=0.1, scale_b=0.3)
    np.testing.assert_allclose(d, 0.1 * 0.3 * (a @ b), rtol=2**-23)


def test_scales_only_where_the_combination_takes_them() -> None:
    with pytest.raises(ValueError, match=r"scale_a=2\.0 is set for a bf16 matrix"):
        emulate(np.ones((2, 2)), np.ones((2, 2)), a_type="bf16", b_type="bf16", d_type="bf16", scale_a=2.0)
    with pytest.raises(ValueError, match=r"scale_d=2\.0 is set for a bf16 matrix"):
        emulate(np.ones((2, 2)), np.ones((2, 2)), a_type="e4m3", b_type="e4m3", d_type="bf16", scale_d=2.0)
    with pytest.raises(ValueError, match="scale_a must be finite"):
        emulate(np.ones((2, 2)), np.ones((2, 2)), a_type="e4m3", b_type="e4m3", d_type="bf16", scale_a=float("inf"))


def test_fp8_d_saturates_and_other_types_overflow() -> None:
    a = np.array([[448.0, 448.0]])
    b = np.ones((2, 1))
    kwargs = {"a_type": "e4m3", "b_type": "e4m3", "c_type": "bf16"}
    assert emulate(a, b, d_type="e4m3", **kwargs)[0, 0] == 448  # PTX cvt.rn.satfinite
    assert np.isnan(emulate(a, b, d_type="e4m3", saturate_d=False, **kwargs)[0, 0])  # the format's rule: NaN
    e5m2 = {"a_type": "e4m3", "b_type": "e5m2", "c_type": "bf16", "d_type": "e5m2"}
    big = np.array([[57344.0, 57344.0]])
    assert emulate(np.ones((1, 2)), big.T, **e5m2)[0, 0] == 57344
    assert emulate(np.ones((1, 2)), big.T, saturate_d=False, **e5m2)[0, 0] == np.inf
    fp16 = emulate(np.ones((1, 2)), big.T, a_type="e4m3", b_type="e5m2", d_type="fp16")
    assert fp16[0, 0] == np.inf  # FP16 D follows IEEE rules


def test_unknown_type_names_list_what_is_allowed() -> None:
    with pytest.raises(ValueError, match="unknown a_type 'fp7'; allowed: fp32, fp16, bf16, e4m3, e5m2, int8"):
        emulate(np.ones((2, 2)), np.ones((2, 2)), a_type="fp7", b_type="fp32", d_type="fp32")
    with pytest.raises(ValueError, match="unknown d_type 'int4'; allowed: fp32, fp16, bf16, e4m3, e5m2, int32"):
        emulate(np.ones((2, 2)), np.ones((2, 2)), a_type="fp32", b_type="fp32", d_type="int4")
    with pytest.raises(ValueError, match="TF32 is a compute mode, not a storage type"):
        emulate(np.ones((2, 2)), np.ones((2, 2)), a_type="tf32", b_type="fp32", d_type="fp32")
    with pytest.raises(ValueError, match="unknown compute type 'fp128'"):
        emulate(np.ones((2, 2)), np.ones((2, 2)), a_type="fp32", b_type="fp32", d_type="fp32", compute="fp128")
    with pytest.raises(TypeError, match="a_type must be named by a string, got int"):
        emulate(np.ones((2, 2)), np.ones((2, 2)), a_type=8, b_type="fp32", d_type="fp32")
    # Library names work: the same combination as e4m3 x e4m3 -> bf16.
    assert find_combination("float8_e4m3fn", "CUDA_R_8F_E4M3", "torch.bfloat16").d == "bf16"


def test_shapes_that_do_not_conform_are_named() -> None:
    kwargs = {"a_type": "fp32", "b_type": "fp32", "d_type": "fp32"}
    with pytest.raises(ValueError, match=r"A is 2×3 and B is 4×2: A's columns \(3\) must equal B's rows \(4\)"):
        emulate(np.ones((2, 3)), np.ones((4, 2)), **kwargs)
    with pytest.raises(ValueError, match=r"C must be 2×2 .*got shape \(3, 2\)"):
        emulate(np.ones((2, 3)), np.ones((3, 2)), np.ones((3, 2)), beta=1.0, **kwargs)
    with pytest.raises(ValueError, match=r"bias must be a vector of length N=2, got shape \(3,\)"):
        emulate(np.ones((2, 3)), np.ones((3, 2)), bias=np.ones(3), **kwargs)
    with pytest.raises(ValueError, match=r"a must be a 2-D matrix, got shape \(3,\)"):
        emulate(np.ones(3), np.ones((3, 2)), **kwargs)
    with pytest.raises(ValueError, match=r"beta=1\.0 needs a matrix C"):
        emulate(np.ones((2, 3)), np.ones((3, 2)), beta=1.0, **kwargs)


def test_unsupported_combinations_name_the_nearest_ones() -> None:
    # The type table decides; its checker's message is passed on.
    with pytest.raises(ValueError, match=r"refuses A=e5m2 x B=e5m2") as info:
        find_combination("e5m2", "e5m2", "bf16")
    with pytest.raises(ValueError, match="Nearest supported combinations") as expected:
        gemm_types.check("cublaslt", a="e5m2", b="e5m2", d="bf16", compute="fp32")
    assert str(info.value) == str(expected.value)
    with pytest.raises(ValueError, match="Nearest supported combinations") as info:
        find_combination("e4m3", "e4m3", "e5m2")  # an E5M2 D needs an E5M2 input
    assert "D=e4m3" in str(info.value)
    with pytest.raises(ValueError, match="no combination A=fp16, B=fp16, D=bf16"):
        emulate(np.ones((2, 2)), np.ones((2, 2)), a_type="fp16", b_type="fp16", d_type="bf16")
    with pytest.raises(ValueError, match="bias=fp16"):
        emulate(np.ones((2, 2)), np.ones((2, 2)), a_type="e4m3", b_type="e4m3", d_type="bf16", bias=np.ones(2),
                bias_type="fp16")  # fmt: skip
    # Accepted by cuBLASLt, but not something the emulator models: an FP16 accumulator.
    with pytest.raises(ValueError, match="models FP32 or INT32 accumulation"):
        find_combination("fp16", "fp16", "fp16", compute="fp16")


def test_supported_combinations_follow_the_type_table() -> None:
    combos = supported_combinations()
    fp8 = {(c.a, c.b) for c in combos if c.a in ("e4m3", "e5m2")}
    assert fp8 == {("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3")}
    for combo in combos:
        rows = gemm_types.check("cublaslt", a=combo.a, b=combo.b, c=combo.c, d=combo.d, compute=combo.compute)
        assert any(row.scaling.id in ("none", "tensor") for row in rows)
    assert {c.d for c in combos if c.a == "e4m3" and c.b == "e4m3"} == {"bf16", "fp16", "fp32", "e4m3"}


def test_fp32_bound_holds_for_another_summation_order() -> None:
    # Sum K in 8 chunks, each chunk's partial sum in FP32, then the chunks in reverse: a split-K order. The
    # emulator (numpy's order) and this order must land within the bound of each other.
    rng = np.random.default_rng(7)
    k = 512
    a = round_to(np.clip(rng.standard_normal((32, k)) * 100, -448, 448), "e4m3")
    b = round_to(np.clip(rng.standard_normal((k, 32)) * 100, -448, 448), "e4m3")
    chunks = [a[:, i : i + 64].astype(np.float32) @ b[i : i + 64].astype(np.float32) for i in range(0, k, 64)]
    split = np.zeros((32, 32), dtype=np.float32)
    for part in reversed(chunks):
        split = (split + part).astype(np.float32)
    for d_type in ("fp32", "bf16"):
        c_type = "fp32" if d_type == "fp32" else "bf16"
        ours = emulate(a, b, a_type="e4m3", b_type="e4m3", c_type=c_type, d_type=d_type)
        theirs = round_to(split.astype(np.float64), d_type)
        bound = fp32_accumulation_bound(a, b, d_type=d_type)
        difference = np.linalg.norm(ours - theirs) / np.linalg.norm(a @ b)
        assert difference <= bound
        assert bound < 4 * unit_roundoff(d_type) + 0.01  # and the bound is not vacuous
    assert not np.array_equal(split, (a.astype(np.float32) @ b.astype(np.float32)))  # the orders do differ


def test_bound_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="inner dimensions differ"):
        fp32_accumulation_bound(np.ones((2, 3)), np.ones((2, 3)), d_type="fp32")
    with pytest.raises(ValueError, match="product is zero"):
        fp32_accumulation_bound(np.zeros((2, 3)), np.ones((3, 2)), d_type="fp32")


def test_helpers() -> None:
    assert amax_scale(np.array([-2.0, 1.0]), "e4m3") == 224.0
    assert amax_scale(np.array([-2.0, 1.0]), "e4m3", margin=1) == 112.0
    assert amax_scale(np.array([0.5]), "int8") == 254.0
    with pytest.raises(ValueError, match="no non-zero finite value"):
        amax_scale(np.zeros(3), "e5m2")
    assert relative_errors(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == (0.0, 0.0)
    assert relative_errors(np.array([1.0, 3.0]), np.array([1.0, 2.0]))[1] == 0.5
    with pytest.raises(ValueError, match="must match"):
        relative_errors(np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match="all zeros"):
        relative_errors(np.ones(2), np.zeros(2))
    assert unit_roundoff("e4m3") == 2.0**-4
    assert unit_roundoff("tf32") == unit_roundoff("fp16") == 2.0**-11
    assert set(FLOAT_TYPES) <= {"fp32", "fp16", "bf16", "e4m3", "e5m2"}


def test_error_table_orders_the_formats() -> None:
    rows = {(r.a, r.b, r.d, r.compute): r for r in error_rows(m=64, n=64, k=256)}
    fro = {key: r.frobenius for key, r in rows.items()}
    fp32 = fro[("fp32", "fp32", "fp32", "fp32")]
    tf32 = fro[("fp32", "fp32", "fp32", "fp32 (tf32 inputs)")]
    fp16 = fro[("fp16", "fp16", "fp32", "fp32")]
    assert fp32 < 1e-6
    assert tf32 == pytest.approx(fp16, rel=0.01)  # same 10 fraction bits (FP16 differs only for tiny values)
    assert 6 < fro[("bf16", "bf16", "fp32", "fp32")] / fp16 < 10  # 3 bits fewer: about 8 times
    assert fro[("fp16", "fp16", "fp16", "fp32")] > fp16  # an FP16 D adds its own rounding
    assert fro[("bf16", "bf16", "bf16", "fp32")] > fro[("bf16", "bf16", "fp32", "fp32")]  # and a BF16 D
    e4m3 = fro[("e4m3", "e4m3", "fp32", "fp32")]
    mixed = fro[("e4m3", "e5m2", "fp32", "fp32")]
    # An E5M2 operand rounds twice as coarsely; errors of the two operands add in quadrature: sqrt(5/2) ~ 1.6.
    assert 1.3 < mixed / e4m3 < 1.9
    assert fro[("e4m3", "e4m3", "e4m3", "fp32")] > e4m3  # an E4M3 D adds a rounding as large as an input's
    for d in ("bf16", "fp16"):  # next to FP8 inputs, a 16-bit D adds hardly anything
        assert fro[("e4m3", "e4m3", d, "fp32")] == pytest.approx(e4m3, rel=0.02)
    # INT8 with per-tensor scales lands between BF16 and FP8 on normal data.
    assert fro[("bf16", "bf16", "fp32", "fp32")] < fro[("int8", "int8", "int32", "int32")] < e4m3
