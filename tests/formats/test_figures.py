"""The formats chapter's figures: the relative-gap staircase is the spacing numpy and ml_dtypes give, and the
figure draws one line per format over its own range."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from gpukb.formats import figures
from gpukb.formats.pages.anatomy import relative_gap_figure

DTYPES = {"fp32": np.float32, "fp16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn}


def next_up(x: np.ndarray, dtype: type) -> np.ndarray:
    """The next representable value above each positive ``x``, by adding one to its bit pattern."""
    width = np.dtype(dtype).itemsize
    uint = {1: np.uint8, 2: np.uint16, 4: np.uint32}[width]
    bits = np.asarray(x).astype(dtype).view(uint)
    return (bits + uint(1)).view(dtype).astype(np.float64)


@pytest.mark.parametrize("name", list(DTYPES))
def test_relative_gap_is_the_spacing_the_dtype_has(name: str) -> None:
    x, rel = figures.relative_gap_curve(name)
    dtype = DTYPES[name]
    assert x[0] == float(ml_dtypes.finfo(dtype).smallest_subnormal)
    assert x[-1] * 2 > float(ml_dtypes.finfo(dtype).max) >= x[-1]  # the top binade
    below_max = x < float(ml_dtypes.finfo(dtype).max)
    gaps = next_up(x[below_max], dtype) - x[below_max]
    assert np.array_equal(rel[below_max], gaps / x[below_max])


@pytest.mark.parametrize(("name", "bits"), [("fp32", 23), ("tf32", 10), ("fp16", 10), ("bf16", 7)])
def test_the_staircase_is_flat_at_two_to_minus_m_and_climbs_to_one(name: str, bits: int) -> None:
    x, rel = figures.relative_gap_curve(name)
    normal = x >= float(ml_dtypes.finfo(np.float32).smallest_normal) if name in ("tf32", "bf16") else None
    if normal is None:
        normal = x >= float(ml_dtypes.finfo(DTYPES[name]).smallest_normal)
    assert np.all(rel[normal] == 2.0**-bits)
    assert rel[0] == 1.0  # the smallest subnormal: the next value is twice it
    assert np.all(np.diff(rel[~normal]) < 0)  # halves at every binade up to the normal range
    assert len(rel[~normal]) == bits  # one binade per mantissa bit of subnormals


def test_tf32_has_fp16_precision_over_fp32_range() -> None:
    tf32_x, tf32 = figures.relative_gap_curve("tf32")
    fp32_x, _ = figures.relative_gap_curve("fp32")
    _, fp16 = figures.relative_gap_curve("fp16")
    assert tf32_x[-1] == fp32_x[-1]
    assert tf32.min() == fp16.min()


def test_the_figure_draws_one_labelled_line_per_format() -> None:
    fig = figures.relative_gap_figure(["fp32", "tf32", "fp16", "bf16"], "title")
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert [line.get_label().split(":")[0] for line in lines] == ["fp32", "tf32", "fp16", "bf16"]
    assert ax.get_xscale() == "log"
    assert ax.get_yscale() == "log"
    for line, name in zip(lines, ["fp32", "tf32", "fp16", "bf16"], strict=True):
        _x, y = line.get_data()
        _, rel = figures.relative_gap_curve(name)
        assert y.max() == 1.0
        assert y.min() == rel.min()
    ymin, ymax = ax.get_ylim()
    assert ymin > 2.0**-30
    assert ymax < 4
    svg = relative_gap_figure(["fp16", "bf16"], "t")
    assert svg.startswith('<div class="gpukb-figure"><svg')
    assert "\n" not in svg
