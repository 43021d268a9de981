"""OCP Microscaling (MX) block formats: quantize and dequantize, and compare them with per-tensor scaling.

An MX tensor stores every run of 32 consecutive values along its last axis as one *block*: a shared scale in E8M0
(a bare power of two, ``2**X``) and 32 narrow elements (FP8 E4M3/E5M2, FP6 E2M3/E3M2 or FP4 E2M1). A value is
``element * 2**X``. The conversion follows the OCP MX v1.0 specification and Microsoft's reference implementation
(``microsoft/microxcaling``, ``mx/mx_ops.py``): the shared exponent is ``X = floor(log2(max |v|)) - emax_elem``,
clamped to E8M0's range ``[-127, 127]``, and each element is ``v / 2**X`` rounded to nearest-even, saturating (a
value above the element format's largest clamps to it).

``emax_elem`` is the exponent of the element format's largest value (E4M3: 8, E5M2: 15, E2M3: 2, E3M2: 4, E2M1: 2).
After scaling, the block's largest magnitude lies just under ``2**(emax_elem + 1)`` at most, above the element
format's largest value, so the largest values of a block can saturate; ``scale_rounding="ceil"`` picks the smallest
scale that avoids it, the rule of NVIDIA's MXFP8 training recipe (Mishra et al., arXiv:2506.08027).

Every operation is exact: inputs are float16/float32/float64, dividing by a power of two is exact in float64, and
the element rounding is ``gpukb.formats.arrays.encode_array``, bit-identical to ml_dtypes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpukb.arguments import choice, flag, given, integer, positive_int, real
from gpukb.formats.arrays import decode_array, encode_array
from gpukb.formats.spec import FloatFormat, get_format
from gpukb.numerics import relative_error

#: Values per block, fixed by the OCP MX v1.0 specification for every MX format.
BLOCK_SIZE = 32

#: The element formats of the MX specification that this module implements, by canonical name.
ELEMENT_FORMATS = {
    "e4m3": "MXFP8 (E4M3)",
    "e5m2": "MXFP8 (E5M2)",
    "e3m2": "MXFP6 (E3M2)",
    "e2m3": "MXFP6 (E2M3)",
    "e2m1": "MXFP4 (E2M1)",
}

#: How the shared exponent is chosen: ``"floor"`` is the OCP rule, ``"ceil"`` never saturates.
SCALE_ROUNDINGS = ("floor", "ceil")

#: E8M0's exponent range: the scale is ``2**X`` with ``X`` in ``[-127, 127]``; the pattern ``0xFF`` is NaN.
SCALE_MIN_EXPONENT, SCALE_MAX_EXPONENT = -127, 127
SCALE_BIAS = 127
SCALE_NAN = 0xFF

_FLOAT_INPUTS = (np.float16, np.float32, np.float64)


@dataclass(frozen=True)
class MXTensor:
    """A tensor in an MX format: one E8M0 scale per block of 32 values along the last axis.

    Attributes:
        scales: E8M0 bit patterns (``uint8``), shape ``(*shape[:-1], blocks)``; the scale of a block is
            ``2**(scales - 127)``, and ``0xFF`` (NaN) marks a block that held NaN or infinity.
        elements: Element bit patterns (``uint8``), shape ``(*shape[:-1], blocks * 32)``; zero padding included
            when the tensor was quantized with ``pad=True``.
        element_format: Canonical name of the element format, e.g. ``"e4m3"``.
        shape: Shape of the original tensor (before any padding).
        block_size: Values per block (32).
    """

    scales: np.ndarray
    elements: np.ndarray
    element_format: str
    shape: tuple[int, ...]
    block_size: int = BLOCK_SIZE

    @property
    def name(self) -> str:
        """The MX name of the format, e.g. ``"MXFP8 (E4M3)"``."""
        return ELEMENT_FORMATS[self.element_format]

    @property
    def scale_exponents(self) -> np.ndarray:
        """The shared exponent ``X`` of every block (``int``); NaN blocks report 128."""
        return self.scales.astype(np.int64) - SCALE_BIAS

    @property
    def bits_per_element(self) -> float:
        """Storage cost: element bits plus the block's 8 scale bits shared by its 32 values."""
        return bits_per_element(self.element_format, self.block_size)


@dataclass(frozen=True)
class ScaledTensor:
    """A tensor with one FP32 scale for all of it (per-tensor scaling): ``value = element * scale``.

    Attributes:
        bits: Element bit patterns, same shape as the original tensor.
        scale: The dequantization scale, ``amax / max_value`` rounded to FP32 (1.0 for an all-zero tensor).
        element_format: Canonical name of the element format, e.g. ``"e4m3"``.
    """

    bits: np.ndarray
    scale: float
    element_format: str


def element_format(name: str | FloatFormat) -> FloatFormat:
    """Look up an MX element format by any name ``get_format`` accepts.

    Raises:
        TypeError: If ``name`` is not a string or ``FloatFormat``.
        ValueError: If the format is unknown or is not an MX element format; the message lists those.
    """
    allowed = ", ".join(f"{k} ({v})" for k, v in ELEMENT_FORMATS.items())
    try:
        fmt = get_format(name)
    except ValueError:
        raise ValueError(f"unknown element format {name!r}; MX element formats: {allowed}") from None
    if fmt.name not in ELEMENT_FORMATS:
        raise ValueError(f"{fmt.name} is not an MX element format; MX element formats: {allowed}")
    return fmt


def bits_per_element(name: str | FloatFormat, block_size: int = BLOCK_SIZE) -> float:
    """Storage cost of an MX format in bits per value: the element width plus 8 scale bits over the block.

    Raises:
        TypeError: If ``block_size`` is not an int.
        ValueError: For an unknown element format or a block size below 1.

    Example:
        >>> bits_per_element("e2m1")
        4.25
    """
    return element_format(name).bits + 8 / positive_int("block_size", block_size)


def check_floats(x: object) -> np.ndarray:
    """``x`` as a float16/float32/float64 array with at least one axis (the input of a block-scaled format).

    Raises:
        TypeError: For anything else.
        ValueError: For a 0-d scalar.
    """
    if isinstance(x, str | bytes):
        raise TypeError(f"expected a float16, float32 or float64 array; got {given(x)}")
    x = np.asarray(x)
    if x.dtype.type not in _FLOAT_INPUTS:
        raise TypeError(f"expected a float16, float32 or float64 array, got dtype {x.dtype}")
    if x.ndim == 0:
        raise ValueError("expected an array with at least one axis, got a 0-d scalar")
    return x


def split_blocks(x: np.ndarray, block_size: int, pad: bool, scheme: str) -> np.ndarray:
    """``x`` in float64 as blocks of ``block_size`` along its last axis: shape ``(*x.shape[:-1], blocks, size)``.

    Args:
        pad: Pad the last axis with zeros up to a multiple of the block size instead of refusing it.
        scheme: The format's name, for the message (``"MX"``, ``"NVFP4"``).

    Raises:
        ValueError: If the last axis is not a multiple of the block size and ``pad`` is false.
    """
    n = x.shape[-1]
    if n % block_size:
        if not pad:
            raise ValueError(
                f"the last axis has length {n}, not a multiple of the {scheme} block size {block_size}; "
                f"pass pad=True to pad it with zeros to {-(-n // block_size) * block_size}"
            )
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, -n % block_size)])
    return x.astype(np.float64).reshape(*x.shape[:-1], x.shape[-1] // block_size, block_size)


def shared_exponents(amax: np.ndarray, fmt: str | FloatFormat, scale_rounding: str = "floor") -> np.ndarray:
    """The E8M0 exponent ``X`` for blocks whose largest magnitude is ``amax`` (finite, >= 0).

    ``"floor"`` is the OCP rule, ``floor(log2(amax)) - emax_elem``; ``"ceil"`` is the smallest ``X`` with
    ``amax <= max_value * 2**X``, so no element saturates. Both are computed exactly (``np.frexp``, no ``log2``)
    and clamped to ``[-127, 127]``; an all-zero block gets the smallest scale, ``X = -127``.

    Args:
        amax: Largest magnitude of each block.
        fmt: The element format.
        scale_rounding: ``"floor"`` or ``"ceil"``.

    Raises:
        ValueError: For an unknown rounding or element format, or a negative or non-finite ``amax``.
    """
    fmt = element_format(fmt)
    choice("scale_rounding", scale_rounding, SCALE_ROUNDINGS)
    if isinstance(amax, str | bytes) or np.asarray(amax).dtype.kind not in "uif":
        raise TypeError(f"amax must be a real number or an array of them; got {given(amax)}")
    amax = np.asarray(amax, dtype=np.float64)
    if not np.all(np.isfinite(amax) & (amax >= 0)):
        raise ValueError("amax must be finite and non-negative")
    zero = amax == 0
    safe = np.where(zero, 1.0, amax)
    _, k = np.frexp(safe)  # safe = f * 2**k with f in [0.5, 1), so floor(log2(safe)) = k - 1
    x = k.astype(np.int64) - 1 - fmt.max_exponent
    if scale_rounding == "ceil":
        # safe / 2**x lies in [2**emax, 2**(emax+1)); one step up brings it under max_value when it is above.
        x = x + (np.ldexp(safe, (-x).astype(np.int32)) > float(fmt.max_value))
    x = np.where(zero, SCALE_MIN_EXPONENT, x)
    return np.clip(x, SCALE_MIN_EXPONENT, SCALE_MAX_EXPONENT)


def quantize(
    x: np.ndarray, fmt: str | FloatFormat = "e4m3", *, pad: bool = False, scale_rounding: str = "floor"
) -> MXTensor:
    """Quantize a float array to an MX format, in blocks of 32 along the last axis.

    Args:
        x: A float16, float32 or float64 array with at least one axis.
        fmt: The element format: ``"e4m3"``, ``"e5m2"``, ``"e2m3"``, ``"e3m2"`` or ``"e2m1"`` (library names work
            too).
        pad: Pad the last axis with zeros up to a multiple of 32 instead of refusing it.
        scale_rounding: ``"floor"`` (the OCP rule, default) or ``"ceil"`` (the smallest scale that never
            saturates).

    Returns:
        The scales, element bit patterns and shape; ``dequantize`` turns it back into numbers.

    Raises:
        TypeError: If ``x`` is not a float16/float32/float64 array.
        ValueError: For an unknown element format or scale rounding, a 0-d input, a last axis that is not a
            multiple of 32 (without ``pad=True``), or NaN/infinity with an FP6/FP4 element format. With an FP8
            element format, a block holding NaN or infinity gets the NaN scale ``0xFF`` (the whole block reads back
            as NaN, as in the reference implementation) and zero elements.

    Example:
        >>> q = quantize(np.linspace(-1, 1, 32), "e2m1")
        >>> int(q.scale_exponents[0]), q.bits_per_element
        (-2, 4.25)
    """
    fmt = element_format(fmt)
    pad = flag("pad", pad)
    choice("scale_rounding", scale_rounding, SCALE_ROUNDINGS)
    x = check_floats(x)
    shape = tuple(x.shape)
    blocks = split_blocks(x, BLOCK_SIZE, pad, "MX")

    finite = np.isfinite(blocks)
    special = ~finite.all(axis=-1)  # blocks holding NaN or infinity
    if special.any() and not fmt.has_nan:
        count = int((~finite).sum())
        raise ValueError(
            f"the input holds {count} NaN or infinite value(s), and {fmt.name} ({ELEMENT_FORMATS[fmt.name]}) "
            "has neither NaN nor infinity; remove them, or use an FP8 element format (e4m3, e5m2), whose blocks "
            "take the NaN scale"
        )
    clean = np.where(finite, blocks, 0.0)
    amax = np.abs(clean).max(axis=-1)
    exponents = shared_exponents(amax, fmt, scale_rounding)
    scaled = np.ldexp(clean, (-exponents)[..., None].astype(np.int32))  # exact: a power-of-two scaling
    elements = encode_array(scaled, fmt, saturate=True)
    elements = np.where(special[..., None], 0, elements).astype(np.uint8)
    scales = np.where(special, SCALE_NAN, exponents + SCALE_BIAS).astype(np.uint8)
    return MXTensor(
        scales=scales,
        elements=elements.reshape(*blocks.shape[:-2], -1),  # the padded shape
        element_format=fmt.name,
        shape=shape,
    )


def dequantize(q: MXTensor) -> np.ndarray:
    """The values an MX tensor stores, as float64 (exact), in the original shape.

    Raises:
        TypeError: If ``q`` is not an ``MXTensor``.
    """
    if not isinstance(q, MXTensor):
        raise TypeError(f"expected an MXTensor (from gpukb.formats.mx.quantize), got {type(q).__name__}")
    padded = q.elements.shape
    values = decode_array(q.elements, q.element_format).reshape(*padded[:-1], -1, q.block_size)
    scales = decode_array(q.scales, "e8m0")  # 0xFF decodes to NaN, which spreads over its block
    out = (values * scales[..., None]).reshape(padded)
    return out[..., : q.shape[-1]]


def per_tensor_quantize(x: np.ndarray, fmt: str | FloatFormat = "e4m3") -> ScaledTensor:
    """Quantize with one FP32 scale for the whole tensor, mapping its largest magnitude to the format's max.

    This is per-tensor *current* scaling (Transformer Engine's ``Float8CurrentScaling``, margin 0): the scale is
    ``amax / max_value``, rounded to FP32, and the elements are ``x / scale`` rounded to nearest-even, saturating.

    Args:
        x: A float16, float32 or float64 array without NaN or infinity.
        fmt: Any signed format of at most 8 bits (``"e4m3"``, ``"e5m2"``, ``"e2m1"``, ...).

    Raises:
        TypeError: If ``x`` is not a float16/float32/float64 array.
        ValueError: For a wider or unsigned format, or NaN/infinity in ``x``.
    """
    fmt = get_format(fmt)
    if fmt.bits > 8 or not fmt.signed:
        raise ValueError(f"per-tensor scaling here takes a signed format of at most 8 bits, got {fmt.name}")
    x = check_floats(x)
    if not np.isfinite(x).all():
        raise ValueError("the input holds NaN or infinite values; an amax-based scale needs finite data")
    x64 = x.astype(np.float64)
    amax = float(np.abs(x64).max()) if x64.size else 0.0
    scale = float(np.float32(amax / float(fmt.max_value))) if amax > 0 else 1.0
    if scale == 0.0:  # amax so small that amax / max_value underflows FP32
        scale = float(np.finfo(np.float32).smallest_subnormal)
    return ScaledTensor(encode_array(x64 / scale, fmt, saturate=True), scale, fmt.name)


def per_tensor_dequantize(t: ScaledTensor) -> np.ndarray:
    """The values a per-tensor-scaled tensor stores, as float64.

    Raises:
        TypeError: If ``t`` is not a ``ScaledTensor``.
    """
    if not isinstance(t, ScaledTensor):
        raise TypeError(f"expected a ScaledTensor (from per_tensor_quantize), got {type(t).__name__}")
    return decode_array(t.bits, t.element_format) * t.scale


# --- Error comparison on weight-like data --------------------------------------------------------------------


@dataclass(frozen=True)
class OutlierModel:
    """Weight-like data: Gaussian rows with a few input channels (columns) of much larger magnitude.

    Row ``i`` is drawn from ``N(0, sigma_i**2)`` with ``sigma_i = std * exp(N(0, row_spread**2))`` (rows of a
    weight matrix differ in norm); then ``outlier_channels`` columns, chosen at random, are multiplied by
    ``outlier_scale``, the pattern of the large-magnitude feature dimensions seen in LLMs. Blocks run along rows,
    so most blocks hold no outlier and a few hold one.

    Attributes:
        rows: Number of rows (output features).
        cols: Number of columns (input features; the axis the blocks run along).
        std: Typical standard deviation of a row.
        row_spread: Standard deviation of ``log(sigma_i)``.
        outlier_channels: Number of outlier columns.
        outlier_scale: Factor the outlier columns are multiplied by.
        seed: Seed of ``numpy.random.default_rng``.
    """

    rows: int = 256
    cols: int = 1024
    std: float = 0.02
    row_spread: float = 0.5
    outlier_channels: int = 8
    outlier_scale: float = 100.0
    seed: int = 0

    def __post_init__(self) -> None:
        positive_int("rows", self.rows)
        positive_int("cols", self.cols)
        real("std", self.std, positive=True)
        real("row_spread", self.row_spread, minimum=0)
        integer("outlier_channels", self.outlier_channels, minimum=0, maximum=self.cols)
        real("outlier_scale", self.outlier_scale, positive=True)
        integer("seed", self.seed, minimum=0)

    def sample(self) -> tuple[np.ndarray, np.ndarray]:
        """Draw the matrix (float32) and the indices of its outlier columns."""
        rng = np.random.default_rng(self.seed)
        sigma = self.std * np.exp(rng.normal(0.0, self.row_spread, size=(self.rows, 1)))
        w = rng.standard_normal((self.rows, self.cols)) * sigma
        cols = np.sort(rng.choice(self.cols, size=self.outlier_channels, replace=False))
        w[:, cols] *= self.outlier_scale
        return w.astype(np.float32), cols


@dataclass(frozen=True)
class ErrorRow:
    """The error one storage scheme makes on one tensor.

    Attributes:
        label: What was done, e.g. ``"MXFP4 (E2M1)"``.
        scaling: How it was scaled, e.g. ``"per tensor (FP32)"`` or ``"per block of 32 (E8M0)"``.
        bits_per_element: Storage cost in bits per value, scales included.
        relative_rms_error: ``||x - q(x)|| / ||x||`` over the whole tensor (dominated by the outliers).
        relative_rms_error_ordinary: The same over the ordinary (non-outlier) columns only.
        max_abs_error: ``max |x - q(x)|``.
    """

    label: str
    scaling: str
    bits_per_element: float
    relative_rms_error: float
    relative_rms_error_ordinary: float
    max_abs_error: float


def compare_errors(model: OutlierModel | None = None) -> list[ErrorRow]:
    """Store one weight-like matrix every way the MX page compares, and measure the error of each.

    Args:
        model: The data (default: ``OutlierModel()``).

    Returns:
        One row each for BF16 (a plain cast); per-tensor FP8 E4M3, FP8 E5M2 and FP4 E2M1; every MX format with
        the OCP scale rule; and MXFP8 (E4M3) and MXFP4 with the scale rounded up; in that order.
    """
    if model is not None and not isinstance(model, OutlierModel):
        raise TypeError(f"model must be an OutlierModel or None; got {given(model)}")
    model = model or OutlierModel()
    x, outlier_cols = model.sample()
    x64 = x.astype(np.float64)
    ordinary = np.ones(x.shape[-1], dtype=bool)
    ordinary[outlier_cols] = False

    def row(label: str, scaling: str, bits: float, restored: np.ndarray) -> ErrorRow:
        return ErrorRow(
            label,
            scaling,
            bits,
            relative_error(restored, x64),
            relative_error(restored[:, ordinary], x64[:, ordinary]),
            float(np.abs(restored - x64).max()),
        )

    rows = [row("BF16", "none (cast)", 16.0, decode_array(encode_array(x, "bf16"), "bf16"))]
    for name, label in [("e4m3", "FP8 E4M3"), ("e5m2", "FP8 E5M2"), ("e2m1", "FP4 E2M1")]:
        bits = get_format(name).bits + 32 / x.size  # one FP32 scale for the whole tensor
        rows.append(row(label, "per tensor (FP32)", bits, per_tensor_dequantize(per_tensor_quantize(x, name))))
    for name, label in ELEMENT_FORMATS.items():
        q = quantize(x, name)
        rows.append(row(label, "per block of 32 (E8M0)", q.bits_per_element, dequantize(q)))
    for name in ("e4m3", "e2m1"):
        q = quantize(x, name, scale_rounding="ceil")
        label, scaling = ELEMENT_FORMATS[name], "per block of 32 (E8M0), scale rounded up"
        rows.append(row(label, scaling, q.bits_per_element, dequantize(q)))
    return rows


def error_table(model: OutlierModel | None = None) -> tuple[list[str], list[list[str]]]:
    """``compare_errors`` as table rows, for ``gpukb.tables.markdown_table`` or ``text_table``."""
    headers = [
        "format",
        "scaling",
        "bits per value",
        "relative RMS error",
        "relative RMS error, ordinary columns",
        "max abs error",
    ]
    rows = [
        [
            r.label,
            r.scaling,
            f"{r.bits_per_element:.2f}",
            f"{r.relative_rms_error:.2e}",
            f"{r.relative_rms_error_ordinary:.2e}",
            f"{r.max_abs_error:.2e}",
        ]
        for r in compare_errors(model)
    ]
    return headers, rows
