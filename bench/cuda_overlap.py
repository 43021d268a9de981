"""Copy in, compute, copy out: one buffer processed whole on one stream, in chunks on one stream, and in chunks on
several streams, with every operation's start and end taken from CUDA events.

Usage: PYTHONPATH=src python bench/cuda_overlap.py OUTPUT.json [--log2n 25] [--chunks 8]

Host buffers are pinned (``pin_memory()``), so ``copy_(non_blocking=True)`` is a ``cudaMemcpyAsync`` on the current
stream. The kernel is ``gpukb.cuda.kernels.iterate_kernel``, its iteration count calibrated at the start so that one
chunk's kernel lasts about as long as one chunk's host-to-device copy. Each variant starts from one event on the
default stream that every stream waits for; an event before and after each operation on its stream gives its
start and end, in ms after that start event. Each variant runs 5 times after a warm-up; the record keeps every
total and the operations of the run with the median total. Results are checked on a sample of elements.
"""

from __future__ import annotations

import argparse
import statistics

from gpukb.cuda.results import Overlap
from gpukb.measuring.stats import summarize
from gpukb.records.script import Script, main

REPEATS = 5


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log2n", type=int, default=25, help="float32 elements of the buffer, as a power of two")
    parser.add_argument("--chunks", type=int, default=8, help="chunks of the chunked variants")


def overlap(script: Script) -> Overlap:
    import numpy as np
    import torch
    from numba import cuda

    from gpukb.cuda import kernels as K  # noqa: N812

    torch.zeros(1, device="cuda")
    n, chunks = 2**script.args.log2n, script.args.chunks
    script.note(
        f"2^{script.args.log2n} float32 ({4 * n} bytes), pinned host buffers; {chunks} chunks in the chunked "
        "variants; torch streams (non-blocking) and copy_(non_blocking=True); numba kernel on the same streams; "
        f"{REPEATS} runs per variant after a warm-up; CUDA events (gpukb.measuring.timing.Marks).",
    )
    rng = np.random.default_rng(0)
    x = (rng.random(n, dtype=np.float32) + 0.5).astype(np.float32)
    h_in = torch.from_numpy(x).pin_memory()
    h_out = torch.empty(n).pin_memory()
    d_in, d_out = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")
    nd_in, nd_out = cuda.as_cuda_array(d_in), cuda.as_cuda_array(d_out)

    # Calibrate: one chunk's copy in, and the kernel at 512 iterations on one chunk.
    size = n // chunks
    side = torch.cuda.Stream()
    nside = cuda.external_stream(side.cuda_stream)

    def timed(fn, times=5):
        """Median of ``times`` calls on the side stream (CUDA events there), after one more."""
        with torch.cuda.stream(side):
            return statistics.median(script.timer().time(fn, times + 1)[1:])

    grid = K.blocks(size)
    d_first, h_first, nd_first, nd_first_out = d_in[:size], h_in[:size], nd_in[:size], nd_out[:size]
    h2d_chunk = timed(lambda: d_first.copy_(h_first, non_blocking=True))
    probe = timed(lambda: K.iterate_kernel[grid, K.THREADS, nside](nd_first, nd_first_out, 512))
    iters = int(min(20000, max(1, round(512 * h2d_chunk / probe))))
    kernel_chunk = timed(lambda: K.iterate_kernel[grid, K.THREADS, nside](nd_first, nd_first_out, iters))
    print(
        f"calibration: H2D of {4 * size} B {h2d_chunk:.3f} ms; kernel at 512 iterations {probe:.3f} ms; "
        f"{iters} iterations -> {kernel_chunk:.3f} ms",
        flush=True,
    )
    sample = np.sort(rng.choice(n, 4096, replace=False))
    want = K.iterate_reference(x[sample], iters)

    variants = []
    for name, nstreams, nchunks in (
        ("whole buffer, one stream", 1, 1),
        (f"{chunks} chunks, one stream", 1, chunks),
        (f"{chunks} chunks, two streams", 2, chunks),
        (f"{chunks} chunks, four streams", 4, chunks),
    ):
        streams = [torch.cuda.Stream() for _ in range(nstreams)]
        nstreams_numba = [cuda.external_stream(s.cuda_stream) for s in streams]
        step = n // nchunks
        pieces = [
            (slice(c * step, (c + 1) * step), nd_in[c * step : (c + 1) * step], nd_out[c * step : (c + 1) * step])
            for c in range(nchunks)
        ]
        blocks = K.blocks(step)
        runs = []
        for repeat in range(REPEATS + 1):
            h_out.zero_()
            torch.cuda.synchronize()
            marks = script.marks()
            start = marks.mark()  # the common start: every stream waits for it
            for s in streams:
                s.wait_event(marks.events[start])
            chunk_marks = []
            for c, (sl, src, dst) in enumerate(pieces):
                s, ns = streams[c % nstreams], nstreams_numba[c % nstreams]
                with torch.cuda.stream(s):
                    m0 = marks.mark(s)
                    d_in[sl].copy_(h_in[sl], non_blocking=True)
                    m1 = marks.mark(s)
                    K.iterate_kernel[blocks, K.THREADS, ns](src, dst, iters)
                    m2 = marks.mark(s)
                    h_out[sl].copy_(d_out[sl], non_blocking=True)
                    m3 = marks.mark(s)
                chunk_marks.append((m0, m1, m2, m3))
            t_all = marks.since_first()
            ops = []
            for c, m in enumerate(chunk_marks):
                t = [t_all[i] for i in m]
                for op, (a, b) in zip(
                    ("H2D", "kernel", "D2H"), ((t[0], t[1]), (t[1], t[2]), (t[2], t[3])), strict=True
                ):
                    ops.append(
                        {"op": op, "chunk": c, "stream": c % nstreams, "start_ms": max(0.0, a), "end_ms": max(0.0, b)}
                    )
            total = max(o["end_ms"] for o in ops)
            got = h_out.numpy()[sample]
            ok = bool(np.allclose(got, want, rtol=1e-3, atol=1e-4))
            if repeat:
                runs.append((total, ops, ok))
        totals = [r[0] for r in runs]
        median_run = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
        variants.append(
            {
                "name": name,
                "streams": nstreams,
                "chunks": nchunks,
                "totals_ms": totals,
                "ms": summarize(totals),
                "ops": median_run[1],
                "correct": all(r[2] for r in runs),
            }
        )
        print(
            f"{name:<28} median total {statistics.median(totals):7.3f} ms  "
            f"(runs {', '.join(f'{t:.3f}' for t in totals)})  correct {all(r[2] for r in runs)}",
            flush=True,
        )
        for o in median_run[1][: 3 * min(nchunks, 3)]:
            print(
                f"   {o['op']:<6} chunk {o['chunk']} stream {o['stream']}  {o['start_ms']:7.3f} .. {o['end_ms']:7.3f}"
            )

    engines = torch.cuda.get_device_properties(0)
    async_engines = int(getattr(engines, "async_engine_count", 0) or 0)
    try:
        from cuda.bindings import runtime

        err, value = runtime.cudaDeviceGetAttribute(runtime.cudaDeviceAttr.cudaDevAttrAsyncEngineCount, 0)
        if err == runtime.cudaError_t.cudaSuccess:
            async_engines = int(value)
    except Exception as err:  # the record then has torch's figure, or 0
        print(f"asyncEngineCount: {type(err).__name__}: {err}")
    return Overlap(
        run=script.finished(),
        total_bytes=4 * n,
        kernel=f"gpukb.cuda.kernels.iterate_kernel, {iters} iterations per element, {K.THREADS} threads per block",
        kernel_iters=iters,
        async_engine_count=async_engines,
        variants=variants,
    )


if __name__ == "__main__":
    raise SystemExit(main(overlap, __doc__, arguments))
