"""The H100's ceilings measured once, interleaved in rounds: the figures every page quotes.

Usage: PYTHONPATH=src python bench/performance_ceilings.py OUTPUT.json [--rounds 7]

Each round times every item once, in an order that rotates from round to round, so each item meets the same
range of clocks and temperatures and no item always runs first:

- torch's ``Tensor.copy_`` of 256 MiB and of 1 GiB (uint8, device to device; bandwidth counts bytes read plus
  written);
- the CUDA chapter's one-element-per-thread copy kernel (``bench/cuda_copy_width.py``'s ``copy_one``, compiled by
  cupy's NVRTC) on 256 MiB as u16 and as u32 elements: the u16/u32 ratio;
- cuBLAS dense products (``torch.mm``) in fp16 and in bf16, fp32 accumulation, at 4096×4096×8192 and
  4096×4096×12288, the shapes where the performance sweep found its best fp16 and bf16 rates.

Every call is timed with ``gpukb.measuring.timing`` (CUDA events, the L2 flushed by a read before each call, SM
clock and power sampled); inputs are random, never zero. The pages quote the median of the rounds' medians with
the lowest and highest round (``gpukb.performance.quantities``).
"""

from __future__ import annotations

import argparse

from cuda_copy_width import SOURCE, THREADS  # the CUDA chapter's copy kernels (this script's folder)
from gpukb.measuring.counting import copy_bytes, gemm_flops
from gpukb.measuring.timing import Budget
from gpukb.performance.results import CEILING_ITEMS, CeilingsRecord
from gpukb.records.script import Script, main

BUDGET = Budget(warmup_ms=25.0, rep_ms=150.0, min_reps=10, max_reps=300)


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=7, help="rounds; every item is timed once per round (7)")


def ceilings(script: Script) -> CeilingsRecord:
    import cupy
    import numpy as np
    import torch

    rounds = script.args.rounds
    if rounds < 2:
        raise ValueError(f"--rounds must be at least 2 (a spread needs rounds); got {rounds}")
    script.note(
        f"{rounds} rounds; each item timed once per round, the order rotated by one item each round; "
        f"gpukb.measuring.timing with CUDA events, the L2 flushed by a read before every call, {BUDGET.warmup_ms:g} ms "
        f"of warm-up and about {BUDGET.rep_ms:g} ms of calls per item and round; random inputs.",
        "copy: torch Tensor.copy_ on uint8 tensors; GB/s = 2 x bytes / median time.",
        f"copy-one-per-thread: copy_one<T> of bench/cuda_copy_width.py, {THREADS} threads per block, 256 MiB.",
        "gemm: torch.mm, fp16/bf16 inputs and output, cuBLAS's default fp32 accumulation; TFLOP/s = 2mnk / median.",
    )
    work: dict[str, tuple] = {}  # item -> (function, work per call, unit divisor)
    for item, nbytes in (("copy-256mib", 2**28), ("copy-1gib", 2**30)):
        src = torch.randint(1, 255, (nbytes,), dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        work[item] = (lambda s=src, d=dst: d.copy_(s), copy_bytes(nbytes), 1e6)

    module = cupy.RawModule(
        code=SOURCE, options=("-std=c++17",), name_expressions=["copy_one<unsigned short>", "copy_one<unsigned int>"]
    )
    nbytes = 2**28
    rng = np.random.default_rng(0)
    csrc = cupy.asarray(rng.integers(1, 255, nbytes, dtype=np.uint8))
    cdst = cupy.zeros(nbytes, dtype=cupy.uint8)
    for item, ctype, width in (
        ("copy-one-per-thread-u16", "unsigned short", 2),
        ("copy-one-per-thread-u32", "unsigned int", 4),
    ):
        kernel = module.get_function(f"copy_one<{ctype}>")
        n = nbytes // width
        s, d = csrc.view(f"uint{8 * width}"), cdst.view(f"uint{8 * width}")

        def launch(kernel=kernel, s=s, d=d, n=n):
            kernel(((n + THREADS - 1) // THREADS,), (THREADS,), (s, d, np.uint64(n)))

        cdst.fill(0)
        launch()
        cupy.cuda.Device().synchronize()
        if not bool((cdst == csrc).all()):
            raise RuntimeError(f"{item}: the kernel's copy differs from its source")
        work[item] = (launch, copy_bytes(nbytes), 1e6)

    gen = torch.Generator(device="cuda").manual_seed(0)
    for dtype_name, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
        for m, n, k in ((4096, 4096, 8192), (4096, 4096, 12288)):
            a = torch.randn(m, k, device="cuda", dtype=dtype, generator=gen)
            b = torch.randn(k, n, device="cuda", dtype=dtype, generator=gen)
            out = torch.mm(a, b)
            ref = torch.mm(a.float(), b.float())
            error = float((out.float() - ref).norm() / ref.norm())
            if not error < 1e-2:
                raise RuntimeError(f"gemm {dtype_name} {m}x{n}x{k}: relative error {error} against fp32")
            work[f"gemm-{dtype_name}-{m}x{n}x{k}"] = (lambda a=a, b=b: torch.mm(a, b), gemm_flops(m, n, k), 1e9)
    if sorted(work) != sorted(CEILING_ITEMS):
        raise RuntimeError(f"measured items {sorted(work)} are not the record's {sorted(CEILING_ITEMS)}")

    timings = []
    order = list(CEILING_ITEMS)
    for r in range(rounds):
        turn = order[r % len(order) :] + order[: r % len(order)]
        for position, item in enumerate(turn):
            fn, amount, divisor = work[item]
            timed = script.measure(fn, BUDGET)
            ms = timed.summary()
            rate = amount / ms.median / divisor  # per ms: GB/s from bytes/1e6, TFLOP/s from FLOP/1e9
            timings.append(
                {"item": item, "round": r, "position": position, "ms": ms, "rate": rate, "clocks": timed.window}
            )
            sm = getattr(timed.window, "sm_mhz_median", None)
            print(f"round {r} {item:<28} {ms.median:8.4f} ms {rate:9.1f}  spread {ms.spread:.3f}  sm {sm}", flush=True)
    return CeilingsRecord(run=script.finished(), rounds=rounds, timings=timings)


if __name__ == "__main__":
    raise SystemExit(main(ceilings, __doc__, arguments))
