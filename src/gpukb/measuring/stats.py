"""Medians and spread of repeated timings.

A single timing is a sample of a noisy process; a benchmark reports the median of many, with the interquartile
range as its spread, and keeps the extremes so that outliers stay visible. :class:`Summary` is also the model of
every timing stored in a results file (``gpukb.records``); :class:`PartialSummary` holds what records made before
that rule kept (a median, sometimes other percentiles), converted without inventing the rest.
:func:`median_interval` says how far the median of paired rounds can be trusted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Annotated

import numpy as np
from pydantic import Field, model_validator

from gpukb import arguments
from gpukb.schema import StrictModel

#: A finite, non-negative number of milliseconds.
Milliseconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class Summary(StrictModel):
    """Order statistics of repeated measurements (times in milliseconds, for example).

    Attributes:
        median: The middle value.
        q1: The first quartile (25th percentile, linear interpolation).
        q3: The third quartile (75th percentile).
        min: The smallest value.
        max: The largest value.
        n: How many values there were.
    """

    median: Milliseconds
    q1: Milliseconds
    q3: Milliseconds
    min: Milliseconds
    max: Milliseconds
    n: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> Summary:
        if not self.min <= self.q1 <= self.median <= self.q3 <= self.max:
            raise ValueError(
                f"summary values are not ordered min ≤ q1 ≤ median ≤ q3 ≤ max: min={self.min}, q1={self.q1}, "
                f"median={self.median}, q3={self.q3}, max={self.max}"
            )
        return self

    @property
    def spread(self) -> float:
        """The interquartile range relative to the median (0.02 means the middle half lies within 2%)."""
        return (self.q3 - self.q1) / self.median if self.median > 0 else math.inf

    def as_dict(self) -> dict[str, float | int]:
        """The summary as plain JSON-ready data (``model_dump()``)."""
        return self.model_dump()


class PartialSummary(StrictModel):
    """What a results file recorded before every timing was a :class:`Summary`: the median, and where the run
    kept them, the number of samples and the 20th and 80th percentiles (``triton.testing.do_bench``'s
    quantiles). Quartiles and extremes are absent because those runs did not keep them; they are never filled
    in. Only committed records converted from an earlier schema hold one (their ``run.notes`` say how); a new
    measurement is summarized whole (:func:`summarize`).

    Attributes:
        median: The middle value.
        n: How many values the median was taken of, where the run recorded it.
        p20: The 20th percentile, where recorded.
        p80: The 80th percentile, where recorded.
    """

    median: Milliseconds
    n: int | None = Field(default=None, ge=1)
    p20: Milliseconds | None = None
    p80: Milliseconds | None = None

    @model_validator(mode="after")
    def _ordered(self) -> PartialSummary:
        if (self.p20 is None) != (self.p80 is None):
            raise ValueError(f"p20 and p80 are recorded together or not at all; got p20={self.p20}, p80={self.p80}")
        if self.p20 is not None and not self.p20 <= self.median <= self.p80:  # type: ignore[operator]
            raise ValueError(
                f"summary values are not ordered p20 ≤ median ≤ p80: p20={self.p20}, median={self.median}, "
                f"p80={self.p80}"
            )
        return self


#: A timing as a results file holds it: a whole :class:`Summary`, or what an older record kept of one.
RecordedSummary = Summary | PartialSummary


def summarize(samples: Sequence[float]) -> Summary:
    """Summarize repeated measurements.

    Args:
        samples: At least one finite, non-negative value.

    Raises:
        TypeError: If ``samples`` is not an iterable (a string is not) or holds something that is not a real number.
        ValueError: If it is empty or holds a negative, NaN or infinite value, or an int beyond a float's range.
    """
    if isinstance(samples, str | bytes) or not isinstance(samples, Iterable):  # list(3) raised a bare TypeError
        raise TypeError(f"summarize expects a sequence of numbers; got {arguments.given(samples)}")
    values = list(samples)
    if not values:
        raise ValueError("summarize needs at least one sample; got none")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
            raise TypeError(f"samples must be real numbers; got {value!r} ({type(value).__name__})")
        if not math.isfinite(arguments.real("a sample", value, finite=False)) or value < 0:  # 10^400 overflowed
            raise ValueError(f"samples must be finite and non-negative; got {value!r}")
    array = np.asarray(values, dtype=np.float64)
    q1, median, q3 = (float(x) for x in np.percentile(array, [25, 50, 75]))
    return Summary(median=median, q1=q1, q3=q3, min=float(array.min()), max=float(array.max()), n=len(values))


#: The most samples :func:`median_interval` takes (its exact binomial sums grow as the square of the count).
MAX_INTERVAL_SAMPLES = 100_000


def median_interval(samples: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """A distribution-free confidence interval for the median of independent samples.

    The interval runs from the j-th smallest to the j-th largest sample, with j the largest rank whose coverage
    ``1 - 2·P(Binomial(n, 1/2) < j)`` is still at least ``confidence`` (the sign-test interval: it assumes nothing
    about the shape of the noise, only that rounds are independent). Use it on per-round ratios of two
    configurations measured in the same round, so that drift common to both cancels.

    Args:
        samples: At least 6 finite numbers (fewer cannot give 95% coverage with the extremes), at most
            :data:`MAX_INTERVAL_SAMPLES`.
        confidence: The least coverage wanted, strictly between 0 and 1.

    Returns:
        ``(low, high, coverage)``: the interval's ends and the coverage it actually has (≥ ``confidence``).

    Raises:
        TypeError: If ``samples`` is not an iterable (a string is not) or holds something that is not a real number.
        ValueError: If a sample is not finite or beyond a float's range, there are too many samples,
            ``confidence`` is outside (0, 1), or there are too few samples for it (the message says how many are
            needed).
    """
    if isinstance(samples, str | bytes) or not isinstance(samples, Iterable):
        raise TypeError(f"median_interval expects a sequence of numbers; got {arguments.given(samples)}")
    values = list(samples)
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
            raise TypeError(f"samples must be real numbers; got {value!r} ({type(value).__name__})")
        if not math.isfinite(arguments.real("a sample", value, finite=False)):  # refuses an int beyond a float
            raise ValueError(f"samples must be finite; got {value!r}")
    if isinstance(confidence, bool | np.bool_) or not isinstance(confidence, int | float | np.floating):
        raise TypeError(f"confidence must be a number between 0 and 1; got {arguments.given(confidence)}")
    given = confidence
    confidence = arguments.real("confidence", confidence, finite=False)
    if not 0 < confidence < 1:  # the value as given: 10^30 was shown as 1e+30
        raise ValueError(f"confidence must be strictly between 0 and 1; got {given!r}")
    n = arguments.integer("the number of samples", len(values), maximum=MAX_INTERVAL_SAMPLES)
    if n == 0 or 1 - 2 / 2**n < confidence:
        need = next(m for m in range(1, 200) if 1 - 2 / 2**m >= confidence)
        raise ValueError(f"a {confidence:.0%} interval for the median needs at least {need} samples; got {n}")
    # coverage(j) = 1 - 2·P(Binomial(n, 1/2) < j) in exact integers scaled by 2^n, each binomial term computed
    # once as j grows: linear in j, not quadratic (the interval of 10^5 rounds took minutes summed afresh)
    total, wanted = 2**n, Fraction(confidence)
    j, below, term = 1, 1, n  # below = C(n, 0) + ... + C(n, j - 1); term = C(n, j)
    while j + 1 <= n // 2 and (total - 2 * (below + term)) * wanted.denominator >= wanted.numerator * total:
        below += term
        term = term * (n - j) // (j + 1)
        j += 1
    coverage = 1 - 2 * below / total
    ordered = sorted(float(v) for v in values)
    return ordered[j - 1], ordered[n - j], coverage
