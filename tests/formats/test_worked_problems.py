"""The formats chapter's worked problems, each answer recomputed with ml_dtypes and numpy, read back from the page."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from tests.worked_problems import answer, assert_shows, rendered_problems


@pytest.fixture  # per test (rendered once, then cached), so mutmut maps every test to the problems it reads
def problems() -> dict[str, str]:
    return rendered_problems("formats")


def _bits(value: float, dtype) -> int:
    return int(np.array(value, dtype=dtype).view(np.uint8))


def test_largest_e5m2fnuz(problems: dict[str, str]) -> None:
    text = answer(problems["e5m2fnuz-max"])
    top = float(ml_dtypes.finfo(ml_dtypes.float8_e5m2fnuz).max)
    ocp = float(ml_dtypes.finfo(ml_dtypes.float8_e5m2).max)
    assert_shows(text, top, ocp)
    assert f"0x{_bits(top, ml_dtypes.float8_e5m2fnuz):02X}" in text
    assert f"0x{_bits(ocp, ml_dtypes.float8_e5m2):02X}" in text


def test_cast_of_42_5(problems: dict[str, str]) -> None:
    text = answer(problems["e4m3-cast"])
    stored = float(np.array(42.5).astype(ml_dtypes.float8_e4m3fn))
    assert_shows(text, stored, stored - 42.5)
    assert_shows(text, 100 * (stored - 42.5) / 42.5, rel=0.02)  # a percentage to one decimal
    assert f"0x{_bits(stored, ml_dtypes.float8_e4m3fn):02X}" in text


def _stall(dtype) -> tuple[float, int]:
    """Add one until the sum stops changing, in ``dtype``: (the sum, additions that changed it)."""
    s, n = dtype(0), 0
    while True:
        t = dtype(s + dtype(1))
        if t == s:
            return float(s), n
        s, n = t, n + 1


def test_sum_of_ones(problems: dict[str, str]) -> None:
    text = answer(problems["sum-of-ones"])
    bf16, bf16_steps = _stall(ml_dtypes.bfloat16)
    fp16, _ = _stall(np.float16)
    top = np.float32(2**24)  # fp32: the loop would take 16 million steps; check the stall point's two sides
    assert np.float32(top + np.float32(1)) == top
    assert np.float32(np.float32(top - 1) + np.float32(1)) == top
    assert_shows(text, bf16, bf16_steps, fp16, float(top))


def test_microscaling_storage(problems: dict[str, str]) -> None:
    text = answer(problems["microscaling-storage"])
    n = 4096 * 4096
    bits = {"bf16": 16, "mxfp8": (32 * 8 + 8) / 32, "mxfp4": (32 * 4 + 8) / 32, "nvfp4": (n * 4 + n // 16 * 8 + 32) / n}
    for value in bits.values():
        assert_shows(text, value, value * n / 8 / 2**20, rel=1e-3)


def test_gradient_underflow(problems: dict[str, str]) -> None:
    text = answer(problems["fp16-underflow"])
    assert float(np.float16(1e-8)) == 0.0
    tiny = float(np.finfo(np.float16).tiny)
    scale = 2 ** next(k for k in range(64) if 1e-8 * 2**k >= tiny)
    assert_shows(text, scale, float(np.float16(1e-8 * scale)))
    assert math.isclose(float(np.float16(1e-8 * scale)), 1e-8 * scale, rel_tol=1e-3)
