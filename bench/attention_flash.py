"""The Triton flash-attention forward kernel against every SDPA backend, on one GPU, in one run.

Run from the repository root on a machine with a Hopper GPU::

    python bench/attention_flash.py src/gpukb/data/results/attention/flash-forward-h100.json

Two phases:

* ``tune``: each candidate tiling (``CANDIDATES``) for head dims 128 and 64, causal and not, on the tuning shape
  (batch 4, 32 heads, 4096 tokens, bf16); the fastest per (head_dim, causal) is chosen.
* ``cases``: the standard shape (B=4, H=32, S=4096, D=128) and a sweep of S = 512 … 16384 at D = 64 and 128
  with batch × S = 16384 tokens and heads × D = 2048 (the FlashAttention-2 paper's benchmark shapes), causal and
  not: the kernel with the chosen tiling, then SDPA forced to each backend with ``torch.nn.attention.sdpa_kernel``;
  every output is compared with the kernel's.

Timing: ``gpukb.measuring.timing.benchmark`` with CUDA events around each call, the L2 cache flushed (untimed, by a
read) before every call, random normal bf16 inputs. Kernel and backends are timed in two rounds, kernel first and
then kernel last, and the samples of both rounds are summarized together, so that a clock that drifts as the GPU
warms is shared. Rates use ``gpukb.measuring.counting.attention_flops`` (a causal mask keeps i + 1 keys for query i).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path
from typing import Any

try:
    import gpukb  # noqa: F401
except ImportError:  # a checkout on a machine where gpukb is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from gpukb.measuring.counting import attention_flops
from gpukb.measuring.stats import summarize
from gpukb.measuring.timing import Budget, EventTimer, L2Flusher, benchmark
from gpukb.records.script import Script, main

#: Candidate tilings (block_m, block_n, num_warps, num_stages, tma) by head dim: the pointer kernel's two best of an
#: earlier run, and the TMA kernel's tilings that compiled for sm_90a without spilling registers.
CANDIDATES = {
    128: [(128, 64, 8, 3, False), (128, 64, 8, 4, False), (128, 64, 8, 3, True), (128, 64, 8, 4, True),
          (128, 128, 8, 2, True), (128, 128, 8, 3, True), (64, 64, 4, 3, True), (64, 64, 4, 2, True)],
    64: [(128, 64, 8, 3, False), (64, 64, 4, 3, False), (128, 64, 8, 3, True), (128, 64, 8, 2, True),
         (128, 64, 8, 4, True), (128, 128, 8, 2, True), (128, 128, 8, 3, True), (64, 64, 4, 3, True)],
}  # fmt: skip
TUNING = (4, 32, 4096)
STANDARD = (4, 32, 4096, 128)
SWEEP_SEQS = (512, 1024, 2048, 4096, 8192, 16384)
TOKENS, WIDTH = 16384, 2048
BUDGET = Budget(warmup_ms=10.0, rep_ms=40.0, min_reps=5, max_reps=50)
TUNE_BUDGET = Budget(warmup_ms=5.0, rep_ms=25.0, min_reps=5, max_reps=30)


def first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"[:300]


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--head-dims", default="128,64", help="head dims to tune and sweep")
    parser.add_argument("--no-tune", action="store_true", help="use the code's DEFAULT_CONFIGS, skip tuning")


def flash(script: Script) -> None:
    args = script.args
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from gpukb.attention import kernel as fa
    from gpukb.attention.results import BACKENDS, Candidate, Case, FlashForward, Timing
    from gpukb.numerics import relative_error

    timing_note = (
        "CUDA events around each call, L2 flushed by a read before every call, two rounds (kernel first, then "
        f"kernel last) of {BUDGET.min_reps}-{BUDGET.max_reps} calls after {BUDGET.warmup_ms:.0f} ms of warm-up; "
        "medians of all samples."
    )
    script.note(timing_note)
    run = script.run
    print(f"{run.gpu.name if run.gpu else 'no GPU'}, torch {torch.__version__}", flush=True)
    timer = EventTimer(torch)
    flush = L2Flusher(torch, torch.cuda.get_device_properties(0).L2_cache_size)
    kinds = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
             "cudnn": SDPBackend.CUDNN_ATTENTION}  # fmt: skip
    head_dims = [int(d) for d in args.head_dims.split(",")]

    def inputs(b: int, h: int, s: int, d: int) -> tuple[Any, Any, Any]:
        gen = torch.Generator(device="cuda").manual_seed(b * 7 + h * 11 + s * 13 + d)
        return tuple(torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, generator=gen) for _ in "qkv")

    def timed(fn, budget=BUDGET) -> list[float]:
        return benchmark(fn, timer, budget, before=flush).samples

    # --- tune ---
    candidates: list[Candidate] = []
    chosen: dict[tuple[int, bool], fa.FlashConfig] = {}
    for d in head_dims:
        q, k, v = inputs(*TUNING, d)
        for causal in (False, True):
            flops = attention_flops(*TUNING[:2], TUNING[2], TUNING[2], d, causal)
            best = None
            configs = [] if args.no_tune else CANDIDATES[d]
            for bm, bn, w, st, tma in configs:
                cfg = fa.FlashConfig(bm, bn, w, st, tma)
                row: dict[str, Any] = {"head_dim": d, "causal": causal, "config": cfg.label, "block_m": bm,
                                       "block_n": bn, "num_warps": w, "num_stages": st, "tma": tma}  # fmt: skip
                try:
                    out = fa.flash_attention(q, k, v, causal=causal, config=cfg)
                    kern = fa.LAST["kernel"]
                    row["registers"], row["spills"] = int(kern.n_regs), int(kern.n_spills)
                    ref = sdpa(q[:1], k[:1], v[:1], is_causal=causal)
                    diff = relative_error(out[:1].float(), ref.float())
                    if not diff < 2e-2:
                        raise AssertionError(f"output differs from SDPA by {diff:.3g}")

                    def call(q=q, k=k, v=v, causal=causal, cfg=cfg):
                        return fa.flash_attention(q, k, v, causal=causal, config=cfg)

                    ms = summarize(timed(call, TUNE_BUDGET)).median
                    row["tflops"] = flops / (ms * 1e-3) / 1e12
                    if best is None or row["tflops"] > best[0]:
                        best = (row["tflops"], cfg)
                except Exception as err:  # a tiling that does not fit is recorded, not fatal
                    row["error"] = first_line(err)
                candidates.append(Candidate(**row))
                shown = f"{row['tflops']:6.1f} TFLOP/s" if "tflops" in row else row["error"]
                print(f"tune d={d} causal={causal} {cfg.label:<16} regs={row.get('registers')} "
                      f"spills={row.get('spills')}: {shown}", flush=True)  # fmt: skip
            chosen[(d, causal)] = best[1] if best else fa.DEFAULT_CONFIGS[(d, causal)]
            print(f"chosen d={d} causal={causal}: {chosen[(d, causal)].label}", flush=True)
        del q, k, v

    cases: list[Case] = []

    def save() -> None:
        """Write what has been measured so far (again after every case: a run cut short keeps its cases)."""
        record = FlashForward(
            run=script.finished(),
            timing=timing_note,
            tuning_shape=f"batch {TUNING[0]}, {TUNING[1]} heads, {TUNING[2]} tokens, bf16",
            candidates=candidates,
            cases=cases,
        )
        script.write(record)

    # --- cases ---
    shapes = [("standard", *STANDARD, c) for c in (False, True)] if 128 in head_dims else []
    shapes += [
        ("sweep", TOKENS // s, WIDTH // d, s, d, c) for d in head_dims for s in SWEEP_SEQS for c in (False, True)
    ]
    for group, b, h, s, d, causal in shapes:
        q, k, v = inputs(b, h, s, d)
        cfg = chosen[(d, causal)]
        flops = attention_flops(b, h, s, s, d, causal)
        ours = fa.flash_attention(q, k, v, causal=causal, config=cfg)

        def kernel(q=q, k=k, v=v, causal=causal, cfg=cfg):
            return fa.flash_attention(q, k, v, causal=causal, config=cfg)

        results: dict[str, dict[str, Any]] = {"triton": {"name": "triton", "samples": []}}
        order = [("triton", kernel, None)]
        for name in BACKENDS:
            results[name] = {"name": name, "samples": []}
            try:
                with sdpa_kernel([kinds[name]]):
                    out = sdpa(q, k, v, is_causal=causal)
                results[name]["difference"] = relative_error(out.float(), ours.float())
                del out
                order.append((name, lambda q=q, k=k, v=v, causal=causal: sdpa(q, k, v, is_causal=causal), kinds[name]))
            except RuntimeError as err:
                results[name]["error"] = first_line(err)
        for round_order in (order, order[::-1]):
            for name, fn, kind in round_order:
                with sdpa_kernel([kind]) if kind is not None else contextlib.nullcontext():
                    results[name]["samples"] += timed(fn)
        timings = []
        for r in results.values():
            samples = r.pop("samples")
            if samples:
                ms = summarize(samples)
                r["ms"], r["tflops"] = ms, flops / (ms.median * 1e-3) / 1e12
            timings.append(Timing(**r))
        case = Case(group=group, batch=b, heads=h, seq=s, head_dim=d, causal=causal, config=cfg.label,
                    triton=timings[0], backends=timings[1:])  # fmt: skip
        cases.append(case)
        best = max((t.tflops or 0) for t in case.backends) or float("nan")
        flash = next(t.tflops for t in case.backends if t.name == "flash") or float("nan")
        text = "  ".join(f"{t.name} {t.tflops or 0:6.1f}" for t in timings)
        ratios = f"ratio best {timings[0].tflops / best:.3f} flash {timings[0].tflops / flash:.3f}"
        print(f"{group} b={b} h={h} s={s} d={d} causal={causal} [{cfg.label}]: {text}  {ratios}", flush=True)
        del q, k, v, ours
        save()

    save()
    print(f"wrote {args.output} in {time.perf_counter() - script.started:.0f} s", flush=True)


if __name__ == "__main__":
    raise SystemExit(main(flash, __doc__, arguments))
