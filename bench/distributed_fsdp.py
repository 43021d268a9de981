"""Train the chapter's 111M-parameter transformer with FSDP2 on one GPU under FULL/DEFAULT/PURE and checkpointing
off/reentrant/non-reentrant, and plain training of the same model; check block activation bytes on the GPU and
what torch.utils.checkpoint does without use_reentrant.

Usage: PYTHONPATH=src python bench/distributed_fsdp.py OUTPUT.json [--steps 8] [--repeats 3] [--batch 8]
       [--model gpt-small|gpu-bound] [--configs DEFAULT:none,PURE:none] [--rounds N]
       PYTHONPATH=src NCCL_NVLS_ENABLE=0 torchrun --nproc_per_node=N bench/distributed_fsdp.py OUTPUT.json

Alone, one process and a NCCL process group of world size 1 (``fully_shard`` needs a mesh): no collective moves
data between GPUs, so this shows compute and memory effects only. Under torchrun, one process per GPU, each with its
own batch; the plain runs become DDP; rank 0 writes the record. Tokens/s per timed repeat of ``--steps`` steps after
``--warmup`` steps; peak memory is the allocator's peak after warm-up.
"""

from __future__ import annotations

import argparse
import time

from gpukb.distributed.checkpointing import default_behaviour
from gpukb.distributed.fsdp_config import MODES, plan
from gpukb.distributed.model import ModelConfig
from gpukb.distributed.results import FsdpTraining
from gpukb.distributed.training import train
from gpukb.dtypes import torch_dtype
from gpukb.records.script import Script, count, main


def block_checks(device):
    import torch

    from gpukb.distributed.checkpointing import live_bytes
    from gpukb.distributed.model import block

    rows = []
    b, s, h, a = 4, 512, 768, 12
    for dtype in ("float32", "bfloat16"):
        torch.manual_seed(0)
        blk = block(h, a).to(device=device, dtype=torch_dtype(dtype))
        x = torch.randn(b, s, h, device=device, dtype=torch_dtype(dtype), requires_grad=True)
        mode = live_bytes()
        with mode:
            y = blk(x)
            live = mode.live
        rows.append(
            {
                "dtype": dtype,
                "batch": b,
                "seq": s,
                "hidden": h,
                "heads": a,
                "live_bytes": live,
                "output_bytes": y.untyped_storage().nbytes(),
                "input_bytes": x.untyped_storage().nbytes(),
            }
        )
        print("block", rows[-1], flush=True)
        del y, x, blk
    return rows


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--steps", type=count(), default=8)
    parser.add_argument("--warmup", type=count(0), default=3)
    parser.add_argument("--repeats", type=count(), default=3)
    parser.add_argument("--batch", type=count(), default=8)
    parser.add_argument("--tiny", action="store_true", help="the tiny model on the CPU with gloo (a smoke test)")
    parser.add_argument(
        "--model",
        choices=("gpt-small", "gpu-bound"),
        default="gpt-small",
        help="gpt-small: ModelConfig.gpt_small (111M parameters); gpu-bound: ModelConfig.gpu_bound (875M), whose "
        "step an H100 spends in matmuls",
    )
    parser.add_argument(
        "--configs",
        help="comma-separated MODE:CHECKPOINTING[:bf16] (MODE FULL, DEFAULT, PURE or plain), default: all twelve",
    )
    parser.add_argument(
        "--rounds",
        type=count(),
        default=1,
        help="train every configuration afresh in each of N rounds, alternating within a round; one timed repeat "
        "per round (--repeats is then 1)",
    )


def backend(args: argparse.Namespace) -> str | None:
    """The tiny smoke test runs on the CPU with gloo; otherwise the skeleton's default (NCCL with CUDA)."""
    return "gloo" if args.tiny else args.backend


def check(args: argparse.Namespace) -> str | None:
    """Options ``--tiny`` does not take: it trains the tiny model, on the CPU with gloo."""
    if args.tiny and args.model != "gpt-small":
        return f"--tiny trains the tiny model; --model {args.model} does not apply"
    if args.tiny and args.backend not in (None, "gloo"):
        return f"--tiny runs on the CPU with gloo; --backend {args.backend} does not apply"
    return None


def fsdp(script: Script) -> FsdpTraining | None:
    import torch
    import torch.distributed as dist

    args, rank, world, device = script.args, script.rank, script.world, script.device
    script.note(
        f"{world} rank(s), {dist.get_backend()} process group; {args.warmup} warm-up steps, then "
        f"{args.repeats if args.rounds == 1 else 1} timed repeats of {args.steps} AdamW steps (batch {args.batch} "
        f"per rank, sequence {16 if args.tiny else 1024}); no autocast unless stated; TF32 matmuls off "
        "(torch default)."
        + (
            f" Interleaved: {args.rounds} rounds, each configuration trained afresh once per round, the "
            "configurations in the given order in odd rounds and reversed in even ones."
            if args.rounds > 1
            else ""
        ),
    )
    warning = default_behaviour()
    blocks = [] if args.tiny or rank != 0 else block_checks(device)
    if rank == 0:
        print("checkpoint without use_reentrant:", warning, flush=True)
    config = (
        ModelConfig.tiny()
        if args.tiny
        else ModelConfig.gpu_bound()
        if args.model == "gpu-bound"
        else ModelConfig.gpt_small()
    )
    if args.configs:
        configs = []
        for item in args.configs.split(","):
            mode, impl, *cast = item.split(":")
            configs.append((None if mode == "plain" else mode, impl, "bfloat16" if cast == ["bf16"] else None))
    else:
        configs = [(mode, impl, None) for mode in MODES for impl in ("none", "reentrant", "non-reentrant")]
        configs += [("FULL", "none", "bfloat16"), (None, "none", None), (None, "none", "bfloat16")]
    repeats = 1 if args.rounds > 1 else args.repeats
    runs = []
    by_name: dict[str, dict] = {}
    # Odd rounds run the configurations in reverse (A B, B A, ...) so that neither always goes first.
    order = [c for r in range(args.rounds) for c in (configs if r % 2 == 0 else configs[::-1])]
    for mode, impl, autocast in order:
        p = (
            None
            if mode is None
            else plan(
                mixed_precision=mode,
                activation_checkpointing=impl != "none",
                activation_checkpointing_reentrant=impl == "reentrant",
            )
        )
        plain = "DDP" if world > 1 else "plain"
        name = f"{'FSDP2 ' + mode if mode else plain} / checkpointing {impl}" + (" / autocast bf16" if autocast else "")
        t = time.perf_counter()
        r = train(
            config,
            p,
            impl,
            batch=args.batch,
            steps=args.steps,
            warmup=args.warmup,
            repeats=repeats,
            device=device,
            autocast=autocast,
            ddp=world > 1,
        )
        if name in by_name:  # a later round: one more timed repeat, the largest peak
            by_name[name]["tokens_per_s"] += r.tokens_per_s
            by_name[name]["peak_bytes"] = max(by_name[name]["peak_bytes"], r.peak_bytes)
        else:
            by_name[name] = {
                "name": name,
                "fsdp": mode is not None,
                "mixed_precision": mode,
                "checkpointing": impl,
                "autocast": autocast,
                "tokens_per_s": r.tokens_per_s,
                "peak_bytes": r.peak_bytes,
                "activation_bytes": r.activation_bytes,
                "loss_first": r.losses[0],
                "loss_last": r.losses[1],
            }
            runs.append(by_name[name])
        if rank == 0:
            print(
                f"{name:<48} {[round(x) for x in r.tokens_per_s]} tok/s  peak {r.peak_bytes / 2**30:.2f} GiB  "
                f"act {r.activation_bytes / 2**30:.2f} GiB  loss {r.losses}  ({time.perf_counter() - t:.1f} s)",
                flush=True,
            )
        if device != "cpu":
            torch.cuda.empty_cache()
    if rank != 0:
        return None
    return FsdpTraining(
        run=script.finished(),
        model={
            "vocab": config.vocab,
            "seq": config.seq,
            "hidden": config.hidden,
            "heads": config.heads,
            "layers": config.layers,
        },
        parameters=config.parameter_count(),
        batch=args.batch,
        steps=args.steps,
        warmup=args.warmup,
        world_size=world,
        runs=runs,
        blocks=blocks,
        checkpoint_warning=warning,
    )


if __name__ == "__main__":
    raise SystemExit(main(fsdp, __doc__, arguments, device="ranks", backend=backend, check=check))
