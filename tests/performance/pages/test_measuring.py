"""The measuring page's tables checked: the mistakes next to the right way, and every quantity with its runs,
against the records read raw.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable
from typing import Any

import pytest

from gpukb.performance.quantities import QUANTITIES
from tests.helpers import markdown_tables
from tests.performance.pages import DASH, H100, PEAK_OF, _dense, _gbps, _pct, _raw, _record, _rounds, _tflops


def _window(cell: str, clocks: dict[str, Any] | None) -> None:
    if clocks is None:
        assert cell == DASH
        return
    power = "" if clocks.get("power_w_median") is None else f", {round(clocks['power_w_median'])} W"
    assert cell == f"{round(clocks['sm_mhz_min'])} / {round(clocks['sm_mhz_median'])} MHz{power}", (cell, clocks)


def check_mistake(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    (mistake,) = kwargs["args"]
    raw = _raw(_record({}))
    records = [r for r in raw["mistakes"] if r["mistake"] == mistake]
    assert [row["how it was timed"] for row in table] == [r["variant"] for r in records]
    device = raw["run"]["gpu"]["name"]
    for row, r in zip(table, records, strict=True):
        assert row["median ms"] == f"{r['ms']['median']:,.4g}", row
        rate, unit = row["implied rate"].rsplit(" ", 1)
        assert unit == r["unit"], row
        assert float(rate.replace(",", "")) == pytest.approx(r["rate"], rel=5e-4), row
        ceiling = _dense(device, "memory_bandwidth" if unit == "GB/s" else PEAK_OF["bf16" if "bf16" in r["variant"]
                                                                                   else "fp32"])  # fmt: skip
        _pct(row["of datasheet ceiling"], r["rate"] / ceiling[0])
        assert int(row["samples"]) == r["ms"]["n"]
        _window(row["SM MHz (min / median), W during the calls"], r["clocks"])
    # the sync and cold-start variants time the lab's product, which the run's notes name ("6000x6000 fp32")
    lab = re.search(r"(\d+)x\1 fp32", " ".join(raw["run"]["notes"]))
    for row, r in zip(table, records, strict=True):  # the rate follows from the time: n³ products or copies
        n = re.search(r"(\d+)³", r["variant"])
        copied = re.match(r"copy (\d+) MiB", r["variant"])
        if mistake in ("sync", "cold_start"):
            size = int(lab.group(1))
            assert r["rate"] == pytest.approx(_tflops(size, size, size, r["ms"]["median"]), rel=1e-6), row
        elif r["unit"] == "TFLOP/s" and n:
            assert r["rate"] == pytest.approx(_tflops(*[int(n.group(1))] * 3, r["ms"]["median"]), rel=1e-6), row
        elif r["unit"] == "GB/s" and copied:
            assert r["rate"] == pytest.approx(_gbps(int(copied.group(1)) * 2**20, r["ms"]["median"]), rel=1e-6), row


def _percentile(ordered: list[float], p: float) -> float:
    """The p-th percentile of sorted values, interpolating linearly between the closest ranks."""
    x = p / 100 * (len(ordered) - 1)
    i = math.floor(x)
    return ordered[i] + (ordered[min(i + 1, len(ordered) - 1)] - ordered[i]) * (x - i)


def check_one_run(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = [r for r in _raw(_record({}))["mistakes"] if r["mistake"] == "one_run"]
    assert [row["timed calls"] for row in table] == [r["variant"] for r in records]
    for row, r in zip(table, records, strict=True):
        samples = sorted(r["samples"] or [r["ms"]["median"]])
        n = len(samples)
        median = statistics.median(samples)
        assert int(row["n"]) == n
        assert _rounds(row["median µs"], median * 1e3, 1)
        low, high = row["min – max µs"].split(" – ")
        assert _rounds(low, samples[0] * 1e3, 1)
        assert _rounds(high, samples[-1] * 1e3, 1)

        low, high = row["5th – 95th percentile µs"].split(" – ")
        assert _rounds(low, _percentile(samples, 5) * 1e3, 1), row
        assert _rounds(high, _percentile(samples, 95) * 1e3, 1), row
        _pct(row["calls > 5% off"], sum(abs(s - median) / median > 0.05 for s in samples) / n)


SIZE = 8192
CEILINGS = "performance/ceilings-h100"


def _readings(quantity_id: str) -> list[tuple[str, float, dict[str, Any] | None]]:
    """(record id, value, clocks) of every run of a quantity, read from the raw records."""
    out: list[tuple[str, float, dict[str, Any] | None]] = []
    ceilings = {"h100-copy-256mib": "copy-256mib", "h100-copy-1gib": "copy-1gib",
                "h100-cublas-fp16-ceiling": "gemm-fp16-4096x4096x8192",
                "h100-cublas-bf16-ceiling": "gemm-bf16-4096x4096x8192"}  # fmt: skip
    if quantity_id in ceilings or quantity_id == "h100-copy-u16-over-u32":
        timings = sorted(_raw(CEILINGS)["timings"], key=lambda t: t["round"])
        if quantity_id in ceilings:
            return [(CEILINGS, t["rate"], t["clocks"]) for t in timings if t["item"] == ceilings[quantity_id]]
        u32 = {t["round"]: t["rate"] for t in timings if t["item"] == "copy-one-per-thread-u32"}
        return [
            (CEILINGS, u32[t["round"]] / t["rate"], None) for t in timings if t["item"] == "copy-one-per-thread-u16"
        ]
    if quantity_id == "h100-cublas-bf16-8192":
        sweep = _raw(H100)
        out += [(H100, r["tflops"], r["clocks"]) for r in sweep["gemm"]
                if r["dtype"] == "bf16" and r["m"] == r["n"] == r["k"] == SIZE and r["tflops"] is not None]  # fmt: skip
        out += [(H100, r["rate"], r["clocks"]) for r in sweep["mistakes"]
                if r["mistake"] == "zeros" and "random" in r["variant"] and f"{SIZE}³" in r["variant"]]  # fmt: skip
        triton = _raw("gemm/triton-gemm-h100")
        out += [("gemm/triton-gemm-h100", _tflops(SIZE, SIZE, SIZE, case["cublas_ms"]["median"]), case["clocks"])
                for entry in triton["sweep"]["configs"] for case in entry["results"] if case["m"] == SIZE]  # fmt: skip
        out += [("gemm/triton-gemm-h100", _tflops(SIZE, SIZE, SIZE, p["cublas_ms"]["median"]), p["clocks"])
                for row in (triton.get("compare") or {}).get("records", [])
                if row["dtype"] == "bfloat16" and row["m"] == SIZE and row.get("error") is None
                for p in row["rounds"]]  # fmt: skip
        return out
    ground = _raw("gemm/ground-up-h100")
    method = {"h100-cublas-bf16-8192-unflushed": "warm_calls_events", "h100-cublas-bf16-8192-do-bench": "do_bench"}
    out += [("gemm/ground-up-h100", t["gflops"] / 1e3, t.get("clocks")) for t in ground["timing"]
            if t["dtype"] == "bf16" and t["n"] == SIZE and t["method"] == method[quantity_id]]  # fmt: skip
    if quantity_id == "h100-cublas-bf16-8192-unflushed":
        out += [("gemm/ground-up-h100", r["tflops"], r.get("clocks")) for r in ground["cublaslt"]["torch_mm"]
                if r["library"] == "cublas" and r["m"] == r["n"] == r["k"] == SIZE]  # fmt: skip
    return out


def _figure_of(quantity_id: str) -> tuple[float, float, float, int, tuple[float, float] | None, list[str]]:
    readings = _readings(quantity_id)
    values = [v for _, v, _ in readings]
    clocks = [c["sm_mhz_median"] for _, _, c in readings if c is not None]
    records = list(dict.fromkeys(r for r, _, _ in readings))
    return (statistics.median(values), min(values), max(values), len(values),
            (min(clocks), max(clocks)) if clocks else None, records)  # fmt: skip


def _span(cell: str) -> str:
    return re.sub(r"<[^>]+>", "", cell)


def check_quantities(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert [row["quantity"] for row in table] == [f"`{q}`" for q in QUANTITIES]
    for row in table:
        quantity_id = row["quantity"].strip("`")
        figure, low, high, n, clocks, records = _figure_of(quantity_id)
        digits, unit = QUANTITIES[quantity_id].digits, QUANTITIES[quantity_id].unit
        cell = row["figure (median of runs)"]
        assert f'data-quantity="{quantity_id}"' in cell, cell
        assert _span(cell) == f"{figure:.{digits}f} {unit}", (cell, figure)
        drift = f"({100 * (high - low) / figure:.0f}%)"
        assert row["runs' range (drift)"] == f"{low:.{digits}f}–{high:.{digits}f} {drift}", row
        assert int(row["runs"]) == n
        assert row["runs' median SM MHz"] == (DASH if clocks is None else f"{clocks[0]:.0f}–{clocks[1]:.0f}")
        assert row["records"] == ", ".join(f"`{r}`" for r in records)


def check_quantity_runs(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    (quantity_id,) = kwargs["args"]
    readings = _readings(quantity_id)
    assert len(table) == len(readings)
    for row, (record, value, clocks) in zip(table, readings, strict=True):
        assert row["record"] == f"`{record}`"
        quantity = QUANTITIES[quantity_id]
        assert _rounds(row[quantity.unit], value, quantity.digits), (row, value)
        _window(row["SM MHz (min / median), W during the calls"], clocks)


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "mistake_table": check_mistake,
    "one_run_table": check_one_run,
    "quantities_table": check_quantities,
    "quantity_runs": check_quantity_runs,
}
