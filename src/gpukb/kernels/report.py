"""Tables of a recorded run of ``bench/triton_gemm.py`` (the Triton GEMM against cuBLAS), for the pages.

Every number comes from the results file; the functions only select, divide and format. They need neither
torch nor triton, so the site builds anywhere.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpukb.bench.results import RESULTS_DIR
from gpukb.kernels.configs import CANDIDATES, DEFAULT_CONFIGS, SMALL_CONFIGS, SMALL_RATE, Config, pick_by_waves
from gpukb.tables import markdown_table

#: The committed H100 run.
COMMITTED = RESULTS_DIR / "gemm" / "triton-gemm-h100.json"

#: The project's harness run whose best cuBLAS bf16 rate is the measured ceiling.
CEILING_RUN = "nvidia-h100-80gb-hbm3-2026-11-22.json"

#: The goal set for the kernel: this fraction of cuBLAS's throughput at each of ``GOAL_SIZES``.
GOAL = 0.95
GOAL_SIZES = (4096, 8192)

Source = str | Path | Mapping | None


def load(source: Source = None) -> dict:
    """The results: a mapping as is, else the JSON file at a path (the committed run when omitted).

    Raises:
        FileNotFoundError: If there is no such file.
        ValueError: If the file is not a run of ``bench/triton_gemm.py``.
    """
    if isinstance(source, Mapping):
        data = dict(source)
    else:
        path = Path(source) if source is not None else COMMITTED
        data = json.loads(path.read_text(encoding="utf-8"))
    missing = [key for key in ("meta", "sweep", "chosen") if key not in data]
    if missing:
        raise ValueError(f"not a run of bench/triton_gemm.py: missing {missing}")
    return data


def _tf(value: float | None) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.0f}"


def _ratio(value: float | None) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def measured_ceiling() -> float:
    """The best bf16 rate cuBLAS reached in the project's harness run (:data:`CEILING_RUN`), in TFLOP/s."""
    from gpukb.bench.report import ceilings, data

    return ceilings(data(CEILING_RUN))["bf16"]


def _sweep_result(run: Mapping, label: str, size: int) -> dict | None:
    for rec in run["sweep"]["configs"]:
        if rec["label"] == label:
            return next((r for r in rec["results"] if r["m"] == size), None)
    return None


def goal_rows(source: Source = None) -> list[dict[str, Any]]:
    """For each goal size: the chosen configuration's rate, cuBLAS's, their ratio (from the sweep, where the two
    were timed in alternation as CUDA-graph replays), the fraction of the measured ceiling, and the verdict."""
    run = load(source)
    label = run["chosen"]["large"]["label"]
    ceiling = measured_ceiling()
    rows = []
    for size in GOAL_SIZES:
        result = _sweep_result(run, label, size)
        if result is None:
            raise ValueError(f"the sweep has no {size}³ result for the chosen configuration {label!r}")
        rows.append(
            {
                "size": size,
                "config": label,
                "kernel_tflops": result["tflops"],
                "cublas_tflops": result["cublas_tflops"],
                "ratio": result["ratio"],
                "of_ceiling": result["tflops"] / ceiling,
                "met": result["ratio"] >= GOAL,
                "timed": result.get("timed", "eager calls"),
            }
        )
    return rows


def goal_table(source: Source = None) -> str:
    """The goal (≥ 0.95 of cuBLAS at bf16 4096³ and 8192³), what was measured, and whether it was met."""
    ceiling = measured_ceiling()
    rows = [
        (
            f"{r['size']}³",
            f"`{r['config']}`",
            _tf(r["kernel_tflops"]),
            _tf(r["cublas_tflops"]),
            _ratio(r["ratio"]),
            f"{100 * r['of_ceiling']:.0f}%",
            "met" if r["met"] else "**not met**",
        )
        for r in goal_rows(source)
    ]
    headers = [
        "bf16 size",
        "configuration",
        "Triton TFLOP/s",
        "cuBLAS TFLOP/s",
        "Triton / cuBLAS",
        f"of the measured ceiling ({ceiling:.0f} TFLOP/s)",
        f"goal ≥ {GOAL}",
    ]
    return markdown_table(headers, rows)


def sweep_table(source: Source = None) -> str:
    """Every configuration tried: its check against float64, and its rate and ratio to cuBLAS at each size."""
    run = load(source)
    sizes = run["sweep"]["sizes"]
    chosen = {run["chosen"]["large"]["label"]: "large", run["chosen"]["small"]["label"]: "small"}
    rows = []
    for rec in run["sweep"]["configs"]:
        label = f"`{rec['label']}`" + (f" (chosen: {chosen[rec['label']]})" if rec["label"] in chosen else "")
        if rec["error"]:
            rows.append((label, "–", *["–"] * len(sizes), rec["error"].split(". ")[0]))
            continue
        check = rec["check"]
        by_size = {r["m"]: r for r in rec["results"]}
        cells = [f"{_tf(by_size[s]['tflops'])} ({_ratio(by_size[s]['ratio'])})" if s in by_size else "–" for s in sizes]
        error = f"{check['rel_error']:.3g} / {check['rel_error_of_rounded_reference']:.3g}"
        rows.append((label, error, *cells, ""))
    headers = ["configuration", "error / floor", *[f"{s}³ TFLOP/s (÷ cuBLAS)" for s in sizes], "note"]
    return markdown_table(headers, rows)


def current_choice(size: int, sm_count: int) -> str:
    """The configuration the code picks now for a bf16 size² product (see :func:`pick_by_waves`)."""
    large, small = DEFAULT_CONFIGS["bfloat16"], SMALL_CONFIGS["bfloat16"]
    return pick_by_waves(size, size, large, small, sm_count, SMALL_RATE).label


def compare_table(source: Source = None) -> str:
    """``matmul``'s default path against cuBLAS per size, eager and as CUDA-graph replays, with the
    configuration each row measured next to the one the code picks now."""
    run = load(source)
    sms = run["meta"]["sm_count"]
    rows = []
    for r in run["compare"]["records"]:
        if r["error"]:
            rows.append((r["dtype"], r["layout"], f"{r['m']}³", "–", "–", "–", "–", "–", "–", r["error"]))
            continue
        now = current_choice(r["m"], sms)
        picked = f"`{r['config']}`" + ("" if now == r["config"] else f" (now: `{now}`)")
        rows.append(
            (
                r["dtype"],
                r["layout"],
                f"{r['m']}³",
                picked,
                _tf(r["kernel_tflops"]),
                _tf(r["cublas_tflops"]),
                _ratio(r["ratio"]),
                _ratio(r.get("graph_ratio")),
                "yes" if r["identical_to_cublas"] else "no",
                "",
            )
        )
    headers = [
        "type",
        "B",
        "size",
        "configuration measured",
        "Triton TFLOP/s",
        "cuBLAS TFLOP/s",
        "Triton / cuBLAS",
        "same, graph replays",
        "output identical to cuBLAS's",
        "note",
    ]
    return markdown_table(headers, rows)


def mismatched_sizes(source: Source = None) -> list[int]:
    """Sizes of the comparison that measured a configuration other than the one the code picks now."""
    run = load(source)
    sms = run["meta"]["sm_count"]
    return sorted(
        {r["m"] for r in run["compare"]["records"] if not r["error"] and r["config"] != current_choice(r["m"], sms)}
    )


def fp8_table(source: Source = None) -> str:
    """FP8 (E4M3, bf16 out) configurations against ``torch._scaled_mm`` in the same accumulation mode."""
    run = load(source)
    fp8 = run["fp8"]
    peer_error = {(p["m"], p["use_fast_accum"]): p["rel_error"] for p in fp8["peer"]}
    floor = {p["m"]: p["rel_error_of_rounded_reference"] for p in fp8["peer"]}
    chosen = run["chosen"].get("fp8") or {}
    rows = []
    for rec in fp8["configs"]:
        label = f"`{rec['label']}`" + (" (default)" if rec["label"] == chosen.get("label") else "")
        acc = rec["config"]["fp8_imprecise_acc"]
        mode = "fast" if acc is None else f"promoted every {acc}"
        if rec["error"]:
            rows.append((label, mode, "–", "–", "–", "–", "–", "–"))
            continue
        for r in rec["results"]:
            rows.append(
                (
                    label,
                    mode,
                    f"{r['m']}³",
                    _tf(r["tflops"]),
                    _tf(r["peer_tflops"]),
                    _ratio(r["ratio"]),
                    f"{r['rel_error']:.3g}",
                    f"{peer_error[(r['m'], r['peer_use_fast_accum'])]:.3g} (floor {floor[r['m']]:.3g})",
                )
            )
    headers = [
        "configuration",
        "accumulation",
        "size",
        "Triton TFLOP/s",
        "_scaled_mm TFLOP/s",
        "Triton / _scaled_mm",
        "Triton error",
        "_scaled_mm error, same mode",
    ]
    return markdown_table(headers, rows)


def compiled_table(source: Source = None) -> str:
    """What Triton compiled: registers, spills, shared memory, and the Hopper instructions in the PTX."""
    run = load(source)
    rows = []
    for c in run["compare"]["compiled"]:
        if "error" in c:
            rows.append((c["dtype"], f"{c['m']}³", "–", "–", "–", "–", "–", "–", "–"))
            continue
        rows.append(
            (
                c["dtype"],
                f"{c['m']}³",
                f"`{c['config']}`",
                c["registers"],
                c["spills"],
                f"{c['shared_bytes'] / 1024:.0f}",
                c["ptx"]["wgmma.mma_async"],
                c["ptx"]["cp.async.bulk.tensor"],
                "yes" if c["warp_specialized"] else "no",
            )
        )
    headers = [
        "type",
        "size",
        "configuration",
        "registers / thread",
        "spills",
        "shared KiB",
        "`wgmma.mma_async` in PTX",
        "`cp.async.bulk.tensor` in PTX",
        "warp-specialized IR",
    ]
    return markdown_table(headers, rows)


def overhead_table(source: Source = None) -> str:
    """Host time per call of a small product, split into the wrapper's parts, against ``torch.matmul``."""
    run = load(source)
    h = run["compare"]["host_overhead"]
    parts = [
        ("`matmul` (whole call)", h["matmul"]),
        ("checks and picking a configuration", h["checks_and_config"]),
        ("building three tensor descriptors", h["descriptors"]),
        ("Triton launch, TMA kernel, descriptors prebuilt", h["triton_launch_tma"]),
        ("Triton launch, blocked kernel", h["triton_launch_blocked"]),
        ("`torch.matmul` (cuBLAS)", h["torch_matmul"]),
    ]
    return markdown_table(["host work per call", "µs"], [(name, f"{us:.1f}") for name, us in parts])


def run_table(source: Source = None) -> str:
    """The GPU, software, date, exact command and clocks of the run."""
    run = load(source)
    meta = run["meta"]
    env = meta["environment"]
    clocks = run["sweep"].get("clocks_start") or {}
    end = run["compare"].get("clocks_end") or {}
    rows = [
        ("GPU", f"{meta['gpu']} ({meta['sm_count']} SMs, compute capability {meta['compute_capability']})"),
        ("driver", meta["driver"]),
        ("torch / CUDA", f"{env['libraries']['torch']} / {env['torch_cuda']}"),
        ("triton", meta["triton"]),
        ("python", env["python"]),
        ("date (UTC)", meta["date"]),
        ("command", f"`{meta['command']}`"),
        ("timing", meta["timing"]),
        ("inputs", meta["inputs"]),
        ("SM clock, start of sweep", _clock(clocks)),
        ("SM clock, end of comparison", _clock(end)),
    ]
    return markdown_table(["", ""], rows)


def _clock(c: Mapping) -> str:
    if not c:
        return "not read"
    return f"{c['clocks.sm']:.0f} MHz of {c['clocks.max.sm']:.0f}, {c['power.draw']:.0f} W of {c['power.limit']:.0f} W"


def chosen_config(kind: str, source: Source = None) -> Config:
    """The configuration the sweep chose: ``"large"``, ``"small"`` or ``"fp8"``.

    Raises:
        ValueError: For another kind.
    """
    run = load(source)
    if kind not in ("large", "small", "fp8"):
        raise ValueError(f"kind must be 'large', 'small' or 'fp8'; got {kind!r}")
    return Config(**run["chosen"][kind]["config"])


def mismatch_note(source: Source = None) -> str:
    """A sentence naming the comparison's sizes that measured a tiling the code no longer picks, or saying none did."""
    run = load(source)
    sizes = mismatched_sizes(run)
    if not sizes:
        return "Every row of the comparison measured the configuration the code picks today."
    sms = run["meta"]["sm_count"]
    measured = sorted({r["config"] for r in run["compare"]["records"] if not r["error"] and r["m"] in sizes})
    now = sorted({current_choice(size, sms) for size in sizes})
    listed = ", ".join(f"{s}³" for s in sizes)
    text = (
        f"The rows for {listed} measured `{'`, `'.join(measured)}`: the run used an earlier rule that counted rounds "
        f"of tiles without weighing the small tiles' lower rate. The rule now picks `{'`, `'.join(now)}` there."
    )
    swept = [s for s in sizes if _sweep_result(run, current_choice(s, sms), s)]
    if swept:
        text += f" For {', '.join(f'{s}³' for s in swept)} the sweep above measured it against cuBLAS in the same run."
    return text


def shared_limit(source: Source = None) -> int | None:
    """The shared-memory limit per program the compiler reported when a configuration did not fit, in bytes."""
    run = load(source)
    for rec in run["sweep"]["configs"]:
        match = re.search(r"Hardware limit: (\d+)", rec["error"] or "")
        if match:
            return int(match.group(1))
    return None


def shared_memory_model(config: Config, element_bytes: int = 2) -> int:
    """Bytes of shared memory a TMA configuration needs by count: ``num_stages`` buffers of an A and a B tile,
    and one output tile for the TMA store (half of one when the epilogue is subtiled)."""
    stages = config.num_stages * (config.block_m + config.block_n) * config.block_k * element_bytes
    c_cols = config.block_n // 2 if config.epilogue_subtile else config.block_n
    return stages + config.block_m * c_cols * element_bytes


def shared_memory_table(source: Source = None) -> str:
    """For the TMA candidates: shared memory by count, what the compiler reported
    (when it refused a configuration, or in the compiled kernels of the comparison), and the limit."""
    run = load(source)
    limit = shared_limit(run)
    reported: dict[str, int] = {}
    for rec in run["sweep"]["configs"]:
        match = re.search(r"Required: (\d+)", rec["error"] or "")
        if match:
            reported[rec["label"]] = int(match.group(1))
    for c in run["compare"].get("compiled", []):
        if "shared_bytes" in c and c["dtype"] != "float8_e4m3fn":
            reported[c["config"]] = c["shared_bytes"]
    rows = []
    for config in CANDIDATES:
        if config.kernel != "tma":
            continue
        model = shared_memory_model(config)
        seen = reported.get(config.label)
        fits = "–" if limit is None else ("yes" if model <= limit else "no")
        rows.append((f"`{config.label}`", f"{model:,}", "–" if seen is None else f"{seen:,}", fits))
    limit_text = "unknown" if limit is None else f"{limit:,} bytes"
    return markdown_table(
        ["configuration", "bytes by count", "bytes the compiler reported", f"fits ({limit_text})"], rows
    )
