"""The GEMM ground-up chapter's GPU run: the cuBLASLt snippet, batched GEMM, and timing a GEMM right and wrong.

Usage: PYTHONPATH=src python bench/gemm_ground_up.py OUTPUT.json

Writes a ``gemm.ground-up`` record (:class:`gpukb.gemm.results.GroundUp`); the committed one is
``gemm/ground-up-h100``.

1. ``cublaslt``: compiles ``snippets/gemm/cublaslt_matmul.cu`` with nvcc, runs its host check at the default
   size, then times it at 4096³ and 8192³ in three rounds, each round alternating the snippet with ``torch.mm`` on
   the same shapes (cuBLAS preferred, PyTorch's default, and cuBLASLt preferred), all timed alike.
2. ``batched``: a batch of small bf16 products as a loop of ``torch.mm``, the same loop replayed from a CUDA
   graph, one ``torch.bmm``, and (shared B) one ``torch.mm`` of all rows, over sizes and batch counts.
3. ``timing``: the lecture lab's GPU matmul timed as the lab did (host clock, no synchronization) and the right
   ways (synchronized host clock, CUDA events, warm-up, median of many, ``triton.testing.do_bench``), plus
   the lab's CPU half (numpy), whose host-clock method is right because numpy returns when it is done.

Every product runs on random inputs; results are checked before they are timed.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from gpukb.dtypes import torch_dtype
from gpukb.gemm.batched import agreement, counts, make_batch, variant
from gpukb.gemm.results import (
    BatchedFailure,
    BatchedTiming,
    Cublaslt,
    GroundUp,
    Process,
    SnippetRun,
    TimingEntry,
    TimingMethod,
    TorchMm,
)
from gpukb.measuring.device import sampler
from gpukb.measuring.stats import summarize
from gpukb.measuring.timing import Budget, EventTimer, HostTimer, benchmark, captured
from gpukb.performance.suites.mistakes import keep_busy
from gpukb.records.script import Script, main
from gpukb.site.snippets import find_nvcc

ROOT = Path(__file__).resolve().parents[1]
SNIPPET = ROOT / "snippets" / "gemm" / "cublaslt_matmul.cu"
CUBLASLT_TIMED = ((4096, 4096, 4096), (8192, 8192, 8192))
CUBLASLT_ROUNDS = 3
CUBLASLT_CALLS = 50
BATCH_SIZES = (16, 32, 64, 128, 256)
BATCH_COUNTS = (16, 256, 4096)
TIMING_CASES = (("fp32", 2000), ("fp32", 4000), ("fp32", 6000), ("tf32", 6000), ("bf16", 8192))
CPU_LAB = (2000, 4000, 6000)
REPS = 30
#: Samples SM clock and power while timed calls run (``None`` where neither NVML nor nvidia-smi answers).
MONITOR: list = []


def monitored(fn):
    """Call ``fn()`` (which times calls and returns once they ended) under the clock sampler: (its result, the
    window's clocks or ``None``)."""
    if not MONITOR:
        MONITOR.append(sampler())
    monitor = MONITOR[0]
    if monitor is None:
        return fn(), None
    monitor.start()
    try:
        result = fn()
    finally:
        window = monitor.stop()
    return result, window


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run(cmd: list[str], timeout: float = 300, shown: str | None = None) -> Process:
    """Run a command to completion; ``shown`` is the command as the record states it (default: as run)."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return Process(command=shown or " ".join(cmd), returncode=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)


def torch_mm(torch, library: str, m: int, n: int, k: int, round_: int) -> TorchMm:
    """``torch.mm`` on random bf16 operands with one BLAS preference, checked, then timed like the snippet: five
    warm-up calls and fifty calls back to back, one pair of CUDA events each."""
    before = torch.backends.cuda.preferred_blas_library()
    torch.backends.cuda.preferred_blas_library(library)
    try:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        y = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        z = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        ref = x[:256].double() @ y.double()
        torch.mm(x, y, out=z)
        rel = float((z[:256].double() - ref).norm() / ref.norm())
        timer = EventTimer(torch)
        timer.time(lambda: torch.mm(x, y, out=z), 5)
        samples, window = monitored(lambda: timer.time(lambda: torch.mm(x, y, out=z), CUBLASLT_CALLS))
        ms = summarize(samples)
    finally:
        torch.backends.cuda.preferred_blas_library(before)
    tflops = 2 * m * n * k / (ms.median * 1e-3) / 1e12
    record = TorchMm(library=library, round=round_, m=m, n=n, k=k, ms=ms, tflops=tflops, rel_error=rel, clocks=window)
    log(f"torch.mm {library} {m}x{n}x{k} round {round_}: {record.tflops:.1f} TFLOP/s, rel err {rel:.2e}")
    return record


def cublaslt_section(torch) -> Cublaslt:
    """Compile the snippet, run its check, then time it and torch.mm (both preferences) in alternating rounds."""
    nvcc = find_nvcc()
    if nvcc is None:
        return Cublaslt(error="nvcc not found ($NVCC, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)")
    version = run([nvcc, "--version"]).stdout.strip()
    preferred = str(torch.backends.cuda.preferred_blas_library())
    runs: list[SnippetRun] = []
    timings: list[TorchMm] = []
    with tempfile.TemporaryDirectory() as tmp:
        exe = str(Path(tmp) / "cublaslt_matmul")
        build = ["-O2", "-std=c++17", "-arch=sm_90", str(SNIPPET.relative_to(ROOT)), "-o", exe]
        command = [nvcc, *build, "-lcublasLt", "-lcublas"]
        shown = " ".join(command).replace(exe, "cublaslt_matmul").replace(nvcc, "nvcc")
        compiled = run(command, shown=shown)
        log(f"cublaslt: compile rc={compiled.returncode} {compiled.stderr[-500:]}")
        if compiled.returncode == 0:

            def snippet(*args: str, round_: int | None = None) -> None:
                result = run([exe, *args], timeout=600, shown=" ".join(["./cublaslt_matmul", *args]))
                runs.append(SnippetRun(**result.model_dump(), round=round_))
                log(f"cublaslt {args}: rc={result.returncode}\n{result.stdout}{result.stderr[-500:]}")

            snippet()  # the check at the default size, shown on the page
            for round_ in range(CUBLASLT_ROUNDS):  # alternate, so that drift in clocks hits every column alike
                for m, n, k in CUBLASLT_TIMED:
                    snippet(str(m), str(n), str(k), str(CUBLASLT_CALLS), round_=round_)
                    for library in ("cublas", "cublaslt"):
                        timings.append(torch_mm(torch, library, m, n, k, round_))
    return Cublaslt(nvcc_version=version, preferred_blas_library=preferred, compile=compiled, runs=runs,
                    torch_mm=timings)  # fmt: skip


def batched_section(torch) -> tuple[list[BatchedTiming], list[BatchedFailure]]:
    budget = Budget(warmup_ms=10.0, rep_ms=50.0, min_reps=5, max_reps=100)
    records: list[BatchedTiming] = []
    failures: list[BatchedFailure] = []
    for size in BATCH_SIZES:
        for count in BATCH_COUNTS:
            batch = make_batch(torch, count, size, size, size, torch.bfloat16, device="cuda", seed=size + count)
            diffs = agreement(torch, batch)
            scale = float(batch.out.abs().max())
            fns = {
                "loop": variant(torch, batch, "loop"),
                "bmm": variant(torch, batch, "bmm"),
                "one_gemm": variant(torch, batch, "one_gemm"),
            }
            try:
                fns["loop_graph"] = captured(torch, variant(torch, batch, "loop"))
            except RuntimeError as err:  # recorded, not fatal
                failures.append(BatchedFailure(m=size, batch=count, variant="loop_graph", error=str(err)[:200]))
            for name, fn in fns.items():
                samples = benchmark(fn, EventTimer(torch), budget, lambda: keep_busy(torch)).samples
                ms = summarize(samples)
                flops, nbytes = counts(batch, "bf16", shared=name == "one_gemm")
                diff = 0.0 if name == "bmm" else diffs.get("one_gemm" if name == "one_gemm" else "loop", 0.0)
                record = BatchedTiming(m=size, n=size, k=size, batch=count, dtype="bf16", variant=name, ms=ms,
                                       tflops=flops / (ms.median * 1e-3) / 1e12, gbps=nbytes / (ms.median * 1e-3) / 1e9,
                                       max_abs_diff=diff, max_abs_out=scale)  # fmt: skip
                records.append(record)
                log(f"batched {size}^3 x{count} {name:>10}: {ms.median * 1e3:9.1f} us  {record.tflops:7.2f} TFLOP/s")
            del batch, fns
    return records, failures


def timing_section(torch) -> list[TimingEntry]:
    """Each product timed every way; the checked relative error is attached to every entry of its product."""
    records: list[dict] = []
    sync = torch.cuda.synchronize

    def add(dtype: str, n: int, method: TimingMethod, samples: list[float], **extra) -> None:
        ms = summarize(samples)
        records.append(
            {
                "device": "cpu" if dtype == "cpu-fp32" else "cuda",
                "dtype": dtype,
                "n": n,
                "method": method,
                "ms": ms,
                "gflops": 2 * n**3 / (ms.median * 1e-3) / 1e9,
                **extra,
            }
        )
        log(f"timing {dtype} {n}: {method}: median {ms.median:.4f} ms -> {records[-1]['gflops']:,.0f} GFLOP/s")

    allow = torch.backends.cuda.matmul.allow_tf32
    try:
        for dtype, n in TIMING_CASES:
            torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
            a = torch.randn(n, n, device="cuda", dtype=torch_dtype(dtype))
            b = torch.randn(n, n, device="cuda", dtype=torch_dtype(dtype))
            sync()
            # The lab's method on the first call of this shape: time.time() around the call, no synchronize.
            start = time.time()
            c = torch.matmul(a, b)
            returned = time.time()
            sync()
            finished = time.time()
            add(dtype, n, "lab_first_call", [(returned - start) * 1e3])
            add(dtype, n, "first_call_synchronized", [(finished - start) * 1e3])
            ref = a[:256].double() @ b.double()
            rel = float((c[:256].double() - ref).norm() / ref.norm())

            def matmul(a=a, b=b):
                return torch.matmul(a, b)

            benchmark(matmul, HostTimer(sync), Budget())  # warm-up
            sync()
            add(dtype, n, "warm_call_no_sync", HostTimer(None).time(matmul, 1))
            sync()
            add(dtype, n, "warm_calls_no_sync", HostTimer(None).time(matmul, REPS))
            sync()
            add(dtype, n, "warm_call_synchronized", HostTimer(sync).time(matmul, 1))
            add(dtype, n, "warm_calls_synchronized", HostTimer(sync).time(matmul, REPS))
            samples, window = monitored(lambda matmul=matmul: EventTimer(torch).time(matmul, REPS))
            add(dtype, n, "warm_calls_events", samples, clocks=window)
            sync()
            t0 = time.perf_counter()
            for _ in range(REPS):
                matmul()
            sync()
            add(dtype, n, "back_to_back", [(time.perf_counter() - t0) * 1e3 / REPS], calls=REPS)
            try:
                import triton.testing

                ms, window = monitored(
                    lambda matmul=matmul: triton.testing.do_bench(matmul, warmup=25, rep=200, return_mode="median")
                )
                add(dtype, n, "do_bench", [ms], clocks=window)
            except Exception as err:  # recorded; do_bench is a cross-check only
                log(f"do_bench failed: {err}")
            for r in records:
                if (r["dtype"], r["n"]) == (dtype, n):
                    r["rel_error_vs_fp64"] = rel  # of the product timed, first 256 rows against float64
            del a, b, c, ref
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow
    # The lab's CPU half: numpy is synchronous, so a host clock around np.dot is a fair measurement.
    for n in CPU_LAB:
        rng = np.random.default_rng(n)
        a = rng.random((n, n), dtype=np.float32)
        b = rng.random((n, n), dtype=np.float32)
        samples = HostTimer().time(lambda a=a, b=b: np.dot(a, b), 4)
        add("cpu-fp32", n, "numpy_first_call", samples[:1])
        add("cpu-fp32", n, "numpy_after_first", samples[1:])
    return [TimingEntry(**r) for r in records]


def ground_up(script: Script) -> GroundUp:
    torch = script.torch
    cublaslt = cublaslt_section(torch)
    batched, failures = batched_section(torch)
    timing = timing_section(torch)
    run = script.finished()
    print(f"measured in {run.duration_s:.0f} s")
    return GroundUp(run=run, cublaslt=cublaslt, batched=batched, batched_failures=failures, timing=timing)


if __name__ == "__main__":
    raise SystemExit(main(ground_up, __doc__))
