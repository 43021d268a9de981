"""NVIDIA's NVFP4: E2M1 elements, one E4M3 scale per block of 16, and one FP32 scale for the whole tensor.

An NVFP4 tensor stores every run of 16 consecutive values along its last axis (the inner dimension of a matrix
product) as 16 E2M1 elements and one E4M3 *block scale*; one FP32 *per-tensor scale* ``g`` multiplies them all.
A value is ``element * block_scale * g``. The block scale is a full FP8 E4M3 number, not a power of two as in MX,
so it can map a block's largest magnitude close to E2M1's largest value, 6.

The conversion is the one NVIDIA's libraries implement (Transformer Engine ``core_nvfp4.cuh``, TensorRT Model
Optimizer ``NVFP4QTensor``; NVIDIA, "Pretraining Large Language Models with NVFP4", arXiv:2509.25149, appendix):

- per-tensor scale ``g = amax / (6 * 448)``, rounded to FP32, so that the tensor's largest magnitude ends up at
  E2M1's largest value (6) times E4M3's largest value (448); 1.0 for an all-zero tensor;
- block scale ``s = E4M3(block_amax / (6 * g))``, rounded to nearest even and saturating at 448;
- elements ``E2M1(x / (s * g))``, rounded to nearest even and saturating at 6.

Every quotient here is computed exactly and rounded once: ``6 * g`` and ``s * g`` are exact in float64, and
rounding a float64 quotient to E4M3 or E2M1 gives the same result as rounding the exact quotient (a float64 has more
than ``2p + 2`` bits for these ``p``-bit targets). NVIDIA's kernels compute the same quotients in FP32, with a
reciprocal or two, so a scale can differ from this one in a rare tie; ``te_block_scales`` reproduces Transformer
Engine's FP32 arithmetic for comparison.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpukb.formats import mx
from gpukb.formats.arrays import decode_array, encode_array
from gpukb.formats.mx import split_blocks
from gpukb.formats.spec import get_format
from gpukb.numerics import relative_error

#: Values per block (NVIDIA's NVFP4: 16, half of MX's 32).
BLOCK_SIZE = 16
#: The element format and the block-scale format, by canonical name.
ELEMENT_FORMAT, SCALE_FORMAT = "e2m1", "e4m3"
#: Largest element (E2M1: 6) and largest block scale (E4M3: 448), from the format parameters.
ELEMENT_MAX = float(get_format(ELEMENT_FORMAT).max_value)
SCALE_MAX = float(get_format(SCALE_FORMAT).max_value)
#: The tensor's amax is mapped to this many per-tensor scales: ``6 * 448``.
AMAX_TARGET = ELEMENT_MAX * SCALE_MAX

_FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class NVFP4Tensor:
    """A tensor in NVFP4: one E4M3 scale per block of 16 values along the last axis, one FP32 scale in all.

    Attributes:
        elements: E2M1 bit patterns (``uint8``, one per byte, not packed), shape ``(*shape[:-1], blocks * 16)``;
            zero padding included when the tensor was quantized with ``pad=True``.
        scales: E4M3 bit patterns of the block scales (``uint8``), shape ``(*shape[:-1], blocks)``; always
            positive or zero (``0x00`` for a block that holds only zeros, or values too small for any scale).
        global_scale: The per-tensor decode scale ``g``, an FP32 value (as a Python float).
        shape: Shape of the original tensor (before any padding).
        block_size: Values per block (16).
    """

    elements: np.ndarray
    scales: np.ndarray
    global_scale: float
    shape: tuple[int, ...]
    block_size: int = BLOCK_SIZE

    @property
    def block_scales(self) -> np.ndarray:
        """The block scales as numbers (float64), before the per-tensor scale."""
        return decode_array(self.scales, SCALE_FORMAT)

    @property
    def bits_per_element(self) -> float:
        """Storage cost: 4 element bits, 8 scale bits per 16 values, and the 32-bit per-tensor scale."""
        return bits_per_element(int(np.prod(self.shape)))


def bits_per_element(size: int) -> float:
    """Storage cost of an NVFP4 tensor of ``size`` values, in bits per value, scales included.

    Example:
        >>> bits_per_element(16 * 1024)
        4.501953125
    """
    if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 1:
        raise ValueError(f"size must be a positive integer, got {size!r}")
    return 4 + 8 / BLOCK_SIZE + 32 / int(size)


def global_scale(amax: float) -> float:
    """The per-tensor decode scale for a tensor whose largest magnitude is ``amax``: ``amax / 2688`` in FP32.

    An all-zero tensor gets 1.0 (as in Transformer Engine and Model Optimizer); an ``amax`` so small that the
    quotient underflows FP32 gets FP32's smallest subnormal.

    Raises:
        ValueError: If ``amax`` is negative, not finite, or so large that ``amax / 2688`` overflows FP32.
    """
    amax = float(amax)
    if not (np.isfinite(amax) and amax >= 0):
        raise ValueError(f"amax must be finite and non-negative, got {amax!r}")
    if amax == 0:
        return 1.0
    quotient = amax / AMAX_TARGET
    if quotient > _FLOAT32_MAX:
        raise ValueError(
            f"amax {amax:g} needs a per-tensor scale of {quotient:g}, above FP32's largest value {_FLOAT32_MAX:g}"
        )
    g = float(np.float32(quotient))
    return g if g > 0 else float(np.finfo(np.float32).smallest_subnormal)


def block_scales(amax: np.ndarray, g: float) -> np.ndarray:
    """E4M3 bit patterns of the block scales for blocks whose largest magnitudes are ``amax``, under scale ``g``.

    ``E4M3(amax / (6 * g))``, rounded to nearest even and saturating at 448: the block's largest magnitude maps
    to about 6 elements of that scale.

    Raises:
        ValueError: If ``g`` is not a positive finite number, or ``amax`` holds a negative or non-finite value.
    """
    g = float(g)
    if not (np.isfinite(g) and g > 0):
        raise ValueError(f"the per-tensor scale must be positive and finite, got {g!r}")
    amax = np.asarray(amax, dtype=np.float64)
    if not np.all(np.isfinite(amax) & (amax >= 0)):
        raise ValueError("amax must be finite and non-negative")
    return encode_array(amax / (ELEMENT_MAX * g), SCALE_FORMAT, saturate=True).astype(np.uint8)


def te_block_scales(amax: np.ndarray, tensor_amax: float) -> tuple[np.ndarray, float]:
    """Transformer Engine's block scales and per-tensor decode scale, computed in FP32 as its kernels do.

    ``core_nvfp4.cuh``: ``S_enc = min(448 * 6 / tensor_amax, FLT_MAX)`` (1 when the amax is 0), block scale
    ``E4M3(block_amax * (S_enc * (1 / 6)))`` (a saturating cast), and the decode scale ``1 / S_enc``; every
    operation rounds to FP32. For comparison with :func:`block_scales`, which rounds once.
    """
    f32 = np.float32
    tensor_amax = f32(tensor_amax)
    with np.errstate(divide="ignore", over="ignore"):
        s_enc = np.minimum(f32(SCALE_MAX) * f32(ELEMENT_MAX) / tensor_amax, f32(_FLOAT32_MAX))
    if tensor_amax == 0 or s_enc == 0:
        s_enc = f32(1.0)
    factor = f32(s_enc * (f32(1.0) / f32(ELEMENT_MAX)))
    products = np.asarray(amax, dtype=np.float32) * factor
    scales = encode_array(products.astype(np.float64), SCALE_FORMAT, saturate=True).astype(np.uint8)
    return scales, float(f32(1.0) / s_enc)


def quantize(x: np.ndarray, *, pad: bool = False, tensor_amax: float | None = None) -> NVFP4Tensor:
    """Quantize a float array to NVFP4, in blocks of 16 along the last axis.

    Args:
        x: A float16, float32 or float64 array with at least one axis, without NaN or infinity.
        pad: Pad the last axis with zeros up to a multiple of 16 instead of refusing it.
        tensor_amax: The amax the per-tensor scale is computed from (default: the largest magnitude of ``x``).
            A calibrated amax below the data's saturates the largest values; one above it wastes range.

    Returns:
        The elements, block scales, per-tensor scale and shape; ``dequantize`` turns it back into numbers.

    Raises:
        TypeError: If ``x`` is not a float16/float32/float64 array.
        ValueError: For a 0-d input, NaN or infinity (E2M1 has neither), a last axis that is not a multiple of 16
            (without ``pad=True``), or a bad ``tensor_amax``.

    Example:
        >>> q = quantize(np.linspace(-1, 1, 16))
        >>> float(q.block_scales[0]), int(q.elements[-1]), float(dequantize(q)[-1])  # 1.0 is 6 * 448 * g
        (448.0, 7, 1.0000000186264515)
    """
    x = mx.check_floats(x)
    if not isinstance(pad, bool):
        raise TypeError(f"pad must be True or False, got {pad!r}")
    if not np.isfinite(x).all():
        count = int((~np.isfinite(x)).sum())
        raise ValueError(
            f"the input holds {count} NaN or infinite value(s); NVFP4's E2M1 elements have neither, remove them"
        )
    shape = tuple(x.shape)
    blocks = split_blocks(x, BLOCK_SIZE, pad, "NVFP4")
    amax = np.abs(blocks).max(axis=-1)
    if tensor_amax is None:
        tensor_amax = float(amax.max()) if amax.size else 0.0
    g = global_scale(tensor_amax)
    scales = block_scales(amax, g)
    step = decode_array(scales, SCALE_FORMAT) * g  # exact: 4 significant bits times 24
    zero = step == 0  # an all-zero block, or one too small for E4M3's smallest scale: it reads back as zero
    quotient = blocks / np.where(zero, 1.0, step)[..., None]
    elements = encode_array(quotient, ELEMENT_FORMAT, saturate=True)
    elements = np.where(zero[..., None], 0, elements).astype(np.uint8)
    padded = (*blocks.shape[:-2], blocks.shape[-2] * BLOCK_SIZE)
    return NVFP4Tensor(elements=elements.reshape(padded), scales=scales, global_scale=g, shape=shape)


def dequantize(q: NVFP4Tensor) -> np.ndarray:
    """The values an NVFP4 tensor stores, as float64 (exact), in the original shape.

    Raises:
        TypeError: If ``q`` is not an ``NVFP4Tensor``.
    """
    if not isinstance(q, NVFP4Tensor):
        raise TypeError(f"expected an NVFP4Tensor (from gpukb.formats.nvfp4.quantize), got {type(q).__name__}")
    padded = q.elements.shape
    values = decode_array(q.elements, ELEMENT_FORMAT).reshape(*padded[:-1], -1, q.block_size)
    out = (values * (q.block_scales * q.global_scale)[..., None]).reshape(padded)
    return out[..., : q.shape[-1]]


# --- Error comparison with MXFP4 -------------------------------------------------------------------------------


def compare_with_mxfp4(model: mx.OutlierModel | None = None) -> list[mx.ErrorRow]:
    """Store the MX page's weight-like matrix in every 4-bit scheme, and measure the error of each.

    Args:
        model: A ``gpukb.formats.mx.OutlierModel`` (default: ``OutlierModel()``, the MX page's data).

    Returns:
        ``gpukb.formats.mx.ErrorRow`` rows for per-tensor FP4 E2M1, MXFP4 with the OCP scale rule and with the
        scale rounded up, and NVFP4, in that order.
    """
    model = model or mx.OutlierModel()
    if not isinstance(model, mx.OutlierModel):
        raise TypeError(f"expected a gpukb.formats.mx.OutlierModel, got {type(model).__name__}")
    x, outlier_cols = model.sample()
    x64 = x.astype(np.float64)
    ordinary = np.ones(x.shape[-1], dtype=bool)
    ordinary[outlier_cols] = False

    def row(label: str, scaling: str, bits: float, restored: np.ndarray) -> mx.ErrorRow:
        return mx.ErrorRow(
            label,
            scaling,
            bits,
            relative_error(restored, x64),
            relative_error(restored[:, ordinary], x64[:, ordinary]),
            float(np.abs(restored - x64).max()),
        )

    per_tensor = mx.per_tensor_dequantize(mx.per_tensor_quantize(x, "e2m1"))
    rows = [row("FP4 E2M1", "per tensor (FP32)", 4 + 32 / x.size, per_tensor)]
    for rounding, scaling in (("floor", "per block of 32 (E8M0)"), ("ceil", "per block of 32 (E8M0), rounded up")):
        q = mx.quantize(x, "e2m1", scale_rounding=rounding)
        rows.append(row(mx.ELEMENT_FORMATS["e2m1"], scaling, q.bits_per_element, mx.dequantize(q)))
    q = quantize(x)
    rows.append(row("NVFP4 (E2M1)", "per block of 16 (E4M3) and per tensor (FP32)", q.bits_per_element, dequantize(q)))
    return rows


def error_table(model: mx.OutlierModel | None = None) -> tuple[list[str], list[list[str]]]:
    """``compare_with_mxfp4`` as table rows, for ``gpukb.tables.markdown_table`` or ``text_table``."""
    headers = ["format", "scaling", "bits per value", "relative RMS error", "ordinary columns", "max abs error"]
    rows = [
        [
            r.label,
            r.scaling,
            f"{r.bits_per_element:.2f}",
            f"{r.relative_rms_error:.2e}",
            f"{r.relative_rms_error_ordinary:.2e}",
            f"{r.max_abs_error:.2e}",
        ]
        for r in compare_with_mxfp4(model)
    ]
    return headers, rows
