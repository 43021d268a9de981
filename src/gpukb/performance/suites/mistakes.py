"""The classic mistakes of GPU timing, each measured next to the right way, in the same run.

* ``sync``: a common lecture lab exercise timed ``torch.matmul`` on the GPU with ``time.time()`` and no
  synchronization. The first call (a 6000×6000 fp32 product, as in the lab) is read twice: when the call
  returns, and after ``torch.cuda.synchronize()``; then warm calls without synchronization, with it, and with
  CUDA events.
* ``cold_start``: the first call pays for library initialization and kernel loading.
* ``zeros``: the same bf16 product on random inputs, on zeros, and on random inputs again.
* ``one_run``: every sample of the first timed calls of a product of a new shape, without warm-up, to show
  how far one run can land from the median.
* ``idle_gpu``: short kernels timed back to back with CUDA events on an otherwise idle GPU: each start event
  runs before the host has even queued the kernel, so the launch is timed too.
* ``l2_cache``: a copy and a product small enough to stay in L2, timed with the cache warm and flushed.

This suite must run first in its process: ``cold_start`` and the first ``sync`` variant need a first call.
"""

from __future__ import annotations

import time

from gpukb.measuring.counting import copy_bytes, gemm_flops
from gpukb.measuring.stats import summarize
from gpukb.measuring.timing import Budget, HostTimer, L2Flusher
from gpukb.performance.results import MistakeRecord
from gpukb.performance.suites import Context

LAB_SIZE = 6000
ZEROS_SIZE = {"full": 8192, "quick": 4096}
ONE_RUN_SIZE = 2048
ONE_RUN_REPS = {"full": 200, "quick": 50}
L2_COPY_BYTES = 16 * 2**20
L2_GEMM_SIZE = 1024
#: The ``l2_cache`` variants of the two flushes (after ``"<what>, "``): the suites' read flush, and a write flush.
FLUSHED = "L2 flushed before each call"
WRITE_FLUSHED = "L2 flushed by writing a buffer before each call (dirty lines)"
#: Clock cycles of the spin kernel that keeps the GPU busy between timed calls (about 50 µs at 2 GHz).
SPIN_CYCLES = 100_000


def _record(
    mistake: str, variant: str, samples: list[float], work: float, unit: str, keep: bool = False, clocks=None
) -> MistakeRecord:
    ms = summarize(samples)
    scale = 1e12 if unit == "TFLOP/s" else 1e9
    return MistakeRecord(
        mistake=mistake,
        variant=variant,
        ms=ms,
        rate=work / (ms.median * 1e-3) / scale,
        unit=unit,
        samples=[float(s) for s in samples] if keep else None,
        clocks=clocks,
    )


def run(ctx: Context) -> list[MistakeRecord]:
    """Measure every mistake and its correction, ``sync`` and ``cold_start`` first."""
    records = sync_and_cold_start(ctx)
    records += zeros(ctx)
    records += one_run(ctx)
    records += idle_and_l2(ctx)
    ctx.notes.append(
        "mistakes: run first in the process, so the first 6000x6000 fp32 torch.matmul is the first cuBLAS call; "
        "'no synchronize' reads time.perf_counter() when the call returns"
    )
    return records


def sync_and_cold_start(ctx: Context) -> list[MistakeRecord]:
    """The lab's 6000×6000 fp32 product (TF32 off, torch's default), timed five ways."""
    torch = ctx.torch
    sync = torch.cuda.synchronize
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(LAB_SIZE, LAB_SIZE, device="cuda")
    b = torch.randn(LAB_SIZE, LAB_SIZE, device="cuda")
    sync()
    flops = gemm_flops(LAB_SIZE, LAB_SIZE, LAB_SIZE)
    start = time.perf_counter()
    torch.matmul(a, b)
    returned = time.perf_counter()
    sync()
    finished = time.perf_counter()
    no_sync_first = (returned - start) * 1e3
    first = (finished - start) * 1e3
    records = [
        _record("sync", "first call, no synchronize (the lab's method)", [no_sync_first], flops, "TFLOP/s"),
        _record("cold_start", "first call, synchronized", [first], flops, "TFLOP/s"),
    ]

    def matmul():
        return torch.matmul(a, b)

    reps = max(3, ONE_RUN_REPS[ctx.mode] // 4)
    ctx.measure(matmul, flush=False, host=True)  # warm up
    warm_no_sync = HostTimer(None).time(matmul, reps)
    sync()
    records.append(_record("sync", "warm calls, no synchronize", warm_no_sync, flops, "TFLOP/s"))
    with_sync = HostTimer(sync).time(matmul, reps)
    records.append(_record("sync", "warm calls, host clock with synchronize", with_sync, flops, "TFLOP/s"))
    measured = ctx.measure(matmul)
    events, window = measured.samples, measured.window
    records.append(_record("sync", "warm calls, CUDA events, L2 flushed", events, flops, "TFLOP/s", clocks=window))
    records.append(
        _record("cold_start", "warm calls, CUDA events, L2 flushed", events, flops, "TFLOP/s", clocks=window)
    )
    ctx.progress(
        f"mistakes sync: no-sync first call {no_sync_first:.3f} ms, synchronized first call {first:.1f} ms, "
        f"events median {summarize(events).median:.3f} ms"
    )
    return records


def zeros(ctx: Context) -> list[MistakeRecord]:
    """The same bf16 product on random inputs, zeros, and random inputs again, with longer budgets."""
    torch = ctx.torch
    n = ZEROS_SIZE[ctx.mode]
    flops = gemm_flops(n, n, n)
    long = Budget(
        warmup_ms=max(ctx.budget.warmup_ms, 100.0),
        rep_ms=max(4 * ctx.budget.rep_ms, 40.0),
        min_reps=ctx.budget.min_reps,
        max_reps=4 * ctx.budget.max_reps,
    )
    random_a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    random_b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    zero_a, zero_b = torch.zeros_like(random_a), torch.zeros_like(random_b)
    out = torch.empty_like(random_a)
    records = []
    for variant, (x, y) in (
        ("random inputs", (random_a, random_b)),
        ("zeros", (zero_a, zero_b)),
        ("random inputs, again", (random_a, random_b)),
    ):
        measured = ctx.measure(lambda x=x, y=y: torch.mm(x, y, out=out), budget=long)
        records.append(
            _record("zeros", f"bf16 {n}³, {variant}", measured.samples, flops, "TFLOP/s", clocks=measured.window)
        )
        ctx.progress(f"mistakes zeros: {variant}: {records[-1].rate:.1f} TFLOP/s")
    return records


def one_run(ctx: Context) -> list[MistakeRecord]:
    """Every sample of the first calls of a bf16 product of a shape not run before, with no warm-up."""
    torch = ctx.torch
    n = ONE_RUN_SIZE
    x = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(x)
    samples = ctx.timer.time(lambda: torch.mm(x, y, out=out), ONE_RUN_REPS[ctx.mode], ctx.flush)
    ctx.progress(f"mistakes one_run: {len(samples)} samples, {min(samples):.4f} to {max(samples):.4f} ms")
    return [
        _record("one_run", f"bf16 {n}³, first calls of a new shape", samples, gemm_flops(n, n, n), "TFLOP/s", keep=True)
    ]


def keep_busy(torch) -> object:
    """An untimed step that keeps the GPU busy without touching memory (a spin kernel of about 50 µs), so that
    the next timed call is queued before the GPU reaches it and its events measure the kernel, not the launch."""
    if hasattr(torch.cuda, "_sleep"):
        return torch.cuda._sleep(SPIN_CYCLES)
    return ctx_free_spin(torch)


def ctx_free_spin(torch) -> object:
    """Fallback for torches without ``torch.cuda._sleep``: a small product on tiny operands (a few KiB)."""
    x = torch.ones(64, 64, device="cuda")
    return [x @ x for _ in range(20)]


def idle_and_l2(ctx: Context) -> list[MistakeRecord]:
    """A 16 MiB copy and a 1024³ bf16 product, small enough to stay in L2, timed four ways: back to back on an
    otherwise idle GPU, with the GPU kept busy between calls (cache warm), with L2 flushed between calls by
    reading a buffer (the suites' flush, which leaves clean lines), and flushed by writing one (which leaves
    dirty lines that the timed call must write back)."""
    torch = ctx.torch
    dirty = L2Flusher(torch, int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0)), "write")
    src = torch.randint(0, 256, (L2_COPY_BYTES,), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    n = L2_GEMM_SIZE
    x = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(x)
    cases = (
        (f"copy {L2_COPY_BYTES // 2**20} MiB", lambda: dst.copy_(src), copy_bytes(L2_COPY_BYTES), "GB/s"),
        (f"bf16 product {n}³", lambda: torch.mm(x, y, out=out), gemm_flops(n, n, n), "TFLOP/s"),
    )
    records = []
    for what, fn, work, unit in cases:
        idle = ctx.measure(fn, flush=False)
        busy = ctx.measure(fn, before=lambda: keep_busy(torch))
        flushed = ctx.measure(fn)
        written = ctx.measure(fn, before=dirty)
        records += [
            _record("idle_gpu", f"{what}, GPU idle between calls", idle.samples, work, unit, clocks=idle.window),
            _record("idle_gpu", f"{what}, GPU kept busy between calls", busy.samples, work, unit, clocks=busy.window),
            _record(
                "l2_cache",
                f"{what}, cache warm (GPU kept busy between calls)",
                busy.samples,
                work,
                unit,
                clocks=busy.window,
            ),
            _record("l2_cache", f"{what}, {FLUSHED}", flushed.samples, work, unit, clocks=flushed.window),
            _record("l2_cache", f"{what}, {WRITE_FLUSHED}", written.samples, work, unit, clocks=written.window),
        ]
        rates = ", ".join(f"{r.variant.split(', ', 1)[1]} {r.rate:.1f}" for r in records[-5:])
        ctx.progress(f"mistakes idle_gpu/l2_cache: {what}: {rates} {unit}")
    return records
