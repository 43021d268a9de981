"""The cell checks of docs/formats/mx.md (``gpukb.formats.pages.mx``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from tests.formats.pages import DTYPES
from tests.helpers import markdown_tables

#: MX element formats by the label the tables print.
MX_LABELS = {"MXFP8 (E4M3)": "e4m3", "MXFP8 (E5M2)": "e5m2", "MXFP6 (E3M2)": "e3m2", "MXFP6 (E2M3)": "e2m3",
             "MXFP4 (E2M1)": "e2m1"}  # fmt: skip


def _cast(values: np.ndarray, name: str) -> np.ndarray:
    """Round to nearest even in a format with ml_dtypes, saturating at its largest value."""
    top = float(ml_dtypes.finfo(DTYPES[name]).max)
    return np.clip(values, -top, top).astype(DTYPES[name]).astype(np.float64)


def _mx(x: np.ndarray, name: str, ceil: bool = False, block: int = 32) -> np.ndarray:
    """OCP MX: per block of 32 along the rows, a power-of-two scale 2^(floor(log2 amax) - emax of the element)
    (or the smallest power of two that maps amax to at most the element's largest value)."""
    top = float(ml_dtypes.finfo(DTYPES[name]).max)
    blocks = x.reshape(*x.shape[:-1], -1, block)
    amax = np.abs(blocks).max(axis=-1, keepdims=True)
    safe = np.where(amax > 0, amax, 1.0)
    if ceil:
        exponent = np.ceil(np.log2(safe / top))
    else:
        exponent = np.floor(np.log2(safe)) - math.floor(math.log2(top))
    scale = 2.0**exponent
    return (_cast(blocks / scale, name) * scale).reshape(x.shape)


def _per_tensor(x: np.ndarray, name: str) -> np.ndarray:
    scale = float(np.float32(np.abs(x).max() / float(ml_dtypes.finfo(DTYPES[name]).max)))
    return _cast(x / scale, name) * scale


def _nvfp4(x: np.ndarray) -> np.ndarray:
    """NVFP4: E2M1 elements, an E4M3 scale per block of 16 (amax / 6 over the tensor scale), an FP32 tensor scale
    amax / (6 · 448)."""
    g = float(np.float32(np.abs(x).max() / (6 * 448)))
    blocks = x.reshape(*x.shape[:-1], -1, 16)
    amax = np.abs(blocks).max(axis=-1, keepdims=True)
    scale = _cast(amax / (6 * g), "e4m3") * g
    safe = np.where(scale > 0, scale, 1.0)
    return np.where(scale > 0, _cast(blocks / safe, "e2m1") * safe, 0.0).reshape(x.shape)


def _errors(restored: np.ndarray, x: np.ndarray, ordinary: np.ndarray) -> tuple[float, float, float]:
    def rel(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.linalg.norm(a - b) / np.linalg.norm(b))

    return rel(restored, x), rel(restored[:, ordinary], x[:, ordinary]), float(np.abs(restored - x).max())


@functools.cache
def _weights() -> tuple[np.ndarray, np.ndarray]:
    """The MX page's weight-like data (the generator the page describes) and its ordinary columns."""
    from gpukb.formats.mx import OutlierModel

    x, outliers = OutlierModel().sample()
    ordinary = np.ones(x.shape[-1], dtype=bool)
    ordinary[outliers] = False
    return x.astype(np.float64), ordinary


@functools.cache
def _expected_error_row(label: str, scaling: str) -> tuple[float, tuple[float, float, float]]:
    x, ordinary = _weights()
    if scaling == "none (cast)":
        assert label == "BF16"
        return 16.0, _errors(x.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64), x, ordinary)
    if scaling == "per tensor (FP32)":
        name = {"FP8 E4M3": "e4m3", "FP8 E5M2": "e5m2", "FP4 E2M1": "e2m1"}[label]
        bits = ml_dtypes.finfo(DTYPES[name]).bits + 32 / x.size
        return bits, _errors(_per_tensor(x, name), x, ordinary)
    if scaling.startswith("per block of 32 (E8M0)"):
        name = MX_LABELS[label]
        ceil = scaling.endswith("rounded up")
        return ml_dtypes.finfo(DTYPES[name]).bits + 8 / 32, _errors(_mx(x, name, ceil), x, ordinary)
    assert (label, scaling) == ("NVFP4 (E2M1)", "per block of 16 (E4M3) and per tensor (FP32)")
    return 4 + 8 / 16 + 32 / x.size, _errors(_nvfp4(x), x, ordinary)


def _check_error_table(markdown: str, expected_rows: list[tuple[str, str]]) -> None:
    (table,) = markdown_tables(markdown)
    assert [(row["format"], row["scaling"]) for row in table] == expected_rows
    ordinary_header = next(h for h in table[0] if h.endswith("ordinary columns"))
    for row in table:
        scaling = row["scaling"].replace("rounded up", "scale rounded up").replace("scale scale", "scale")
        bits, (rms, rms_ordinary, max_abs) = _expected_error_row(row["format"], scaling)
        assert row["bits per value"] == f"{bits:.2f}", row
        for header, value in (("relative RMS error", rms), (ordinary_header, rms_ordinary), ("max abs error", max_abs)):
            assert float(row[header]) == pytest.approx(value, rel=5e-3), (row, header, value)


def check_mx_errors(markdown: str, kwargs: dict[str, Any]) -> None:
    block = "per block of 32 (E8M0)"
    _check_error_table(markdown, [
        ("BF16", "none (cast)"), ("FP8 E4M3", "per tensor (FP32)"), ("FP8 E5M2", "per tensor (FP32)"),
        ("FP4 E2M1", "per tensor (FP32)"), *((label, block) for label in MX_LABELS),
        ("MXFP8 (E4M3)", f"{block}, scale rounded up"), ("MXFP4 (E2M1)", f"{block}, scale rounded up"),
    ])  # fmt: skip


def check_nvfp4_errors(markdown: str, kwargs: dict[str, Any]) -> None:
    _check_error_table(markdown, [
        ("FP4 E2M1", "per tensor (FP32)"), ("MXFP4 (E2M1)", "per block of 32 (E8M0)"),
        ("MXFP4 (E2M1)", "per block of 32 (E8M0), rounded up"),
        ("NVFP4 (E2M1)", "per block of 16 (E4M3) and per tensor (FP32)"),
    ])  # fmt: skip


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "mx_error_table": check_mx_errors,
    "nvfp4_error_table": check_nvfp4_errors,
}
