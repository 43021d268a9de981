"""A kernel reading host data four ways: after a pinned copy, from mapped (zero-copy) memory, from managed memory
touched first on the GPU (page faults), and from managed memory after ``cudaMemPrefetchAsync``; by transfer size.

Usage: PYTHONPATH=src python bench/cuda_memory.py OUTPUT.json [--rerecord]

The kernel is the chapter's one-element-per-thread numba copy (``gpukb.cuda.kernels.copy_kernel``) from the source
buffer into a device buffer, so every way moves the same bytes once into the GPU. Pinned: torch
``copy_(non_blocking=True)`` from a ``pin_memory()`` tensor, then the kernel on device memory. Mapped and managed:
``gpukb.cuda.host_memory`` (``cudaHostAlloc(cudaHostAllocMapped)`` + ``cudaHostGetDevicePointer``;
``cudaMallocManaged``, never more than half the GPU's free memory). Managed buffers are rewritten by the CPU before
every sample, so their pages start on the host each time. CUDA events on the default stream time each operation;
every result is compared with the source before it counts.
"""

from __future__ import annotations

import argparse
import statistics
import time

SIZES = (64 * 2**10, 2**20, 16 * 2**20, 256 * 2**20)
#: Steps of the one-thread kernel that keeps the GPU busy while a sample is queued (about a millisecond on an H100).
BLOCKER_ITERS = 300_000


def main() -> int:
    from gpukb.records import rerecord_option

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", help="write the results here (a cuda.host-memory record, JSON)")
    rerecord_option(parser)
    args = parser.parse_args()

    import numpy as np
    import torch
    from numba import cuda

    from gpukb.cuda import host_memory
    from gpukb.cuda import kernels as K  # noqa: N812
    from gpukb.cuda.results import HostMemory
    from gpukb.records import describe_run, finished, write

    torch.zeros(1, device="cuda")  # the primary context, shared by torch, numba and the runtime calls
    started = time.perf_counter()
    free_at_start = int(torch.cuda.mem_get_info()[0])
    run = describe_run(
        notes=[
            "numba copy kernel (one float32 per thread, 256 threads per block) from the source into device memory; "
            "CUDA events on the default stream; median of 10 samples (3 for 256 MiB) after one warm-up; managed "
            "buffers rewritten by the CPU before each sample.",
            f"Every sample starts behind a one-thread kernel ({BLOCKER_ITERS} dependent steps of "
            "gpukb.cuda.kernels.iterate_kernel), so its operations are queued before the first event: the times "
            "are the GPU's, without the host's launch overhead (work a call does on the host before it returns, "
            "such as cudaMemPrefetchAsync's, still counts where the blocker has finished by then).",
            f"cudaMemGetInfo free at start: {free_at_start} bytes.",
        ]
    )
    rows = []
    replace = args.rerecord  # after the first size, each write replaces this run's own partial record

    def event():
        return torch.cuda.Event(enable_timing=True)

    blocker_in, blocker_out = cuda.to_device(np.ones(1, np.float32)), cuda.device_array(1, np.float32)

    def block():
        """Keep the GPU busy while the host queues a sample's operations (after a synchronize)."""
        K.iterate_kernel[1, 1](blocker_in, blocker_out, BLOCKER_ITERS)

    for _ in range(2):
        torch.cuda.synchronize()
        b0, b1 = event(), event()
        b0.record()
        block()
        b1.record()
        b1.synchronize()
    print(f"blocker: {b0.elapsed_time(b1):.3f} ms", flush=True)

    def add(method, nbytes, samples, correct):
        median = statistics.median(samples)
        rows.append(
            {
                "method": method,
                "bytes": nbytes,
                "samples_ms": samples,
                "median_ms": median,
                "gbps": nbytes / median / 1e6,
                "correct": bool(correct),
            }
        )
        print(f"{method:<24} {nbytes:>10} B  {median:9.3f} ms  {nbytes / median / 1e6:8.2f} GB/s  ok {correct}")

    apis: dict[str, str] = {}

    def allocate(kind, n):
        """(host view, what a kernel reads, free, buffer for prefetching or None): through cuda.bindings.runtime,
        or numba's own allocators if that fails (the record says which)."""
        try:
            buf = host_memory.mapped(n) if kind == "mapped" else host_memory.managed(n)
            apis[kind] = (
                "cudaHostAlloc(cudaHostAllocMapped) + cudaHostGetDevicePointer (cuda.bindings.runtime)"
                if kind == "mapped"
                else "cudaMallocManaged + cudaMemPrefetchAsync (cuda.bindings.runtime)"
            )
            return buf.host, buf.device, buf.free, buf
        except Exception as err:
            print(f"{kind} through cuda.bindings failed: {type(err).__name__}: {err}; using numba", flush=True)
            if kind == "managed":
                host_memory.check_managed_size(4 * n, torch.cuda.mem_get_info()[0])
            arr = cuda.mapped_array(n, np.float32) if kind == "mapped" else cuda.managed_array(n, np.float32)
            apis[kind] = f"numba.cuda.{kind}_array"
            return arr, arr, lambda: None, None

    rng = np.random.default_rng(0)
    for nbytes in SIZES:
        n = nbytes // 4
        repeats = 3 if nbytes >= 2**28 else 10
        x = (rng.random(n, dtype=np.float32) + 0.5).astype(np.float32)
        ref = torch.from_numpy(x).cuda()
        dst = torch.empty(n, device="cuda")
        ddst = cuda.as_cuda_array(dst)
        grid = K.blocks(n)

        def launch(src, grid=grid, ddst=ddst):
            K.copy_kernel[grid, K.THREADS](src, ddst)

        # Pinned host memory, explicit copy, then the kernel on device memory.
        pinned = torch.from_numpy(x).pin_memory()
        dsrc = torch.empty(n, device="cuda")
        ddsrc = cuda.as_cuda_array(dsrc)  # outside the timed window: it may synchronize
        copy_t, both_t, kernel_t = [], [], []
        for i in range(repeats + 1):
            dst.zero_()
            torch.cuda.synchronize()
            block()
            e0, e1, e2 = event(), event(), event()
            e0.record()
            dsrc.copy_(pinned, non_blocking=True)
            e1.record()
            launch(ddsrc)
            e2.record()
            e2.synchronize()
            if i:  # the first is a warm-up (and compiles the kernel)
                copy_t.append(e0.elapsed_time(e1))
                kernel_t.append(e1.elapsed_time(e2))
                both_t.append(e0.elapsed_time(e2))
        ok = torch.equal(dst, ref)
        add("pinned-copy", nbytes, copy_t, ok)
        add("pinned-copy-kernel", nbytes, both_t, ok)
        add("device-kernel", nbytes, kernel_t, ok)
        del pinned, dsrc, ddsrc

        # Mapped (zero-copy): the kernel reads host memory over the bus.
        try:
            host, device, free, _ = allocate("mapped", n)
            host[:] = x
            samples = []
            for i in range(repeats + 1):
                dst.zero_()
                torch.cuda.synchronize()
                block()
                e0, e1 = event(), event()
                e0.record()
                launch(device)
                e1.record()
                e1.synchronize()
                if i:
                    samples.append(e0.elapsed_time(e1))
            add("mapped-kernel", nbytes, samples, torch.equal(dst, ref))
            free()
        except Exception as err:  # the record says which way failed; the others still count
            print(f"mapped {nbytes}: {type(err).__name__}: {err}", flush=True)

        # Managed: first touch on the GPU (page faults), then prefetched before the kernel.
        try:
            host, device, free, buf = allocate("managed", n)
            fault, fault_ok = [], True
            for i in range(repeats + 1):
                host[:] = x  # the CPU writes: every page is on the host now
                dst.zero_()
                torch.cuda.synchronize()
                block()
                e0, e1 = event(), event()
                e0.record()
                launch(device)
                e1.record()
                e1.synchronize()
                fault_ok = fault_ok and torch.equal(dst, ref)
                if i:
                    fault.append(e0.elapsed_time(e1))
            add("managed-fault-kernel", nbytes, fault, fault_ok)
            if buf is not None:  # numba's allocator (the fallback) has no prefetch here
                pre, pre_kernel, resident, pre_ok = [], [], [], True
                for i in range(repeats + 1):
                    host[:] = x
                    dst.zero_()
                    torch.cuda.synchronize()
                    block()
                    e0, e1, e2 = event(), event(), event()
                    e0.record()
                    host_memory.prefetch_to_device(buf, 0, torch.cuda.current_stream().cuda_stream)
                    e1.record()
                    launch(device)
                    e2.record()
                    e2.synchronize()
                    pre_ok = pre_ok and torch.equal(dst, ref)
                    if i:
                        pre.append(e0.elapsed_time(e1))
                        resident.append(e1.elapsed_time(e2))
                        pre_kernel.append(e0.elapsed_time(e2))
                add("managed-prefetch", nbytes, pre, pre_ok)
                add("managed-prefetch-kernel", nbytes, pre_kernel, pre_ok)
                add("managed-resident-kernel", nbytes, resident, pre_ok)
            free()
        except Exception as err:
            print(f"managed {nbytes}: {type(err).__name__}: {err}", flush=True)
        del ref, dst
        torch.cuda.empty_cache()
        print(f"-- {nbytes} B done at {time.perf_counter() - started:.1f} s", flush=True)
        # Written after every size, so a run cut short by its time limit still leaves the sizes it finished.
        write(
            HostMemory(run=finished(run, started), free_bytes_at_start=free_at_start, apis=apis, rows=rows),
            args.output,
            replace=replace,
        )
        replace = True
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
