"""Train every scheme of the parallelism chapter on one machine's GPUs, interleaved in rounds, and record step time,
memory against the prediction and each scheme's traffic against its formula, with the machine's topology.

Usage: PYTHONPATH=src NCCL_NVLS_ENABLE=0 torchrun --nproc_per_node=4 bench/parallelism_schemes.py OUTPUT.json
       PYTHONPATH=src torchrun --nproc_per_node=4 bench/parallelism_schemes.py OUTPUT.json --tiny   (CPU, gloo)

One process per GPU (NCCL). The schemes (:func:`gpukb.parallelism.benchmark.build`): the whole model on one GPU,
FSDP, tensor parallelism, tensor + sequence parallelism, FSDP + TP on a 2-D mesh, GPipe and 1F1B pipelines,
PyTorch's context parallelism and a mixture-of-experts layer with its experts spread over the ranks. Rank 0 writes
the record.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess

from gpukb.records import Record
from gpukb.records.script import Script, count, main


def topology() -> str:
    """``nvidia-smi topo -m`` as printed, or why it could not be read."""
    try:
        proc = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"not read: {type(err).__name__}: {err}"
    return proc.stdout.strip() if proc.returncode == 0 else f"not read: exit {proc.returncode}: {proc.stderr.strip()}"


def arguments(parser: argparse.ArgumentParser) -> None:
    # count(): --rounds 0 or -1 is a usage error, not a rank's traceback after every model is built
    parser.add_argument("--rounds", type=count(), default=8)
    parser.add_argument("--steps", type=count(), default=6)
    parser.add_argument("--tiny", action="store_true", help="small sizes on CPU ranks (gloo): checks the script")


def backend(args: argparse.Namespace) -> str | None:
    """``--tiny`` runs on CPU ranks with gloo; otherwise ``--backend`` or the skeleton's default (NCCL with CUDA)."""
    return "gloo" if args.tiny else args.backend


def check(args: argparse.Namespace) -> str | None:
    """``--tiny`` runs on CPU ranks with gloo: another backend does not apply."""
    if args.tiny and args.backend not in (None, "gloo"):
        return f"--tiny runs on CPU ranks with gloo; --backend {args.backend} does not apply"
    return None


def parallelism_schemes(script: Script) -> Record | None:
    args = script.args
    import torch.distributed as dist

    from gpukb.measuring.stats import summarize
    from gpukb.parallelism import communication as comm
    from gpukb.parallelism.benchmark import STATE_BYTES_PER_PARAM, Sizes, build, measure
    from gpukb.parallelism.experts import imbalance
    from gpukb.parallelism.pipeline import bubble_fraction
    from gpukb.parallelism.results import ParallelismSchemes, SchemeRow

    rank, world, device = script.rank, script.world, script.device
    sizes = Sizes.tiny() if args.tiny else Sizes()
    for note in [
        f"{world} ranks, {dist.get_backend()} process group, one GPU per rank; every model in bfloat16 "
        f"(parameters, gradients, AdamW moments: {STATE_BYTES_PER_PARAM} bytes per parameter); "
        f"{args.rounds} rounds, each timing {args.steps} steps of every scheme in turn after one warm-up step; "
        "times are the slowest rank's.",
        "Traffic: one step of each scheme logged with gpukb.parallelism.traffic.CollectiveLog on rank 0, the "
        "bytes a rank sends under the ring algorithms.",
    ]:
        script.note(note)
    topo = topology() if rank == 0 and not args.tiny else "not read (CPU check)"
    if rank == 0:
        print(topo, flush=True)
    schemes = build(rank, world, sizes, device)
    if rank == 0:
        print("built:", [(s.name, s.state_bytes) for s in schemes], flush=True)
    readings = measure(schemes, device, rounds=args.rounds, steps=args.steps)
    states = [None] * world
    dist.all_gather_object(states, {s.name: (s.state_bytes, s.predicted_state_bytes) for s in schemes})
    routed = [None] * world
    ep = next(s for s in schemes if s.name.startswith("EP"))
    dist.all_gather_object(routed, readings[ep.name]["routed"])  # the routing of the step whose traffic was logged
    rows = []
    for scheme in schemes:
        got = readings[scheme.name]
        formula = scheme.formula
        extra = {k: v for k, v in scheme.extra.items() if isinstance(v, float | int | str)}
        if scheme.name.startswith("EP") and all(routed):
            rows_per_rank = sizes.batch * sizes.seq // world * sizes.top_k
            away = rows_per_rank - routed[0][0]
            here = sum(r[0] for r in routed[1:])
            formula = comm.expert_parallel(
                scheme.extra["tokens_per_rank"], sizes.hidden, world, sizes.top_k, sizes.experts, 2, away, here
            )
            extra["rows_to_each_rank"] = routed[0]
            per_rank = [sum(r[j] for r in routed) for j in range(world)]
            extra["rows_per_rank"] = per_rank
            extra["rank_imbalance"] = imbalance(per_rank)
        if scheme.name.startswith("PP") and "stage_alone_s" in got:
            step = summarize(got["seconds"]).median
            extra["stage_ms"] = got["stage_alone_s"] * 1e3
            extra["measured_bubble"] = 1 - sizes.micro_batches * got["stage_alone_s"] / step
            extra["predicted_bubble"] = float(bubble_fraction(world, sizes.micro_batches))
        log = got["log"]
        counts: dict[str, int] = {}
        for kind, *_ in log:
            counts[kind] = counts.get(kind, 0) + 1
        gpus = 1 if scheme.name == "one GPU" else world
        rows.append(
            SchemeRow(
                name=scheme.name,
                gpus=gpus,
                tokens_per_step=scheme.tokens,
                step_ms=summarize([t * 1e3 for t in got["seconds"]]) if scheme.active or rank else None,
                step_ms_rounds=[t * 1e3 for t in got["seconds"]],
                state_bytes=[st[scheme.name][0] for st in states if st[scheme.name][1]],
                predicted_state_bytes=[st[scheme.name][1] for st in states if st[scheme.name][1]],
                step_peak_bytes=got["step_peak_bytes"],
                sent_bytes=sum(r[3] for r in log),
                formula_bytes=comm.sent_bytes(formula),
                collectives=counts,
                formula_collectives=comm.collective_counts(formula),
                extra=extra,
            )
        )
        if rank == 0:
            r = rows[-1]
            print(
                f"{r.name:<20} {r.step_ms.median if r.step_ms else float('nan'):9.2f} ms/step "
                f"spread {r.step_ms.spread if r.step_ms else float('nan'):.3f}  state {r.state_bytes[:1]} vs "
                f"{r.predicted_state_bytes[:1]}  sent {r.sent_bytes} vs {r.formula_bytes}  {r.collectives} vs "
                f"{r.formula_collectives} {r.extra}",
                flush=True,
            )
    dist.barrier()
    if rank != 0:
        return None
    print("rows:", [r.model_dump(mode="json") for r in rows], flush=True)  # kept in the log if the record fails
    record = ParallelismSchemes(
        run=script.finished(),
        topology=topo,
        world_size=world,
        sizes=dataclasses.asdict(sizes),
        rounds=args.rounds,
        steps=args.steps,
        rows=rows,
    )
    return record


if __name__ == "__main__":
    raise SystemExit(
        main(
            parallelism_schemes,
            __doc__,
            arguments,
            device="ranks",
            backend=backend,
            check=check,
        )
    )
