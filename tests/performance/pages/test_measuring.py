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
from tests.performance.pages import DASH, H100, PEAK_OF, _dense, _gbps, _pct, _raw, _raw_of, _rounds, _tflops, variant


def _window(cell: str, clocks: dict[str, Any] | None) -> None:
    if clocks is None:
        assert cell == DASH
        return
    power = "" if clocks.get("power_w_median") is None else f", {round(clocks['power_w_median'])} W"
    assert cell == f"{round(clocks['sm_mhz_min'])} / {round(clocks['sm_mhz_median'])} MHz{power}", (cell, clocks)


def check_mistake(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    (mistake,) = kwargs["args"]
    raw = _raw_of(kwargs)
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
        if ceiling is None:  # a GPU the datasheet file lacks
            assert row["of datasheet ceiling"] == DASH, row
        else:
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
    records = [r for r in _raw_of(kwargs)["mistakes"] if r["mistake"] == "one_run"]
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
        assert row["method"] == QUANTITIES[quantity_id].method


def check_quantity_runs(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    (quantity_id,) = kwargs["args"]
    readings = _readings(quantity_id)
    assert len(table) == len(readings)
    assert len({(row["record"], row["run"]) for row in table}) == len(table)  # each run says which entry it is
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


def test_a_window_without_power_readings_shows_the_clocks_alone() -> None:
    from gpukb.measuring.device import WindowClocks
    from gpukb.performance.pages.measuring import window_text

    clocks = {"sm_mhz_min": 1485.4, "sm_mhz_median": 1545.6, "power_w_median": None}
    cell = window_text(WindowClocks(source="nvidia-smi", samples=2, seconds=0.5, **clocks))
    _window(cell, clocks)
    assert cell == "1485 / 1546 MHz"


def _unknown_gpu(raw: dict[str, Any]) -> None:
    raw["run"]["gpu"]["name"] = "Imaginary GPU"  # no entry of gpu_specs.toml matches it


def test_runs_unlike_the_committed_ones() -> None:
    """A GPU the datasheet file lacks (no shares of a ceiling) and a run whose duration was not recorded."""
    from gpukb.performance.pages import measuring as page

    record, kwargs = variant(H100, _unknown_gpu)
    for mistake in ("sync", "l2_cache"):
        check_mistake(page.mistake_table(mistake, record), {**kwargs, "args": (mistake,)})
    record, _ = variant(H100, lambda raw: raw["run"].update(duration_s=None))
    assert page.sweep_measured_on(record).startswith("Full mode, an unrecorded time of measuring. Measured on ")


_FLUSH_CASE = re.compile(
    r"“(?P<what>[^”]+)” ran at (?P<warm>[\d,]+) (?P<unit>\S+) with the cache warm and (?P<read>[\d,]+) after a read "
    r"flush, so the warm cache flattered it by (?P<flattered>-?\d+)%(?:; after a write flush it measured "
    r"(?P<write>[\d,]+), (?P<below>-?\d+)% below the read-flushed figure: the cost of writing back the flush's own "
    r"dirty lines)?"
)


def check_flush_effect(text: str, raw: dict[str, Any]) -> None:
    """One clause per case with both a warm and a read-flushed run: the rates, how much the warm cache flattered
    the figure, and how far below it the write flush measured, from the ``l2_cache`` records' rates."""
    from gpukb.performance.suites.mistakes import FLUSHED, WRITE_FLUSHED

    warm_how = "cache warm (GPU kept busy between calls)"
    cases: dict[str, dict[str, dict[str, Any]]] = {}
    for r in raw["mistakes"]:
        if r["mistake"] == "l2_cache":
            what, how = r["variant"].split(", ", 1)
            cases.setdefault(what, {})[how] = r
    cases = {what: hows for what, hows in cases.items() if warm_how in hows and FLUSHED in hows}
    if not cases:
        assert text == "This run has no L2 records."
        return
    prefix = f"On the {raw['run']['gpu']['name']} ({raw['run']['date']}): "
    found = list(_FLUSH_CASE.finditer(text))
    assert text == prefix + "; ".join(m[0] for m in found) + "."
    assert [m["what"] for m in found] == list(cases)
    for m, hows in zip(found, cases.values(), strict=True):
        warm, read, write = hows[warm_how], hows[FLUSHED], hows.get(WRITE_FLUSHED)
        assert (m["warm"], m["unit"], m["read"]) == (f"{warm['rate']:,.0f}", warm["unit"], f"{read['rate']:,.0f}")
        assert m["flattered"] == f"{100 * (warm['rate'] / read['rate'] - 1):.0f}"
        if write is None:
            assert m["write"] is None
        else:
            below = 100 * (1 - write["rate"] / read["rate"])
            assert (m["write"], m["below"]) == (f"{write['rate']:,.0f}", f"{below:.0f}")


def _first_case_not_warm(raw: dict[str, Any]) -> None:
    first = next(r for r in raw["mistakes"] if r["mistake"] == "l2_cache" and "cache warm" in r["variant"])
    raw["mistakes"].remove(first)


def _no_write_flush(raw: dict[str, Any]) -> None:
    raw["mistakes"] = [r for r in raw["mistakes"] if "by writing" not in r["variant"]]


def _no_l2_records(raw: dict[str, Any]) -> None:
    raw["mistakes"] = [r for r in raw["mistakes"] if r["mistake"] != "l2_cache"]


def _rates_far_apart(raw: dict[str, Any]) -> None:
    """The first case's warm run three times its read-flushed rate, its write-flushed run a fifth of it: shares
    that the percentages' rounding cannot hide."""
    from gpukb.performance.suites.mistakes import FLUSHED

    cases = [r for r in raw["mistakes"] if r["mistake"] == "l2_cache"]
    what = cases[0]["variant"].split(", ", 1)[0]
    read = next(r for r in cases if r["variant"] == f"{what}, {FLUSHED}")["rate"]
    for r in cases:
        if r["variant"].startswith(what) and r["variant"] != f"{what}, {FLUSHED}":
            r["rate"] = 3 * read if "cache warm" in r["variant"] else read / 5


@pytest.mark.parametrize("change", [None, _first_case_not_warm, _no_write_flush, _no_l2_records, _rates_far_apart])
def test_the_flush_sentence_reads_the_l2_records(change) -> None:
    from gpukb.performance.pages.measuring import flush_effect

    if change is None:
        check_flush_effect(flush_effect(), _raw(H100))
        return
    record, kwargs = variant(H100, change)
    check_flush_effect(flush_effect(record), kwargs["raw"])


def _sentence_parts(sentence: str) -> dict[str, str]:
    found = re.fullmatch(r"(?P<title>.+): \*\*(?P<figure>.+?)\*\*, (?P<runs>.+)\. Timed by (?P<method>.+)\.", sentence)
    assert found, sentence
    return found.groupdict()


@pytest.mark.parametrize("quantity_id", list(QUANTITIES))
def test_a_quantitys_sentence_states_its_figure_runs_and_clocks(quantity_id: str) -> None:
    """Each quantity in one sentence: its figure with the unit, how many runs with their range, drift and SM
    clocks (or the one run's record and clock), and how it was timed, against the raw records."""
    from gpukb.performance.pages import quantity_sentence

    figure, low, high, n, clocks, records = _figure_of(quantity_id)
    q = QUANTITIES[quantity_id]
    parts = _sentence_parts(quantity_sentence(quantity_id))
    assert (parts["title"], parts["method"]) == (q.title, q.method)
    assert f'data-quantity="{quantity_id}"' in parts["figure"]
    assert _span(parts["figure"]) == f"{figure:.{q.digits}f} {q.unit}"
    if n == 1:
        clock = "" if clocks is None else f"; median SM clock {clocks[0]:.0f} MHz"
        assert parts["runs"] == f"one run (`{records[0]}`{clock})"
        return
    found = re.fullmatch(r"the median of (\d+) runs' medians \(range ([\d.]+)–([\d.]+), a drift of (\d+)%"
                         r"(?:; the runs' median SM clocks (\d+)–(\d+) MHz)?\)", parts["runs"])  # fmt: skip
    assert found, parts["runs"]
    assert int(found[1]) == n
    assert (found[2], found[3]) == (f"{low:.{q.digits}f}", f"{high:.{q.digits}f}")
    assert found[4] == f"{100 * (high - low) / figure:.0f}"
    assert found.groups()[4:] == ((None, None) if clocks is None else (f"{clocks[0]:.0f}", f"{clocks[1]:.0f}"))


def test_a_quantity_of_one_run_without_clocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A quantity measured once, by a run that sampled no clocks (as runs recorded before the harness did)."""
    from gpukb import performance
    from gpukb.performance.quantities import Reading, Reconciled

    q = QUANTITIES["h100-cublas-bf16-8192-do-bench"]
    once = Reconciled(q, (Reading("gemm/ground-up-h100", "timing: do_bench", 691.6),))
    monkeypatch.setattr(performance.pages, "reconcile", lambda quantity_id: once)
    parts = _sentence_parts(performance.pages.quantity_sentence(q.id))
    assert _span(parts["figure"]) == f"{691.6:.{q.digits}f} {q.unit}"
    assert parts["runs"] == "one run (`gemm/ground-up-h100`)"


def test_a_quantity_list_is_one_bullet_per_quantity() -> None:
    from gpukb.performance.pages import quantity_list

    ids = ["h100-copy-1gib", "h100-cublas-bf16-8192-do-bench"]
    lines = quantity_list(*ids).split("\n")
    assert [_sentence_parts(line.removeprefix("- "))["title"] for line in lines] == [QUANTITIES[q].title for q in ids]
    assert all(line.startswith("- ") for line in lines)
