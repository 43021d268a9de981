"""Vectorized encode and decode for numpy arrays, bit-identical to the scalar codec in ``codec``.

The scalar path works in exact fractions and is the reference; this path does the same rounding with float64
arithmetic, which is exact here: inputs are float16/float32/float64, scaling by powers of two is exact, and
``np.rint`` rounds half to even.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from gpukb.arguments import choice, flag, random_generator
from gpukb.formats.codec import ROUNDING_MODES, nan_bits
from gpukb.formats.spec import FloatFormat, get_format

_FLOAT_INPUTS = (np.float16, np.float32, np.float64)


def _check_floats(x: np.ndarray) -> np.ndarray:
    if isinstance(x, str | bytes):  # np.asarray would make a string array; say what is wanted instead
        raise TypeError(f"expected a float16, float32 or float64 array, got {type(x).__name__} {x!r:.40}")
    x = np.asarray(x)
    if x.dtype.type not in _FLOAT_INPUTS:
        raise TypeError(f"expected a float16, float32 or float64 array, got dtype {x.dtype}")
    return x


def encode_array(
    x: np.ndarray,
    fmt: str | FloatFormat,
    rounding: str = "nearest-even",
    saturate: bool = False,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """Round every element to ``fmt`` and return the bit patterns (as the smallest fitting uint dtype).

    Same rules (and argument checks) as ``gpukb.formats.codec.encode``.

    Raises:
        TypeError: If ``x`` is not a float16/float32/float64 array, ``saturate`` is not a bool, or ``rng`` is not
            ``None``, an int seed or a ``numpy.random.Generator``.
        ValueError: For an unknown format or rounding mode, or NaNs into a format with no NaN.
    """
    fmt = get_format(fmt)
    x = _check_floats(x)
    choice("rounding", rounding, ROUNDING_MODES)
    saturate = flag("saturate", saturate)
    if rng is not None or rounding == "stochastic":
        rng = random_generator("rng", rng)
    shorter_fp32 = fmt.encoding == "ieee" and (fmt.exponent_bits, fmt.bias) == (8, 127) and fmt.mantissa_bits < 23
    if x.dtype == np.float32 and shorter_fp32 and rounding != "stochastic":
        return _truncate_float32_mantissa(x, fmt, rounding, saturate)
    nan = np.isnan(x)
    if nan.any() and not fmt.has_nan:
        raise ValueError(f"{fmt.name} has no NaN, and the input holds {int(nan.sum())} NaN value(s)")
    if fmt.bits > 53:
        raise ValueError(f"{fmt.name} is wider than float64 arithmetic can round exactly; use codec.encode")
    m_bits, emin = fmt.mantissa_bits, fmt.min_exponent
    sign = np.signbit(x).astype(np.int64)
    with np.errstate(invalid="ignore"):  # signalling NaN payloads warn when widened
        a = np.abs(x.astype(np.float64))
    finite_nonzero = np.isfinite(a) & (a > 0)
    safe = np.where(finite_nonzero, a, 1.0)

    _, k = np.frexp(safe)  # safe = f * 2**k with f in [0.5, 1): floor(log2) = k - 1
    exponent = np.maximum(k.astype(np.int64) - 1, emin)
    q = np.ldexp(safe, (m_bits - exponent).astype(np.int32))
    if rounding == "nearest-even":
        n = np.rint(q)
    elif rounding == "toward-zero":
        n = np.trunc(q)
    else:
        whole = np.floor(q)
        u = rng.random(q.shape)
        n = whole + (u < q - whole)
    n = n.astype(np.int64)
    if fmt.encoding == "e8m0":
        magnitude = exponent - emin + np.maximum(n, 1) - 1
    else:
        magnitude = ((exponent - emin) << m_bits) + n

    max_bits = fmt.max_magnitude_bits
    # Overflow: clamp where the rules say so, otherwise the format's infinity or NaN.
    clamp = saturate or rounding == "toward-zero" or fmt.encoding == "finite"
    overflow = finite_nonzero & (magnitude > max_bits)
    magnitude = np.where(overflow & clamp, max_bits, magnitude)
    infinite = np.isinf(a)
    clamp_infinity = saturate or fmt.encoding == "finite"  # infinity is exact: rounding modes leave it
    magnitude = np.where(infinite & clamp_infinity, max_bits, magnitude)
    special = (overflow & (not clamp)) | (infinite & (not clamp_infinity))
    magnitude = np.where(a == 0, 0, magnitude)

    to_nan = nan.copy()
    if fmt.encoding == "ieee":
        magnitude = np.where(special, ((1 << fmt.exponent_bits) - 1) << m_bits, magnitude)
    else:
        to_nan |= special
    if fmt.signed:
        out = (sign << (fmt.bits - 1)) | magnitude
        if not fmt.has_negative_zero:
            out = np.where(magnitude == 0, 0, out)
    else:
        out = magnitude
        to_nan |= (a == 0) | (sign.astype(bool) & ~nan)  # E8M0 has no zero and no negative numbers
    out = out.astype(fmt.uint_dtype)
    if fmt.has_nan and to_nan.any():  # rare: fix up only those elements
        out[to_nan] = np.where(sign[to_nan] == 1, nan_bits(fmt, 1), nan_bits(fmt, 0))
    return out


def _truncate_float32_mantissa(x: np.ndarray, fmt: FloatFormat, rounding: str, saturate: bool) -> np.ndarray:
    """Fast path for formats that share FP32's exponent (BF16, TF32): round the integer bits directly.

    Adding ``0x7FF...`` plus the lowest kept bit before shifting is round-half-to-even on the bit pattern; a carry
    out of the mantissa moves into the exponent, and out of the largest binade into infinity, as it should.
    """
    shift = 23 - fmt.mantissa_bits
    b = x.view(np.uint32)
    magnitude = b & np.uint32(0x7FFFFFFF)
    nan = magnitude > np.uint32(0x7F800000)
    if rounding == "nearest-even":
        half = np.uint32((1 << (shift - 1)) - 1)
        rounded = (magnitude + half + ((magnitude >> np.uint32(shift)) & np.uint32(1))) >> np.uint32(shift)
    else:
        rounded = magnitude >> np.uint32(shift)
    inf = np.uint32(0xFF << fmt.mantissa_bits)
    if saturate or rounding == "toward-zero":
        # Overflow of a finite input clamps; with saturate=True an infinite input clamps too.
        finite_input = magnitude < np.uint32(0x7F800000)
        clamp = (rounded >= inf) & (finite_input | saturate)
        rounded = np.where(clamp, np.uint32(fmt.max_magnitude_bits), rounded)
    out = (((b >> np.uint32(31)) << np.uint32(fmt.bits - 1)) | rounded).astype(fmt.uint_dtype)
    if nan.any():  # rare: fix up only those elements
        out[nan] = np.where(b[nan] >> np.uint32(31) == 1, nan_bits(fmt, 1), nan_bits(fmt, 0))
    return out


def decode_array(bits: np.ndarray, fmt: str | FloatFormat) -> np.ndarray:
    """The value of every bit pattern, as float64 (exact for every format up to FP32).

    Raises:
        TypeError: If ``bits`` is not an unsigned or signed integer array.
        ValueError: For an unknown format or patterns that do not fit its width.
    """
    fmt = get_format(fmt)
    if isinstance(bits, str | bytes):
        raise TypeError(f"bit patterns must be an integer array, got {type(bits).__name__} {bits!r:.40}")
    bits = np.asarray(bits)
    if bits.dtype.kind not in "ui":
        raise TypeError(f"bit patterns must be an integer array, got dtype {bits.dtype}")
    if fmt.bits > 53:
        raise ValueError(f"{fmt.name} values do not all fit float64 exactly; view the bits as float64 instead")
    if bits.size and (bits.min() < 0 or int(bits.max()) >= 1 << fmt.bits):
        raise ValueError(f"bit patterns must be in 0..{(1 << fmt.bits) - 1:#x} for {fmt.name}")
    if fmt.encoding == "ieee" and (fmt.exponent_bits, fmt.bias) == (8, 127):  # BF16, TF32: FP32's top bits
        as_fp32 = (bits.astype(np.uint32) << np.uint32(23 - fmt.mantissa_bits)).view(np.float32)
        with np.errstate(invalid="ignore"):  # signalling NaN patterns warn when widened; they stay NaN
            return as_fp32.astype(np.float64)
    if fmt.bits <= 16:
        return _value_table(fmt.name)[bits]  # one gather: every pattern's value is precomputed
    return _decode_arithmetic(bits, fmt)


@cache
def _value_table(name: str) -> np.ndarray:
    fmt = get_format(name)
    table = _decode_arithmetic(np.arange(1 << fmt.bits), fmt)
    table.flags.writeable = False
    return table


def _decode_arithmetic(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Decode from the fields with float64 arithmetic (exact: at most 53 significant bits)."""
    b = bits.astype(np.int64)
    m_bits = fmt.mantissa_bits
    magnitude = b & fmt.magnitude_mask
    sign = (b >> (fmt.bits - 1)) & 1 if fmt.signed else np.zeros_like(b)
    e_field = magnitude >> m_bits
    m_field = magnitude & ((1 << m_bits) - 1)
    if fmt.encoding == "e8m0":
        value = np.ldexp(1.0, (e_field - fmt.bias).astype(np.int32))
    else:
        subnormal = e_field == 0
        significand = np.where(subnormal, m_field, m_field + (1 << m_bits)).astype(np.float64)
        scale = np.where(subnormal, fmt.min_exponent, e_field - fmt.bias) - m_bits
        value = np.ldexp(significand, scale.astype(np.int32))
    value = np.where(sign == 1, -value, value)
    all_ones = e_field == (1 << fmt.exponent_bits) - 1
    if fmt.encoding == "ieee":
        value = np.where(all_ones & (m_field == 0), np.where(sign == 1, -np.inf, np.inf), value)
        value = np.where(all_ones & (m_field != 0), np.nan, value)
    elif fmt.encoding == "fn":
        value = np.where(magnitude == fmt.magnitude_mask, np.nan, value)
    elif fmt.encoding == "fnuz":
        value = np.where((sign == 1) & (magnitude == 0), np.nan, value)
    elif fmt.encoding == "e8m0":
        value = np.where(all_ones, np.nan, value)
    return value
