"""The Triton GEMM (``gpukb.gemm.triton.matmul``) against cuBLAS (``torch.matmul``), on one GPU, in one run.

Run from the repository root on a machine with a Hopper GPU::

    python bench/triton_gemm.py src/gpukb/data/results/gemm/triton-gemm-h100.json

Three phases, each in its own process so that a configuration that faults the GPU cannot take the others down;
each writes what it measured to a scratch JSON file as it goes, and this driver merges them into one record
(``gpukb.gemm.triton.results.TritonGemm``), validated and written through ``gpukb.records``:

* ``sweep``: every candidate configuration (``CANDIDATES``) is first checked on a 1040×1072×784 bf16 product
  (tiles hang over every edge) into a NaN-poisoned output against a float64 reference, then timed against
  cuBLAS on bf16 squares as CUDA-graph replays (device time), its output compared with cuBLAS's each time.
  The configuration with the best geometric-mean speed relative to cuBLAS at 4096³ and 8192³ is chosen for
  large products, the best at 512³ and 1024³ for small ones.
* ``compare``: the default path of ``matmul``, with the configurations the sweep chose in place of the code's
  defaults (the tests check that the code's defaults are the recorded choice), against cuBLAS at several sizes,
  bf16 and fp16, B row-major (NN) and B the transpose of a row-major N×K matrix (NT), three rounds of eager
  calls and three of graph replays; what Triton compiled; the host time of one small product's launch.
* ``fp8``: the FP8 candidates against ``torch._scaled_mm`` (E4M3 in, bf16 out), each paired with the peer
  in the same accumulation mode (fast, or promoted to float32).

Timing: CUDA events around each call, warm-up first, the L2 cache flushed (untimed) before every call, random
normal inputs, medians with quartiles in ms. Kernel and peer calls alternate (kernel first, then peer first),
so that both see the same clocks: an H100 at its power limit lowers its clock as it warms, and timing one
after the other would hand the difference to whichever ran cooler.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    import gpukb  # noqa: F401
except ImportError:  # a checkout on a machine where gpukb is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from gpukb.dtypes import torch_dtype
from gpukb.gemm.triton.sweep import operands
from gpukb.measuring.timing import Marks, captured
from gpukb.records.script import Script, main

#: Sizes (M = N = K) of the configuration sweep (large, then small) and of the comparison.
LARGE_SIZES = (4096, 8192)
SMALL_SIZES = (512, 1024)
SWEEP_SIZES = SMALL_SIZES + LARGE_SIZES
COMPARE_SIZES = (512, 1024, 2048, 3072, 4096, 6144, 8192, 12288)
#: Host-side launch cost is measured on this (small) product.
OVERHEAD_SHAPE = (256, 256, 256)
FP8_SIZES = (4096, 8192)
#: The check shape: multiples of 16 (so the kernel compiled for it is the one timed) that no tile divides.
CHECK_SHAPE = (1040, 1072, 784)
#: Alternating kernel/peer rounds in the comparison.
ROUNDS = 3
PHASE_TIMEOUT_S = {"sweep": 200, "compare": 120, "fp8": 90}
#: Time spent on each paired measurement (ms), and bounds on the number of pairs.
PAIR_WARMUP_MS, PAIR_REP_MS, MIN_PAIRS, MAX_PAIRS = 25.0, 200.0, 10, 200


def _setup() -> tuple[Any, Any]:
    import torch

    from gpukb.measuring.device import describe
    from gpukb.measuring.timing import L2Flusher

    torch.manual_seed(0)
    return torch, L2Flusher(torch, describe(torch)["l2_bytes"])


_SAMPLER: list = []


def _sampler() -> Any:
    """The process's clock and power sampler (``None`` where neither NVML nor nvidia-smi answers)."""
    if not _SAMPLER:
        from gpukb.measuring.device import sampler

        _SAMPLER.append(sampler())
    return _SAMPLER[0]


def _paired(torch: Any, kernel: Any, peer: Any, flush: Any) -> dict:
    """Time kernel and peer call by call, alternating which goes first, each after an untimed L2 flush.

    Returns the summaries of both (ms), the ratio of their medians (peer over kernel: above 1, the kernel
    is faster), and the SM clock and power sampled while the pairs ran (``clocks``).
    """
    from gpukb.measuring.stats import summarize
    from gpukb.measuring.timing import EventTimer

    timer = EventTimer(torch)
    timer.time(kernel, 1, flush)  # first calls pay one-time costs
    timer.time(peer, 1, flush)
    estimate = min(timer.time(kernel, 3, flush)) + min(timer.time(peer, 3, flush))
    for _ in range(max(2, math.ceil(PAIR_WARMUP_MS / estimate))):
        for fn in (kernel, peer):
            flush()
            fn()
    pairs = min(MAX_PAIRS, max(MIN_PAIRS, math.ceil(PAIR_REP_MS / estimate)))
    events = {name: [] for name in ("kernel", "peer")}
    marks = Marks(torch)
    monitor = _sampler()
    if monitor is not None:
        monitor.start()
    for i in range(pairs):
        order = (("kernel", kernel), ("peer", peer)) if i % 2 == 0 else (("peer", peer), ("kernel", kernel))
        for name, fn in order:
            flush()
            start = marks.mark()
            fn()
            events[name].append((start, marks.mark()))
    torch.cuda.synchronize()
    window = monitor.stop() if monitor is not None else None
    times = {name: [marks.between(s, e) for s, e in pairs_] for name, pairs_ in events.items()}
    kernel_ms, peer_ms = summarize(times["kernel"]), summarize(times["peer"])
    return {
        "kernel_ms": kernel_ms.as_dict(),
        "cublas_ms": peer_ms.as_dict(),
        "ratio": peer_ms.median / kernel_ms.median,
        "clocks": None if window is None else window.model_dump(mode="json"),
    }


def _tflops(m: int, n: int, k: int, ms: float) -> float:
    from gpukb.measuring.counting import gemm_flops

    return gemm_flops(m, n, k) / (ms * 1e-3) / 1e12


def _rel(out: Any, ref: Any) -> float:
    import torch

    return float(torch.linalg.norm(out.double() - ref.double()) / torch.linalg.norm(ref.double()))


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"[:300]


def _check(torch: Any, config: Any, dtype: Any, layout: str = "NN") -> dict:
    """Poisoned output, float64 reference, and the error of the reference rounded to the output type."""
    from gpukb.gemm.triton.matmul import matmul

    m, n, k = CHECK_SHAPE
    a, b = operands(torch, dtype, m, n, k, layout)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    matmul(a, b, out=out, config=config)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    return {
        "shape": [m, n, k],
        "dtype": str(dtype).removeprefix("torch."),
        "layout": layout,
        "all_written": bool(torch.isfinite(out).all()),
        "rel_error": _rel(out, ref),
        "rel_error_of_rounded_reference": _rel(ref.to(dtype), ref),
    }


def _write_scratch(path: Path, data: dict) -> None:
    """A phase's scratch file (the driver validates the merged record)."""
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def phase_sweep(out: Path) -> None:
    """Check every candidate, then time it against cuBLAS on bf16 squares (graph replays: device time)."""
    from gpukb.gemm.triton.matmul import CANDIDATES, matmul
    from gpukb.measuring.device import clocks

    torch, flush = _setup()
    dtype = torch.bfloat16
    data: dict = {"clocks_start": clocks(), "sizes": list(SWEEP_SIZES), "configs": []}
    ops = {s: operands(torch, dtype, s, s, s) for s in SWEEP_SIZES}
    outs = {s: torch.empty(s, s, device="cuda", dtype=dtype) for s in SWEEP_SIZES}
    refs = {s: torch.matmul(*ops[s]) for s in SWEEP_SIZES}
    for config in CANDIDATES:
        record: dict = {"config": config.as_dict(), "check": None, "compile_and_check_s": None, "results": []}
        record["error"] = None
        data["configs"].append(record)
        started = time.perf_counter()
        try:
            record["check"] = _check(torch, config, dtype)
            record["compile_and_check_s"] = round(time.perf_counter() - started, 2)
            for s in SWEEP_SIZES:
                a, b = ops[s]
                outs[s].fill_(float("nan"))
                matmul(a, b, out=outs[s], config=config)
                result = {"m": s, "n": s, "k": s, "diff_vs_cublas": _rel(outs[s], refs[s])}
                result["identical_to_cublas"] = bool(torch.equal(outs[s], refs[s]))
                kernel = lambda a=a, b=b, s=s, cfg=config: matmul(a, b, out=outs[s], config=cfg)  # noqa: E731
                peer = lambda a=a, b=b, s=s: torch.matmul(a, b, out=refs[s])  # noqa: E731
                try:
                    timing = _paired(torch, captured(torch, kernel), captured(torch, peer), flush)
                    result["timed"] = "graph replays"
                except Exception as err:  # keep the config: time it eagerly and say why
                    result["graph_error"] = _first_line(err)
                    timing = _paired(torch, kernel, peer, flush)
                    result["timed"] = "eager calls"
                result.update(timing)
                result["tflops"] = _tflops(s, s, s, timing["kernel_ms"]["median"])
                result["cublas_tflops"] = _tflops(s, s, s, timing["cublas_ms"]["median"])
                record["results"].append(result)
        except Exception as err:  # a config that does not compile or fit is recorded, not fatal
            record["error"] = _first_line(err)
        line = record["error"] or "  ".join(
            f"{r['m']}: {r['tflops']:.0f} ({r['ratio']:.3f})" for r in record["results"]
        )
        print(f"{config.label:36s} {line}", flush=True)
        _write_scratch(out, data)
    data["clocks_end"] = clocks()
    _write_scratch(out, data)


def _passed(rec: dict) -> bool:
    check = rec.get("check") or {}
    return bool(
        rec.get("error") is None
        and check.get("all_written")
        and check.get("rel_error", math.inf) <= 1.5 * check.get("rel_error_of_rounded_reference", 0.0)
        and len(rec["results"]) == len(SWEEP_SIZES)
        and all(r["diff_vs_cublas"] < 1e-2 for r in rec["results"])
    )


def choose(sweep: dict, sizes: tuple[int, ...]) -> dict | None:
    """The passing configuration with the highest geometric mean, over ``sizes``, of its speed relative to
    cuBLAS (cuBLAS's median time over the kernel's, measured in alternation)."""
    best, best_score = None, -1.0
    for rec in sweep.get("configs", []):
        if not _passed(rec):
            continue
        ratios = [r["ratio"] for r in rec["results"] if r["m"] in sizes]
        score = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        if score > best_score:
            best, best_score = rec, score
    if best is None:
        return None
    return {"config": best["config"], "sizes": list(sizes), "geomean_ratio": best_score}


def small_rate(sweep: dict, chosen: dict) -> float | None:
    """The small tiling's rate relative to the large one's on the largest swept size (for the wave rule)."""
    if not (chosen.get("large") and chosen.get("small")):
        return None
    size = max(LARGE_SIZES)

    def rate(config: dict) -> float | None:
        for rec in sweep.get("configs", []):
            if rec["config"] == config:
                return next((r["tflops"] for r in rec["results"] if r["m"] == size), None)
        return None

    large, small = rate(chosen["large"]["config"]), rate(chosen["small"]["config"])
    return None if not (large and small) else small / large


def choose_fp8(fp8: dict) -> dict | None:
    """The fast-accumulation FP8 configuration with the best geometric-mean speed relative to the peer in the
    same mode, among those that wrote every element and stayed within twice the peer's error."""
    best, best_score = None, -1.0
    peer_error = {(p["m"], p["use_fast_accum"]): p["rel_error"] for p in fp8.get("peer", [])}
    for rec in fp8.get("configs", []):
        if rec["error"] or rec["config"]["fp8_imprecise_acc"] is not None or len(rec["results"]) != len(FP8_SIZES):
            continue
        if not all(r["all_written"] and r["rel_error"] <= 2 * peer_error[(r["m"], True)] for r in rec["results"]):
            continue
        score = math.exp(sum(math.log(r["ratio"]) for r in rec["results"]) / len(rec["results"]))
        if score > best_score:
            best, best_score = rec, score
    if best is None:
        return None
    return {"config": best["config"], "sizes": list(FP8_SIZES), "geomean_ratio": best_score}


def _host_us_per_call(torch: Any, fn: Any, calls: int = 300) -> float:
    """Host time to enqueue one call, with the queue kept busy (small products finish faster than launches)."""
    fn()
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - started
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def host_overhead(torch: Any) -> dict:
    """Where the host time of one small product goes: the wrapper's checks, building the descriptors, the
    Triton launch, against torch.matmul; and the top of a profile of the whole call."""
    import cProfile
    import io
    import pstats

    from triton.tools.tensor_descriptor import TensorDescriptor

    from gpukb.gemm.triton import matmul as mm

    m, n, k = OVERHEAD_SHAPE
    a, b = operands(torch, torch.bfloat16, m, n, k)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    config = mm.Config("tma", 128, 128, 64, num_stages=4, num_warps=8)  # for the raw launches below
    descs = [
        TensorDescriptor(a, [m, k], [k, 1], [config.block_m, config.block_k]),
        TensorDescriptor(b, [k, n], [n, 1], [config.block_k, config.block_n]),
        TensorDescriptor(c, [m, n], [n, 1], [config.block_m, config.block_n]),
    ]
    sms = mm._sm_count(a.device)
    grid = (min(sms, triton_cdiv(m, config.block_m) * triton_cdiv(n, config.block_n)),)
    constants = dict(
        BLOCK_M=config.block_m, BLOCK_N=config.block_n, BLOCK_K=config.block_k, GROUP_M=config.group_m,
        A_ROW_MAJOR=True, B_ROW_MAJOR=True, OUT_DTYPE=mm._tl_dtype("bfloat16"), UPCAST=False, DEVICE_DESC=False,
        EPILOGUE_SUBTILE=config.epilogue_subtile, FLATTEN=config.flatten, WARP_SPECIALIZE=False, NUM_SMS=sms,
        MAX_IMPRECISE_ACC=None, PROMOTE_STEPS=0, SWAP=False, num_stages=config.num_stages, num_warps=config.num_warps,
    )  # fmt: skip
    kernel, blocked = mm._jitted("tma"), mm._jitted("blocked")
    blocked_constants = dict(
        BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, OUT_DTYPE=mm._tl_dtype("bfloat16"), PRECISION="tf32",
        UPCAST=False, num_stages=4, num_warps=4,
    )  # fmt: skip
    parts = {
        "shape": [m, n, k],
        "matmul_config": mm.default_config(a, b, c).as_dict(),
        "raw_launch_config": config.as_dict(),
        "matmul": lambda: mm.matmul(a, b, out=c),
        "checks_and_config": lambda: (mm._check(a, b, c, None), mm.default_config(a, b, c), mm.tma_refusal(a, b, c)),
        "descriptors": lambda: [TensorDescriptor(t.base, t.shape, t.strides, t.block_shape) for t in descs],
        "triton_launch_tma": lambda: kernel[grid](*descs, m, n, k, k, n, n, 1.0, **constants),
        "triton_launch_blocked": lambda: blocked[(4,)](a, b, c, m, n, k, k, 1, n, 1, n, 1, 1.0, **blocked_constants),
        "torch_matmul": lambda: torch.matmul(a, b, out=c),
    }
    result: dict = {}
    for name, fn in parts.items():
        result[name] = fn if isinstance(fn, dict | list) else round(_host_us_per_call(torch, fn), 2)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(300):
        mm.matmul(a, b, out=c)
    profiler.disable()
    torch.cuda.synchronize()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(15)
    result["profile"] = text.getvalue().splitlines()
    return result


def triton_cdiv(x: int, y: int) -> int:
    return -(-x // y)


def phase_compare(out: Path, chosen: dict) -> None:
    """matmul's default path against cuBLAS, three paired rounds per case, eager and as graph replays; the
    compiled kernels; the host-side cost of a launch."""
    from gpukb.gemm.triton import matmul as mm
    from gpukb.gemm.triton.matmul import default_config, matmul
    from gpukb.measuring.device import clocks

    torch, flush = _setup()
    for name in ("bfloat16", "float16"):  # measure the configurations the sweep chose, on matmul's default path
        mm.DEFAULT_CONFIGS[name] = mm.Config(**chosen["large"]["config"])
        mm.SMALL_CONFIGS[name] = mm.Config(**chosen["small"]["config"])
    mm.SMALL_RATE = chosen["small_rate"]  # read by default_config's wave rule
    data: dict = {"clocks_start": clocks(), "checks": [], "records": [], "compiled": [], "host_overhead": None}
    cases = [("bfloat16", "NN", s) for s in COMPARE_SIZES]
    cases += [("float16", "NN", s) for s in LARGE_SIZES] + [("bfloat16", "NT", s) for s in LARGE_SIZES]
    for name in ("bfloat16", "float16"):
        for layout in ("NN", "NT"):
            data["checks"].append(_check(torch, None, torch_dtype(name), layout))
    _write_scratch(out, data)
    for name, layout, s in cases:
        dtype = torch_dtype(name)
        record: dict = {"dtype": name, "layout": layout, "m": s, "n": s, "k": s, "error": None, "config": None}
        record |= dict.fromkeys(("all_written", "diff_vs_cublas", "identical_to_cublas"))
        record |= {"rounds": [], "graph_rounds": [], "graph_ratio": None}
        record |= dict.fromkeys(("kernel_ms", "cublas_ms", "kernel_tflops", "cublas_tflops", "ratio"))
        data["records"].append(record)
        try:
            a, b = operands(torch, dtype, s, s, s, layout)
            c_kernel = torch.full((s, s), float("nan"), device="cuda", dtype=dtype)
            c_peer = torch.empty(s, s, device="cuda", dtype=dtype)
            record["config"] = default_config(a, b, c_kernel).as_dict()
            matmul(a, b, out=c_kernel)
            torch.matmul(a, b, out=c_peer)
            record["all_written"] = bool(torch.isfinite(c_kernel).all())
            record["diff_vs_cublas"] = _rel(c_kernel, c_peer)
            record["identical_to_cublas"] = bool(torch.equal(c_kernel, c_peer))
            kernel = lambda a=a, b=b, c=c_kernel: matmul(a, b, out=c)  # noqa: E731
            peer = lambda a=a, b=b, c=c_peer: torch.matmul(a, b, out=c)  # noqa: E731
            for _ in range(ROUNDS):
                record["rounds"].append(_paired(torch, kernel, peer, flush))
            try:
                graphs = captured(torch, kernel), captured(torch, peer)
                record["graph_rounds"] = [_paired(torch, *graphs, flush) for _ in range(ROUNDS)]
                graph_kernel = sorted(r["kernel_ms"]["median"] for r in record["graph_rounds"])[ROUNDS // 2]
                graph_peer = sorted(r["cublas_ms"]["median"] for r in record["graph_rounds"])[ROUNDS // 2]
                record["graph_ratio"] = graph_peer / graph_kernel
            except Exception as err:
                record["graph_error"] = _first_line(err)
                record["graph_ratio"] = None
            kernel_med = sorted(r["kernel_ms"]["median"] for r in record["rounds"])[ROUNDS // 2]
            peer_med = sorted(r["cublas_ms"]["median"] for r in record["rounds"])[ROUNDS // 2]
            record.update(
                kernel_ms=kernel_med,
                cublas_ms=peer_med,
                kernel_tflops=_tflops(s, s, s, kernel_med),
                cublas_tflops=_tflops(s, s, s, peer_med),
                ratio=peer_med / kernel_med,
            )
            rates = f"kernel {record['kernel_tflops']:.1f}, cuBLAS {record['cublas_tflops']:.1f} TFLOP/s"
            ratios = f"ratio {record['ratio']:.3f} (graphs {record['graph_ratio'] or math.nan:.3f})"
            print(f"{name} {layout} {s} [{default_config(a, b, c_kernel).label}]: {rates}, {ratios}", flush=True)
        except Exception as err:
            record["error"] = _first_line(err)
            print(f"{name} {layout} {s}: {record['error']}", flush=True)
        _write_scratch(out, data)
    from gpukb.gemm.triton.matmul import BLOCKED_CONFIG, compiled_summary

    ws = mm.Config("tma", 128, 256, 64, num_stages=3, num_warps=8, warp_specialize=True)
    for name, s, config in (("bfloat16", 8192, None), ("bfloat16", 1024, None), ("bfloat16", 8192, BLOCKED_CONFIG),
                            ("bfloat16", 8192, ws), ("float8_e4m3fn", 8192, None)):  # fmt: skip
        try:
            if name == "float8_e4m3fn":
                a = torch.randn(s, s, device="cuda").to(torch.float8_e4m3fn)
                b = torch.randn(s, s, device="cuda").to(torch.float8_e4m3fn).t()
            else:
                a, b = operands(torch, torch_dtype(name), s, s, s)
            summary = compiled_summary(a, b, config=config)
            summary["config"] = summary["config"].as_dict()
            data["compiled"].append({"dtype": name, "m": s, "n": s, "k": s, "error": None, **summary})
        except Exception as err:
            failed = dict.fromkeys(("config", "registers", "spills", "shared_bytes", "ptx", "warp_specialized"))
            data["compiled"].append({"dtype": name, "m": s, "n": s, "k": s, "error": _first_line(err), **failed})
        print(f"compiled: {data['compiled'][-1]}", flush=True)
    _write_scratch(out, data)
    try:
        data["host_overhead"] = host_overhead(torch)
        shown = {k: v for k, v in data["host_overhead"].items() if k != "profile"}
    except Exception as err:
        data["host_overhead_error"] = shown = _first_line(err)
    print(f"host overhead: {shown}", flush=True)
    data["clocks_end"] = clocks()
    _write_scratch(out, data)


def phase_fp8(out: Path) -> None:
    """FP8 (E4M3) candidates against torch._scaled_mm: A row-major, B column-major, bf16 out, unit scales."""
    from gpukb.gemm.triton.matmul import FP8_CANDIDATES, matmul
    from gpukb.measuring.device import clocks

    torch, flush = _setup()
    fp8 = torch.float8_e4m3fn
    one = torch.ones((), device="cuda", dtype=torch.float32)
    data: dict = {"clocks_start": clocks(), "sizes": list(FP8_SIZES), "peer": [], "configs": []}

    def scaled_mm(a: Any, b: Any, fast: bool) -> Any:
        res = torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=fast)
        return res[0] if isinstance(res, tuple) else res

    ops, refs = {}, {}
    for s in FP8_SIZES:
        a = torch.randn(s, s, device="cuda").to(fp8)
        b = torch.randn(s, s, device="cuda").to(fp8).t()
        ops[s] = (a, b)
        refs[s] = a.double() @ b.double()
        for fast in (True, False):
            c = scaled_mm(a, b, fast)
            data["peer"].append(
                {
                    "m": s, "n": s, "k": s, "use_fast_accum": fast, "rel_error": _rel(c, refs[s]),
                    "rel_error_of_rounded_reference": _rel(refs[s].to(torch.bfloat16), refs[s]),
                }
            )  # fmt: skip
    _write_scratch(out, data)
    for config in FP8_CANDIDATES:
        record: dict = {"config": config.as_dict(), "results": [], "error": None}
        data["configs"].append(record)
        fast = config.fp8_imprecise_acc is None
        try:
            for s in FP8_SIZES:
                a, b = ops[s]
                c = torch.full((s, s), float("nan"), device="cuda", dtype=torch.bfloat16)
                matmul(a, b, out=c, config=config)
                result = {
                    "m": s,
                    "n": s,
                    "k": s,
                    "rel_error": _rel(c, refs[s]),
                    "all_written": bool(torch.isfinite(c).all()),
                }
                result["peer_use_fast_accum"] = fast
                result.update(
                    _paired(
                        torch,
                        lambda a=a, b=b, c=c, cfg=config: matmul(a, b, out=c, config=cfg),
                        lambda a=a, b=b, fast=fast: scaled_mm(a, b, fast),
                        flush,
                    )
                )
                result["tflops"] = _tflops(s, s, s, result["kernel_ms"]["median"])
                result["peer_tflops"] = _tflops(s, s, s, result["cublas_ms"]["median"])
                record["results"].append(result)
        except Exception as err:
            record["error"] = _first_line(err)
        line = record["error"] or "  ".join(
            f"{r['m']}: {r['tflops']:.0f} vs {r['peer_tflops']:.0f} err {r['rel_error']:.2e}" for r in record["results"]
        )
        print(f"fp8 {config.label:34s} {line}", flush=True)
        _write_scratch(out, data)
    data["clocks_end"] = clocks()
    _write_scratch(out, data)


def _run_phase(name: str, workdir: Path, extra: list[str]) -> tuple[dict, dict]:
    """Run one phase in its own process: (its status, what its scratch file holds, ``{}`` if nothing)."""
    path = workdir / f"{name}.json"
    started = time.perf_counter()
    cmd = [sys.executable, __file__, "--phase", name, "--phase-output", str(path), *extra]
    try:
        returncode: int | None = subprocess.run(cmd, timeout=PHASE_TIMEOUT_S[name]).returncode
    except subprocess.TimeoutExpired:
        returncode = None  # killed at PHASE_TIMEOUT_S
    status = {"name": name, "returncode": returncode, "seconds": round(time.perf_counter() - started, 1)}
    data = json.loads(path.read_text()) if path.exists() else {}
    return status, data


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--phase", choices=("sweep", "compare", "fp8"), help=argparse.SUPPRESS)
    parser.add_argument("--phase-output", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--chosen", help=argparse.SUPPRESS)
    parser.add_argument("--skip-fp8", action="store_true", help="leave out the FP8 phase")
    parser.add_argument("--parts", type=Path, help="keep each phase's own file in this folder (default: discard)")


def triton_gemm(script: Script) -> int:
    args = script.args
    if args.phase:
        if args.phase == "compare":
            phase_compare(args.phase_output, json.loads(args.chosen))
        else:
            {"sweep": phase_sweep, "fp8": phase_fp8}[args.phase](args.phase_output)
        return 0
    if args.output is None:
        print("triton_gemm: give the path of the results file to write", file=sys.stderr)
        return 2

    from gpukb.gemm.triton.configs import CANDIDATES, DEFAULT_CONFIGS, FP8_CANDIDATES, SMALL_CONFIGS
    from gpukb.gemm.triton.results import TritonGemm
    from gpukb.records import clock_reading, parse

    record: dict = {
        "kind": TritonGemm.kind_name(),
        "schema_version": TritonGemm.version(),
        "timing": f"CUDA events per call; kernel and peer alternate, {PAIR_WARMUP_MS:g} ms warm-up, about "
        f"{PAIR_REP_MS:g} ms of pairs ({MIN_PAIRS} to {MAX_PAIRS}); L2 flushed (gpukb.measuring.timing.L2Flusher: "
        "a read of a buffer four times the L2 size, which leaves clean lines) before every call; SM clock and power "
        "sampled during the pairs; medians and quartiles in ms",
        "inputs": "torch.randn (standard normal), fresh per case; outputs poisoned with NaN before checks",
        "defaults_in_code": {k: v.as_dict() for k, v in DEFAULT_CONFIGS.items()},
        "small_defaults_in_code": {k: v.as_dict() for k, v in SMALL_CONFIGS.items()},
        "candidates": [c.as_dict() for c in CANDIDATES],
        "fp8_candidates": [c.as_dict() for c in FP8_CANDIDATES],
        "phases": [],
        "sweep": {"sizes": list(SWEEP_SIZES), "configs": []},
        "compare": None,
        "fp8": None,
    }
    readings = {}

    def merge(name: str, status: dict, data: dict) -> dict | None:
        """Keep a phase's status, move its clock readings into the run, and return its data (None if empty)."""
        record["phases"].append(status)
        for when in ("start", "end"):
            reading = clock_reading(data.pop(f"clocks_{when}", None))
            if reading is not None:
                readings[f"{name}_{when}"] = reading
        return data or None

    with tempfile.TemporaryDirectory() as tmp:
        work = args.parts or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        sweep = merge("sweep", *_run_phase("sweep", work, [])) or record["sweep"]
        record["sweep"] = sweep
        chosen = {
            "large": choose(sweep, LARGE_SIZES),
            "small": choose(sweep, SMALL_SIZES),
            "rule": "highest geometric mean of cuBLAS time / kernel time among configurations that pass the checks",
        }
        chosen["small_rate"] = small_rate(sweep, chosen)
        chosen["fp8"] = None
        record["chosen"] = chosen
        if chosen["large"] and chosen["small"] and chosen["small_rate"]:
            record["compare"] = merge("compare", *_run_phase("compare", work, ["--chosen", json.dumps(chosen)]))
        if not args.skip_fp8:
            record["fp8"] = merge("fp8", *_run_phase("fp8", work, []))
            chosen["fp8"] = choose_fp8(record["fp8"] or {})
    run = script.finished(clocks=readings)
    record["run"] = run.model_dump(mode="json")
    path = script.write(parse(record, str(args.output), expect=TritonGemm))
    print(f"wrote {path}; phases: {record['phases']}")
    return 0 if all(p["returncode"] == 0 for p in record["phases"]) else 1


if __name__ == "__main__":
    raise SystemExit(main(triton_gemm, __doc__, arguments, output="optional"))
