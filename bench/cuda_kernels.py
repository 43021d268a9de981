"""The chapter's kernels against their peers on one GPU: copies, vector adds, reductions, histograms, matmul.

Usage: PYTHONPATH=src python bench/cuda_kernels.py OUTPUT.json [--log2n 28] [--matmul 4096]

Kernels: the numba CUDA kernels of ``gpukb.cuda.kernels`` and the Triton kernels of ``gpukb.cuda.triton_kernels``,
on torch tensors (numba sees them through ``__cuda_array_interface__``, no copies). Peers, timed in the same run:
torch's device-to-device ``copy_`` for the copies and vector adds (bandwidth = bytes read + written), ``torch.sum``
for the reductions, ``torch.bincount`` for the histograms, and cuBLAS through ``torch.matmul`` in FP32 with TF32
off for the tiled matmul. Each sample is CUDA events around 10 back-to-back launches (so Python launch overhead
overlaps the previous kernel), 5 to 15 samples after warm-up (``gpukb.measuring.timing``); inputs are random and
non-zero, and arrays are far larger than the L2 cache, which is not flushed. Every kernel's result is checked
before it is timed.
"""

from __future__ import annotations

# ruff: noqa: N806, N812  (matrices in capitals; K and T name the kernel modules)
import argparse
from collections.abc import Callable

from gpukb.cuda.results import KernelBench
from gpukb.measuring.timing import Budget
from gpukb.records.script import Script, main

#: Launches per sample, and the samples: 15 of a fast kernel, 5 of a slow one (contended atomics).
LAUNCHES = 10
BUDGET = Budget(warmup_ms=20.0, rep_ms=150.0, min_reps=5, max_reps=15)


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log2n", type=int, default=28, help="elements of the 1D arrays, as a power of two")
    parser.add_argument("--matmul", type=int, default=4096, help="matrix size of the matmul comparison")


def kernels(script: Script) -> KernelBench:
    import torch
    from numba import cuda, float64

    from gpukb.cuda import kernels as K
    from gpukb.cuda import triton_kernels as T

    args = script.args
    script.note(
        f"each sample CUDA events around {LAUNCHES} back-to-back launches, {BUDGET.min_reps} to {BUDGET.max_reps} "
        f"samples after warm-up, L2 not flushed; 1D arrays of 2^{args.log2n} elements; matmul {args.matmul}^3 FP32 "
        "with TF32 off; numba kernels get torch tensors through __cuda_array_interface__."
    )
    torch.backends.cuda.matmul.allow_tf32 = False
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []

    def timed(fn: Callable[[], object]):
        return script.measure(fn, BUDGET, flush=False, calls=LAUNCHES)

    def add_row(group, kernel, framework, size, fn, peer, peer_timed, unit, amount, peer_amount, correct):
        """Time ``fn`` (already checked: ``correct``) and record it against its peer's timing."""
        measured = timed(fn)
        ms, peer_ms = measured.summary(), peer_timed.summary()
        rate, peer_rate = amount / ms.median / 1e6, peer_amount / peer_ms.median / 1e6  # per ms -> GB/s, GFLOP/s
        if unit == "TFLOP/s":
            rate, peer_rate = rate / 1e3, peer_rate / 1e3
        rows.append(
            {"group": group, "kernel": kernel, "framework": framework, "size": size, "ms": ms, "peer": peer,
             "peer_ms": peer_ms, "unit": unit, "rate": rate, "peer_rate": peer_rate, "ratio": rate / peer_rate,
             "correct": bool(correct), "clocks": measured.window}
        )  # fmt: skip
        print(
            f"{group:<10} {kernel:<28} {framework:<7} {ms.median:8.3f} ms {rate:8.1f} {unit}  peer {peer} "
            f"{peer_rate:8.1f}  ratio {rate / peer_rate:.3f}  correct {correct}",
            flush=True,
        )

    def checked(launch: Callable[[], object], out, want) -> bool:
        """Run ``launch`` once into a zeroed ``out`` and compare with ``want``."""
        out.zero_()
        launch()
        torch.cuda.synchronize()
        return torch.equal(out, want)

    n = 2**args.log2n
    size = f"2^{args.log2n} float32"
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.rand(n, device="cuda", generator=gen) + 0.5
    b = torch.rand(n, device="cuda", generator=gen) + 0.5
    c = torch.empty_like(a)
    peer_copy = timed(lambda: c.copy_(a))
    copy_bytes, add_bytes = 2 * 4 * n, 3 * 4 * n
    print(f"torch copy_: {peer_copy.summary().median:.3f} ms", flush=True)

    # Copies and vector adds: bandwidth against torch's copy_.
    da, db, dc = cuda.as_cuda_array(a), cuda.as_cuda_array(b), cuda.as_cuda_array(c)
    d64a, d64c = cuda.as_cuda_array(a.view(torch.float64)), cuda.as_cuda_array(c.view(torch.float64))
    grid_sms = sms * (2048 // K.THREADS)  # a grid-stride loop over a grid of SMs x blocks

    def numba(kernel, grid, *arrays) -> Callable[[], object]:
        return lambda: kernel[grid, K.THREADS](*arrays)

    copies = [
        ("copy, one element per thread", "numba", numba(K.copy_kernel, K.blocks(n), da, dc)),
        *[
            (f"copy, {per} elements per thread", "numba",
             numba(K.copy_unrolled(per), K.blocks(n, K.THREADS * per), da, dc))
            for per in (4, 8)
        ],
        # several loads in flight per thread before the first store
        ("copy, 4 loads then 4 stores", "numba", numba(K.copy_ilp(4), K.blocks(n, K.THREADS * 4), da, dc)),
        ("copy, 8 loads then 8 stores", "numba", numba(K.copy_ilp(8), K.blocks(n, K.THREADS * 8), da, dc)),
        (f"copy, 4 loads then 4 stores, grid-stride ({grid_sms} blocks)", "numba",
         numba(K.copy_ilp(4), grid_sms, da, dc)),
        ("copy, 8-byte words, 4 loads then 4 stores", "numba",
         numba(K.copy_ilp(4, float64), K.blocks(n // 2, K.THREADS * 4), d64a, d64c)),
        ("copy, BLOCK=4096", "triton", lambda: T.copy_kernel[(-(-n // 4096),)](a, c, n, BLOCK=4096)),
    ]  # fmt: skip
    adds = [
        ("one element per thread", "numba", numba(K.vector_add_kernel, K.blocks(n), da, db, dc)),
        *[
            (f"{per} elements per thread", "numba",
             numba(K.vector_add_unrolled(per), K.blocks(n, K.THREADS * per), da, db, dc))
            for per in (4, 8)
        ],
        ("4 loads of each input, then 4 stores", "numba",
         numba(K.vector_add_ilp(4), K.blocks(n, K.THREADS * 4), da, db, dc)),
        ("8 loads of each input, then 8 stores", "numba",
         numba(K.vector_add_ilp(8), K.blocks(n, K.THREADS * 8), da, db, dc)),
        (f"4 loads of each input then 4 stores, grid-stride ({grid_sms} blocks)", "numba",
         numba(K.vector_add_ilp(4), grid_sms, da, db, dc)),
        ("BLOCK=4096", "triton", lambda: T.add_kernel[(-(-n // 4096),)](a, b, c, n, BLOCK=4096)),
        ("a + b (out=)", "torch", lambda: torch.add(a, b, out=c)),
    ]  # fmt: skip
    for group, cases, want, amount in (("copy", copies, a, copy_bytes), ("vector add", adds, a + b, add_bytes)):
        for label, framework, launch in cases:
            try:  # a variant that fails to compile or run is reported, the others still count
                ok = checked(launch, c, want)
                add_row(group, label, framework, size, launch, "torch copy_", peer_copy, "GB/s", amount, copy_bytes,
                        ok)  # fmt: skip
            except Exception as err:
                print(f"{label}: {type(err).__name__}: {err}", flush=True)

    # Reductions: bandwidth against torch.sum (float32 sums of ~2^28 values near 1: compare in relative terms).
    dx = da
    out = torch.zeros(1, device="cuda")
    dout = cuda.as_cuda_array(out)
    exact = a.double().sum().item()
    peer_sum = timed(lambda: a.sum())
    sum_bytes = 4 * n
    for name, kernel in (("shared", K.reduce_shared(K.THREADS)), ("warp", K.reduce_warp(K.THREADS))):
        out.zero_()
        kernel[grid_sms, K.THREADS](dx, dout)
        torch.cuda.synchronize()
        ok = abs(out.item() - exact) / exact < 1e-3
        add_row("reduction", f"{name} ({grid_sms} blocks of {K.THREADS})", "numba", size,
                numba(kernel, grid_sms, dx, dout), "torch.sum", peer_sum, "GB/s", sum_bytes, sum_bytes, ok)  # fmt: skip
    # The naive atomic reduction serializes on one address: timed on 2^24 elements against torch.sum of the same.
    small = a[: 2**24]
    dsmall = cuda.as_cuda_array(small)
    out.zero_()
    K.reduce_atomic[K.blocks(small.numel()), K.THREADS](dsmall, dout)
    torch.cuda.synchronize()
    ok = abs(out.item() - small.double().sum().item()) / small.double().sum().item() < 1e-3
    add_row("reduction", "atomic (one per element)", "numba", "2^24 float32",
            numba(K.reduce_atomic, K.blocks(small.numel()), dsmall, dout), "torch.sum", timed(lambda: small.sum()),
            "GB/s", 4 * 2**24, 4 * 2**24, ok)  # fmt: skip

    # Histograms by atomics: uniform values (little contention) and one value (all threads on one bin).
    nh, nbins = 2**24, 256
    for label, values in (
        ("uniform", torch.randint(0, nbins, (nh,), device="cuda", dtype=torch.int32)),
        ("one bin", torch.full((nh,), 7, device="cuda", dtype=torch.int32)),
    ):
        dv = cuda.as_cuda_array(values)
        bins = torch.zeros(nbins, device="cuda", dtype=torch.int32)
        dbins = cuda.as_cuda_array(bins)
        want = torch.bincount(values.long(), minlength=nbins).int()
        peer_hist = timed(lambda values=values: torch.bincount(values, minlength=nbins))
        for where, kernel, g in (
            ("global", K.histogram_global, K.blocks(nh)),
            ("shared", K.histogram_shared(nbins), grid_sms),
        ):
            launch = numba(kernel, g, dv, dbins)
            ok = checked(launch, bins, want)
            add_row("histogram", f"{where} atomics, {label}", "numba", f"2^24 int32, {nbins} bins", launch,
                    "torch.bincount", peer_hist, "GB/s", 4 * nh, 4 * nh, ok)  # fmt: skip

    # Tiled matmul against cuBLAS (FP32, TF32 off).
    m = args.matmul
    A = torch.randn(m, m, device="cuda", generator=gen)
    B = torch.randn(m, m, device="cuda", generator=gen)
    C = torch.empty(m, m, device="cuda")
    dA, dB, dC = cuda.as_cuda_array(A), cuda.as_cuda_array(B), cuda.as_cuda_array(C)
    ref = A @ B
    peer_mm = timed(lambda: torch.matmul(A, B, out=C))
    flops = 2 * m**3
    for tile in (16, 32):
        kernel = K.matmul_tiled(tile)
        g = (-(-m // tile), -(-m // tile))
        kernel[g, (tile, tile)](dA, dB, dC)
        torch.cuda.synchronize()
        ok = ((C - ref).abs().max() / ref.abs().max()).item() < 1e-4
        add_row("matmul", f"tiled, {tile}x{tile} tiles", "numba", f"{m}^3 float32",
                lambda kernel=kernel, g=g, tile=tile: kernel[g, (tile, tile)](dA, dB, dC),
                "cuBLAS (torch.matmul, TF32 off)", peer_mm, "TFLOP/s", flops, flops, ok)  # fmt: skip
    return KernelBench(run=script.finished(), rows=rows)


if __name__ == "__main__":
    raise SystemExit(main(kernels, __doc__, arguments))
