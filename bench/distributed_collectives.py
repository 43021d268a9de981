"""All-reduce, reduce-scatter and all-gather bandwidth over torch.distributed, as nccl-tests reports it.

Usage (one process per GPU, any number of GPUs):
    NCCL_NVLS_ENABLE=0 torchrun --nproc_per_node=2 bench/distributed_collectives.py OUTPUT.json
    torchrun --nproc_per_node=2 bench/distributed_collectives.py OUTPUT.json --backend gloo   # CPU

Sizes run from --min-bytes to --max-bytes by factors of 2 (1 KiB to 1 GiB by default). Each size: --warmup
calls, then --repeats windows of --iters calls between barriers, each window timed by the host clock; a window's
time is the slowest rank's mean, and the record keeps the summary of the windows. Algorithm bandwidth S/t and bus
bandwidth (S/t times 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter and all-gather, t the median) follow
nccl-tests' doc/PERFORMANCE.md. Rank 0 writes the record.
"""

from __future__ import annotations

import argparse
import subprocess

from gpukb.distributed.benchmark import OPS, check_values, measure
from gpukb.distributed.results import CollectiveBandwidth
from gpukb.records.script import Script, main


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--min-bytes", type=int, default=1 << 10)
    parser.add_argument("--max-bytes", type=int, default=1 << 30)
    parser.add_argument("--iters", type=int, default=20, help="calls per timed window")
    parser.add_argument("--repeats", type=int, default=5, help="timed windows per size")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--dtype", default="float32")


def collectives(script: Script) -> CollectiveBandwidth | None:
    import torch.distributed as dist

    args = script.args
    script.note(
        f"{script.world} ranks, {dist.get_backend()}; {args.warmup} warm-up calls, then {args.repeats} windows of "
        f"{args.iters} calls between barriers (host clock, GPU synchronized), each window the slowest rank's mean; "
        "nccl-tests' algbw and busbw at the median."
    )
    for op in OPS:
        if not check_values(op, script.world, args.dtype, script.device):
            raise SystemExit(f"{op} gave wrong values")
    sizes = []
    size = args.min_bytes
    while size <= args.max_bytes:
        sizes.append(size)
        size *= 2
    rows = []
    for op in OPS:
        for row in measure(op, sizes, args.iters, args.warmup, args.dtype, script.device, args.repeats):
            rows.append(row)
            if script.rank == 0:
                print(
                    f"{op:<15} {row['size_bytes']:>12} B  {row['ms']['median'] * 1e3:10.1f} us  "
                    f"algbw {row['algbw'] / 1e9:8.2f} GB/s  busbw {row['busbw'] / 1e9:8.2f} GB/s",
                    flush=True,
                )
    if script.rank != 0:
        return None
    topology = None
    if script.on_gpu:
        try:
            topology = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            topology = None
    return CollectiveBandwidth(
        run=script.finished(),
        backend=dist.get_backend(),
        world_size=script.world,
        dtype=args.dtype,
        iters=args.iters,
        warmup=args.warmup,
        repeats=args.repeats,
        topology=topology,
        rows=rows,
    )


if __name__ == "__main__":
    raise SystemExit(main(collectives, __doc__, arguments, device="ranks"))
