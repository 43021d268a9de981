"""A kernel reading host data four ways: after a pinned copy, from mapped (zero-copy) memory, from managed memory
touched first on the GPU (page faults), and from managed memory after ``cudaMemPrefetchAsync``; by transfer size.

Usage: PYTHONPATH=src python bench/cuda_memory.py OUTPUT.json

The kernel is the chapter's one-element-per-thread numba copy (``gpukb.cuda.kernels.copy_kernel``) from the source
buffer into a device buffer, so every way moves the same bytes once into the GPU. Pinned: torch
``copy_(non_blocking=True)`` from a ``pin_memory()`` tensor, then the kernel on device memory. Mapped and managed:
``gpukb.cuda.host_memory`` (``cudaHostAlloc(cudaHostAllocMapped)`` + ``cudaHostGetDevicePointer``;
``cudaMallocManaged``, never more than half the GPU's free memory). Managed buffers are rewritten by the CPU before
every sample, so their pages start on the host each time. CUDA events on the default stream time each operation;
every result is compared with the source before it counts.
"""

from __future__ import annotations

import time

from gpukb.cuda.results import HostMemory
from gpukb.measuring.stats import summarize
from gpukb.measuring.timing import EventTimer, Marks
from gpukb.records.script import Script, main

SIZES = (64 * 2**10, 2**20, 16 * 2**20, 256 * 2**20)
#: Steps of the one-thread kernel that keeps the GPU busy while a sample is queued (about a millisecond on an H100).
BLOCKER_ITERS = 300_000


def host_memory(script: Script) -> HostMemory | None:
    import numpy as np
    import torch
    from numba import cuda

    from gpukb.cuda import host_memory
    from gpukb.cuda import kernels as K  # noqa: N812

    torch.zeros(1, device="cuda")  # the primary context, shared by torch, numba and the runtime calls
    free_at_start = int(torch.cuda.mem_get_info()[0])
    script.note(
        "numba copy kernel (one float32 per thread, 256 threads per block) from the source into device memory; "
        "CUDA events on the default stream (gpukb.measuring.timing.Marks); 10 samples (3 for 256 MiB) after one "
        "warm-up; managed buffers rewritten by the CPU before each sample.",
        f"Every sample starts behind a one-thread kernel ({BLOCKER_ITERS} dependent steps of "
        "gpukb.cuda.kernels.iterate_kernel), so its operations are queued before the first event: the times "
        "are the GPU's, without the host's launch overhead (work a call does on the host before it returns, "
        "such as cudaMemPrefetchAsync's, still counts where the blocker has finished by then).",
        f"cudaMemGetInfo free at start: {free_at_start} bytes.",
    )
    rows = []
    blocker_in, blocker_out = cuda.to_device(np.ones(1, np.float32)), cuda.device_array(1, np.float32)

    def block():
        """Keep the GPU busy while the host queues a sample's operations (after a synchronize)."""
        K.iterate_kernel[1, 1](blocker_in, blocker_out, BLOCKER_ITERS)

    print(f"blocker: {EventTimer(torch).time(block, 2)[-1]:.3f} ms", flush=True)

    def sample(*steps) -> Marks:
        """One sample: a mark, then each step followed by a mark, all queued behind the blocker; read after."""
        torch.cuda.synchronize()
        block()
        marks = script.marks()
        marks.mark()
        for step in steps:
            step()
            marks.mark()
        marks.since_first()  # waits for the last mark
        return marks

    def add(method, nbytes, samples, correct):
        ms = summarize(samples)
        rows.append(
            {"method": method, "bytes": nbytes, "samples_ms": samples, "ms": ms, "gbps": nbytes / ms.median / 1e6,
             "correct": bool(correct)}
        )  # fmt: skip
        print(f"{method:<24} {nbytes:>10} B  {ms.median:9.3f} ms  {nbytes / ms.median / 1e6:8.2f} GB/s  ok {correct}")

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
            m = sample(
                lambda dsrc=dsrc, pinned=pinned: dsrc.copy_(pinned, non_blocking=True),
                lambda ddsrc=ddsrc: launch(ddsrc),
            )
            if i:  # the first is a warm-up (and compiles the kernel)
                copy_t.append(m.between(0, 1))
                kernel_t.append(m.between(1, 2))
                both_t.append(m.between(0, 2))
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
                m = sample(lambda device=device: launch(device))
                if i:
                    samples.append(m.between(0, 1))
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
                m = sample(lambda device=device: launch(device))
                fault_ok = fault_ok and torch.equal(dst, ref)
                if i:
                    fault.append(m.between(0, 1))
            add("managed-fault-kernel", nbytes, fault, fault_ok)
            if buf is not None:  # numba's allocator (the fallback) has no prefetch here
                pre, pre_kernel, resident, pre_ok = [], [], [], True
                stream = torch.cuda.current_stream().cuda_stream
                for i in range(repeats + 1):
                    host[:] = x
                    dst.zero_()
                    m = sample(
                        lambda buf=buf, stream=stream: host_memory.prefetch_to_device(buf, 0, stream),
                        lambda device=device: launch(device),
                    )
                    pre_ok = pre_ok and torch.equal(dst, ref)
                    if i:
                        pre.append(m.between(0, 1))
                        resident.append(m.between(1, 2))
                        pre_kernel.append(m.between(0, 2))
                add("managed-prefetch", nbytes, pre, pre_ok)
                add("managed-prefetch-kernel", nbytes, pre_kernel, pre_ok)
                add("managed-resident-kernel", nbytes, resident, pre_ok)
            free()
        except Exception as err:
            print(f"managed {nbytes}: {type(err).__name__}: {err}", flush=True)
        del ref, dst
        torch.cuda.empty_cache()
        print(f"-- {nbytes} B done at {time.perf_counter() - script.started:.1f} s", flush=True)
        # Written after every size, so a run cut short by its time limit still leaves the sizes it finished.
        script.write(HostMemory(run=script.finished(), free_bytes_at_start=free_at_start, apis=apis, rows=rows))
    return None


if __name__ == "__main__":
    raise SystemExit(main(host_memory, __doc__))
