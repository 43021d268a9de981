"""The Triton flash-attention forward and backward against every SDPA backend, and a training run, on one GPU.

Run from the repository root on a machine with a Hopper GPU::

    python bench/attention_training.py src/gpukb/data/results/attention/flash-training-atomic-dq-h100.json

Phases, each written to the record as it ends (a run cut short keeps what it measured):

* ``tune``: forward tilings for head dim 256 (causal and not) and backward tilings for head dims 64, 128 and 256
  (non-causal) on the tuning shapes (batch 4, 4096 tokens, heads × head_dim = 2048, bf16); the fastest is used.
* ``steps``: at the standard shape (B=4, H=32, S=4096, D=128), causal and not, the steps of the kernel page:
  attention with the score matrix in memory (SDPA's math backend), the online-softmax kernel without software
  pipelining (one stage), with it (three stages), with TMA loads; the backward with the score matrix in memory
  (the math backend's) and the FlashAttention-2 backward kernels.
* ``cases``: forward and backward over a sweep of shapes (lengths 512 to 16 384 including lengths no block
  divides, head dims 64, 128 and 256, grouped-query attention, batch 1 to 32): the kernel, then SDPA forced to
  each backend with ``torch.nn.attention.sdpa_kernel``; every result compared with the kernel's.
* ``training``: the snippet's small transformer (``gpukb.attention.training``) trained 300 steps from one seed
  with the kernel, with SDPA's default backend and with SDPA's math backend as a control (the efficient backend takes no
  grouped-query attention).

Timing: ``gpukb.measuring.timing.benchmark`` with CUDA events around each call, the L2 cache flushed (untimed, by a
read) before every call, random normal bf16 inputs, SM clock and power sampled during every timed round
(``gpukb.measuring.device.sampler``). Kernel and backends are timed in two rounds, kernel first and then kernel
last, and the samples of both rounds are summarized together. A backward is timed as
``torch.autograd.grad(out, (q, k, v), d_out, retain_graph=True)`` on a graph built once, for the kernel and for
every backend alike. Rates use ``gpukb.measuring.counting.attention_flops``; a backward counts 2.5 times its forward.
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
from gpukb.measuring.device import sampler
from gpukb.measuring.stats import summarize
from gpukb.measuring.timing import Budget, EventTimer, L2Flusher, benchmark
from gpukb.records.script import Script, main

#: Forward tilings tried for head dim 256 (block_m, block_n, num_warps, num_stages, tma): shared memory holds the
#: query block and num_stages key and value blocks of 256 columns, so stages stay at 2.
FORWARD_CANDIDATES = [(64, 32, 4, 2, False), (64, 64, 4, 2, False), (64, 64, 8, 2, False), (128, 64, 8, 2, False),
                      (64, 64, 4, 2, True), (128, 64, 8, 2, True)]  # fmt: skip
#: Backward tilings (block_m1, block_n1, block_m2, block_n2, num_warps, num_stages[, dq]) by head dim: Triton's
#: tutorial's 32/128/128/32, and smaller blocks for the larger head dims (dK and dV accumulate in registers); at
#: head dim 128 also dQ added by the dK/dV kernel (atomic adds, TMA reductions) instead of a dQ pass.
BACKWARD_CANDIDATES = {
    64: [(32, 64, 64, 32, 4, 3), (32, 64, 64, 32, 4, 4), (64, 64, 64, 64, 4, 3), (32, 128, 128, 32, 8, 3),
         (64, 128, 128, 64, 8, 3)],
    128: [(32, 64, 64, 32, 4, 3), (32, 64, 64, 32, 4, 4), (32, 64, 64, 32, 4, 5), (64, 64, 64, 64, 4, 3),
          (32, 128, 64, 32, 8, 3), (32, 128, 128, 32, 8, 3), (64, 128, 128, 64, 8, 2),
          (32, 64, 64, 32, 4, 4, "atomic"), (32, 64, 64, 32, 4, 4, "tma"), (64, 128, 64, 32, 8, 2, "atomic"),
          (64, 128, 64, 32, 8, 2, "tma"), (32, 128, 64, 32, 8, 3, "tma")],
    256: [(32, 64, 64, 32, 8, 2), (32, 64, 64, 32, 8, 3), (64, 64, 64, 64, 8, 2), (32, 32, 32, 32, 4, 2)],
}  # fmt: skip
TUNING = {64: (4, 32, 4096), 128: (4, 16, 4096), 256: (4, 8, 4096)}  # head_dim: (batch, heads, seq)
STANDARD = (4, 32, 32, 4096, 128)  # batch, heads, kv_heads, seq, head_dim
#: (batch, heads, kv_heads, seq, head_dim) of the forward sweep, each causal and not: the FlashAttention-2
#: paper's shapes (batch × seq = 16k tokens, heads × head_dim = 2048) at lengths no block divides too, head dim
#: 256, grouped-query attention (32 query heads on 8), and batch 1 and 32.
FORWARD_SWEEP = [
    (32, 32, 32, 512, 64), (8, 32, 32, 2048, 64), (2, 32, 32, 8192, 64),
    (16, 16, 16, 1000, 128), (5, 16, 16, 3000, 128), (1, 16, 16, 16384, 128),
    (16, 8, 8, 1024, 256), (4, 8, 8, 4096, 256),
    (8, 32, 8, 2048, 128), (4, 32, 8, 4097, 128),
]  # fmt: skip
#: (batch, heads, kv_heads, seq, head_dim, causal) of the backward sweep.
BACKWARD_SWEEP = [
    (8, 32, 32, 2048, 64, False), (8, 32, 32, 2048, 64, True), (32, 32, 32, 512, 64, True),
    (16, 16, 16, 1000, 128, True), (1, 16, 16, 16384, 128, True), (5, 16, 16, 3000, 128, False),
    (4, 8, 8, 4096, 256, False), (4, 8, 8, 4096, 256, True),
    (8, 32, 8, 2048, 128, False), (4, 32, 8, 4097, 128, True),
]  # fmt: skip
BUDGET = Budget(warmup_ms=10.0, rep_ms=40.0, min_reps=5, max_reps=50)
TUNE_BUDGET = Budget(warmup_ms=5.0, rep_ms=20.0, min_reps=5, max_reps=20)
TRAINING = {"steps": 300, "seed": 0, "batch": 16, "seq": 256, "d_model": 256, "heads": 4, "kv_heads": 2}


def first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"[:300]


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--skip", default="", help="comma-separated phases to skip: tune,steps,cases,training")


def attention_training(script: Script) -> int:
    args = script.args
    skip = set(filter(None, args.skip.split(",")))

    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from gpukb.attention import kernel as fa
    from gpukb.attention.results import (
        BACKENDS,
        BACKWARD_FLOP_FACTOR,
        BackwardCandidate,
        Candidate,
        FlashTraining,
        Measured,
        Step,
        Timed,
        Training,
    )
    from gpukb.attention.training import train_losses
    from gpukb.numerics import relative_error

    started = script.started
    timing_note = (
        "CUDA events around each call, L2 flushed by a read before every call, two rounds (kernel first, then "
        f"kernel last) of {BUDGET.min_reps}-{BUDGET.max_reps} calls after {BUDGET.warmup_ms:.0f} ms of warm-up; "
        "medians of all samples; a backward timed as torch.autograd.grad on a retained graph."
    )
    flops_note = (
        "forward: 4 · batch · heads · pairs · head_dim (causal pairs counted exactly); backward: 2.5 times that "
        "(five matrix products to the forward's two, as FlashAttention's benchmark counts)"
    )
    script.note(timing_note)
    run = script.run
    print(f"{run.gpu.name if run.gpu else 'no GPU'}, torch {torch.__version__}", flush=True)
    timer = EventTimer(torch)
    flush = L2Flusher(torch, torch.cuda.get_device_properties(0).L2_cache_size)
    monitor = sampler()
    kinds = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
             "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}  # fmt: skip

    def inputs(b: int, h: int, hkv: int, s: int, d: int, grad: bool = False) -> tuple[Any, ...]:
        gen = torch.Generator(device="cuda").manual_seed(b * 7 + h * 11 + hkv * 3 + s * 13 + d)
        shapes = [(b, h, s, d), (b, hkv, s, d), (b, hkv, s, d), (b, h, s, d)]
        q, k, v, do = (torch.randn(*x, device="cuda", dtype=torch.bfloat16, generator=gen) for x in shapes)
        if grad:
            q, k, v = (t.requires_grad_() for t in (q, k, v))
        return q, k, v, do

    def timed(fn, budget=BUDGET) -> tuple[list[float], Any]:
        m = benchmark(fn, timer, budget, before=flush, monitor=monitor)
        return m.samples, m.window

    def grad_of(out, q, k, v, do):
        return lambda: torch.autograd.grad(out, (q, k, v), do, retain_graph=True)

    state: dict[str, Any] = {"fwd_candidates": [], "bwd_candidates": [], "steps": [], "cases": [], "training": None}

    def save() -> None:
        record = FlashTraining(
            run=script.finished(),
            timing=timing_note,
            flops=flops_note,
            tuning_shapes="batch 4, 4096 tokens, heads × head_dim = 2048 (head dim 256: 8 heads), bf16",
            forward_candidates=state["fwd_candidates"],
            backward_candidates=state["bwd_candidates"],
            steps=state["steps"],
            cases=state["cases"],
            training=state["training"],
        )
        script.write(record)

    # --- tune ---------------------------------------------------------------------------------------------
    fwd_chosen = dict(fa.DEFAULT_CONFIGS)
    bwd_chosen = dict(fa.DEFAULT_BACKWARD_CONFIGS)
    if "tune" not in skip:
        b, h, s = TUNING[256]
        q, k, v, _ = inputs(b, h, h, s, 256)
        for causal in (False, True):
            flops = attention_flops(b, h, s, s, 256, causal)
            best = None
            for bm, bn, w, st, tma in FORWARD_CANDIDATES:
                cfg = fa.FlashConfig(bm, bn, w, st, tma)
                row: dict[str, Any] = {"head_dim": 256, "causal": causal, "config": cfg.label, "block_m": bm,
                                       "block_n": bn, "num_warps": w, "num_stages": st, "tma": tma}  # fmt: skip
                try:
                    out = fa.flash_attention(q, k, v, causal=causal, config=cfg)
                    kern = fa.LAST["forward"]
                    row["registers"], row["spills"] = int(kern.n_regs), int(kern.n_spills)
                    diff = relative_error(out[:1].float(), sdpa(q[:1], k[:1], v[:1], is_causal=causal).float())
                    if not diff < 2e-2:
                        raise AssertionError(f"output differs from SDPA by {diff:.3g}")
                    samples, _ = timed(lambda cfg=cfg, causal=causal: fa.flash_attention(
                        q, k, v, causal=causal, config=cfg), TUNE_BUDGET)  # fmt: skip
                    row["tflops"] = flops / (summarize(samples).median * 1e-3) / 1e12
                    if best is None or row["tflops"] > best[0]:
                        best = (row["tflops"], cfg)
                except Exception as err:  # a tiling that does not fit is recorded, not fatal
                    row["error"] = first_line(err)
                state["fwd_candidates"].append(Candidate(**row))
                print(f"tune fwd d=256 causal={causal} {cfg.label:<16} regs={row.get('registers')} "
                      f"spills={row.get('spills')}: {row.get('tflops') or row.get('error')}", flush=True)  # fmt: skip
            if best:
                fwd_chosen[(256, causal)] = best[1]
        del q, k, v
        save()
        for d, cands in BACKWARD_CANDIDATES.items():
            b, h, s = TUNING[d]
            q, k, v, do = inputs(b, h, h, s, d, grad=True)
            flops = BACKWARD_FLOP_FACTOR * attention_flops(b, h, s, s, d, False)
            ref = None
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
                peer = sdpa(q, k, v)
            ref = torch.autograd.grad(peer, (q, k, v), do)
            del peer
            best = None
            for cand in cands:
                cfg = fa.BackwardConfig(*cand)
                m1, n1, m2, n2, w, st = cand[:6]
                row = {"head_dim": d, "config": cfg.label, "block_m1": m1, "block_n1": n1, "block_m2": m2,
                       "block_n2": n2, "num_warps": w, "num_stages": st, "dq": cfg.dq}  # fmt: skip
                try:
                    out = fa.flash_attention(q, k, v, backward_config=cfg)
                    grads = torch.autograd.grad(out, (q, k, v), do, retain_graph=True)
                    # (with dQ added by the dK/dV kernel there is no dQ kernel: its entry is gone from LAST)
                    row["registers"] = {n: int(fa.LAST[n].n_regs) for n in ("dkdv", "dq") if n in fa.LAST}
                    row["spills"] = {n: int(fa.LAST[n].n_spills) for n in ("dkdv", "dq") if n in fa.LAST}
                    diff = max(relative_error(g.float(), r.float()) for g, r in zip(grads, ref, strict=True))
                    if not diff < 2e-2:
                        raise AssertionError(f"gradients differ from SDPA's by {diff:.3g}")
                    samples, _ = timed(grad_of(out, q, k, v, do), TUNE_BUDGET)
                    row["tflops"] = flops / (summarize(samples).median * 1e-3) / 1e12
                    if best is None or row["tflops"] > best[0]:
                        best = (row["tflops"], cfg)
                    del out, grads
                except Exception as err:
                    row["error"] = first_line(err)
                state["bwd_candidates"].append(BackwardCandidate(**row))
                print(f"tune bwd d={d} {cfg.label:<22} regs={row.get('registers')} spills={row.get('spills')}: "
                      f"{row.get('tflops') or row.get('error')}", flush=True)  # fmt: skip
            if best:
                bwd_chosen[d] = best[1]
            del q, k, v, do, ref
            torch.cuda.empty_cache()
            save()
    print("chosen forward:", {k: c.label for k, c in fwd_chosen.items() if k[0] == 256}, flush=True)
    print("chosen backward:", {k: c.label for k, c in bwd_chosen.items()}, flush=True)

    def compare(direction, b, h, hkv, s, d, causal, contenders) -> dict[str, Timed]:
        """Time the kernel and each backend (``contenders``: name → (prepare, SDPBackend or None)) on one
        shape; ``prepare()`` returns (callable to time, result to compare)."""
        flops = attention_flops(b, h, s, s, d, causal) * (BACKWARD_FLOP_FACTOR if direction == "backward" else 1)
        results: dict[str, dict[str, Any]] = {}
        order = []
        ours = None
        for name, (prepare, kind) in contenders.items():
            results[name] = {"name": name, "samples": [], "clocks": []}
            try:
                with sdpa_kernel([kind]) if kind is not None else contextlib.nullcontext():
                    fn, result = prepare()
                if ours is None:
                    ours = result
                else:
                    pairs = zip(result, ours, strict=True) if isinstance(result, tuple) else [(result, ours)]
                    results[name]["difference"] = max(relative_error(a.float(), o.float()) for a, o in pairs)
                order.append((name, fn, kind))
            except Exception as err:
                results[name]["error"] = first_line(err)
        for round_order in (order, order[::-1]):
            for name, fn, kind in round_order:
                with sdpa_kernel([kind]) if kind is not None else contextlib.nullcontext():
                    samples, window = timed(fn)
                results[name]["samples"] += samples
                if window is not None:
                    results[name]["clocks"].append(window)
        timings = {}
        for name, r in results.items():
            samples = r.pop("samples")
            if samples:
                ms = summarize(samples)
                r["ms"], r["tflops"] = ms, flops / (ms.median * 1e-3) / 1e12
            timings[name] = Timed(**r)
        return timings

    def forward_prepare(q, k, v, causal, gqa, config=None):
        def kernel():
            return fa.flash_attention(q, k, v, causal=causal, config=config)

        def peer():
            return sdpa(q, k, v, is_causal=causal, enable_gqa=gqa)

        return (lambda: (kernel, kernel())), (lambda: (peer, peer()))

    def backward_prepare(q, k, v, do, causal, gqa, config=None):
        def kernel():
            out = fa.flash_attention(q, k, v, causal=causal, backward_config=config)
            return grad_of(out, q, k, v, do), torch.autograd.grad(out, (q, k, v), do, retain_graph=True)

        def peer():
            out = sdpa(q, k, v, is_causal=causal, enable_gqa=gqa)
            return grad_of(out, q, k, v, do), torch.autograd.grad(out, (q, k, v), do, retain_graph=True)

        return kernel, peer

    # --- steps of the page's story ------------------------------------------------------------------------
    if "steps" not in skip:
        b, h, hkv, s, d = STANDARD
        for causal in (False, True):
            q, k, v, do = inputs(b, h, hkv, s, d)
            forward_steps = [
                ("naive", "scores and probabilities in memory (SDPA's math backend)", None),
                ("online", "online softmax in one kernel, no software pipelining (128x64 w8, 1 stage)",
                 fa.FlashConfig(128, 64, 8, 1)),
                ("pipelined", "the same loop software-pipelined (128x64 w8, 3 stages)", fa.FlashConfig(128, 64, 8, 3)),
                ("tma", "pipelined, K and V moved by TMA (the default tiling)", fwd_chosen[(d, causal)]),
            ]  # fmt: skip
            for step, text, cfg in forward_steps:
                kernel, peer = forward_prepare(q, k, v, causal, False, cfg)
                contenders = {step: (peer, kinds["math"]) if cfg is None else (kernel, None)}
                timing = compare("forward", b, h, hkv, s, d, causal, contenders)[step]
                state["steps"].append(Step(step=step, direction="forward", causal=causal, description=text,
                                           timing=timing))  # fmt: skip
                print(f"step fwd causal={causal} {step}: {timing.tflops or timing.error}", flush=True)
            q, k, v, do = inputs(b, h, hkv, s, d, grad=True)
            for step, text in (("naive-backward", "gradients through the score matrix (SDPA's math backend)"),
                               ("flash-backward", "FlashAttention-2's backward: P rebuilt from the saved "
                                                  "log-sum-exp, tile by tile (the Triton kernels)")):  # fmt: skip
                kernel, peer = backward_prepare(q, k, v, do, causal, False, bwd_chosen[d])
                contenders = {step: (peer, kinds["math"]) if step.startswith("naive") else (kernel, None)}
                timing = compare("backward", b, h, hkv, s, d, causal, contenders)[step]
                state["steps"].append(Step(step=step, direction="backward", causal=causal, description=text,
                                           timing=timing))  # fmt: skip
                print(f"step bwd causal={causal} {step}: {timing.tflops or timing.error}", flush=True)
                torch.cuda.empty_cache()
            del q, k, v, do
            torch.cuda.empty_cache()
            save()

    # --- forward and backward sweeps ------------------------------------------------------------------------
    if "cases" not in skip:
        shapes = [("forward", "standard", *STANDARD, c) for c in (False, True)]
        shapes += [("forward", "sweep", *shape, c) for shape in FORWARD_SWEEP for c in (False, True)]
        shapes += [("backward", "standard", *STANDARD, c) for c in (False, True)]
        shapes += [("backward", "sweep", *shape) for shape in BACKWARD_SWEEP]
        for direction, group, b, h, hkv, s, d, causal in shapes:
            gqa = h != hkv
            q, k, v, do = inputs(b, h, hkv, s, d, grad=direction == "backward")
            if direction == "forward":
                cfg = fwd_chosen[(d, causal)]
                kernel, peer = forward_prepare(q, k, v, causal, gqa, cfg)
            else:
                cfg = bwd_chosen[d]
                kernel, peer = backward_prepare(q, k, v, do, causal, gqa, cfg)
            contenders = {"triton": (kernel, None)} | {name: (peer, kinds[name]) for name in BACKENDS}
            timings = compare(direction, b, h, hkv, s, d, causal, contenders)
            case = Measured(direction=direction, group=group, batch=b, heads=h, kv_heads=hkv, seq=s, head_dim=d,
                            causal=causal, config=cfg.label, triton=timings["triton"],
                            backends=[timings[n] for n in BACKENDS])  # fmt: skip
            state["cases"].append(case)
            ours = case.triton.tflops or float("nan")
            rates = "  ".join(f"{t.name} {t.tflops or 0:6.1f}" for t in case.backends)
            best = max((t.tflops or 0) for t in case.backends) or float("nan")
            print(f"{direction} {group} b={b} h={h}/{hkv} s={s} d={d} causal={causal} [{cfg.label}]: triton "
                  f"{ours:6.1f}  {rates}  ratio best {ours / best:.3f}", flush=True)  # fmt: skip
            for t in case.backends:
                if t.error:
                    print(f"   {t.name}: {t.error}", flush=True)
            del q, k, v, do, kernel, peer
            torch.cuda.empty_cache()
            save()

    # --- training -----------------------------------------------------------------------------------------
    if "training" not in skip:
        runs: dict[str, list[float]] = {}
        seconds: dict[str, float] = {}

        def kernel_attention(q, k, v):
            return fa.flash_attention(q, k, v, causal=True)

        def sdpa_attention(q, k, v):
            return sdpa(q, k, v, is_causal=True, enable_gqa=True)

        for name, fn, kind in (("kernel", kernel_attention, None), ("sdpa", sdpa_attention, None),
                               ("control", sdpa_attention, SDPBackend.MATH)):  # fmt: skip
            t0 = time.perf_counter()
            with sdpa_kernel([kind]) if kind is not None else contextlib.nullcontext():
                runs[name] = train_losses(fn, device="cuda", **TRAINING)
            torch.cuda.synchronize()
            seconds[name] = time.perf_counter() - t0
            print(f"training {name}: first {runs[name][0]:.4f} last {runs[name][-1]:.4f} ({seconds[name]:.1f} s)",
                  flush=True)  # fmt: skip
        model = (f"one pre-norm block, d_model {TRAINING['d_model']}, {TRAINING['heads']} query heads on "
                 f"{TRAINING['kv_heads']} key/value heads, previous-token task, {TRAINING['seq']} tokens, batch "
                 f"{TRAINING['batch']}, AdamW lr 3e-3, bf16 autocast")  # fmt: skip
        state["training"] = Training(model=model, steps=TRAINING["steps"], seed=TRAINING["seed"],
                                     peer="SDPA, default backend choice", control="SDPA, math backend",
                                     kernel=runs["kernel"], sdpa=runs["sdpa"], control_losses=runs["control"],
                                     seconds=seconds)  # fmt: skip
        save()

    save()
    print(f"wrote {args.output} in {time.perf_counter() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(attention_training, __doc__, arguments))
