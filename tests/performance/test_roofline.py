"""Ceilings, bounds and fractions of a ceiling."""

from __future__ import annotations

import pytest

from gpukb.performance.roofline import attainable, bound, fraction, ridge_point


def test_the_roofline_is_the_lower_of_two_roofs() -> None:
    peak, bw = 100e12, 2e12
    assert ridge_point(peak, bw) == 50
    assert attainable(10, peak, bw) == 20e12  # memory roof
    assert attainable(50, peak, bw) == peak  # the ridge
    assert attainable(500, peak, bw) == peak  # compute roof


def test_bound_names_its_limiter() -> None:
    b = bound(flops=1e12, nbytes=1e9, peak_flops=100e12, bandwidth=2e12)
    assert (b.compute_s, b.memory_s, b.time_s, b.limiter) == (0.01, 0.0005, 0.01, "compute")
    assert bound(1e9, 1e12, 100e12, 2e12).limiter == "memory"


def test_fraction() -> None:
    assert fraction(75, 100) == 0.75


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: ridge_point(0, 1), ValueError, "peak_flops must be positive and finite; got 0"),
        (lambda: ridge_point(1, float("inf")), ValueError, "bandwidth must be positive and finite"),
        (lambda: attainable(-1, 1, 1), ValueError, "intensity must be ≥ 0; got -1"),
        (lambda: bound(-1, 1, 1, 1), ValueError, "must be ≥ 0"),
        (lambda: fraction(1, 0), ValueError, "ceiling must be positive"),
        (lambda: fraction(-1, 1), ValueError, "must be ≥ 0; got -1"),
        (lambda: fraction(1, "2"), TypeError, "ceiling must be a number; got '2'"),
    ],
)
def test_bad_ceilings_are_refused(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()
