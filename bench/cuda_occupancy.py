"""The occupancy calculator against the CUDA driver on real kernels, and Triton's shared-memory limit.

Usage: PYTHONPATH=src python bench/cuda_occupancy.py OUTPUT.json

Compiles one probe kernel (CUDA C through cupy's NVRTC) in many variants: a register cap (``--maxrregcount``) or
``__launch_bounds__``, a live-value count that sets its natural register use, and a static shared array. Each
variant's attributes (numRegs, sharedSizeBytes, maxThreadsPerBlock) come from the driver; its dynamic shared
memory limit is raised to the device's opt-in maximum. For every block size and dynamic shared memory size of a
grid, the driver's ``cuOccupancyMaxActiveBlocksPerMultiprocessor`` answer is recorded next to
``gpukb.cuda.occupancy.occupancy``'s. Then a Triton matmul whose pipeline needs more shared memory than a block may
have is compiled, and the limit its ``OutOfResources`` error names is recorded with ``sharedMemPerBlockOptin``.
"""

from __future__ import annotations

# ruff: noqa: N803  (Triton names compile-time block sizes in capitals)
from gpukb.cuda.occupancy import occupancy
from gpukb.cuda.results import OccupancyCheck
from gpukb.records.script import Script, main

PROBE = r"""
#ifndef STATIC_BYTES
#define STATIC_BYTES 0
#endif
extern "C" __global__ void LAUNCH_BOUNDS probe(const float* __restrict__ in, float* __restrict__ out, int n) {
#if STATIC_BYTES > 0
    __shared__ float tile[STATIC_BYTES / 4];
#endif
    extern __shared__ float dyn[];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float v[LIVE];
#pragma unroll
    for (int i = 0; i < LIVE; ++i) v[i] = in[(t + i * 977) % n];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int i = 0; i < LIVE; ++i) v[i] = fmaf(v[i], v[(i + 1) % LIVE], v[(i + 5) % LIVE]);
    }
    float acc = 0.f;
#pragma unroll
    for (int i = 0; i < LIVE; ++i) acc += v[i] * (float)(i + 1);
#if STATIC_BYTES > 0
    tile[threadIdx.x % (STATIC_BYTES / 4)] = acc;
    __syncthreads();
    acc += tile[(threadIdx.x + 1) % (STATIC_BYTES / 4)];
#endif
    if (n < 0) dyn[threadIdx.x] = acc;
    out[t] = acc;
}
"""

#: (live values, --maxrregcount, __launch_bounds__) of the probe variants.
REGISTER_VARIANTS = [
    (4, None, None),
    (16, None, None),
    (48, None, None),
    *[(128, cap, None) for cap in (24, 32, 40, 48, 64, 72, 96, 128, 168, 255)],
    (128, None, (256, 4)),
    (128, None, (640, 1)),
    (128, None, (1024, 1)),
]
STATIC_SIZES = (0, 12288, 49152)
BLOCK_SIZES = (32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024)


def compile_variants(cupy, optin: int):
    kernels = []
    for live, cap, bounds in REGISTER_VARIANTS:
        for static in STATIC_SIZES:
            if bounds is not None and static not in (0, 12288):
                continue
            lb = f"__launch_bounds__({bounds[0]}, {bounds[1]})" if bounds else ""
            source = f"#define LIVE {live}\n#define STATIC_BYTES {static}\n#define LAUNCH_BOUNDS {lb}\n" + PROBE
            options = ("-std=c++17",) + ((f"--maxrregcount={cap}",) if cap else ())
            try:
                kernel = cupy.RawModule(code=source, options=options).get_function("probe")
                attrs = kernel.attributes
                kernel.max_dynamic_shared_size_bytes = optin - attrs["shared_size_bytes"]
                attrs = kernel.attributes
            except Exception as err:  # report and go on: one variant must not lose the others
                print(f"variant live={live} cap={cap} bounds={bounds} static={static} failed: {err!r}", flush=True)
                continue
            name = f"live{live}" + (f"-maxrreg{cap}" if cap else "") + (f"-lb{bounds[0]}x{bounds[1]}" if bounds else "")
            name += f"-static{static}"
            kernels.append((name, live, cap, bounds, static, kernel, attrs))
            print(
                f"{name:<32} regs {attrs['num_regs']:>3}  static {attrs['shared_size_bytes']:>6}  local "
                f"{attrs['local_size_bytes']:>4}  maxThreads {attrs['max_threads_per_block']}",
                flush=True,
            )
    return kernels


def active_blocks(cupy, kernel, threads: int, dynamic: int) -> int:
    """The driver's answer, through cupy's binding (or cuda-bindings' where cupy lacks it)."""
    ptr = kernel.kernel.ptr if hasattr(kernel, "kernel") else kernel.ptr
    query = getattr(cupy.cuda.driver, "occupancyMaxActiveBlocksPerMultiprocessor", None)
    if query is not None:
        return int(query(ptr, threads, dynamic))
    from cuda.bindings import driver

    err, blocks = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(driver.CUfunction(ptr), threads, dynamic)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuOccupancyMaxActiveBlocksPerMultiprocessor: {err}")
    return int(blocks)


def triton_limit(optin: int):
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pm, pn = tl.program_id(0), tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
            y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(x, y)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))

    n = 1024
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    c = torch.empty(n, n, device="cuda", dtype=torch.float16)
    config = dict(BM=256, BN=256, BK=128, num_stages=4, num_warps=8)
    try:
        matmul[(n // 256, n // 256)](a, b, c, n, n, n, **config)
        torch.cuda.synchronize()
    except Exception as err:  # triton.runtime.errors.OutOfResources
        required, limit = getattr(err, "required", None), getattr(err, "limit", None)
        print(f"triton: {type(err).__name__}: {err}", flush=True)
        if required is None or limit is None:
            return None
        return {
            "required": int(required),
            "limit": int(limit),
            "message": str(err),
            "shared_mem_per_block_optin": optin,
            "kernel": "fp16 matmul, " + ", ".join(f"{k}={v}" for k, v in config.items()),
        }
    print("triton: the kernel compiled and ran; no limit to record", flush=True)
    return None


def occupancy_check(script: Script) -> OccupancyCheck:
    import cupy

    script.note(
        "Probe kernel compiled by cupy's NVRTC with --maxrregcount or __launch_bounds__ and a static shared array; "
        "cudaFuncAttributeMaxDynamicSharedMemorySize raised to sharedMemPerBlockOptin - sharedSizeBytes on every "
        "variant; default carveout preference; occupancy from cuOccupancyMaxActiveBlocksPerMultiprocessor "
        "(cupy.cuda.driver).",
    )
    device = cupy.cuda.Device(0)
    props = cupy.cuda.runtime.getDeviceProperties(0)
    cc = f"{props['major']}.{props['minor']}"
    optin = props["sharedMemPerBlockOptin"]
    kernels = compile_variants(cupy, optin)

    records, rows = [], []
    agree = 0
    for index, (name, _live, cap, bounds, static, kernel, attrs) in enumerate(kernels):
        records.append(
            {
                "name": name,
                "maxrregcount": cap,
                "launch_bounds": bounds[0] if bounds else None,
                "static_smem_request": static,
                "num_regs": attrs["num_regs"],
                "shared_size_bytes": attrs["shared_size_bytes"],
                "local_size_bytes": attrs["local_size_bytes"],
                "max_threads_per_block": attrs["max_threads_per_block"],
                "max_dynamic_shared_size_bytes": attrs["max_dynamic_shared_size_bytes"],
            }
        )
        allowed = optin - attrs["shared_size_bytes"]
        for threads in BLOCK_SIZES:
            for dyn in sorted({0, 4096, 30000, 80000, allowed, allowed + 128}):
                error = None
                try:
                    got = active_blocks(cupy, kernel, threads, dyn)
                except Exception as err:  # the driver refuses the configuration
                    got, error = 0, f"{type(err).__name__}: {err}"
                try:
                    ours = occupancy(
                        cc,
                        threads,
                        attrs["num_regs"],
                        attrs["shared_size_bytes"],
                        dyn,
                        kernel_max_threads=attrs["max_threads_per_block"],
                    )
                    mine, limit = ours.active_blocks, ", ".join(ours.limiting)
                except ValueError as err:
                    mine, limit = None, f"ValueError: {err}"
                agree += (mine or 0) == got
                rows.append(
                    {
                        "kernel": index,
                        "block_size": threads,
                        "dynamic_smem": dyn,
                        "runtime_blocks": got,
                        "runtime_error": error,
                        "calculator_blocks": mine,
                        "calculator_limit": limit,
                    }
                )
    print(f"{len(rows)} configurations, {agree} agree, {len(rows) - agree} differ", flush=True)
    for row in rows:
        if (row["calculator_blocks"] or 0) != row["runtime_blocks"]:
            k = records[row["kernel"]]
            print(
                f"DIFF {k['name']} regs={k['num_regs']} static={k['shared_size_bytes']} bs={row['block_size']} "
                f"dyn={row['dynamic_smem']}: driver {row['runtime_blocks']} ({row['runtime_error']}), "
                f"calculator {row['calculator_blocks']} ({row['calculator_limit']})",
                flush=True,
            )
    del device
    triton = triton_limit(optin)
    return OccupancyCheck(
        run=script.finished(),
        api="cuOccupancyMaxActiveBlocksPerMultiprocessor (cupy.cuda.driver)",
        compute_capability=cc,
        kernels=records,
        rows=rows,
        triton=triton,
    )


if __name__ == "__main__":
    raise SystemExit(main(occupancy_check, __doc__))
