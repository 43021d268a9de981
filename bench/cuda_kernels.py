"""The chapter's kernels against their peers on one GPU: copies, vector adds, reductions, histograms, matmul.

Usage: PYTHONPATH=src python bench/cuda_kernels.py OUTPUT.json [--rerecord] [--log2n 28] [--matmul 4096]

Kernels: the numba CUDA kernels of ``gpukb.cuda.kernels`` and the Triton kernels of ``gpukb.cuda.triton_kernels``,
on torch tensors (numba sees them through ``__cuda_array_interface__``, no copies). Peers, timed in the same run:
torch's device-to-device ``copy_`` for the copies and vector adds (bandwidth = bytes read + written), ``torch.sum``
for the reductions, ``torch.bincount`` for the histograms, and cuBLAS through ``torch.matmul`` in FP32 with TF32
off for the tiled matmul. Each time is the median of 15 samples, each sample CUDA events around 10 back-to-back
launches (so Python launch overhead overlaps the previous kernel) after warm-up; inputs are random and non-zero,
and arrays are far larger than the L2 cache. Every kernel's result is checked before it is timed.
"""

from __future__ import annotations

# ruff: noqa: N806, N812  (matrices in capitals; K and T name the kernel modules)
import argparse
import statistics
import time

SAMPLES, LAUNCHES = 15, 10


def main() -> int:
    from gpukb.records import rerecord_option

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", help="write the results here (a cuda.kernels record, JSON)")
    rerecord_option(parser)
    parser.add_argument("--log2n", type=int, default=28, help="elements of the 1D arrays, as a power of two")
    parser.add_argument("--matmul", type=int, default=4096, help="matrix size of the matmul comparison")
    args = parser.parse_args()

    import numpy as np
    import torch
    from numba import cuda, float64

    from gpukb.cuda import kernels as K
    from gpukb.cuda import triton_kernels as T
    from gpukb.cuda.results import KernelBench
    from gpukb.records import describe_run, finished, write

    started = time.perf_counter()
    run = describe_run(
        notes=[
            f"median of {SAMPLES} samples, each CUDA events around {LAUNCHES} back-to-back launches after warm-up; "
            f"1D arrays of 2^{args.log2n} elements; matmul {args.matmul}^3 FP32 with TF32 off; numba kernels get torch "
            "tensors through __cuda_array_interface__.",
        ]
    )
    torch.backends.cuda.matmul.allow_tf32 = False
    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def median_ms(fn) -> float:
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        once = start.elapsed_time(end)
        # Slow kernels (contended atomics) get fewer launches and samples, so the run stays short.
        launches = LAUNCHES if once < 2 else 1
        samples_wanted = SAMPLES if once < 5 else 5
        samples = []
        for _ in range(samples_wanted):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(launches):
                fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) / launches)
        return statistics.median(samples)

    rows = []

    def add_row(group, kernel, framework, size, ms, peer, peer_ms, unit, amount, peer_amount, correct):
        rate, peer_rate = amount / ms / 1e6, peer_amount / peer_ms / 1e6  # bytes or flops per ms -> GB/s, GFLOP/s
        if unit == "TFLOP/s":
            rate, peer_rate = rate / 1e3, peer_rate / 1e3
        rows.append(
            {
                "group": group,
                "kernel": kernel,
                "framework": framework,
                "size": size,
                "median_ms": ms,
                "peer": peer,
                "peer_median_ms": peer_ms,
                "unit": unit,
                "rate": rate,
                "peer_rate": peer_rate,
                "ratio": rate / peer_rate,
                "correct": bool(correct),
            }
        )
        print(
            f"{group:<10} {kernel:<28} {framework:<7} {ms:8.3f} ms {rate:8.1f} {unit}  peer {peer} "
            f"{peer_rate:8.1f}  ratio {rate / peer_rate:.3f}  correct {correct}",
            flush=True,
        )

    n = 2**args.log2n
    size = f"2^{args.log2n} float32"
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.rand(n, device="cuda", generator=gen) + 0.5
    b = torch.rand(n, device="cuda", generator=gen) + 0.5
    c = torch.empty_like(a)
    peer_copy = median_ms(lambda: c.copy_(a))
    copy_bytes = 2 * 4 * n
    print(f"torch copy_: {peer_copy:.3f} ms, {copy_bytes / peer_copy / 1e6:.0f} GB/s", flush=True)

    # Copies and vector adds: bandwidth against torch's copy_.
    da, db, dc = cuda.as_cuda_array(a), cuda.as_cuda_array(b), cuda.as_cuda_array(c)
    blocks = K.blocks(n)
    c.zero_()
    K.copy_kernel[blocks, K.THREADS](da, dc)
    torch.cuda.synchronize()
    ok = torch.equal(c, a)
    add_row(
        "copy",
        "copy, one element per thread",
        "numba",
        size,
        median_ms(lambda: K.copy_kernel[blocks, K.THREADS](da, dc)),
        "torch copy_",
        peer_copy,
        "GB/s",
        copy_bytes,
        copy_bytes,
        ok,
    )
    for per in (4, 8):
        kernel, ublocks = K.copy_unrolled(per), K.blocks(n, K.THREADS * per)
        c.zero_()
        kernel[ublocks, K.THREADS](da, dc)
        torch.cuda.synchronize()
        ok = torch.equal(c, a)
        add_row(
            "copy",
            f"copy, {per} elements per thread",
            "numba",
            size,
            median_ms(lambda kernel=kernel, ublocks=ublocks: kernel[ublocks, K.THREADS](da, dc)),
            "torch copy_",
            peer_copy,
            "GB/s",
            copy_bytes,
            copy_bytes,
            ok,
        )
    # Several loads in flight per thread before the first store, and a grid-stride loop over a grid of SMs x blocks.
    grid_sms = sms * (2048 // K.THREADS)
    d64a, d64c = cuda.as_cuda_array(a.view(torch.float64)), cuda.as_cuda_array(c.view(torch.float64))
    for label, kernel, g, src, dst in (
        ("copy, 4 loads then 4 stores", K.copy_ilp(4), K.blocks(n, K.THREADS * 4), da, dc),
        ("copy, 8 loads then 8 stores", K.copy_ilp(8), K.blocks(n, K.THREADS * 8), da, dc),
        (f"copy, 4 loads then 4 stores, grid-stride ({grid_sms} blocks)", K.copy_ilp(4), grid_sms, da, dc),
        (
            "copy, 8-byte words, 4 loads then 4 stores",
            K.copy_ilp(4, float64),
            K.blocks(n // 2, K.THREADS * 4),
            d64a,
            d64c,
        ),
    ):
        try:
            c.zero_()
            kernel[g, K.THREADS](src, dst)
            torch.cuda.synchronize()
            ok = torch.equal(c, a)
            add_row(
                "copy",
                label,
                "numba",
                size,
                median_ms(lambda kernel=kernel, g=g, src=src, dst=dst: kernel[g, K.THREADS](src, dst)),
                "torch copy_",
                peer_copy,
                "GB/s",
                copy_bytes,
                copy_bytes,
                ok,
            )
        except Exception as err:  # a variant that fails to compile or run is reported, the others still count
            print(f"{label}: {type(err).__name__}: {err}", flush=True)
    grid = (triton_blocks := -(-n // 4096),)
    c.zero_()
    T.copy_kernel[grid](a, c, n, BLOCK=4096)
    torch.cuda.synchronize()
    ok = torch.equal(c, a)
    add_row(
        "copy",
        "copy, BLOCK=4096",
        "triton",
        size,
        median_ms(lambda: T.copy_kernel[grid](a, c, n, BLOCK=4096)),
        "torch copy_",
        peer_copy,
        "GB/s",
        copy_bytes,
        copy_bytes,
        ok,
    )
    add_bytes = 3 * 4 * n
    c.zero_()
    K.vector_add_kernel[blocks, K.THREADS](da, db, dc)
    torch.cuda.synchronize()
    ok = torch.equal(c, a + b)
    add_row(
        "vector add",
        "one element per thread",
        "numba",
        size,
        median_ms(lambda: K.vector_add_kernel[blocks, K.THREADS](da, db, dc)),
        "torch copy_",
        peer_copy,
        "GB/s",
        add_bytes,
        copy_bytes,
        ok,
    )
    for per in (4, 8):
        kernel, ublocks = K.vector_add_unrolled(per), K.blocks(n, K.THREADS * per)
        c.zero_()
        kernel[ublocks, K.THREADS](da, db, dc)
        torch.cuda.synchronize()
        ok = torch.equal(c, a + b)
        add_row(
            "vector add",
            f"{per} elements per thread",
            "numba",
            size,
            median_ms(lambda kernel=kernel, ublocks=ublocks: kernel[ublocks, K.THREADS](da, db, dc)),
            "torch copy_",
            peer_copy,
            "GB/s",
            add_bytes,
            copy_bytes,
            ok,
        )
    for label, kernel, g in (
        ("4 loads of each input, then 4 stores", K.vector_add_ilp(4), K.blocks(n, K.THREADS * 4)),
        ("8 loads of each input, then 8 stores", K.vector_add_ilp(8), K.blocks(n, K.THREADS * 8)),
        (f"4 loads of each input then 4 stores, grid-stride ({grid_sms} blocks)", K.vector_add_ilp(4), grid_sms),
    ):
        try:
            c.zero_()
            kernel[g, K.THREADS](da, db, dc)
            torch.cuda.synchronize()
            ok = torch.equal(c, a + b)
            add_row(
                "vector add",
                label,
                "numba",
                size,
                median_ms(lambda kernel=kernel, g=g: kernel[g, K.THREADS](da, db, dc)),
                "torch copy_",
                peer_copy,
                "GB/s",
                add_bytes,
                copy_bytes,
                ok,
            )
        except Exception as err:
            print(f"{label}: {type(err).__name__}: {err}", flush=True)
    c.zero_()
    T.add_kernel[grid](a, b, c, n, BLOCK=4096)
    torch.cuda.synchronize()
    ok = torch.equal(c, a + b)
    add_row(
        "vector add",
        "BLOCK=4096",
        "triton",
        size,
        median_ms(lambda: T.add_kernel[grid](a, b, c, n, BLOCK=4096)),
        "torch copy_",
        peer_copy,
        "GB/s",
        add_bytes,
        copy_bytes,
        ok,
    )
    add_row(
        "vector add",
        "a + b (out=)",
        "torch",
        size,
        median_ms(lambda: torch.add(a, b, out=c)),
        "torch copy_",
        peer_copy,
        "GB/s",
        add_bytes,
        copy_bytes,
        True,
    )
    print(f"(triton grid {triton_blocks} programs)", flush=True)

    # Reductions: bandwidth against torch.sum (float32 sums of ~2^28 values near 1: compare in relative terms).
    x = a
    dx = cuda.as_cuda_array(x)
    out = torch.zeros(1, device="cuda")
    dout = cuda.as_cuda_array(out)
    exact = x.double().sum().item()
    peer_sum = median_ms(lambda: x.sum())
    sum_bytes = 4 * n
    reductions = {
        "shared": (K.reduce_shared(K.THREADS), sms * (2048 // K.THREADS)),
        "warp": (K.reduce_warp(K.THREADS), sms * (2048 // K.THREADS)),
    }
    for name, (kernel, g) in reductions.items():
        out.zero_()
        kernel[g, K.THREADS](dx, dout)
        torch.cuda.synchronize()
        ok = abs(out.item() - exact) / exact < 1e-3
        add_row(
            "reduction",
            f"{name} ({g} blocks of {K.THREADS})",
            "numba",
            size,
            median_ms(lambda kernel=kernel, g=g: kernel[g, K.THREADS](dx, dout)),
            "torch.sum",
            peer_sum,
            "GB/s",
            sum_bytes,
            sum_bytes,
            ok,
        )
    # The naive atomic reduction serializes on one address: timed on 2^24 elements against torch.sum of the same.
    small = x[: 2**24]
    dsmall = cuda.as_cuda_array(small)
    out.zero_()
    K.reduce_atomic[K.blocks(small.numel()), K.THREADS](dsmall, dout)
    torch.cuda.synchronize()
    ok = abs(out.item() - small.double().sum().item()) / small.double().sum().item() < 1e-3
    add_row(
        "reduction",
        "atomic (one per element)",
        "numba",
        "2^24 float32",
        median_ms(lambda: K.reduce_atomic[K.blocks(small.numel()), K.THREADS](dsmall, dout)),
        "torch.sum",
        median_ms(lambda: small.sum()),
        "GB/s",
        4 * 2**24,
        4 * 2**24,
        ok,
    )

    # Histograms by atomics: uniform values (little contention) and one value (all threads on one bin).
    nh = 2**24
    nbins = 256
    for label, values in (
        ("uniform", torch.randint(0, nbins, (nh,), device="cuda", dtype=torch.int32)),
        ("one bin", torch.full((nh,), 7, device="cuda", dtype=torch.int32)),
    ):
        dv = cuda.as_cuda_array(values)
        bins = torch.zeros(nbins, device="cuda", dtype=torch.int32)
        dbins = cuda.as_cuda_array(bins)
        want = torch.bincount(values.long(), minlength=nbins).int()
        peer_hist = median_ms(lambda values=values: torch.bincount(values, minlength=nbins))
        for shared, kernel, g in (
            (False, K.histogram_global, K.blocks(nh)),
            (True, K.histogram_shared(nbins), sms * (2048 // K.THREADS)),
        ):
            bins.zero_()
            kernel[g, K.THREADS](dv, dbins)
            torch.cuda.synchronize()
            ok = torch.equal(bins, want)
            where = "shared" if shared else "global"
            add_row(
                "histogram",
                f"{where} atomics, {label}",
                "numba",
                f"2^24 int32, {nbins} bins",
                median_ms(lambda kernel=kernel, g=g, dv=dv, dbins=dbins: kernel[g, K.THREADS](dv, dbins)),
                "torch.bincount",
                peer_hist,
                "GB/s",
                4 * nh,
                4 * nh,
                ok,
            )

    # Tiled matmul against cuBLAS (FP32, TF32 off).
    m = args.matmul
    A = torch.randn(m, m, device="cuda", generator=gen)
    B = torch.randn(m, m, device="cuda", generator=gen)
    C = torch.empty(m, m, device="cuda")
    dA, dB, dC = cuda.as_cuda_array(A), cuda.as_cuda_array(B), cuda.as_cuda_array(C)
    ref = A @ B
    peer_mm = median_ms(lambda: torch.matmul(A, B, out=C))
    flops = 2 * m**3
    for tile in (16, 32):
        kernel = K.matmul_tiled(tile)
        g = (-(-m // tile), -(-m // tile))
        kernel[g, (tile, tile)](dA, dB, dC)
        torch.cuda.synchronize()
        ok = ((C - ref).abs().max() / ref.abs().max()).item() < 1e-4
        add_row(
            "matmul",
            f"tiled, {tile}x{tile} tiles",
            "numba",
            f"{m}^3 float32",
            median_ms(lambda kernel=kernel, g=g, tile=tile: kernel[g, (tile, tile)](dA, dB, dC)),
            "cuBLAS (torch.matmul, TF32 off)",
            peer_mm,
            "TFLOP/s",
            flops,
            flops,
            ok,
        )
    _ = np  # numpy is numba's dependency; kept imported for the version record
    write(KernelBench(run=finished(run, started), rows=rows), args.output, replace=args.rerecord)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
