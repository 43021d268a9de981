"""Every table the performance pages render, read back by header and checked cell by cell against the recorded
sweeps read raw (``json``, not through gpukb's models) and the datasheet file read with ``tomllib``.

Every derived cell is recomputed here from the raw numbers: rates from the median times and the operation's size,
fractions of the datasheet (dense rates: half a figure published with sparsity), ridge points, percentiles and the
rounding each column prints. A swapped column, a mislabelled row or a rate that no longer follows from its time
fails here.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import tomllib
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pytest

from gpukb.performance import pages
from tests.helpers import ROOT, h100_ceilings_json, markdown_tables

H100 = "performance/h100-sweep"
DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")
MARK = {"confirmed": "", "secondary": " †", "unconfirmed": " ?"}
DASH = "–"


@cache
def _raw(record_id: str) -> dict[str, Any]:
    """A committed record, read with json."""
    return json.loads((ROOT / "src" / "gpukb" / "data" / "results" / f"{record_id}.json").read_text("utf-8"))


@cache
def _sheet() -> dict[str, Any]:
    return tomllib.loads((ROOT / "src" / "gpukb" / "data" / "gpu_specs.toml").read_text("utf-8"))


def _figures(gpu_id: str) -> dict[str, dict[str, Any]]:
    """A GPU's datasheet figures by quantity, its ``base`` GPU's figures first."""
    entry = next(g for g in _sheet()["gpu"] if g["id"] == gpu_id)
    out = _figures(entry["base"]) if "base" in entry else {}
    out.update({f["quantity"]: f for f in _sheet()["figure"] if f["gpu"] == gpu_id})
    return out


def _sheet_id(device: str) -> str | None:
    found = [g["id"] for g in _sheet()["gpu"] if any(d.lower() in device.lower() for d in g["device_names"])]
    return found[0] if len(found) == 1 else None


def _dense(device: str, quantity: str) -> tuple[float, str] | None:
    """The dense datasheet value and status of a quantity for the GPU a record names, or None."""
    gpu = _sheet_id(device)
    figure = None if gpu is None else _figures(gpu).get(quantity)
    if figure is None:
        return None
    return figure["value"] / (2 if figure.get("sparsity") else 1), figure["status"]


PEAK_OF = {"fp32": "fp32", "tf32": "tf32_tensor", "fp16": "fp16_tensor", "bf16": "bf16_tensor", "fp8": "fp8_tensor"}


def _number(cell: str) -> float:
    return float(cell.replace(",", "").replace("%", "").replace("±", "").replace("×", ""))


def _rounds(cell: str, value: float, digits: int) -> bool:
    """Whether ``cell`` is ``value`` printed with ``digits`` decimals (a grouping comma allowed)."""
    return cell == f"{value:,.{digits}f}" or abs(_number(cell) - value) <= 0.5 * 10**-digits * (1 + 1e-9)


def _pct(cell: str, fraction: float) -> None:
    assert cell.endswith("%"), cell
    assert abs(_number(cell) - 100 * fraction) <= 0.5 + 1e-9, (cell, fraction)


def _tflops(m: int, n: int, k: int, ms: float) -> float:
    return 2 * m * n * k / (ms * 1e-3) / 1e12


def _gbps(nbytes: int, ms: float) -> float:
    return 2 * nbytes / (ms * 1e-3) / 1e9


def _size(nbytes: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            value = nbytes / (1 << shift)
            return f"{int(value) if value.is_integer() else value} {unit}"
    return f"{nbytes} B"


def _record(kwargs: dict[str, Any]) -> str:
    args = kwargs.get("args", ())
    return kwargs.get("record") or next((a for a in args if isinstance(a, str) and "/" in a), H100)


def _ceilings(record_id: str, raw: dict[str, Any]) -> tuple[dict[str, float], float | None]:
    """The rate per type and the copy bandwidth a page shows for a sweep: the sweep's best, except that for the
    H100 sweep the copy, fp16 and bf16 ceilings are the medians of the ceilings run's rounds (read from its JSON)."""
    rates = {d: r["tflops"] for d, r in _best(raw).items()}
    if record_id != H100:
        return rates, _bandwidth(raw)
    quoted = h100_ceilings_json()
    rates.update(fp16=quoted["fp16"], bf16=quoted["bf16"])
    return rates, quoted["bandwidth"]


def _best(raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    best: dict[str, dict[str, Any]] = {}
    for r in raw["gemm"]:
        if r["tflops"] is not None and (r["dtype"] not in best or r["tflops"] > best[r["dtype"]]["tflops"]):
            best[r["dtype"]] = r
    return best


def _bandwidth(raw: dict[str, Any]) -> float | None:
    rates = [r["gbps"] for r in raw["copy"] if r["bytes"] >= 2**28]
    return max(rates) if rates else None


def _spread(cell: str, ms: dict[str, Any]) -> None:
    """``±x%``: half the interquartile range over the median."""
    assert cell.startswith("±"), cell
    assert _rounds(cell[1:-1], 50 * (ms["q3"] - ms["q1"]) / ms["median"], 1), (cell, ms)


def _window(cell: str, clocks: dict[str, Any] | None) -> None:
    if clocks is None:
        assert cell == DASH
        return
    power = "" if clocks.get("power_w_median") is None else f", {round(clocks['power_w_median'])} W"
    assert cell == f"{round(clocks['sm_mhz_min'])} / {round(clocks['sm_mhz_median'])} MHz{power}", (cell, clocks)


# --- checks ---------------------------------------------------------------------------------------------------
def check_meta(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw(_record(kwargs))
    run, gpu = raw["run"], raw["run"]["gpu"]
    cells = {row["item"]: row["value"] for row in table}
    assert cells["GPU"] == gpu["name"]
    assert int(cells["SMs"]) == gpu["sm_count"]
    assert cells["compute capability"] == gpu["compute_capability"]
    assert _rounds(cells["memory"].removesuffix(" GiB"), gpu["memory_bytes"] / 2**30, 1)
    assert float(cells["L2 cache"].removesuffix(" MiB")) * 2**20 == gpu["l2_bytes"]
    assert cells["driver"] == gpu["driver"]
    assert cells["torch"] == run["versions"]["torch"]
    assert cells["triton"] == run["versions"]["triton"]
    assert cells["CUDA (torch build)"] == run["versions"]["torch_cuda"]
    assert cells["Python"] == run["versions"]["python"]
    assert cells["date (UTC)"].replace("+00:00", "Z") == run["started"]
    assert cells["mode"] == raw["mode"]
    assert cells["duration"] == f"{round(run['duration_s'])} s"
    assert cells["command"] == f"`{run['command']}`"
    start = run["clocks"]["start"]
    assert cells["clocks at start"].startswith(f"SM {round(start['sm_mhz'])}/{round(start['max_sm_mhz'])} MHz")
    assert {k for k in cells if k.startswith("clocks ")} == {
        "clocks at start" if k == "start" else f"clocks {k.replace('_', ' ')}" for k in run["clocks"]
    }


def check_gemm_peaks(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw(_record(kwargs))
    best = _best(raw)
    assert [row["type"] for row in table] == [d for d in DTYPES if d in best]
    for row in table:
        r = best[row["type"]]
        rate = _tflops(r["m"], r["n"], r["k"], r["ms"]["median"])
        assert _rounds(row["best TFLOP/s"], rate, 1), (row, rate)
        assert row["at M×N×K"] == f"{r['m']}×{r['n']}×{r['k']}"
        _spread(row["spread"], r["ms"])
        peak = _dense(raw["run"]["gpu"]["name"], PEAK_OF[row["type"]])
        if peak is None:
            assert row["datasheet TFLOP/s"] == row["of datasheet"] == DASH
        else:
            assert row["datasheet TFLOP/s"].endswith(MARK[peak[1]]), (row, peak)
            assert _rounds(row["datasheet TFLOP/s"].removesuffix(MARK[peak[1]]), peak[0], 1), (row, peak)
            _pct(row["of datasheet"], rate / peak[0])
        errors = [g["rel_error"] for g in raw["gemm"] if g["dtype"] == row["type"] and g["rel_error"] is not None]
        if errors:  # the last error recorded for the type, as the page's dict keeps it
            assert float(row["rel. error"]) == pytest.approx(errors[-1], rel=0.05 + 1e-9), row
        else:
            assert row["rel. error"] == DASH


def check_gemm_squares(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw(_record(kwargs))
    squares = [r for r in raw["gemm"] if r["sweep"] == "square"]
    assert [int(row["N (M = N = K)"]) for row in table] == sorted({r["m"] for r in squares})
    assert list(table[0])[1:] == [d for d in DTYPES if any(r["dtype"] == d for r in squares)]
    for row in table:
        n = int(row["N (M = N = K)"])
        for dtype in list(row)[1:]:
            (r,) = [r for r in squares if r["m"] == n and r["dtype"] == dtype] or [None]
            if r is None or r["ms"] is None:
                assert row[dtype] == DASH
            else:
                assert r["m"] == r["n"] == r["k"]
                assert _rounds(row[dtype], _tflops(n, n, n, r["ms"]["median"]), 1), (n, dtype, row[dtype])


def check_alignment(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    rows = [r for r in _raw(_record(kwargs))["gemm"] if r["sweep"] == "alignment"]
    assert len(table) == len(rows) > 0
    for row, r in zip(table, rows, strict=True):
        n = int(row["N (M = N = K, bf16)"])
        assert n == r["m"] == r["n"] == r["k"]
        assert r["dtype"] == "bf16"
        assert row["multiple of 8"] == ("yes" if n % 8 == 0 else "no")
        row_bytes = 2 * n
        assert row["row alignment"] == f"{min(16, row_bytes & -row_bytes)} B", row
        assert _rounds(row["TFLOP/s"], _tflops(n, n, n, r["ms"]["median"]), 1), row
        _spread(row["spread"], r["ms"])


def check_copy_sizes(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw(_record(kwargs))
    bw = _dense(raw["run"]["gpu"]["name"], "memory_bandwidth")
    first: dict[int, dict[str, Any]] = {}
    for r in raw["copy"]:
        if r["method"] == "memcpy" and r["dtype"] == "uint8":
            first.setdefault(r["bytes"], r)
    assert [row["copied"] for row in table] == [_size(n) for n in first]
    for row, r in zip(table, first.values(), strict=True):
        assert _rounds(row["median µs"], r["ms"]["median"] * 1e3, 1), row
        rate = _gbps(r["bytes"], r["ms"]["median"])
        assert _rounds(row["GB/s (read + write)"], rate, 0), (row, rate)
        if bw is None:
            assert row["of datasheet bandwidth"] == DASH
        else:
            _pct(row["of datasheet bandwidth"], rate / bw[0])


def check_copy_widths(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    copies = _raw(_record(kwargs))["copy"]
    nbytes = next(r["bytes"] for r in copies if r["method"] == "elementwise")
    header = next(iter(table[0]))
    assert header == f"element ({_size(nbytes)} per copy)"
    width = {"uint8": 1, "int16": 2, "int32": 4, "int64": 8}
    assert [row[header] for row in table] == [d for d in width if any(r["dtype"] == d for r in copies)]
    for row in table:
        assert int(row["bytes"]) == np.dtype(row[header]).itemsize == width[row[header]]
        for method, column in (("memcpy", "copy_ GB/s"), ("elementwise", "bitwise_not GB/s")):
            found = [r for r in copies if r["bytes"] == nbytes and r["dtype"] == row[header] and r["method"] == method]
            assert _rounds(row[column], _gbps(nbytes, found[-1]["ms"]["median"]), 0), (row, column)


def check_host_device(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = _raw(_record(kwargs))["host_device"]
    sizes = sorted({r["bytes"] for r in records})
    assert [row["copied"] for row in table] == [_size(n) for n in sizes]
    columns = {"host→device pageable": ("h2d", "pageable"), "host→device pinned": ("h2d", "pinned"),
               "device→host pageable": ("d2h", "pageable"), "device→host pinned": ("d2h", "pinned")}  # fmt: skip
    assert list(table[0])[1:] == list(columns)
    for row, n in zip(table, sizes, strict=True):
        for column, (direction, memory) in columns.items():
            (r,) = [r for r in records if (r["bytes"], r["direction"], r["memory"]) == (n, direction, memory)]
            # one way across the bus: bytes over time
            assert _rounds(row[column], n / (r["ms"]["median"] * 1e-3) / 1e9, 1), (row, column)


def check_attention(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    d, causal = kwargs.get("head_dim", 128), kwargs.get("causal", False)
    records = [r for r in _raw(_record(kwargs))["attention"] if r["head_dim"] == d and r["causal"] == causal]
    assert [int(row["sequence"]) for row in table] == sorted({r["seq"] for r in records})
    for row in table:
        s = int(row["sequence"])
        for backend in ("flash", "efficient", "cudnn", "math"):
            found = [r for r in records if r["seq"] == s and r["backend"] == backend]
            if not found:
                assert row[backend] == DASH
                continue
            (r,) = found
            assert int(row["batch"]) == r["batch"] == 16384 // s
            if r["ms"] is None:
                assert row[backend] == ("not run" if "not run" in (r["error"] or "") else "refused"), (row, r)
                continue
            # 4·d FLOPs per query-key pair (QKᵀ and PV); a causal mask keeps s(s+1)/2 of the s² pairs
            pairs = s * (s + 1) // 2 if causal else s * s
            flops = 4 * r["batch"] * r["heads"] * pairs * d
            assert _rounds(row[backend], flops / (r["ms"]["median"] * 1e-3) / 1e12, 1), (row, backend)


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


def check_ceilings(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw(_record(kwargs))
    device = raw["run"]["gpu"]["name"]
    best = _best(raw)
    rates, bw = _ceilings(_record(kwargs), raw)
    sheet_bw = _dense(device, "memory_bandwidth")
    expected = (["memory bandwidth (GB/s)"] if bw else []) + [
        f"{d} matrix product (TFLOP/s)" for d in DTYPES if d in best
    ]
    assert [row["ceiling"] for row in table] == expected
    for row in table:
        if row["ceiling"].startswith("memory"):
            assert _rounds(row["measured"], bw, 0)
            assert row["datasheet"] == f"{sheet_bw[0]:,.0f}{MARK[sheet_bw[1]]}"
            _pct(row["of datasheet"], bw / sheet_bw[0])
            assert row["ridge, measured (FLOP/B)"] == row["ridge, datasheet"] == DASH
            continue
        dtype = row["ceiling"].split()[0]
        rate = rates[dtype]
        if rate == best[dtype]["tflops"]:  # the sweep's own best: its rate is its timing's
            assert rate == pytest.approx(_tflops(best[dtype]["m"], best[dtype]["n"], best[dtype]["k"],
                                                 best[dtype]["ms"]["median"]), rel=1e-9)  # fmt: skip
        assert _rounds(row["measured"], rate, 1)
        peak = _dense(device, PEAK_OF[dtype])
        assert _rounds(row["ridge, measured (FLOP/B)"], rate * 1e12 / (bw * 1e9), 0)
        if peak is None:
            assert row["datasheet"] == row["of datasheet"] == row["ridge, datasheet"] == DASH, row
            continue
        assert row["datasheet"] == f"{peak[0]:,.1f}{MARK[peak[1]]}"
        _pct(row["of datasheet"], rate / peak[0])
        assert _rounds(row["ridge, datasheet"], peak[0] * 1e12 / (sheet_bw[0] * 1e9), 0)


def check_spec(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw(_record(kwargs))
    gpu = raw["run"]["gpu"]
    gpus = {g["name"]: g["id"] for g in _sheet()["gpu"]}
    names = list(table[0])[1:-1]
    assert list(table[0])[-1] == f"measured on this {gpu['name']}"
    assert [gpus[n] for n in names] == list(pages.DATASHEET_GPUS)
    labels = {"SMs (AMD: compute units)": "sm_count", "boost clock (MHz)": "boost_clock", "memory (GB)": "memory",
              "memory bandwidth (GB/s)": "memory_bandwidth", "L2 cache (MB)": "l2_cache",
              "FP64 (vector) (TFLOP/s)": "fp64", "FP64 tensor core (TFLOP/s)": "fp64_tensor",
              "FP32 (vector) (TFLOP/s)": "fp32", "TF32 tensor core, dense (TFLOP/s)": "tf32_tensor",
              "FP16 tensor core, dense (TFLOP/s)": "fp16_tensor", "BF16 tensor core, dense (TFLOP/s)": "bf16_tensor",
              "FP8 tensor core, dense (TFLOP/s)": "fp8_tensor",
              "INT8 tensor core, dense (TOPS)": "int8_tensor"}  # fmt: skip
    shown = [labels[row["figure"]] for row in table]
    present = [q for q in labels.values() if any(q in _figures(gpus[n]) for n in names)]
    assert shown == present
    rates, bw = _ceilings(_record(kwargs), raw)
    measured = {"sm_count": str(gpu["sm_count"]), "memory": f"{gpu['memory_bytes'] / 2**30:.1f} GiB",
                "l2_cache": f"{gpu['l2_bytes'] >> 20} MiB", "memory_bandwidth": f"{bw:,.0f}",
                **{PEAK_OF[d]: f"{rates[d]:,.1f}" for d in rates}}  # fmt: skip
    for row, quantity in zip(table, shown, strict=True):
        for name in names:
            figure = _figures(gpus[name]).get(quantity)
            if figure is None:
                assert row[name] == DASH
                continue
            value = figure["value"] / (2 if figure.get("sparsity") else 1)
            mark = MARK[figure["status"]]
            assert row[name].endswith(mark), (name, row)
            assert _number(row[name].removesuffix(mark)) == value, (name, row)
        assert row[f"measured on this {gpu['name']}"] == measured.get(quantity, DASH), row


def check_intensity(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw(H100)
    v100 = _figures("v100-sxm2")
    v100_ridge = v100["fp16_tensor"]["value"] * 1e12 / (v100["memory_bandwidth"]["value"] * 1e9)
    rates, bw = _ceilings(H100, raw)
    h100_ridge = rates["bf16"] * 1e12 / (bw * 1e9)
    headers = list(table[0])
    assert headers[4] == f"limit on V100 (ridge {v100_ridge:.0f})"
    assert headers[5] == f"limit on this H100 (ridge {h100_ridge:.0f})"
    # FP16 (2 bytes): a linear layer x(m×1024)·W(1024×4096) reads x and W and writes y, 2·m·4096·1024 FLOPs;
    # a unit-stride 3×3 max pool makes 8 comparisons per output (the max of 9 values) and, per output, reads one
    # new input and writes one output; ReLU reads and writes one element
    expected = {
        "linear layer, 1024 → 4096, batch 512": (2 * 512 * 4096 * 1024, 2 * (512 * 1024 + 1024 * 4096 + 512 * 4096)),
        "linear layer, 1024 → 4096, batch 1": (2 * 1 * 4096 * 1024, 2 * (1 * 1024 + 1024 * 4096 + 1 * 4096)),
        "3×3 max pooling, unit stride (8 comparisons per output)": (8, 2 + 2),
        "ReLU (per element)": (1, 2 + 2),
    }
    assert [row["operation"] for row in table] == list(expected)
    for row in table:
        flops, nbytes = expected[row["operation"]]
        assert int(row["FLOPs"].replace(",", "")) == flops, row
        assert int(row["bytes"].replace(",", "")) == nbytes, row
        assert _rounds(row["FLOP/B"], flops / nbytes, 2)
        assert row[headers[4]] == ("compute" if flops / nbytes > v100_ridge else "memory")
        assert row[headers[5]] == ("compute" if flops / nbytes > h100_ridge else "memory")


def check_kernels(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = _raw(_record(kwargs))["kernels"]
    assert [(row["kernel"], row["peer"], row["case"]) for row in table] == [
        (r["name"], r["peer"], r["case"]) for r in records
    ]
    for row, r in zip(table, records, strict=True):
        assert row["kernel ms"] == f"{r['kernel_ms']['median']:.4g}"
        assert row["peer ms"] == f"{r['peer_ms']['median']:.4g}"
        # speed against the peer: the peer's time over the kernel's
        assert _rounds(row["speed vs peer"], r["peer_ms"]["median"] / r["kernel_ms"]["median"], 2), row
        m, n, k = map(int, r["case"].split("x"))
        assert r["flops"] == 2 * m * n * k


def check_kernels_summary(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for r in _raw(_record(kwargs))["kernels"]:
        by_name.setdefault(r["name"], []).append(r)
    assert [row["kernel"] for row in table] == list(by_name)
    for row, (name, runs) in zip(table, by_name.items(), strict=True):
        ratios = {r["case"]: r["peer_ms"]["median"] / r["kernel_ms"]["median"] for r in runs}
        assert (row["peer"], row["cases"]) == (runs[0]["peer"], str(len(runs))), name
        assert _rounds(row["geometric mean speed vs peer"].rstrip("×"), statistics.geometric_mean(ratios.values()), 2)
        for column, pick in (("lowest (case)", min), ("highest (case)", max)):
            case = pick(ratios, key=ratios.get)
            assert row[column] == f"{ratios[case]:.2f}× ({case})", (name, column)


# --- the quantities: readings found in four records, each read raw ---------------------------------------------
SIZE = 8192
H100_CEILINGS = "performance/ceilings-h100"
#: The quantities read from the ceilings run, by the run's item.
CEILING_ITEMS = {
    "h100-copy-256mib": "copy-256mib",
    "h100-copy-1gib": "copy-1gib",
    "h100-cublas-fp16-ceiling": "gemm-fp16-4096x4096x8192",
    "h100-cublas-bf16-ceiling": "gemm-bf16-4096x4096x8192",
}
#: How the quantities table shows each figure: (unit, decimals).
SHOWN = {"h100-copy-256mib": ("GB/s", 0), "h100-copy-1gib": ("GB/s", 0), "h100-cublas-fp16-ceiling": ("TFLOP/s", 1),
         "h100-cublas-bf16-ceiling": ("TFLOP/s", 1), "h100-copy-u16-over-u32": ("×", 2)}  # fmt: skip


def _readings(quantity_id: str) -> list[tuple[str, float, dict[str, Any] | None]]:
    """(record id, value, clocks) of every run of a quantity, read from the raw records."""
    out: list[tuple[str, float, dict[str, Any] | None]] = []
    if quantity_id in CEILING_ITEMS:  # the interleaved ceilings run: one reading per round
        timings = sorted(_raw(H100_CEILINGS)["timings"], key=lambda t: t["round"])
        return [(H100_CEILINGS, t["rate"], t["clocks"]) for t in timings if t["item"] == CEILING_ITEMS[quantity_id]]
    if quantity_id == "h100-copy-u16-over-u32":
        timings = sorted(_raw(H100_CEILINGS)["timings"], key=lambda t: t["round"])
        u32 = {t["round"]: t["rate"] for t in timings if t["item"] == "copy-one-per-thread-u32"}
        return [(H100_CEILINGS, u32[t["round"]] / t["rate"], None) for t in timings
                if t["item"] == "copy-one-per-thread-u16"]  # fmt: skip
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
    assert [row["quantity"] for row in table] == [f"`{q}`" for q in pages.QUANTITIES]
    for row in table:
        quantity_id = row["quantity"].strip("`")
        figure, low, high, n, clocks, records = _figure_of(quantity_id)
        cell = row["figure (median of runs)"]
        unit, digits = SHOWN.get(quantity_id, ("TFLOP/s", 0))
        assert f'data-quantity="{quantity_id}"' in cell, cell
        assert _span(cell) == f"{figure:.{digits}f} {unit}", (cell, figure)
        drift = f"{100 * (high - low) / figure:.0f}%"
        assert row["runs' range (drift)"] == f"{low:.{digits}f}–{high:.{digits}f} ({drift})", row
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
        assert _rounds(row["TFLOP/s"], value, 0), (row, value)
        _window(row["SM MHz (min / median), W during the calls"], clocks)


#: Each performance page function that renders a table, and the check of its cells.
CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "meta_table": check_meta,
    "gemm_peaks": check_gemm_peaks,
    "gemm_squares": check_gemm_squares,
    "alignment_table": check_alignment,
    "copy_sizes": check_copy_sizes,
    "copy_widths": check_copy_widths,
    "host_device_table": check_host_device,
    "attention_table": check_attention,
    "mistake_table": check_mistake,
    "one_run_table": check_one_run,
    "ceilings_table": check_ceilings,
    "spec_table": check_spec,
    "intensity_table": check_intensity,
    "kernels_table": check_kernels,
    "kernels_summary": check_kernels_summary,
    "kernels_against_peers": check_kernels,
    "quantities_table": check_quantities,
    "quantity_runs": check_quantity_runs,
}


def test_swapped_columns_fail_the_check() -> None:
    """Cells are read by header: the datasheet rate and the measured rate swapped is caught."""
    markdown = pages.gemm_peaks()
    header = markdown.splitlines()[0]
    swapped = (
        header.replace("best TFLOP/s", "@")
        .replace("datasheet TFLOP/s", "best TFLOP/s")
        .replace("@", "datasheet TFLOP/s")
    )
    with pytest.raises((AssertionError, ValueError)):
        check_gemm_peaks(markdown.replace(header, swapped), {})


def test_a_wrong_fraction_of_the_datasheet_fails_the_check() -> None:
    markdown = pages.copy_sizes()
    last = markdown.splitlines()[-1]
    with pytest.raises(AssertionError):
        check_copy_sizes(markdown.replace(last, last.replace("%", "0%")), {})
