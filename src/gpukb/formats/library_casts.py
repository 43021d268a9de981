"""What torch and ml_dtypes do when they cast float32 to a format, next to what the format's rules say.

Used by the tests (every bit pattern and a large set of inputs are checked against both libraries) and by the
formats pages (the table of where the libraries differ is computed when the site is built). Both libraries are
optional: a function returns ``None`` where the library, or its dtype for the format, is missing.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import numpy as np

from gpukb.arguments import integer
from gpukb.formats.arrays import decode_array, encode_array
from gpukb.formats.spec import FloatFormat, get_format


def _module(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def probe_inputs(fmt: str | FloatFormat, seed: int = 0) -> np.ndarray:
    """float32 inputs that exercise every rounding decision of ``fmt`` (a format of at most 19 bits).

    Raises:
        ValueError: For wider formats, whose every value cannot be enumerated.
    """
    fmt = get_format(fmt)
    if fmt.bits > 19:
        raise ValueError(f"probe_inputs enumerates every value of the format: {fmt.name} has {fmt.bits} bits (max 19)")
    rng = np.random.default_rng(integer("seed", seed, minimum=0))
    # Random patterns, with every float32 exponent field represented.
    exponents = np.repeat(np.arange(256, dtype=np.uint32), 64)
    mantissas = rng.integers(0, 1 << 23, size=exponents.size, dtype=np.uint32)
    signs = rng.integers(0, 2, size=exponents.size, dtype=np.uint32)
    random = ((signs << 31) | (exponents << 23) | mantissas).view(np.float32)
    # Every value of the format, the midpoint (tie) between each pair of neighbours, and a float32 ulp either side.
    values = decode_array(np.arange(1 << fmt.bits), fmt)
    finite = np.unique(np.abs(values[np.isfinite(values)]))
    mids = (finite[:-1] + finite[1:]) / 2
    top = finite[-1] + (finite[-1] - finite[-2]) / 2  # the tie above the largest finite value
    with np.errstate(over="ignore"):  # beyond float32's range for the wide formats: becomes inf, also a probe
        edges = np.concatenate([finite, mids, [top, 2 * finite[-1], finite[0] / 2]]).astype(np.float32)
    nudged = np.concatenate([np.nextafter(edges, np.float32(np.inf)), np.nextafter(edges, np.float32(0))])
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3.4028235e38], dtype=np.float32)
    base = np.concatenate([random, edges, nudged])
    x = np.concatenate([base, -base, special])
    return x if fmt.has_nan else x[~np.isnan(x)]


def ml_dtypes_type(fmt: str | FloatFormat) -> type | None:
    """The numpy scalar type ml_dtypes (or numpy, for FP16/FP32/FP64) uses for the format, or ``None``."""
    fmt = get_format(fmt)
    native = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}
    if fmt.name in native:
        return native[fmt.name]
    module = _module("ml_dtypes")
    name = fmt.library_names.get("ml_dtypes")
    return getattr(module, name, None) if module is not None and name else None


def torch_dtype(fmt: str | FloatFormat):
    """The ``torch.dtype`` for the format, or ``None`` where torch is missing or has none."""
    fmt = get_format(fmt)
    torch = _module("torch")
    name = fmt.library_names.get("torch")
    return getattr(torch, name, None) if torch is not None and name else None


def ml_dtypes_bits(x: np.ndarray, fmt: str | FloatFormat) -> np.ndarray | None:
    """Bit patterns of ``x.astype(<ml_dtypes type>)``, or ``None`` without that type."""
    fmt = get_format(fmt)
    target = ml_dtypes_type(fmt)
    if target is None:
        return None
    with np.errstate(all="ignore"):
        cast = np.asarray(x).astype(target)
    return cast.view(fmt.uint_dtype if fmt.bits >= 8 else np.uint8)


def torch_bits(x: np.ndarray, fmt: str | FloatFormat, device: str = "cpu") -> np.ndarray | None:
    """Bit patterns of ``torch.tensor(x).to(<dtype>)`` on ``device``, or ``None`` without that dtype."""
    fmt = get_format(fmt)
    dtype = torch_dtype(fmt)
    if dtype is None:
        return None
    import torch

    views = {8: torch.uint8, 16: torch.int16, 32: torch.int32, 64: torch.int64}
    cast = torch.from_numpy(np.ascontiguousarray(x)).to(device).to(dtype)
    return cast.view(views[fmt.bits]).cpu().numpy().view(fmt.uint_dtype)


def same_values(bits_a: np.ndarray, bits_b: np.ndarray, fmt: str | FloatFormat) -> np.ndarray:
    """Element-wise: do two sets of patterns mean the same number (any NaN equals any NaN, zeros by sign)?"""
    fmt = get_format(fmt)
    a, b = decode_array(bits_a, fmt), decode_array(bits_b, fmt)
    both_nan = np.isnan(a) & np.isnan(b)
    return both_nan | ((a == b) & (np.signbit(a) == np.signbit(b)))


@dataclass(frozen=True)
class CastRow:
    """One input and what each cast makes of it (values as floats; ``None`` where the library lacks the type)."""

    input: float
    rules: float
    rules_saturating: float
    ml_dtypes: float | None
    torch: float | None


def compare_casts(values: list[float], fmt: str | FloatFormat) -> list[CastRow]:
    """Cast float32 ``values`` to ``fmt`` by the format's rules (default and saturating) and by both libraries."""
    fmt = get_format(fmt)
    x = np.asarray(values, dtype=np.float32)

    def as_values(bits: np.ndarray | None) -> list[float | None]:
        return [None] * len(x) if bits is None else decode_array(bits, fmt).tolist()

    columns = [
        as_values(encode_array(x, fmt)),
        as_values(encode_array(x, fmt, saturate=True)),
        as_values(ml_dtypes_bits(x, fmt)),
        as_values(torch_bits(x, fmt)),
    ]
    return [CastRow(float(v), *row) for v, *row in zip(x.tolist(), *columns, strict=True)]
