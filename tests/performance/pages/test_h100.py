"""The H100 page's tables checked against the committed sweep read raw (``json``): every rate recomputed from
median times and counts, every fraction from the datasheet.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from gpukb.performance.pages import h100 as page
from tests.helpers import markdown_tables, size_text
from tests.performance.pages import (
    DASH,
    MARK,
    PEAK_OF,
    _best,
    _ceilings,
    _dense,
    _gbps,
    _pct,
    _raw_of,
    _record,
    _rounds,
    _tflops,
)

DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")


def _spread(cell: str, ms: dict[str, Any]) -> None:
    """``±x%``: half the interquartile range over the median."""
    assert cell.startswith("±"), cell
    assert _rounds(cell[1:-1], 50 * (ms["q3"] - ms["q1"]) / ms["median"], 1), (cell, ms)


def check_meta(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw_of(kwargs)
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
    raw = _raw_of(kwargs)
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
    raw = _raw_of(kwargs)
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
    rows = [r for r in _raw_of(kwargs)["gemm"] if r["sweep"] == "alignment"]
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
    raw = _raw_of(kwargs)
    bw = _dense(raw["run"]["gpu"]["name"], "memory_bandwidth")
    first: dict[int, dict[str, Any]] = {}
    for r in raw["copy"]:
        if r["method"] == "memcpy" and r["dtype"] == "uint8":
            first.setdefault(r["bytes"], r)
    assert [row["copied"] for row in table] == [size_text(n) for n in first]
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
    copies = _raw_of(kwargs)["copy"]
    nbytes = next(r["bytes"] for r in copies if r["method"] == "elementwise")
    header = next(iter(table[0]))
    assert header == f"element ({size_text(nbytes)} per copy)"
    width = {"uint8": 1, "int16": 2, "int32": 4, "int64": 8}
    assert [row[header] for row in table] == [d for d in width if any(r["dtype"] == d for r in copies)]
    for row in table:
        assert int(row["bytes"]) == np.dtype(row[header]).itemsize == width[row[header]]
        for method, column in (("memcpy", "copy_ GB/s"), ("elementwise", "bitwise_not GB/s")):
            found = [r for r in copies if r["bytes"] == nbytes and r["dtype"] == row[header] and r["method"] == method]
            assert _rounds(row[column], _gbps(nbytes, found[-1]["ms"]["median"]), 0), (row, column)


def check_host_device(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = _raw_of(kwargs)["host_device"]
    sizes = sorted({r["bytes"] for r in records})
    assert [row["copied"] for row in table] == [size_text(n) for n in sizes]
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
    records = [r for r in _raw_of(kwargs)["attention"] if r["head_dim"] == d and r["causal"] == causal]
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


def check_ceilings(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw_of(kwargs)
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
            if sheet_bw is None:  # a GPU the datasheet file lacks
                assert row["datasheet"] == row["of datasheet"] == DASH, row
            else:
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


def check_kernels(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = _raw_of(kwargs)["kernels"]
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
    for r in _raw_of(kwargs)["kernels"]:
        by_name.setdefault(r["name"], []).append(r)
    assert [row["kernel"] for row in table] == list(by_name)
    for row, (name, runs) in zip(table, by_name.items(), strict=True):
        ratios = {r["case"]: r["peer_ms"]["median"] / r["kernel_ms"]["median"] for r in runs}
        assert (row["peer"], row["cases"]) == (runs[0]["peer"], str(len(runs))), name
        assert _rounds(row["geometric mean speed vs peer"].rstrip("×"), statistics.geometric_mean(ratios.values()), 2)
        for column, pick in (("lowest (case)", min), ("highest (case)", max)):
            case = pick(ratios, key=ratios.get)
            assert row[column] == f"{ratios[case]:.2f}× ({case})", (name, column)


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
    "ceilings_table": check_ceilings,
    "kernels_table": check_kernels,
    "kernels_summary": check_kernels_summary,
    "kernels_against_peers": check_kernels,
}


def test_swapped_columns_fail_the_check() -> None:
    """Cells are read by header: the datasheet rate and the measured rate swapped is caught."""
    markdown = page.gemm_peaks()
    header = markdown.splitlines()[0]
    swapped = (
        header.replace("best TFLOP/s", "@")
        .replace("datasheet TFLOP/s", "best TFLOP/s")
        .replace("@", "datasheet TFLOP/s")
    )
    with pytest.raises((AssertionError, ValueError)):
        check_gemm_peaks(markdown.replace(header, swapped), {})


def test_a_wrong_fraction_of_the_datasheet_fails_the_check() -> None:
    markdown = page.copy_sizes()
    last = markdown.splitlines()[-1]
    with pytest.raises(AssertionError):
        check_copy_sizes(markdown.replace(last, last.replace("%", "0%")), {})
