"""Medians and spread of repeated timings.

A single timing is a sample of a noisy process; a benchmark reports the median of many, with the interquartile
range as its spread, and keeps the extremes so that outliers stay visible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

#: The fields of a summary, in the order a results file stores them.
SUMMARY_FIELDS = ("median", "q1", "q3", "min", "max", "n")


@dataclass(frozen=True)
class Summary:
    """Order statistics of repeated measurements (times in milliseconds, for example).

    Attributes:
        median: The middle value.
        q1: The first quartile (25th percentile, linear interpolation).
        q3: The third quartile (75th percentile).
        min: The smallest value.
        max: The largest value.
        n: How many values there were.
    """

    median: float
    q1: float
    q3: float
    min: float
    max: float
    n: int

    @property
    def spread(self) -> float:
        """The interquartile range relative to the median (0.02 means the middle half lies within 2%)."""
        return (self.q3 - self.q1) / self.median if self.median > 0 else math.inf

    def as_dict(self) -> dict[str, float | int]:
        """The summary as plain JSON-ready data."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, float | int]) -> Summary:
        """Rebuild a summary from :meth:`as_dict` output.

        Raises:
            ValueError: If a field is missing, or the values are not ordered min ≤ q1 ≤ median ≤ q3 ≤ max.
        """
        missing = [f for f in SUMMARY_FIELDS if f not in data]
        if missing:
            raise ValueError(f"a summary needs the fields {list(SUMMARY_FIELDS)}; missing {missing}")
        summary = cls(**{f: data[f] for f in SUMMARY_FIELDS})
        if not summary.min <= summary.q1 <= summary.median <= summary.q3 <= summary.max:
            raise ValueError(f"summary values are not ordered min ≤ q1 ≤ median ≤ q3 ≤ max: {dict(data)}")
        return summary


def summarize(samples: Sequence[float]) -> Summary:
    """Summarize repeated measurements.

    Args:
        samples: At least one finite, non-negative value.

    Raises:
        TypeError: If ``samples`` is a string or holds something that is not a real number.
        ValueError: If it is empty or holds a negative, NaN or infinite value.
    """
    if isinstance(samples, str | bytes):
        raise TypeError(f"summarize expects a sequence of numbers, not {type(samples).__name__}")
    values = list(samples)
    if not values:
        raise ValueError("summarize needs at least one sample; got none")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
            raise TypeError(f"samples must be real numbers; got {value!r} ({type(value).__name__})")
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"samples must be finite and non-negative; got {value!r}")
    array = np.asarray(values, dtype=np.float64)
    q1, median, q3 = (float(x) for x in np.percentile(array, [25, 50, 75]))
    return Summary(median=median, q1=q1, q3=q3, min=float(array.min()), max=float(array.max()), n=len(values))
