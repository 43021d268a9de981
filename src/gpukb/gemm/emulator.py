"""A GEMM as cuBLASLt defines it, emulated in numpy: what each combination of types does to the result.

cuBLASLt computes ``D = alpha * (A @ B) + beta * C``; with FP8 tensors it adds one scale factor per matrix,
applied multiplicatively as the cuBLAS documentation defines it (section "Tensorwide Scaling For FP8 Data Types",
https://docs.nvidia.com/cuda/cublas/#tensorwide-scaling-for-fp8-data-types, checked 2026-11-22)::

    D = scale_d * (alpha * scale_a * scale_b * (A @ B) + beta * scale_c * C + bias)

``scale_a``, ``scale_b`` and ``scale_c`` *de*-quantize the stored matrices; ``scale_d`` quantizes the result into the
output format's range. :func:`emulate` follows that definition step by step:

1. A, B (and C, and the bias vector) are rounded to their types with :mod:`gpukb.formats.arrays`, round to
   nearest even, the format's own rules for overflow. In the FAST_TF32 (FAST_16BF, FAST_16F) compute modes FP32
   inputs are then rounded to TF32 (BF16, FP16).
2. The products are summed in an FP32 accumulator (numpy's float32 matrix product). Products of FP16, BF16, TF32
   and FP8 values are exact in FP32, so only the additions round. INT8 products are summed exactly (INT32
   accumulator, checked for overflow).
3. The epilogue (scales, alpha, beta, bias) is exact and rounded once to FP32; ``scale_d`` multiplies that.
4. D is rounded to its type. An FP8 D saturates to the largest finite value (PTX has only ``cvt.rn.satfinite``
   for conversions to FP8, https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cvt);
   other types follow their format's rules (overflow to infinity). ``saturate_d`` overrides this.

What it does not model: the order of the additions (hardware splits K across tiles, warps and sometimes thread
blocks); the FP8 tensor cores' accumulator on Hopper, which keeps fewer bits than FP32 (DeepSeek-V3 report,
arXiv:2412.19437, section 3.3.2; cuBLASLt's ``CUBLASLT_MATMUL_DESC_FAST_ACCUM`` decides whether partial sums are
promoted to FP32; ``bench/gemm_fp8_h100.py`` measures it on an H100); flushing of subnormals; NaN and infinity
propagation inside the hardware; block-scaled (MX, NVFP4) modes. :func:`fp32_accumulation_bound` bounds how far
two implementations that both accumulate in FP32 (in any order) can disagree.

Which combinations it accepts is decided by cuBLASLt's type table (:mod:`gpukb.gemm.types`, read from the cuBLAS
documentation): the rows with FP32 or INT32 accumulation and no or tensor-wide scaling.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from gpukb.arguments import choice, flag, given, integer, positive_int, real
from gpukb.formats.arrays import decode_array, encode_array
from gpukb.formats.spec import get_format
from gpukb.gemm import types as gemm_types
from gpukb.numerics import relative_error

#: The library whose type table decides which combinations the emulator accepts.
LIBRARY = "cublaslt"

FLOAT_TYPES = ("fp32", "fp16", "bf16", "e4m3", "e5m2")
FP8_TYPES = ("e4m3", "e5m2")
INPUT_TYPES = (*FLOAT_TYPES, "int8")
OUTPUT_TYPES = (*FLOAT_TYPES, "int32")
BIAS_TYPES = ("fp32", "fp16", "bf16")
INT32_OVERFLOW = ("error", "wrap", "saturate")

#: Scaling modes the emulator models: none, and one FP32 scale per matrix (not MX or NVFP4 block scales).
SCALING_MODES = ("none", "tensor")

#: FP32's unit roundoff: the largest relative error of one rounding to nearest.
FP32_UNIT_ROUNDOFF = 2.0**-24

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True)
class Combination:
    """One set of types for ``D = alpha * A @ B + beta * C (+ bias)`` that the library accepts and the emulator models.

    Attributes:
        a: Type of A.
        b: Type of B.
        c: Type of C.
        d: Type of D.
        compute: The library's compute type id (``"fp32"``, ``"fast_tf32"``, ``"int32"``, ...).
        accumulate: The accumulator's type: ``"fp32"`` or ``"int32"``.
        input_rounding: The format A and B are rounded to before the products (``"tf32"``, ``"bf16"``), or ``""``.
        bias: The bias vector types allowed (empty: no bias epilogue).
        scaled: The matrices that take a scale factor (``"a"``, ``"b"``, ``"c"``, ``"d"``).
    """

    a: str
    b: str
    c: str
    d: str
    compute: str
    accumulate: str
    input_rounding: str
    bias: tuple[str, ...]
    scaled: tuple[str, ...]

    def label(self) -> str:
        """A short name, e.g. ``"e4m3 × e5m2 → bf16 (C bf16, fp32 compute)"``."""
        return f"{self.a} × {self.b} → {self.d} (C {self.c}, {self.compute} compute)"


def _emulated(row: gemm_types.Combination) -> bool:
    return (
        row.scaling.id in SCALING_MODES
        and row.compute.accumulate in ("fp32", "int32")
        and not row.compute.title  # an emulated compute type (BF16x9) is not plain FP32 arithmetic
        and row.compute.input_rounding in ("", "tf32", "fp16", "bf16")
        and row.a in INPUT_TYPES
        and row.b in INPUT_TYPES
        and row.c in OUTPUT_TYPES
        and row.d in OUTPUT_TYPES
    )


def _from_row(row: gemm_types.Combination) -> Combination:
    ct = row.compute
    return Combination(row.a, row.b, row.c, row.d, ct.id, ct.accumulate, ct.input_rounding, row.bias, row.scaled)


@cache
def supported_combinations() -> tuple[Combination, ...]:
    """Every combination :func:`emulate` accepts: the rows of cuBLASLt's type table (:mod:`gpukb.gemm.types`) with
    FP32 or INT32 accumulation and no or tensor-wide scaling, in the table's order."""
    found: dict[Combination, None] = {}
    for row in gemm_types.table(LIBRARY).rows:
        if _emulated(row):
            found.setdefault(_from_row(row), None)
    return tuple(found)


def _type_name(name: object, role: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{role} must be named by a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key not in ("int8", "int32"):
        if key == "tf32":
            raise ValueError(
                f"{role}='tf32': TF32 is a compute mode, not a storage type; pass 'fp32' and compute='tf32'"
            )
        with contextlib.suppress(ValueError):  # not a format name: reported below with the allowed ones
            key = get_format(key).name
    if key not in allowed:
        raise ValueError(f"unknown {role} {name!r}; allowed: {', '.join(allowed)} (format aliases such as "
                         f"'float8_e4m3fn' work too)")  # fmt: skip
    return key


def find_combination(
    a_type: str,
    b_type: str,
    d_type: str,
    c_type: str | None = None,
    compute: str = "fp32",
    bias_type: str | None = None,
) -> Combination:
    """The supported combination with these types; ``c_type=None`` takes the first one that fits.

    The library's type table decides (:func:`gpukb.gemm.types.check`); of its rows, those the emulator models
    count (:func:`supported_combinations`).

    Raises:
        TypeError: If a type is not named by a string.
        ValueError: For an unknown type name (listing the allowed ones), a combination the library does not
            accept (naming the nearest ones it does), or one the emulator does not model.
    """
    a = _type_name(a_type, "a_type", INPUT_TYPES)
    b = _type_name(b_type, "b_type", INPUT_TYPES)
    d = _type_name(d_type, "d_type", OUTPUT_TYPES)
    c = None if c_type is None else _type_name(c_type, "c_type", OUTPUT_TYPES)
    bias = None if bias_type is None else _type_name(bias_type, "bias_type", BIAS_TYPES)
    tab = gemm_types.table(LIBRARY)
    comp = tab.resolve_compute(compute)
    rows = gemm_types.check(LIBRARY, a=a, b=b, c=c, d=d, compute=comp, bias=bias)  # raises, naming the nearest
    usable = [row for row in rows if _emulated(row)]
    if not usable:
        found = "; ".join(f"{row.types()} with {row.compute.label} compute, {row.scaling.title}" for row in rows)
        raise ValueError(f"{tab.title} accepts {a} × {b} → {d} only as: {found}. The emulator models FP32 or INT32 "
                         f"accumulation with scaling {' or '.join(SCALING_MODES)}, not these")  # fmt: skip
    return _from_row(usable[0])


@cache
def _format_limits(name: str) -> tuple[float, float, float]:
    fmt = get_format(name)
    return float(fmt.max_value), float(fmt.epsilon) / 2, float(fmt.min_subnormal)


def unit_roundoff(type_name: str) -> float:
    """The largest relative error of rounding a normal number to nearest: half the format's epsilon.

    Raises:
        ValueError: For a type that is not a floating-point format of :data:`FLOAT_TYPES` or ``"tf32"``.
    """
    name = "tf32" if str(type_name).strip().lower() == "tf32" else _type_name(type_name, "type", FLOAT_TYPES)
    return _format_limits(name)[1]


def round_to(x: np.ndarray, type_name: str, *, saturate: bool = False) -> np.ndarray:
    """The values ``x`` becomes when stored in a type, as float64 (int8: checked integers).

    Args:
        x: Any real array.
        type_name: A float type of :data:`FLOAT_TYPES`, ``"tf32"``, or ``"int8"``/``"int32"``.
        saturate: Clamp overflow to the largest finite value instead of the format's infinity or NaN.

    Raises:
        ValueError: For an unknown type, or integer-typed values that are not integers in range.
    """
    saturate = flag("saturate", saturate)
    tf32 = isinstance(type_name, str) and type_name.strip().lower() == "tf32"
    name = "tf32" if tf32 else _type_name(type_name, "type", (*FLOAT_TYPES, "int8", "int32"))
    x = _real_array(x, "x")
    if name in ("int8", "int32"):
        low, high = (-128, 127) if name == "int8" else (_INT32_MIN, _INT32_MAX)
        values = x.astype(np.float64)
        bad = ~np.isfinite(values) | (values != np.round(values)) | (values < low) | (values > high)
        if bad.any():
            first = float(values[bad].flat[0])
            raise ValueError(f"{name} values must be integers in [{low}, {high}]; got {first!r} "
                             f"({int(bad.sum())} such value(s))")  # fmt: skip
        return values.astype(np.int64)
    if x.dtype.type not in (np.float16, np.float32, np.float64):
        x = x.astype(np.float64)
    return decode_array(encode_array(x, name, saturate=saturate), name)


def amax_scale(x: np.ndarray, type_name: str, margin: int = 0) -> float:
    """The per-tensor scale that maps ``max|x|`` to the type's largest value, times ``2**-margin``.

    Store ``x * s`` and pass ``1 / s`` as the de-quantizing scale (``scale_a``, ``scale_b``); for the output, pass
    ``s`` itself as ``scale_d``. This is Transformer Engine's rule ("the FP8 tensor's maximum absolute value is
    ``2**-margin * max``", https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/api/c/recipe.html).

    Raises:
        ValueError: For an unknown type or an ``x`` with no non-zero finite value.
    """
    name = _type_name(type_name, "type", (*FLOAT_TYPES, "int8"))
    margin = integer("margin", margin, minimum=0, maximum=1000)
    top = 127.0 if name == "int8" else _format_limits(name)[0]
    values = np.abs(_real_array(x, "x").astype(np.float64))
    finite = values[np.isfinite(values)]
    amax = float(finite.max()) if finite.size else 0.0
    if amax == 0.0:
        raise ValueError("x has no non-zero finite value, so no scale maps its amax to the format's range")
    return top / amax * 2.0**-margin


def _real_array(x: object, name: str) -> np.ndarray:
    """``x`` as a numpy array of real numbers (ints, floats or bools), or a TypeError naming what it holds."""
    if isinstance(x, str | bytes):
        raise TypeError(f"{name} must be an array of real numbers; got {given(x)}")
    array = np.asarray(x)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of real numbers; got dtype {array.dtype} from {given(x)}")
    return array


def _matrix(x: object, name: str) -> np.ndarray:
    x = _real_array(x, name)
    if x.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {x.shape}")
    return x


def _check_scale(value: float, name: str, tensor_type: str, allowed: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if value != 1.0 and not allowed:
        raise ValueError(f"{name}={value} is set for a {tensor_type} matrix of a combination without scale factors "
                         "for it; cuBLASLt returns an error for that")  # fmt: skip
    return value


def emulate(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray | None = None,
    *,
    a_type: str,
    b_type: str,
    d_type: str,
    c_type: str | None = None,
    compute: str = "fp32",
    alpha: float = 1.0,
    beta: float = 0.0,
    scale_a: float = 1.0,
    scale_b: float = 1.0,
    scale_c: float = 1.0,
    scale_d: float = 1.0,
    bias: np.ndarray | None = None,
    bias_type: str | None = None,
    saturate_d: bool | None = None,
    int32_overflow: str = "error",
) -> np.ndarray:
    """``D = scale_d * (alpha * scale_a * scale_b * (A @ B) + beta * scale_c * C + bias)``, as cuBLASLt computes it.

    The types are keyword-only, so a call reads like the cuBLASLt descriptor it mirrors. ``a`` and ``b`` hold the
    values to be stored (for FP8, already multiplied by the quantizing scale, see :func:`amax_scale`); they are
    rounded to their types here.

    Args:
        a: The M×K matrix A.
        b: The K×N matrix B.
        c: The M×N matrix C (read only when ``beta != 0``).
        a_type: Type of A, one of :data:`INPUT_TYPES`.
        b_type: Type of B.
        d_type: Type of D, one of :data:`OUTPUT_TYPES`.
        c_type: Type of C; ``None`` takes the first supported one.
        compute: The library's compute type, by id or alias: ``"fp32"``, ``"tf32"`` (FP32 A and B rounded to
            TF32), ``"fast_16bf"`` or ``"fast_16f"`` (rounded to BF16 or FP16, nearest even assumed), ``"int32"``.
        alpha: Scales the product (an integer for INT8 inputs).
        beta: Scales C (an integer for INT8 inputs).
        scale_a: De-quantizing scale of A (FP8 A only).
        scale_b: De-quantizing scale of B (FP8 B only).
        scale_c: Scale of C.
        scale_d: Quantizing scale of D (FP8 D only).
        bias: A length-N vector added to every row before ``scale_d`` (cuBLASLt's bias epilogue).
        bias_type: Its type; ``None`` takes the combination's first.
        saturate_d: Clamp overflow of D to its largest finite value; ``None``: for FP8 D only.
        int32_overflow: What an INT32 accumulator or D does past its range: ``"error"`` (raise), ``"wrap"``
            (two's complement) or ``"saturate"``.

    Returns:
        D's values: float64 for float types (NaN and infinities as they arise), int32 for INT32.

    Raises:
        TypeError: For a type name or scale of the wrong kind.
        ValueError: For unknown types, unsupported combinations, shapes that do not conform, scales on non-FP8
            tensors, out-of-range INT8 inputs, or INT32 overflow with ``int32_overflow="error"``.
    """
    combo = find_combination(a_type, b_type, d_type, c_type, compute, bias_type if bias is not None else None)
    a, b = _matrix(a, "a"), _matrix(b, "b")
    real("alpha", alpha)
    real("beta", beta)
    choice("int32_overflow", int32_overflow, INT32_OVERFLOW)
    if saturate_d is not None:
        flag("saturate_d", saturate_d)
    if c is not None:
        c = _matrix(c, "c")
    if bias is not None:
        bias = _real_array(bias, "bias")
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise ValueError(f"A is {m}×{k} and B is {k2}×{n}: A's columns ({k}) must equal B's rows ({k2})")
    if c is not None and np.shape(c) != (m, n):
        raise ValueError(f"C must be {m}×{n} (A's rows × B's columns), got shape {np.shape(c)}")
    if beta != 0 and c is None:
        raise ValueError(f"beta={beta} needs a matrix C")
    if bias is not None:
        if not combo.bias:
            raise ValueError(f"{combo.label()} has no bias epilogue in cuBLASLt's table")
        if np.shape(bias) != (n,):
            raise ValueError(f"bias must be a vector of length N={n}, got shape {np.shape(bias)}")
    if int32_overflow not in INT32_OVERFLOW:
        raise ValueError(f"int32_overflow={int32_overflow!r}; choose one of {list(INT32_OVERFLOW)}")
    scale_a = _check_scale(scale_a, "scale_a", combo.a, "a" in combo.scaled)
    scale_b = _check_scale(scale_b, "scale_b", combo.b, "b" in combo.scaled)
    scale_c = _check_scale(scale_c, "scale_c", combo.c, "c" in combo.scaled)
    scale_d = _check_scale(scale_d, "scale_d", combo.d, "d" in combo.scaled)
    if combo.accumulate == "int32":
        return _emulate_int(a, b, c, alpha, beta, int32_overflow)

    a_q = round_to(a, combo.a)
    b_q = round_to(b, combo.b)
    if combo.input_rounding:  # FP32 data rounded for the tensor cores (TF32, or BF16/FP16 in the FAST modes)
        a_q, b_q = round_to(a_q, combo.input_rounding), round_to(b_q, combo.input_rounding)
    with np.errstate(over="ignore", invalid="ignore"):
        accumulator = np.matmul(a_q.astype(np.float32), b_q.astype(np.float32))  # every partial sum in FP32
        t = float(alpha) * scale_a * scale_b * accumulator.astype(np.float64)
        if beta != 0:
            t = t + float(beta) * scale_c * round_to(c, combo.c)
        if bias is not None:
            t = t + round_to(bias, bias_type or combo.bias[0])[np.newaxis, :]
        t32 = t.astype(np.float32)  # the epilogue's precision
        pre_d = scale_d * t32.astype(np.float64)
    saturate = combo.d in FP8_TYPES if saturate_d is None else flag("saturate_d", saturate_d)
    return round_to(pre_d, combo.d, saturate=saturate)


def _emulate_int(a, b, c, alpha, beta, overflow) -> np.ndarray:
    for name, value in (("alpha", alpha), ("beta", beta)):
        if value != int(value) or not _INT32_MIN <= int(value) <= _INT32_MAX:
            raise ValueError(f"{name}={value!r}: with an INT32 scale type alpha and beta are 32-bit integers")
    a_q, b_q = round_to(a, "int8"), round_to(b, "int8")
    # Exact: every product is at most 2**14 in magnitude, so every partial sum is an integer far below 2**53.
    accumulator = _int32(np.rint(a_q.astype(np.float64) @ b_q.astype(np.float64)).astype(np.int64), overflow, "A @ B")
    d = int(alpha) * accumulator
    if beta != 0:
        d = d + int(beta) * round_to(c, "int32")
    return _int32(d, overflow, "D").astype(np.int32)


def _int32(x: np.ndarray, overflow: str, what: str) -> np.ndarray:
    outside = (x < _INT32_MIN) | (x > _INT32_MAX)
    if not outside.any():
        return x
    if overflow == "error":
        worst = int(x[outside].flat[np.argmax(np.abs(x[outside]))])
        raise ValueError(f"{what} reaches {worst}, outside INT32 [{_INT32_MIN}, {_INT32_MAX}]; with INT8 inputs this "
                         "needs K > 131071 (each product is at most 2**14); pass int32_overflow='wrap' or "
                         "'saturate' to model the hardware")  # fmt: skip
    if overflow == "saturate":
        return np.clip(x, _INT32_MIN, _INT32_MAX)
    return (x - _INT32_MIN) % 2**32 + _INT32_MIN


def fp32_accumulation_bound(
    a: np.ndarray,
    b: np.ndarray,
    *,
    d_type: str,
    scale: float = 1.0,
    scale_d: float = 1.0,
    bias: np.ndarray | None = None,
) -> float:
    """How far apart two GEMMs of the same stored inputs may land if both accumulate in FP32, relative to D.

    Each implementation sums K exact products in FP32 in some order, so its accumulator is within
    ``gamma(K) * (|A| @ |B|)`` of the exact product, ``gamma(n) = n u / (1 - n u)`` with ``u = 2**-24`` (Higham,
    *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section 3.1); the epilogue's few FP32 operations
    add ``gamma(4)``; rounding to D adds ``u_d * |D|`` plus half D's smallest subnormal. Two such results differ
    by at most twice that, element by element, so in the Frobenius norm::

        ||D1 - D2|| <= 2 (u_d ||T|| + (1 + u_d) ||E|| + sqrt(M N) s_d / 2),
        T = scale_d (scale (A @ B) + bias),  E = scale_d (gamma(K + 4) |scale| (|A| @ |B|) + gamma(4) |bias|)

    (``s_d``: D's smallest subnormal). The bound holds for any summation order and any split of K; an accumulator
    with fewer bits than FP32 can break it. Values that overflow D are not covered.

    Args:
        a: The stored A (values already in A's type).
        b: The stored B.
        d_type: Type of D.
        scale: ``alpha * scale_a * scale_b``.
        scale_d: D's quantizing scale.
        bias: The stored bias vector, if any.

    Returns:
        The bound on ``||D1 - D2||_F / ||T||_F``.

    Raises:
        ValueError: For shapes that do not conform, a K too large for the bound, or a zero product.
    """
    a, b = _matrix(a, "a").astype(np.float64), _matrix(b, "b").astype(np.float64)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"A is {a.shape[0]}×{a.shape[1]} and B is {b.shape[0]}×{b.shape[1]}: inner dimensions differ")
    u = FP32_UNIT_ROUNDOFF
    k = a.shape[1]
    if (k + 4) * u >= 0.5:
        raise ValueError(f"K={k} is too large for the FP32 accumulation bound")

    def gamma(count: int) -> float:
        return count * u / (1 - count * u)

    name = _type_name(d_type, "d_type", FLOAT_TYPES)
    _, u_d, smallest = _format_limits(name)
    bias_v = np.zeros(b.shape[1]) if bias is None else np.asarray(bias, dtype=np.float64)
    exact = scale_d * (scale * (a @ b) + bias_v[np.newaxis, :])
    spread = abs(scale_d) * (gamma(k + 4) * abs(scale) * (np.abs(a) @ np.abs(b)) + gamma(4) * np.abs(bias_v))
    norm = float(np.linalg.norm(exact))
    if norm == 0:
        raise ValueError("the product is zero, so no relative bound exists")
    total = 2 * (u_d * norm + (1 + u_d) * float(np.linalg.norm(spread)) + math.sqrt(exact.size) * smallest / 2)
    return total / norm


def relative_errors(d: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    """``(||D - R||_F / ||R||_F, max|D - R| / max|R|)``: the Frobenius and the max-abs relative error.

    Raises:
        ValueError: If the shapes differ or the reference is all zeros.
    """
    d, reference = np.asarray(d, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    if d.shape != reference.shape:
        raise ValueError(f"D has shape {d.shape} and the reference {reference.shape}; they must match")
    top = float(np.max(np.abs(reference))) if reference.size else 0.0
    if top == 0:
        raise ValueError("the reference is all zeros, so relative errors are undefined")
    return relative_error(d, reference), float(np.max(np.abs(d - reference)) / top)


@dataclass(frozen=True)
class ErrorRow:
    """One line of :func:`error_table`: a combination and the error it gives against FP64."""

    label: str
    a: str
    b: str
    d: str
    compute: str
    scaling: str
    frobenius: float
    max_abs: float


def _quantized_int8(x: np.ndarray) -> tuple[np.ndarray, float]:
    s = amax_scale(x, "int8")
    return np.clip(np.rint(x * s), -127, 127), s


#: The largest matrix (elements) :func:`error_rows` makes: the emulation is numpy in float64, and bounded.
MAX_ERROR_ROWS_ELEMENTS = 1 << 22


def error_rows(m: int = 256, n: int = 256, k: int = 1024, seed: int = 0) -> list[ErrorRow]:
    """The error of every combination family on the same random matrices, against their FP64 product.

    A (M×K) and B (K×N) are standard normal float64 (``numpy.random.default_rng(seed)``); the reference is their
    float64 product before any rounding. INT8 and FP8 inputs use per-tensor scales from each matrix's amax
    (:func:`amax_scale`), and an FP8 D the scale that maps the reference's amax to the format's largest value; the
    results are de-quantized before they are compared.
    """
    for label, size in (("m", m), ("n", n), ("k", k)):
        positive_int(label, size)
    if max(m * k, k * n, m * n) > MAX_ERROR_ROWS_ELEMENTS:
        raise ValueError(f"m={m}, n={n}, k={k} make a matrix of more than {MAX_ERROR_ROWS_ELEMENTS:,} elements, "
                         "above what this reference emulation runs")  # fmt: skip
    rng = np.random.default_rng(integer("seed", seed, minimum=0))
    x, w = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    reference = x @ w
    rows: list[ErrorRow] = []

    def add(label: str, a: str, b: str, d: str, compute: str, scaling: str, result: np.ndarray) -> None:
        tab = gemm_types.table(LIBRARY)
        accumulator = tab.compute[tab.resolve_compute(compute)].label
        rows.append(ErrorRow(label, a, b, d, accumulator, scaling, *relative_errors(result, reference)))

    add("FP32", "fp32", "fp32", "fp32", "fp32", "none", emulate(x, w, a_type="fp32", b_type="fp32", d_type="fp32"))
    tf32 = emulate(x, w, a_type="fp32", b_type="fp32", d_type="fp32", compute="tf32")
    add("TF32 (FP32 data)", "fp32", "fp32", "fp32", "tf32", "none", tf32)
    for t in ("fp16", "bf16"):
        for d in (t, "fp32"):
            add(t.upper(), t, t, d, "fp32", "none", emulate(x, w, a_type=t, b_type=t, d_type=d))
    (xi, sx), (wi, sw) = _quantized_int8(x), _quantized_int8(w)
    int_d = emulate(xi, wi, a_type="int8", b_type="int8", d_type="int32", compute="int32")
    add("INT8", "int8", "int8", "int32", "int32", "amax, per tensor", int_d / (sx * sw))
    for a_t, b_t in (("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3")):
        sa, sb = amax_scale(x, a_t), amax_scale(w, b_t)
        for d in ("fp16", "bf16", "fp32", "e4m3"):
            sd = amax_scale(reference, d) if d in FP8_TYPES else 1.0
            result = emulate(x * sa, w * sb, a_type=a_t, b_type=b_t, d_type=d, scale_a=1 / sa, scale_b=1 / sb,
                             scale_d=sd)  # fmt: skip
            add("FP8", a_t, b_t, d, "fp32", "amax, per tensor", result / sd)
    return rows


def error_table(m: int = 256, n: int = 256, k: int = 1024, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    """:func:`error_rows` as Markdown-ready headers and rows."""
    headers = [
        "family",
        "A",
        "B",
        "D",
        "compute",
        "scales",
        "relative error (Frobenius)",
        "relative error (max abs)",
    ]
    rows = [
        [r.label, r.a, r.b, r.d, r.compute, r.scaling, f"{r.frobenius:.2e}", f"{r.max_abs:.2e}"]
        for r in error_rows(m, n, k, seed)
    ]
    return headers, rows
