"""The timing page (docs/gemm/timing.md): how one product was timed, each way, and what each way
reports (record ``gemm/ground-up-h100``).
"""

from __future__ import annotations

from gpukb.gemm.pages import _ground_up
from gpukb.gemm.pages import ground_up_measured_on as ground_up_measured_on  # shown on this page too
from gpukb.gemm.results import (
    GROUND_UP_H100,
    TimingEntry,
)
from gpukb.tables import markdown_table

#: How each product was timed, as the timing page names it (keys: :data:`gpukb.gemm.results.TimingMethod`).
TIMING_LABELS = {
    "lab_first_call": "lab: first call, host clock, no synchronize",
    "first_call_synchronized": "first call, host clock, synchronized",
    "warm_call_no_sync": "warm call, host clock, no synchronize",
    "warm_calls_no_sync": "warm calls, host clock, no synchronize (median)",
    "warm_call_synchronized": "warm call, host clock, synchronized (one run)",
    "warm_calls_synchronized": "warm calls, host clock, synchronized (median)",
    "warm_calls_events": "warm calls, CUDA events (median)",
    "back_to_back": "{calls} calls back to back, one synchronize at the end (mean)",
    "do_bench": "triton.testing.do_bench (median, L2 flushed)",
    "numpy_first_call": "lab: numpy, host clock (first call)",
    "numpy_after_first": "numpy, host clock (median of {samples} after it)",
}


def timing_label(entry: TimingEntry) -> str:
    """How one product was timed, in the page's words."""
    return TIMING_LABELS[entry.method].format(calls=entry.calls, samples=entry.ms.n)


def timing_table(dtype: str = "fp32", n: int = 6000, record_id: str = GROUND_UP_H100) -> str:
    """One product timed every way: median milliseconds, the GFLOP/s the lab's formula makes of it, samples.

    Raises:
        ValueError: If the record has no timing of that type and size (naming those it has).
    """
    data = _ground_up(record_id)
    entries = data.timings(dtype, n)
    if not entries:
        have = sorted({(t.dtype, t.n) for t in data.timing})
        raise ValueError(f"no timing of {dtype} at n={n} in {record_id}; it has {have}")
    rows = [(timing_label(t), f"{t.ms.median:,.4g}", f"{t.gflops:,.0f}", t.ms.n) for t in entries]
    return markdown_table(["how it was timed", "median ms", "2n³ / time (GFLOP/s)", "samples"], rows)


def timing_summary(record_id: str = GROUND_UP_H100) -> str:
    """Every GPU case: what the lab's method reported against the events median, and the error check."""
    data = _ground_up(record_id)
    rows = []
    for dtype, n in data.gpu_cases():
        by = data.by_method(dtype, n)
        error = next((t.rel_error_vs_fp64 for t in by.values() if t.rel_error_vs_fp64 is not None), None)
        rows.append(
            (
                f"{dtype}, n = {n:,}",
                *(
                    "–" if by.get(method) is None else f"{by[method].gflops:,.0f}"
                    for method in ("lab_first_call", "warm_calls_no_sync", "warm_calls_events")
                ),
                "–" if error is None else f"{error:.1e}",
            )
        )
    headers = ["product", "lab's method, first call (GFLOP/s)", "no sync, warm (GFLOP/s)",
               "CUDA events, median (GFLOP/s)", "relative error vs fp64"]  # fmt: skip
    return markdown_table(headers, rows)


def first_call_table(record_id: str = GROUND_UP_H100) -> str:
    """Each GPU case's first call (read without and with synchronization) against its warm events median."""
    data = _ground_up(record_id)
    rows = []
    for dtype, n in data.gpu_cases():
        by = data.by_method(dtype, n)
        if not {"lab_first_call", "first_call_synchronized", "warm_calls_events"} <= set(by):
            continue
        lab, first = by["lab_first_call"].ms.median, by["first_call_synchronized"].ms.median
        warm = by["warm_calls_events"].ms.median
        rows.append((f"{dtype}, n = {n:,}", f"{lab:,.3g}", f"{first:,.3g}", f"{warm:,.3g}", f"{first / warm:,.1f}×"))
    headers = ["product (in the order run)", "first call, no sync (ms)", "first call, synchronized (ms)",
               "warm, events median (ms)", "first / warm"]  # fmt: skip
    return markdown_table(headers, rows)


def cpu_lab_table(record_id: str = GROUND_UP_H100) -> str:
    """The lab's CPU half (numpy, fp32) on the GPU machine's processor."""
    rows = [
        (f"{t.n:,}", timing_label(t), f"{t.ms.median:,.1f}", f"{t.gflops:,.0f}")
        for t in _ground_up(record_id).timing
        if t.device == "cpu"
    ]
    return markdown_table(["n", "how it was timed", "median ms", "GFLOP/s"], rows)


def timing_answer(dtype: str = "fp32", n: int = 6000, record_id: str = GROUND_UP_H100) -> str:
    """The page's answer in one sentence: what the lab's unsynchronized first call reported for one product, against
    the CUDA events median of the same product in the same run.

    Raises:
        ValueError: If the record has no lab-method and events timing of that type and size (naming those it has).
    """
    data = _ground_up(record_id)
    by = data.by_method(dtype, n)
    if not {"lab_first_call", "warm_calls_events"} <= set(by):
        have = sorted({(t.dtype, t.n) for t in data.timing if t.method == "lab_first_call"})
        raise ValueError(f"no lab-method and events timing of {dtype} at n={n} in {record_id}; it has {have}")
    lab, events = by["lab_first_call"], by["warm_calls_events"]
    return (
        f"For the lab's {dtype.upper()} product of two {n:,}×{n:,} matrices on an {data.run.gpu.name}, a host clock "
        f"read around the first call without synchronizing gave {lab.ms.median:,.3g} ms, which the lab's formula "
        f"turns into **{lab.gflops:,.0f} GFLOP/s**; CUDA events around warm calls measured the product itself at "
        f"{events.ms.median:,.3g} ms, **{events.gflops:,.0f} GFLOP/s**."
    )
