"""The timing page's tables checked against record ``gemm/ground-up-h100`` read raw: each rate follows from its time."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from gpukb.gemm.pages import timing as page
from tests.gemm.pages import DASH, _ground, _num, _rounds, _sig
from tests.helpers import markdown_tables


def _gflops(n: int, ms: float) -> float:
    """The lab's formula: 2n³ over the time."""
    return 2 * n**3 / (ms * 1e-3) / 1e9


#: Each timing method and the words its label must carry.
TIMING_WORDS = {
    "lab_first_call": ("lab: first call", "no synchronize"),
    "first_call_synchronized": ("first call", "synchronized"),
    "warm_call_no_sync": ("warm call,", "no synchronize"),
    "warm_calls_no_sync": ("warm calls", "no synchronize (median)"),
    "warm_call_synchronized": ("warm call,", "synchronized (one run)"),
    "warm_calls_synchronized": ("warm calls", "synchronized (median)"),
    "warm_calls_events": ("warm calls", "CUDA events (median)"),
    "back_to_back": ("calls back to back", "(mean)"),
    "do_bench": ("do_bench", "median"),
    "numpy_first_call": ("numpy", "(first call)"),
    "numpy_after_first": ("numpy", "after it"),
}


def _timing_label(label: str, t: dict[str, Any]) -> None:
    assert all(w in label for w in TIMING_WORDS[t["method"]]), (label, t["method"])
    if t["method"] == "back_to_back":
        assert label.startswith(f"{t['calls']} calls"), label
    if t["method"] == "numpy_after_first":
        assert f"median of {t['ms']['n']}" in label, label


def check_timing_table(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    dtype, n = kwargs.get("dtype", "fp32"), kwargs.get("n", 6000)
    entries = [t for t in _ground()["timing"] if t["dtype"] == dtype and t["n"] == n]
    assert len(table) == len(entries) > 0
    for row, t in zip(table, entries, strict=True):
        _timing_label(row["how it was timed"], t)
        assert _sig(row["median ms"], t["ms"]["median"], 4), row
        assert _rounds(row["2n³ / time (GFLOP/s)"], _gflops(n, t["ms"]["median"]), 0), row
        assert int(row["samples"]) == t["ms"]["n"]


def _raw_of(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The record a check reads: a variant's changed JSON (``kwargs["raw"]``), else the committed one."""
    return kwargs["raw"] if "raw" in kwargs else _ground()


def _gpu_cases(raw: dict[str, Any]) -> list[tuple[str, int]]:
    return list(dict.fromkeys((t["dtype"], t["n"]) for t in raw["timing"] if t["device"] == "cuda"))


def _by_method(dtype: str, n: int, raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["method"]: t for t in raw["timing"] if (t["dtype"], t["n"]) == (dtype, n)}


def check_timing_summary(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    cases = _gpu_cases(_raw_of(kwargs))
    assert [row["product"] for row in table] == [f"{d}, n = {n:,}" for d, n in cases]
    columns = {"lab's method, first call (GFLOP/s)": "lab_first_call", "no sync, warm (GFLOP/s)": "warm_calls_no_sync",
               "CUDA events, median (GFLOP/s)": "warm_calls_events"}  # fmt: skip
    for row, (dtype, n) in zip(table, cases, strict=True):
        by = _by_method(dtype, n, _raw_of(kwargs))
        for header, method in columns.items():
            if method not in by:
                assert row[header] == DASH
            else:
                assert _rounds(row[header], _gflops(n, by[method]["ms"]["median"]), 0), (row, header)
        errors = [t["rel_error_vs_fp64"] for t in by.values() if t["rel_error_vs_fp64"] is not None]
        assert (row["relative error vs fp64"] == DASH) if not errors else _sig(row["relative error vs fp64"],
                                                                                errors[0], 2), row  # fmt: skip


def check_first_call(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    needed = {"lab_first_call", "first_call_synchronized", "warm_calls_events"}
    raw = _raw_of(kwargs)
    cases = [(d, n) for d, n in _gpu_cases(raw) if needed <= set(_by_method(d, n, raw))]
    assert [row["product (in the order run)"] for row in table] == [f"{d}, n = {n:,}" for d, n in cases]
    for row, (dtype, n) in zip(table, cases, strict=True):
        by = _by_method(dtype, n, raw)
        lab, first, warm = (by[m]["ms"]["median"] for m in ("lab_first_call", "first_call_synchronized",
                                                           "warm_calls_events"))  # fmt: skip
        assert _sig(row["first call, no sync (ms)"], lab, 3)
        assert _sig(row["first call, synchronized (ms)"], first, 3)
        assert _sig(row["warm, events median (ms)"], warm, 3)
        assert row["first / warm"].endswith("×"), row
        assert _rounds(row["first / warm"], first / warm, 1), row


def check_cpu_lab(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    entries = [t for t in _ground()["timing"] if t["device"] == "cpu"]
    assert len(table) == len(entries) > 0
    for row, t in zip(table, entries, strict=True):
        assert int(row["n"].replace(",", "")) == t["n"]
        _timing_label(row["how it was timed"], t)
        assert _rounds(row["median ms"], t["ms"]["median"], 1)
        assert _rounds(row["GFLOP/s"], _gflops(t["n"], t["ms"]["median"]), 0), row


def check_timing_answer(markdown: str, kwargs: dict[str, Any]) -> None:
    """The opening's sentence: the lab's first-call time and rate, and the events median's, as the record has them."""
    dtype, n = kwargs.get("dtype", "fp32"), kwargs.get("n", 6000)
    by = _by_method(dtype, n, _raw_of(kwargs))
    lab, events = by["lab_first_call"]["ms"]["median"], by["warm_calls_events"]["ms"]["median"]
    found = re.fullmatch(
        r"For the lab's (\w+) product of two ([\d,]+)×([\d,]+) matrices on an NVIDIA H100[^,]*, a host clock read "
        r"around the first call without synchronizing gave ([\d.,]+) ms, which the lab's formula turns into "
        r"\*\*([\d,]+) GFLOP/s\*\*; CUDA events around warm calls measured the product itself at ([\d.,]+) ms, "
        r"\*\*([\d,]+) GFLOP/s\*\*\.",
        markdown.strip(),
    )
    assert found, markdown
    name, rows, cols, lab_ms, lab_rate, events_ms, events_rate = found.groups()
    assert (name, _num(rows), _num(cols)) == (dtype.upper(), n, n)
    assert _sig(lab_ms, lab, 3)
    assert _sig(events_ms, events, 3)
    assert _rounds(lab_rate, _gflops(n, lab), 0)
    assert _rounds(events_rate, _gflops(n, events), 0)
    if (dtype, n) == ("fp32", 6000):  # the opening's product: what it says of it, far beyond the product's rate
        assert _num(lab_rate) > 10 * _num(events_rate)


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "timing_answer": check_timing_answer,
    "timing_table": check_timing_table,
    "timing_summary": check_timing_summary,
    "first_call_table": check_first_call,
    "cpu_lab_table": check_cpu_lab,
}


def test_a_rate_that_does_not_follow_from_its_time_fails_the_check() -> None:
    markdown = page.timing_table(dtype="fp32", n=6000)
    row = next(line for line in markdown.splitlines() if "CUDA events" in line)
    cells = row.split(" | ")
    cells[2] = f"{int(cells[2].replace(',', '')) * 2:,}"
    with pytest.raises(AssertionError):
        check_timing_table(markdown.replace(row, " | ".join(cells)), {"dtype": "fp32", "n": 6000})


def test_the_answer_refuses_a_product_the_record_lacks_and_its_check_fails_on_a_wrong_rate() -> None:
    have = sorted({(t["dtype"], t["n"]) for t in _ground()["timing"] if t["method"] == "lab_first_call"})
    refused = f"no lab-method and events timing of fp16 at n=3 in gemm/ground-up-h100; it has {have}"
    with pytest.raises(ValueError, match=re.escape(refused) + "$"):
        page.timing_answer(dtype="fp16", n=3)
    answer = page.timing_answer()
    rate = re.search(r"\*\*([\d,]+) GFLOP/s\*\*\.$", answer).group(1)
    with pytest.raises(AssertionError):
        check_timing_answer(answer.replace(rate, f"{_num(rate) * 2:,.0f}"), {})


def test_the_defaults_and_another_product_are_read_as_the_page_reads_them() -> None:
    """timing_table and timing_answer without arguments are the lab's FP32 6000³ product; the answer for another
    size of the same type is that size's."""
    check_timing_table(page.timing_table(), {})
    check_timing_answer(page.timing_answer(dtype="fp32", n=2000), {"dtype": "fp32", "n": 2000})


def test_the_tables_of_a_run_unlike_the_committed_one() -> None:
    """A run whose first case lacks the synchronized first call and the warm unsynchronized median, whose second
    case has no error check, and whose third was timed only by the lab's method and events."""
    import copy
    import json

    from gpukb.gemm.results import GroundUp

    raw = copy.deepcopy(_ground())
    first, second, third = _gpu_cases(raw)[:3]
    kept = []
    for t in raw["timing"]:
        case = (t["dtype"], t["n"])
        if case == first and t["method"] in ("first_call_synchronized", "warm_calls_no_sync"):
            continue
        if case == third and t["method"] not in ("lab_first_call", "warm_calls_events"):
            continue
        if case == second:
            t["rel_error_vs_fp64"] = None
        kept.append(t)
    raw["timing"] = kept
    record = GroundUp.model_validate_json(json.dumps(raw))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(page, "_ground_up", lambda record_id: record)
        check_timing_summary(page.timing_summary(), {"raw": raw})
        check_first_call(page.first_call_table(), {"raw": raw})
        dtype, n = third
        check_timing_answer(page.timing_answer(dtype=dtype, n=n), {"raw": raw, "dtype": dtype, "n": n})
