"""Device-to-device copy throughput by element width (u8, u16, u32, u64), per element and vectorized.

Usage: PYTHONPATH=src python bench/cuda_copy_width.py OUTPUT.json [--mib 256]

Three CUDA C copy kernels (compiled by cupy's NVRTC), each on the same number of bytes:

- ``one per thread``: thread i copies element i (one load and one store of the element's width);
- ``16 B per thread, narrow``: each thread copies 16 bytes' worth of elements with separate narrow accesses,
  consecutive threads on consecutive elements (coalesced), so fewer threads do the same work;
- ``16 B per thread, vector``: each thread copies one 16-byte ``uint4`` (the same kernel whatever the type).

The peer is torch's ``Tensor.copy_`` of the same bytes, timed in the same run. Times: ``gpukb.measuring.timing``
(CUDA events around each call, the L2 flushed by a read before it, SM clock and power sampled), medians with
quartiles; bandwidth counts bytes read plus written, at the median.
"""

from __future__ import annotations

import argparse

from gpukb.cuda.results import CopyWidth
from gpukb.measuring.timing import Budget
from gpukb.records.script import Script, main

SOURCE = r"""
#include <cuda/std/cstdint>
template <typename T>
__global__ void copy_one(const T* __restrict__ src, T* __restrict__ dst, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}
template <typename T>
__global__ void copy_narrow16(const T* __restrict__ src, T* __restrict__ dst, unsigned long long n) {
    constexpr int K = 16 / sizeof(T);
    unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x * K + threadIdx.x;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        unsigned long long i = base + (unsigned long long)k * blockDim.x;
        if (i < n) dst[i] = src[i];
    }
}
__global__ void copy_vec16(const uint4* __restrict__ src, uint4* __restrict__ dst, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}
"""
TYPES = {
    "u8": ("unsigned char", 1),
    "u16": ("unsigned short", 2),
    "u32": ("unsigned int", 4),
    "u64": ("unsigned long long", 8),
}
THREADS = 256


BUDGET = Budget(warmup_ms=25.0, rep_ms=200.0, min_reps=10, max_reps=500)


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mib", type=int, default=256, help="buffer size in MiB (default 256)")


def copy_width(script: Script) -> CopyWidth:
    import cupy
    import numpy as np
    import torch

    mib = script.args.mib
    script.note(
        f"{mib} MiB buffers; {THREADS} threads per block; gpukb.measuring.timing with CUDA events, the L2 flushed "
        f"by a read before every call, {BUDGET.warmup_ms:g} ms of warm-up and about {BUDGET.rep_ms:g} ms of calls; "
        "bandwidth = 2 x bytes / median time; peer torch Tensor.copy_ on uint8 tensors of the same size.",
    )
    nbytes = mib * 2**20
    names = [f"copy_one<{c}>" for c, _ in TYPES.values()] + [f"copy_narrow16<{c}>" for c, _ in TYPES.values()]
    names.append("copy_vec16")
    module = cupy.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=names)
    rng = np.random.default_rng(0)
    src = cupy.asarray(rng.integers(1, 255, nbytes, dtype=np.uint8))
    dst = cupy.zeros(nbytes, dtype=cupy.uint8)

    t_src = torch.randint(1, 255, (nbytes,), dtype=torch.uint8, device="cuda")
    t_dst = torch.empty_like(t_src)
    torch_ms = script.measure(lambda: t_dst.copy_(t_src), BUDGET).summary()
    torch_gbps = 2 * nbytes / torch_ms.median / 1e6
    print(f"torch copy_: {torch_ms.median:.3f} ms, {torch_gbps:.0f} GB/s", flush=True)

    rows = []

    def measure(label, dtype, width, access, launch):
        dst.fill(0)
        launch()
        cupy.cuda.Device().synchronize()
        assert bool((dst == src).all()), f"{label} {dtype}: wrong copy"
        timed = script.measure(launch, BUDGET)
        ms = timed.summary()
        gbps = 2 * nbytes / ms.median / 1e6
        rows.append(
            {"kernel": label, "dtype": dtype, "element_bytes": width, "access_bytes": access, "bytes_moved": 2 * nbytes,
             "ms": ms, "gbps": gbps, "ratio_to_torch": torch_ms.median / ms.median, "clocks": timed.window}
        )  # fmt: skip
        ratio = torch_ms.median / ms.median
        print(f"{label:<24} {dtype:<4} {ms.median:.3f} ms  {gbps:7.0f} GB/s  {ratio:.3f} of torch", flush=True)

    for dtype, (ctype, width) in TYPES.items():
        n = nbytes // width
        s, d = src.view(f"uint{8 * width}"), dst.view(f"uint{8 * width}")
        one = module.get_function(f"copy_one<{ctype}>")
        narrow = module.get_function(f"copy_narrow16<{ctype}>")
        per = 16 // width
        measure(
            "one per thread",
            dtype,
            width,
            width,
            lambda one=one, s=s, d=d, n=n: one(((n + THREADS - 1) // THREADS,), (THREADS,), (s, d, np.uint64(n))),
        )
        measure(
            "16 B per thread, narrow",
            dtype,
            width,
            width,
            lambda f=narrow, s=s, d=d, n=n, per=per: f(
                ((n + THREADS * per - 1) // (THREADS * per),), (THREADS,), (s, d, np.uint64(n))
            ),
        )
    vec = module.get_function("copy_vec16")
    n16 = nbytes // 16
    measure(
        "16 B per thread, vector",
        "u128",
        16,
        16,
        lambda: vec(((n16 + THREADS - 1) // THREADS,), (THREADS,), (src, dst, np.uint64(n16))),
    )
    return CopyWidth(
        run=script.finished(), buffer_bytes=nbytes, torch_copy_gbps=torch_gbps, torch_copy_ms=torch_ms, rows=rows
    )


if __name__ == "__main__":
    raise SystemExit(main(copy_width, __doc__, arguments))
