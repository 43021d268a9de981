"""The Gluon flash-attention forward, step by step, beside the Triton kernel and every SDPA backend, in one run.

Run from the repository root on a Hopper GPU::

    python bench/attention_gluon.py src/gpukb/data/results/attention/gluon-forward-persistent-h100.json

Phases:

* ``builds``: each step of :data:`gpukb.attention.gluon_forward.STEPS` is compiled and checked against float64
  attention in a process of its own with a time limit (a kernel whose mbarrier protocol is wrong hangs instead of
  failing); its registers, spills and shared memory are recorded. Only steps that pass are timed.
* ``cases``: the standard shape (B=4, H=32, S=4096, D=128), causal and not, with every passing step, the Triton
  (``tl``) kernel and SDPA's flash, efficient and cuDNN backends; then a sweep (lengths 1024 to 16384 with
  batch × length = 16384 and heads × head_dim = 2048, head dims 64 and 128, a GQA shape and a length no block
  divides) with the default Gluon configuration.

Timing: :meth:`gpukb.records.script.Script.measure` (CUDA events, the L2 flushed by a read before every call, SM
clock and power sampled), two rounds per case (Gluon first, then Gluon last), medians of all samples; random normal
bf16 inputs. Rates use ``gpukb.measuring.counting.attention_flops``.

``--profile STEP`` instead runs that step (or ``tl``/``cudnn``) a few times at the standard shape and writes
nothing: the command to run under Nsight Compute.
"""

from __future__ import annotations

import argparse
import contextlib
import json
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
from gpukb.measuring.timing import Budget
from gpukb.records.script import Script, main

STANDARD = (4, 32, 32, 4096, 128)
#: (batch, heads, kv_heads, seq, head_dim) of the sweep.
SWEEP = [(16384 // s, 2048 // d, 2048 // d, s, d) for d in (128, 64) for s in (1024, 2048, 8192, 16384)] + [
    (4, 32, 8, 4096, 128),  # GQA
    (4, 32, 32, 4097, 128),  # a length no block divides
]
BUDGET = Budget(warmup_ms=10.0, rep_ms=40.0, min_reps=5, max_reps=50)
#: Seconds a step's build-and-check process may take before it is taken to hang.
CHECK_SECONDS = 150
#: What each step adds, for the record and the page.
DESCRIPTIONS = {
    "plain": "one partition: TMA copies K and V, then wgmma and the online softmax",
    "ws": "a producer warp fills a 2-stage ring of K/V buffers (mbarriers); 8 consumer warps compute",
    "ws-2wg": "two consumer warpgroups in partitions of their own (64 rows each) share the ring",
    "ws-2wg-overlap-qk-pv": "each consumer leaves Q·Kᵀ of the next block and P·V in flight during its softmax",
    "ws-2wg-overlap": "each consumer issues the next Q·Kᵀ before the current softmax (FA3's intra-warpgroup overlap)",
    "ws-pingpong": "the two consumers take turns on the tensor cores: one's softmax runs during the other's products",
    "persistent": "one program per SM walks the tiles (pairs of query blocks, long with short); the next tile's Q and "
    "first Q·Kᵀ overlap the current tile's last block",
}
#: The Gluon steps timed on the sweep (the three fastest designs at the standard shape in an earlier run, and the
#: persistent kernel built on the fastest).
SWEPT = ("ws-2wg", "ws-2wg-overlap", "ws-pingpong", "persistent")
#: Implementations profiled with Nsight Compute at the standard shape (not causal), when ncu is on the PATH.
PROFILED = ("ws-2wg-overlap", "persistent", "cudnn")
#: Nsight Compute sections read (their names as ``ncu --list-sections`` gives them).
SECTIONS = ("SpeedOfLight", "WarpStateStats", "ComputeWorkloadAnalysis", "Occupancy")


def first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[-1] if text else ''}"[:300]


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default=None, help="run one step (or 'tl', 'cudnn') for Nsight Compute")
    parser.add_argument("--no-sweep", action="store_true", help="time the standard shape only")


def _inputs(torch: Any, b: int, h: int, hkv: int, sq: int, sk: int, d: int, dtype: Any) -> tuple[Any, Any, Any]:
    gen = torch.Generator(device="cuda").manual_seed(b * 7 + h * 11 + hkv * 3 + sq * 13 + sk + d)
    shapes = [(b, h, sq, d), (b, hkv, sk, d), (b, hkv, sk, d)]
    return tuple(torch.randn(*s, device="cuda", dtype=dtype, generator=gen) for s in shapes)


def check_step(step: str, queue: Any) -> None:
    """In a process of its own: build one step and hold it to float64 attention on awkward shapes."""
    import torch
    import torch.nn.functional as F  # noqa: N812

    from gpukb.attention import gluon_forward as gf
    from gpukb.attention.reference import causal_mask
    from gpukb.numerics import relative_error

    config = gf.STEPS[step]
    row: dict[str, Any] = {"step": step, "config": config.label, "description": DESCRIPTIONS[step]}
    try:
        worst, worst_sdpa = 0.0, 0.0
        # (dtype, head_dim, causal, align, q_len, kv_len, kv_heads) on 8 query heads, batch 2
        for dtype, d, causal, align, sq, sk, hkv in [
            (torch.bfloat16, 128, False, "top-left", 1000, 1000, 2),
            (torch.bfloat16, 128, True, "top-left", 1000, 1000, 2),
            (torch.bfloat16, 64, True, "top-left", 1000, 1000, 8),
            (torch.float16, 128, True, "top-left", 4096, 4096, 8),
            (torch.bfloat16, 128, True, "bottom-right", 256, 1040, 8),
            (torch.bfloat16, 64, True, "bottom-right", 1040, 300, 2),
        ]:
            q, k, v = _inputs(torch, 2, 8, hkv, sq, sk, d, dtype)
            out = gf.gluon_attention(q, k, v, causal=causal, align=align, config=config)
            torch.cuda.synchronize()
            if "registers" not in row:  # the first case: head dim 128, not causal
                kern = gf.LAST["kernel"]
                row["registers"], row["spills"] = int(kern.n_regs), int(kern.n_spills)
                row["shared_bytes"] = int(kern.metadata.shared)
                row["ptxas"] = ptxas_notes(kern.asm["ptx"])
            mask = torch.from_numpy(causal_mask(sq, sk, align)).cuda() if causal else None
            kr, vr = (t.double().repeat_interleave(8 // hkv, dim=1) for t in (k, v))
            ref = F.scaled_dot_product_attention(q.double(), kr, vr, attn_mask=mask)
            if mask is not None:  # rows that see no key: FlashAttention's convention is an output of 0
                ref = torch.where(mask.any(-1)[:, None], ref, 0.0)
            err = relative_error(out, ref)
            if not torch.isfinite(out).all() or not err < 2e-2:
                raise AssertionError(f"{tuple(q.shape)} causal={causal} {align}: error {err:.3g} against float64")
            worst = max(worst, err)
            if not (causal and align == "bottom-right" and sq > sk):
                peer = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=hkv != 8)
                worst_sdpa = max(worst_sdpa, relative_error(peer, ref))
            print(f"  {step}: {dtype} d={d} causal={causal} {align} {sq}x{sk} error {err:.3g}", flush=True)
        row["error"], row["sdpa_error"] = worst, worst_sdpa
    except Exception as err:  # recorded, and the step is not timed
        row["failure"] = first_line(err)
    queue.put(row)


def ptxas_notes(ptx: str) -> list[str]:
    """What ``ptxas -v`` says of a kernel's PTX for sm_90a: its "info" lines about performance and registers."""
    import subprocess
    import tempfile

    from triton.backends.nvidia.compiler import get_ptxas

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "kernel.ptx"
        src.write_text(ptx)
        done = subprocess.run([get_ptxas(90).path, "-arch=sm_90a", "-v", str(src), "-o", str(Path(tmp) / "k.cubin")],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    lines = (done.stdout + done.stderr).splitlines()
    return [" ".join(x.split()) for x in lines if "Performance" in x or "Used" in x or "spill" in x][:8]


def profiled(name: str) -> dict[str, str]:
    """Nsight Compute's readings of one implementation's first launch at the standard shape (not causal)."""
    import re
    import shutil
    import subprocess

    ncu = shutil.which("ncu")
    if ncu is None:
        return {}
    command = [
        ncu,
        "--clock-control",
        "none",
        *(x for s in SECTIONS for x in ("--section", s)),
        "-k",
        "regex:_forward|sdpa|fprop|fmha",
        "--launch-count",
        "1",
        sys.executable,
        __file__,
        "--profile",
        name,
    ]
    try:
        text = subprocess.run(command, capture_output=True, text=True, timeout=90).stdout
    except subprocess.TimeoutExpired:
        return {"error": "ncu took longer than 90 s"}
    found: dict[str, str] = {}
    for line in text.splitlines():
        head = re.match(r"^  (\S+) (\(\d+, \d+, \d+\))x\((\d+), 1, 1\)", line)
        if head and "kernel" not in found:
            found["kernel"], found["grid"], found["threads per block"] = (
                head.group(1)[:120],
                head.group(2),
                head.group(3),
            )
        row = re.match(r"^    (\S.*?\S)\s{2,}(\S+)?\s+([-\d.,]+)$", line)
        if row and "kernel" in found:
            found[row.group(1)] = f"{row.group(3)} {row.group(2) or ''}".strip()
    return found


def builds(steps: list[str]) -> list[dict[str, Any]]:
    """Each step's build and check, each in a spawned process that is killed if it outlives CHECK_SECONDS."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    rows = []
    for step in steps:
        queue = ctx.Queue()
        proc = ctx.Process(target=check_step, args=(step, queue))
        started = time.perf_counter()
        proc.start()
        proc.join(CHECK_SECONDS)
        if proc.is_alive():
            proc.kill()
            proc.join()
            rows.append({"step": step, "config": "", "description": DESCRIPTIONS[step],
                         "failure": f"no result within {CHECK_SECONDS} s: taken to hang (killed)"})  # fmt: skip
        else:
            rows.append(queue.get() if not queue.empty() else {
                "step": step, "config": "", "description": DESCRIPTIONS[step],
                "failure": f"the check process exited with status {proc.exitcode} and no result"})  # fmt: skip
        print(f"build {step}: {json.dumps(rows[-1])} ({time.perf_counter() - started:.0f} s)", flush=True)
    return rows


def profile(name: str) -> None:
    """Run one implementation 3 times at the standard shape (for ``ncu``)."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from gpukb.attention import gluon_forward as gf
    from gpukb.attention import kernel as fa

    b, h, hkv, s, d = STANDARD
    q, k, v = _inputs(torch, b, h, hkv, s, s, d, torch.bfloat16)
    for causal in (False, True):
        for _ in range(3):
            if name == "tl":
                fa.flash_attention(q, k, v, causal=causal)
            elif name == "cudnn":
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    sdpa(q, k, v, is_causal=causal)
            else:
                gf.gluon_attention(q, k, v, causal=causal, config=gf.STEPS[name])
    torch.cuda.synchronize()


def measure(script: Script) -> Any:
    args = script.args
    if args.profile:
        profile(args.profile)
        return None
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from gpukb.attention import gluon_forward as gf
    from gpukb.attention import kernel as fa
    from gpukb.attention.results import BACKENDS, GluonBuild, GluonCase, GluonForward, Timed
    from gpukb.numerics import relative_error

    timing_note = (
        "CUDA events around each call, L2 flushed by a read before every call, SM clock and power sampled; two "
        f"rounds (Gluon first, then Gluon last) of {BUDGET.min_reps}-{BUDGET.max_reps} calls after "
        f"{BUDGET.warmup_ms:.0f} ms of warm-up; medians of all samples."
    )
    flops_note = "4 · batch · heads · pairs · head_dim (the two matrix products; causal pairs counted exactly)"
    script.note(timing_note)
    print(f"{script.run.gpu.name if script.run.gpu else 'no GPU'}, torch {torch.__version__}", flush=True)
    kinds = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
             "cudnn": SDPBackend.CUDNN_ATTENTION}  # fmt: skip

    built = [GluonBuild(**row) for row in builds(list(gf.STEPS))]
    passed = [b.step for b in built if b.failure is None]
    cases: list[GluonCase] = []

    def save() -> GluonForward:
        record = GluonForward(run=script.finished(), timing=timing_note, flops=flops_note, builds=built,
                              cases=cases)  # fmt: skip
        script.write(record)
        return record

    shapes = [("standard", *STANDARD, c) for c in (False, True)]
    if not args.no_sweep:
        shapes += [("sweep", *shape, c) for shape in SWEEP for c in (False, True)]
    for group, b, h, hkv, s, d, causal in shapes:
        q, k, v = _inputs(torch, b, h, hkv, s, s, d, torch.bfloat16)
        flops = attention_flops(b, h, s, s, d, causal)
        gqa = h != hkv
        steps = passed if group == "standard" else [x for x in passed if x in SWEPT]
        contenders: dict[str, tuple[Any, Any]] = {
            "tl": (lambda q=q, k=k, v=v, causal=causal: fa.flash_attention(q, k, v, causal=causal), None)
        }
        for step in steps:
            contenders[f"gluon {step}"] = (lambda q=q, k=k, v=v, causal=causal, c=gf.STEPS[step]: gf.gluon_attention(
                q, k, v, causal=causal, config=c), None)  # fmt: skip
        for name in BACKENDS:
            contenders[name] = (lambda q=q, k=k, v=v, causal=causal, gqa=gqa: sdpa(
                q, k, v, is_causal=causal, enable_gqa=gqa), kinds[name])  # fmt: skip
        results: dict[str, dict[str, Any]] = {}
        order = []
        ours = None
        for name, (fn, kind) in contenders.items():
            results[name] = {"name": name, "samples": [], "clocks": []}
            try:
                with sdpa_kernel([kind]) if kind is not None else contextlib.nullcontext():
                    out = fn()
                if ours is None:
                    ours = out
                else:
                    results[name]["difference"] = relative_error(out.float(), ours.float())
                del out
                order.append((name, fn, kind))
            except Exception as err:
                results[name]["error"] = first_line(err)
        gluon_first = sorted(order, key=lambda x: not x[0].startswith("gluon"))
        for round_order in (gluon_first, gluon_first[::-1]):
            for name, fn, kind in round_order:
                with sdpa_kernel([kind]) if kind is not None else contextlib.nullcontext():
                    m = script.measure(fn, BUDGET)
                results[name]["samples"] += m.samples
                if m.window is not None:
                    results[name]["clocks"].append(m.window)
        timings = []
        for r in results.values():
            samples = r.pop("samples")
            if samples:
                ms = summarize(samples)
                r["ms"], r["tflops"] = ms, flops / (ms.median * 1e-3) / 1e12
            timings.append(Timed(**r))
        cases.append(GluonCase(group=group, batch=b, heads=h, kv_heads=hkv, seq=s, head_dim=d, causal=causal,
                               timings=timings))  # fmt: skip
        cudnn = next((t.tflops for t in timings if t.name == "cudnn"), None) or float("nan")
        text = "  ".join(f"{t.name} {t.tflops or 0:.0f} ({(t.tflops or 0) / cudnn:.2f})" for t in timings)
        print(f"{group} b={b} h={h}/{hkv} s={s} d={d} causal={causal}: {text}", flush=True)
        del q, k, v, ours
        save()
    profile_readings = {}
    for name in PROFILED:
        if name in ("tl", "cudnn") or name in passed:
            profile_readings[name] = profiled(name)
            print(f"ncu {name}: {json.dumps(profile_readings[name])}", flush=True)
    record = save()
    script.write(record.model_copy(update={"profile": profile_readings}))
    print(f"wrote {args.output} in {time.perf_counter() - script.started:.0f} s", flush=True)
    return None


if __name__ == "__main__":
    raise SystemExit(main(measure, __doc__, arguments, output="optional"))
