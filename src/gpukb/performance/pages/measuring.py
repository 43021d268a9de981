"""The measuring page (docs/performance/measuring.md): the classic timing mistakes next to the right way, the
flush, the clocks, and every quantity the pages quote with its runs.
"""

from __future__ import annotations

import numpy as np

from gpukb.measuring.device import WindowClocks
from gpukb.performance import specs
from gpukb.performance.ceilings import sweep
from gpukb.performance.pages import Sweep, _datasheet, _pct, quantity
from gpukb.performance.quantities import QUANTITIES, reconcile
from gpukb.performance.results import H100_SWEEP
from gpukb.performance.roofline import fraction
from gpukb.records import measured_on
from gpukb.tables import markdown_table as table

#: The header of a column of :func:`window_text` cells.
CLOCKS_HEADER = "SM MHz (min / median), W during the calls"


def window_text(clocks: WindowClocks | None) -> str:
    """The clocks sampled during a measurement's timed calls, as a table cell: ``"1485 / 1545 MHz, 767 W"``
    (the median power); a dash where none were sampled (runs recorded before clocks were)."""
    if clocks is None:
        return "–"
    power = "" if clocks.power_w_median is None else f", {clocks.power_w_median:.0f} W"
    return f"{clocks.sm_mhz_min:.0f} / {clocks.sm_mhz_median:.0f} MHz{power}"


def sweep_measured_on(record: Sweep = H100_SWEEP) -> str:
    """A sweep's mode and how long its measuring took, then where it was measured
    (:func:`gpukb.records.measured_on`)."""
    record = sweep(record)
    duration = "an unrecorded time" if record.run.duration_s is None else f"{record.run.duration_s:.0f} s"
    return f"{record.mode.capitalize()} mode, {duration} of measuring. {measured_on(record.run)}"


def mistake_table(mistake: str, record: Sweep = H100_SWEEP) -> str:
    """One classic mistake next to the right way: median time, the rate it implies and its share of the
    datasheet ceiling (fp32 for the lab's fp32 product, bf16 for bf16 products, bandwidth for copies)."""
    record = sweep(record)
    gpu = _datasheet(record)
    rows = []
    for r in record.mistake(mistake):
        if gpu is None:
            ceiling = None
        elif r.unit == "GB/s":
            ceiling = gpu.figure("memory_bandwidth")
        else:
            ceiling = specs.datasheet_peak(gpu, "bf16" if "bf16" in r.variant else "fp32")
        share = "–" if ceiling is None else _pct(fraction(r.rate, ceiling.dense))
        rows.append((r.variant, f"{r.ms.median:,.4g}", f"{r.rate:,.4g} {r.unit}", share, r.ms.n, window_text(r.clocks)))
    headers = ["how it was timed", "median ms", "implied rate", "of datasheet ceiling", "samples", CLOCKS_HEADER]
    return table(headers, rows)


def one_run_table(record: Sweep = H100_SWEEP) -> str:
    """How far single timed calls land from the median of many."""
    rows = []
    for r in sweep(record).mistake("one_run"):
        samples = np.asarray(r.samples or [r.ms.median])
        median = float(np.median(samples))
        off = np.abs(samples - median) / median
        rows.append(
            (
                r.variant,
                len(samples),
                f"{median * 1e3:,.1f}",
                f"{samples.min() * 1e3:,.1f} – {samples.max() * 1e3:,.1f}",
                f"{np.percentile(samples, 5) * 1e3:,.1f} – {np.percentile(samples, 95) * 1e3:,.1f}",
                _pct(float((off > 0.05).mean())),
            )
        )
    headers = ["timed calls", "n", "median µs", "min – max µs", "5th – 95th percentile µs", "calls > 5% off"]
    return table(headers, rows)


def quantities_table() -> str:
    """Every quantity the pages quote: its figure, the range of its runs, how many, from which records."""
    rows = []
    for quantity_id, q in QUANTITIES.items():
        r = reconcile(quantity_id)
        clocks = r.clock_range()
        rows.append(
            (
                f"`{quantity_id}`",
                q.method,
                quantity(quantity_id, unit=True),
                f"{r.low:.{q.digits}f}–{r.high:.{q.digits}f} ({100 * r.drift:.0f}%)",
                len(r.readings),
                "–" if clocks is None else f"{clocks[0]:.0f}–{clocks[1]:.0f}",
                ", ".join(f"`{record_id}`" for record_id in r.records),
            )
        )
    headers = ["quantity", "method", "figure (median of runs)", "runs' range (drift)", "runs", "runs' median SM MHz",
               "records"]  # fmt: skip
    return table(headers, rows)


def quantity_runs(quantity_id: str) -> str:
    """Every run of one quantity: where it is recorded, its median, and the clocks during it."""
    r = reconcile(quantity_id)
    rows = [
        (f"`{x.record_id}`", x.where, f"{x.value:,.{r.quantity.digits}f}", window_text(x.clocks)) for x in r.readings
    ]
    return table(["record", "run", r.quantity.unit, CLOCKS_HEADER], rows)


def flush_effect(record: Sweep = H100_SWEEP) -> str:
    """What each L2 flush made of the work that fits in L2, from the ``l2_cache`` records: the warm cache, the
    read flush the harness uses and the write flush it replaced, as one sentence per case."""
    from gpukb.performance.suites.mistakes import FLUSHED, WRITE_FLUSHED

    record = sweep(record)
    by_case: dict[str, dict[str, object]] = {}
    for r in record.mistake("l2_cache"):
        what, how = r.variant.split(", ", 1)
        by_case.setdefault(what, {})[how] = r
    sentences = []
    for what, hows in by_case.items():
        warm = hows.get("cache warm (GPU kept busy between calls)")
        read, write = hows.get(FLUSHED), hows.get(WRITE_FLUSHED)
        if warm is None or read is None:
            continue
        text = (
            f"“{what}” ran at {warm.rate:,.0f} {warm.unit} with the cache warm and {read.rate:,.0f} after a "
            f"read flush, so the warm cache flattered it by {100 * (warm.rate / read.rate - 1):.0f}%"
        )
        if write is not None:
            text += (
                f"; after a write flush it measured {write.rate:,.0f}, {100 * (1 - write.rate / read.rate):.0f}% "
                "below the read-flushed figure: the cost of writing back the flush's own dirty lines"
            )
        sentences.append(text)
    if not sentences:
        return "This run has no L2 records."
    # a sweep always names its GPU (its model refuses a run without one)
    return f"On the {record.run.gpu.name} ({record.run.date.isoformat()}): " + "; ".join(sentences) + "."
