"""Medians and spread of repeated timings."""

from __future__ import annotations

import math

import pytest
from pydantic import TypeAdapter

from gpukb.measuring.stats import PartialSummary, RecordedSummary, Summary, median_interval, summarize


def test_quartiles_interpolate_linearly() -> None:
    s = summarize([4.0, 1.0, 3.0, 2.0])
    assert (s.min, s.q1, s.median, s.q3, s.max, s.n) == (1.0, 1.75, 2.5, 3.25, 4.0, 4)
    assert s.spread == pytest.approx(1.5 / 2.5)


def test_one_sample_is_its_own_summary() -> None:
    s = summarize([0.25])
    assert s.as_dict() == {"median": 0.25, "q1": 0.25, "q3": 0.25, "min": 0.25, "max": 0.25, "n": 1}
    assert s.spread == 0.0


def test_a_zero_median_has_infinite_spread() -> None:
    assert math.isinf(summarize([0.0, 0.0, 1.0]).spread)


def test_round_trip_through_json() -> None:
    s = summarize([1, 2, 3, 10])
    assert Summary.model_validate_json(s.model_dump_json()) == s


@pytest.mark.parametrize(
    ("samples", "error", "message"),
    [
        ([], ValueError, "at least one sample"),
        ([1.0, -0.5], ValueError, "non-negative; got -0.5"),
        ([1.0, float("nan")], ValueError, "finite"),
        ([1.0, float("inf")], ValueError, "finite"),
        ([1.0, "2"], TypeError, "real numbers; got '2'"),
        ([True], TypeError, "real numbers; got True"),
        ("123", TypeError, r"expects a sequence of numbers; got '123' \(str\)"),
        (3, TypeError, r"expects a sequence of numbers; got 3 \(int\)"),  # was "'int' object is not iterable"
        ([10**400], ValueError, "a sample is beyond the range of a float"),  # was OverflowError
    ],
)
def test_bad_samples_are_refused(samples, error, message) -> None:
    with pytest.raises(error, match=message):
        summarize(samples)


def test_a_summary_names_missing_fields_and_disorder() -> None:
    with pytest.raises(ValueError, match=r"q3\n  Field required"):
        Summary.model_validate({"median": 1, "q1": 1, "min": 1, "max": 1, "n": 1})
    with pytest.raises(ValueError, match="not ordered"):
        Summary.model_validate({"median": 1.0, "q1": 2.0, "q3": 3.0, "min": 0.0, "max": 4.0, "n": 3})
    with pytest.raises(ValueError, match="finite number"):
        Summary.model_validate({"median": 1.0, "q1": 1.0, "q3": 1.0, "min": 1.0, "max": float("inf"), "n": 1})
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        Summary.model_validate({"median": 1.0, "q1": 1.0, "q3": 1.0, "min": 1.0, "max": 1.0, "n": 0})


def test_a_partial_summary_keeps_what_an_older_record_kept_and_nothing_more() -> None:
    kept = PartialSummary(median=1.0, p20=0.9, p80=1.2)
    assert (kept.n, kept.p20, kept.p80) == (None, 0.9, 1.2)
    assert not hasattr(kept, "q1")  # quartiles are not filled in
    with pytest.raises(ValueError, match="p20 and p80 are recorded together or not at all"):
        PartialSummary(median=1.0, p20=0.9)
    with pytest.raises(ValueError, match="not ordered p20 ≤ median ≤ p80"):
        PartialSummary(median=1.0, p20=1.1, p80=1.2)
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        PartialSummary(median=1.0, n=0)


def test_a_recorded_timing_is_read_as_whichever_it_is() -> None:
    read = TypeAdapter(RecordedSummary).validate_json
    assert isinstance(read('{"median": 1, "q1": 1, "q3": 1, "min": 1, "max": 1, "n": 1}'), Summary)
    assert isinstance(read('{"median": 1, "n": 20}'), PartialSummary)
    with pytest.raises(ValueError, match="q1"):  # a summary with some quartiles is neither
        read('{"median": 1, "q1": 1}')


# median_interval: the sign-test interval. Coverage values from the binomial distribution written out by hand:
# n = 6: j = 1 covers 1 - 2/64 = 0.96875; n = 12: j = 3 covers 1 - 2·79/4096; n = 20: j = 6 covers
# 1 - 2·(1 + 20 + 190 + 1140 + 4845 + 15504)/2^20 = 0.9586 (j = 7 would cover 0.8847).
@pytest.mark.parametrize(
    ("n", "rank", "coverage"),
    [(6, 1, 1 - 2 / 64), (12, 3, 1 - 2 * 79 / 4096), (20, 6, 1 - 2 * 21700 / 2**20)],
)
def test_median_interval_takes_the_widest_rank_with_enough_coverage(n, rank, coverage) -> None:
    values = [float(10 * i) for i in range(n)][::-1]  # order of input does not matter
    low, high, got = median_interval(values)
    assert (low, high) == (10.0 * (rank - 1), 10.0 * (n - rank))
    assert got == pytest.approx(coverage, rel=1e-12)


def test_median_interval_of_many_samples_is_quick_and_near_the_normal_bound() -> None:
    # 10^4 rounds: the binomial terms summed once each (summed afresh per rank, 10^5 rounds took minutes)
    low, high, coverage = median_interval(range(10_000))
    assert 0.95 <= coverage < 0.952
    assert (low, high) == (4901, 5098)  # ranks 4902 and 5099: about 5000 ± 1.96·√10^4/2


def test_median_interval_at_lower_confidence_is_narrower() -> None:
    values = list(range(20))
    assert median_interval(values, confidence=0.80)[:2] == (6, 13)  # j = 7 covers 0.8847 >= 0.80; j = 8 0.7368


@pytest.mark.parametrize(
    ("samples", "confidence", "error", "message"),
    [
        ([1.0] * 5, 0.95, ValueError, "needs at least 6 samples; got 5"),
        ([], 0.95, ValueError, "got 0"),
        ([1.0] * 8 + [float("nan")], 0.95, ValueError, "finite"),
        ([1.0] * 8, 1.0, ValueError, "strictly between 0 and 1"),
        ([1.0] * 8, float("nan"), ValueError, "strictly between 0 and 1"),
        ([1.0] * 8, True, TypeError, "confidence"),
        ([1.0] * 7 + ["2"], 0.95, TypeError, "real numbers"),
        ("123456", 0.95, TypeError, r"sequence of numbers; got '123456' \(str\)"),
        (None, 0.95, TypeError, r"sequence of numbers; got None \(NoneType\)"),
        ([1.0] * 8, 10**30, ValueError, "strictly between 0 and 1; got 1000000000000000000000000000000$"),  # not 1e+30
        ([10**400] * 6, 0.95, ValueError, r"a sample is beyond the range of a float"),
        ([1.0] * 8, [0.9], TypeError, r"confidence must be a number between 0 and 1; got \[0.9\] \(list\)"),
        (range(100_001), 0.95, ValueError, "the number of samples must be an int ≤ 100000; got 100001"),
    ],
)
def test_median_interval_refuses(samples, confidence, error, message) -> None:
    with pytest.raises(error, match=message):
        median_interval(samples, confidence)
