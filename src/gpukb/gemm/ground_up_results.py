"""The H100 run behind the GEMM ground-up and timing pages: load it, check it, render its tables.

``bench/gemm_ground_up.py`` writes ``bench/results/gemm/ground-up-h100.json`` with four parts: ``meta`` (GPU,
driver, versions, date, command), ``cublaslt`` (the cuBLASLt snippet compiled with nvcc and run, and
``torch.mm`` on the same shapes), ``batched`` (a batch of small GEMMs computed four ways) and ``timing`` (the
lecture lab's matrix product timed the wrong ways and the right ways). Every table on those pages comes from
here, so no measured number is typed into a page.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Mapping
from pathlib import Path

from gpukb.bench.results import RESULTS_DIR
from gpukb.tables import markdown_table

#: The committed results file of the H100 run.
RESULTS = RESULTS_DIR / "gemm" / "ground-up-h100.json"

_PARTS = ("meta", "cublaslt", "batched", "timing")
_META = ("gpu", "sm_count", "driver", "environment", "date", "command")
_BATCHED = ("m", "batch", "variant", "ms", "tflops")
_TIMING = ("device", "dtype", "n", "method", "ms", "gflops")
#: The batched variants in the order the page shows them, with their labels.
BATCHED_VARIANTS = {
    "loop": "loop of torch.mm",
    "loop_graph": "same loop, CUDA graph",
    "bmm": "torch.bmm",
    "one_gemm": "one torch.mm (shared B)",
}

Source = str | Path | Mapping


def load(source: Source = RESULTS) -> dict:
    """Read and check a results file (or check an already-loaded mapping).

    Raises:
        ValueError: If a part or a field the pages use is missing, naming it and the file.
    """
    data = dict(source) if isinstance(source, Mapping) else json.loads(Path(source).read_text(encoding="utf-8"))
    where = "results" if isinstance(source, Mapping) else str(source)
    missing = [p for p in _PARTS if p not in data]
    if missing:
        raise ValueError(f"{where}: missing parts {missing}; a ground-up results file has {list(_PARTS)}")
    for field in _META:
        if field not in data["meta"]:
            raise ValueError(f"{where}: meta lacks {field!r}; it needs {list(_META)}")
    for part, fields in (("batched", _BATCHED), ("timing", _TIMING)):
        for index, record in enumerate(data[part]):
            if "error" in record:
                continue
            lacking = [f for f in fields if f not in record]
            if lacking:
                raise ValueError(f"{where}: {part}[{index}] lacks {lacking}; records need {list(fields)}")
    return data


def versions_line(source: Source = RESULTS) -> str:
    """One sentence: the GPU, driver, library versions, date and command of the run."""
    data = load(source)
    meta, env = data["meta"], data["meta"]["environment"]
    libs = env["libraries"]
    nvcc = env.get("nvcc") or "not found"
    return (
        f"Measured on an {meta['gpu']} ({meta['sm_count']} SMs, driver {meta['driver']}), torch {libs['torch']} "
        f"(CUDA {env['torch_cuda']}), triton {libs.get('triton')}, nvcc {nvcc}, Python {env['python']}, "
        f"on {meta['date']}, by `{meta['command']}`."
    )


# --- cuBLASLt -----------------------------------------------------------------------------------------------
_RUN_LINE = re.compile(r"M=(\d+) N=(\d+) K=(\d+)")
_TIME_LINE = re.compile(r"median ([\d.]+) ms over (\d+) calls \(CUDA events\): ([\d.]+) TFLOP/s")
_OVER_LINE = re.compile(r"elements over the bound: (\d+)")


def parse_snippet_output(stdout: str) -> dict:
    """The numbers the cuBLASLt snippet prints: sizes, median time, rate, and elements over the error bound.

    Raises:
        ValueError: If a line the snippet always prints is missing.
    """
    found = {}
    for name, pattern in (("size", _RUN_LINE), ("time", _TIME_LINE), ("over", _OVER_LINE)):
        match = pattern.search(stdout)
        if match is None:
            raise ValueError(f"the snippet's output lacks its {name} line ({pattern.pattern}):\n{stdout}")
        found[name] = match.groups()
    m, n, k = map(int, found["size"])
    return {
        "m": m,
        "n": n,
        "k": k,
        "median_ms": float(found["time"][0]),
        "calls": int(found["time"][1]),
        "tflops": float(found["time"][2]),
        "over_bound": int(found["over"][0]),
        "passed": stdout.rstrip().endswith("PASS"),
    }


def cublaslt_build(source: Source = RESULTS) -> str:
    """The compile command and the nvcc that ran it, as a Markdown code block."""
    c = load(source)["cublaslt"]
    version = c["nvcc_version"].splitlines()[-2:] if c.get("nvcc_version") else ["nvcc not found"]
    lines = ["$ nvcc --version | tail -2", *version, f"$ {c['compile']['command']}"]
    lines += [f"(exit status {c['compile']['returncode']})"]
    return "```text\n" + "\n".join(lines) + "\n```"


def cublaslt_output(source: Source = RESULTS, index: int = 0) -> str:
    """What one run of the compiled snippet printed (the first run is the check at the default size)."""
    runs = load(source)["cublaslt"]["runs"]
    if not runs:
        return "The snippet did not compile on the GPU machine, so it did not run."
    r = runs[index]
    return "```text\n" + f"$ {r['command']}\n" + r["stdout"].rstrip() + f"\n(exit status {r['returncode']})\n```"


def _spread(rates: list[float]) -> str:
    """``median (lowest–highest)`` of a few rates, or the one rate, or a dash."""
    if not rates:
        return "–"
    if len(rates) == 1:
        return f"{rates[0]:.0f}"
    return f"{statistics.median(rates):.0f} ({min(rates):.0f}–{max(rates):.0f})"


def cublaslt_table(source: Source = RESULTS) -> str:
    """The snippet's own timing next to ``torch.mm`` on the same bf16 shapes, with each BLAS preference: the
    median TFLOP/s over the rounds, and the lowest and highest round."""
    c = load(source)["cublaslt"]
    snippet: dict[tuple[int, int, int], list[float]] = {}
    for run in c["runs"][1:]:
        parsed = parse_snippet_output(run["stdout"])
        snippet.setdefault((parsed["m"], parsed["n"], parsed["k"]), []).append(parsed["tflops"])
    rows = []
    for shape, rates in sorted(snippet.items()):
        cells = [f"{shape[0]}×{shape[1]}×{shape[2]}", str(len(rates)), _spread(rates)]
        for library in ("cublas", "cublaslt"):
            torch_rates = [
                r["tflops"] for r in c["torch_mm"] if (r["m"], r["n"], r["k"]) == shape and r["library"] == library
            ]
            cells.append(_spread(torch_rates))
        rows.append(cells)
    headers = [
        "bf16 M×N×K",
        "rounds",
        "snippet (cublasLtMatmul), TFLOP/s",
        "torch.mm, cuBLAS preferred",
        "torch.mm, cuBLASLt preferred",
    ]
    return markdown_table(headers, rows)


# --- batched GEMM -------------------------------------------------------------------------------------------
def batched_rows(source: Source = RESULTS) -> list[dict]:
    """The batched records that have a timing (errors left out), in the order measured."""
    return [r for r in load(source)["batched"] if "error" not in r]


def batched_table(source: Source = RESULTS) -> str:
    """Microseconds per batch for each way of computing it, and how many times faster ``torch.bmm`` is."""
    records = batched_rows(source)
    cases = sorted({(r["m"], r["batch"]) for r in records})
    rows = []
    for size, count in cases:
        by = {r["variant"]: r for r in records if (r["m"], r["batch"]) == (size, count)}
        cells = [f"{size}³", f"{count:,}"]
        for name in BATCHED_VARIANTS:
            r = by.get(name)
            if r is None:
                cells.append("–")
            elif name.startswith("loop"):  # per product: what one iteration of the loop costs
                cells.append(f"{r['ms']['median'] * 1e3:,.0f} ({r['ms']['median'] * 1e3 / count:,.1f} per product)")
            else:
                cells.append(f"{r['ms']['median'] * 1e3:,.1f} ({r['tflops']:,.3g} TFLOP/s)")
        loop, bmm = by.get("loop"), by.get("bmm")
        cells.append("–" if not (loop and bmm) else f"{loop['ms']['median'] / bmm['ms']['median']:,.0f}×")
        rows.append(cells)
    headers = ["m = n = k", "batch", *(f"{label} (µs)" for label in BATCHED_VARIANTS.values())]
    return markdown_table([*headers, "loop time / bmm time"], rows)


def batched_agreement(source: Source = RESULTS) -> str:
    """One sentence: the largest difference between the variants' results, relative to the largest output."""
    records = batched_rows(source)
    worst = max(r.get("max_abs_diff", 0.0) / r["max_abs_out"] for r in records if r.get("max_abs_out"))
    return (
        f"Before timing, every variant's result was compared with `torch.bmm`'s on the same operands: the largest "
        f"difference, relative to the largest output element, was {worst:.1e} (bf16 outputs carry 8 significant "
        f"bits, a relative step of {2**-8:.1e})."
    )


def batched_figure(source: Source = RESULTS) -> str:
    """Inline SVG: how many times faster one ``torch.bmm`` is than the loop, against batch count, per size."""
    from gpukb.figures import new_figure, to_svg

    records = batched_rows(source)
    fig, ax = new_figure(6.5, 3.6)
    for size in sorted({r["m"] for r in records}):
        points = []
        for count in sorted({r["batch"] for r in records if r["m"] == size}):
            by = {r["variant"]: r for r in records if (r["m"], r["batch"]) == (size, count)}
            if "loop" in by and "bmm" in by:
                points.append((count, by["loop"]["ms"]["median"] / by["bmm"]["ms"]["median"]))
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", label=f"{size}×{size}×{size}")
    ax.axhline(1.0, color="grey", linestyle=":")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("matrices in the batch")
    ax.set_ylabel("loop time / bmm time")
    ax.set_title("One batched call against a loop of GEMMs (bf16)")
    ax.legend(fontsize=8, title="each product")
    return to_svg(fig)


# --- timing -------------------------------------------------------------------------------------------------
def timing_records(source: Source = RESULTS, dtype: str | None = None, n: int | None = None) -> list[dict]:
    """The timing records, optionally of one element type and size."""
    return [r for r in load(source)["timing"] if (dtype is None or r["dtype"] == dtype) and (n is None or r["n"] == n)]


def timing_table(source: Source = RESULTS, dtype: str = "fp32", n: int = 6000) -> str:
    """One product timed every way: median milliseconds, the GFLOP/s the lab's formula makes of it, samples.

    Raises:
        ValueError: If the file has no timing of that type and size (naming those it has).
    """
    records = timing_records(source, dtype, n)
    if not records:
        have = sorted({(r["dtype"], r["n"]) for r in timing_records(source)})
        raise ValueError(f"no timing of {dtype} at n={n}; the file has {have}")
    rows = [(r["method"], f"{r['ms']['median']:,.4g}", f"{r['gflops']:,.0f}", r["ms"]["n"]) for r in records]
    return markdown_table(["how it was timed", "median ms", "2n³ / time (GFLOP/s)", "samples"], rows)


def timing_summary(source: Source = RESULTS) -> str:
    """Every GPU case: what the lab's method reported against the events median, and the error check."""
    data = load(source)
    cases = []
    for r in data["timing"]:
        if r["device"] == "cuda" and (r["dtype"], r["n"]) not in cases:
            cases.append((r["dtype"], r["n"]))
    rows = []
    for dtype, n in cases:
        by = {r["method"]: r for r in timing_records(data, dtype, n)}
        lab = by.get("lab: first call, host clock, no synchronize")
        warm = by.get("warm calls, host clock, no synchronize (median)")
        events = by.get("warm calls, CUDA events (median)")
        error = next((r["rel_error_vs_fp64"] for r in by.values() if "rel_error_vs_fp64" in r), None)
        rows.append(
            (
                f"{dtype}, n = {n:,}",
                "–" if lab is None else f"{lab['gflops']:,.0f}",
                "–" if warm is None else f"{warm['gflops']:,.0f}",
                "–" if events is None else f"{events['gflops']:,.0f}",
                "–" if error is None else f"{error:.1e}",
            )
        )
    headers = [
        "product",
        "lab's method, first call (GFLOP/s)",
        "no sync, warm (GFLOP/s)",
        "CUDA events, median (GFLOP/s)",
        "relative error vs fp64",
    ]
    return markdown_table(headers, rows)


def first_call_table(source: Source = RESULTS) -> str:
    """Each GPU case's first call (read without and with synchronization) against its warm events median."""
    data = load(source)
    rows = []
    seen: list[tuple[str, int]] = []
    for rec in data["timing"]:
        if rec["device"] == "cuda" and (rec["dtype"], rec["n"]) not in seen:
            seen.append((rec["dtype"], rec["n"]))
    for dtype, n in seen:
        by = {rec["method"]: rec["ms"]["median"] for rec in timing_records(data, dtype, n)}
        lab = by.get("lab: first call, host clock, no synchronize")
        first = by.get("first call, host clock, synchronized")
        warm = by.get("warm calls, CUDA events (median)")
        if None in (lab, first, warm):
            continue
        rows.append((f"{dtype}, n = {n:,}", f"{lab:,.3g}", f"{first:,.3g}", f"{warm:,.3g}", f"{first / warm:,.1f}×"))
    headers = [
        "product (in the order run)",
        "first call, no sync (ms)",
        "first call, synchronized (ms)",
        "warm, events median (ms)",
        "first / warm",
    ]
    return markdown_table(headers, rows)


def cpu_lab_table(source: Source = RESULTS) -> str:
    """The lab's CPU half (numpy, fp32) on the GPU machine's processor."""
    rows = [
        (f"{r['n']:,}", r["method"], f"{r['ms']['median']:,.1f}", f"{r['gflops']:,.0f}")
        for r in load(source)["timing"]
        if r["device"] == "cpu"
    ]
    return markdown_table(["n", "how it was timed", "median ms", "GFLOP/s"], rows)
