"""Device-to-device copy throughput by element width (u8, u16, u32, u64), per element and vectorized.

Usage: PYTHONPATH=src python bench/cuda_copy_width.py OUTPUT.json [--rerecord] [--mib 256]

Three CUDA C copy kernels (compiled by cupy's NVRTC), each on the same number of bytes:

- ``one per thread``: thread i copies element i (one load and one store of the element's width);
- ``16 B per thread, narrow``: each thread copies 16 bytes' worth of elements with separate narrow accesses,
  consecutive threads on consecutive elements (coalesced), so fewer threads do the same work;
- ``16 B per thread, vector``: each thread copies one 16-byte ``uint4`` (the same kernel whatever the type).

The peer is torch's ``Tensor.copy_`` of the same bytes, timed in the same run. Medians of
``triton.testing.do_bench`` (20th and 80th percentiles as spread); bandwidth counts bytes read plus written.
"""

from __future__ import annotations

import argparse
import time

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


def main() -> int:
    from gpukb.records import rerecord_option

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", help="write the results here (a cuda.copy-width record, JSON)")
    rerecord_option(parser)
    parser.add_argument("--mib", type=int, default=256, help="buffer size in MiB (default 256)")
    args = parser.parse_args()

    import cupy
    import numpy as np
    import torch
    from triton.testing import do_bench

    from gpukb.cuda.results import CopyWidth
    from gpukb.records import describe_run, finished, write

    started = time.perf_counter()
    run = describe_run(
        notes=[
            f"{args.mib} MiB buffers; {THREADS} threads per block; triton.testing.do_bench medians (quantiles 0.5, "
            "0.2, 0.8); bandwidth = 2 x bytes / time; peer torch Tensor.copy_ on uint8 tensors of the same size.",
        ]
    )
    nbytes = args.mib * 2**20
    names = [f"copy_one<{c}>" for c, _ in TYPES.values()] + [f"copy_narrow16<{c}>" for c, _ in TYPES.values()]
    names.append("copy_vec16")
    module = cupy.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=names)
    rng = np.random.default_rng(0)
    src = cupy.asarray(rng.integers(1, 255, nbytes, dtype=np.uint8))
    dst = cupy.zeros(nbytes, dtype=cupy.uint8)

    def timed(fn):
        median, p20, p80 = do_bench(fn, warmup=25, rep=200, quantiles=[0.5, 0.2, 0.8])
        return median, p20, p80

    t_src = torch.randint(1, 255, (nbytes,), dtype=torch.uint8, device="cuda")
    t_dst = torch.empty_like(t_src)
    torch_ms = timed(lambda: t_dst.copy_(t_src))[0]
    torch_gbps = 2 * nbytes / torch_ms / 1e6
    print(f"torch copy_: {torch_ms:.3f} ms, {torch_gbps:.0f} GB/s", flush=True)

    rows = []

    def measure(kernel_name, label, dtype, width, access, launch):
        dst.fill(0)
        launch()
        cupy.cuda.Device().synchronize()
        assert bool((dst == src).all()), f"{label} {dtype}: wrong copy"
        median, p20, p80 = timed(launch)
        gbps = 2 * nbytes / median / 1e6
        rows.append(
            {
                "kernel": label,
                "dtype": dtype,
                "element_bytes": width,
                "access_bytes": access,
                "bytes_moved": 2 * nbytes,
                "median_ms": median,
                "p20_ms": p20,
                "p80_ms": p80,
                "gbps": gbps,
                "ratio_to_torch": torch_ms / median,
            }
        )
        print(f"{label:<24} {dtype:<4} {median:.3f} ms  {gbps:7.0f} GB/s  {torch_ms / median:.3f} of torch", flush=True)

    for dtype, (ctype, width) in TYPES.items():
        n = nbytes // width
        s, d = src.view(f"uint{8 * width}"), dst.view(f"uint{8 * width}")
        one = module.get_function(f"copy_one<{ctype}>")
        narrow = module.get_function(f"copy_narrow16<{ctype}>")
        per = 16 // width
        measure(
            "copy_one",
            "one per thread",
            dtype,
            width,
            width,
            lambda one=one, s=s, d=d, n=n: one(((n + THREADS - 1) // THREADS,), (THREADS,), (s, d, np.uint64(n))),
        )
        measure(
            "copy_narrow16",
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
        "copy_vec16",
        "16 B per thread, vector",
        "u128",
        16,
        16,
        lambda: vec(((n16 + THREADS - 1) // THREADS,), (THREADS,), (src, dst, np.uint64(n16))),
    )
    record = CopyWidth(
        run=finished(run, started), buffer_bytes=nbytes, torch_copy_gbps=torch_gbps, torch_copy_ms=torch_ms, rows=rows
    )
    write(record, args.output, replace=args.rerecord)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
