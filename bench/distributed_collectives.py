"""All-reduce, reduce-scatter and all-gather bandwidth over torch.distributed, as nccl-tests reports it.

Usage (one process per GPU, any number of GPUs):
    NCCL_NVLS_ENABLE=0 torchrun --nproc_per_node=2 bench/distributed_collectives.py OUTPUT.json
    torchrun --nproc_per_node=2 bench/distributed_collectives.py OUTPUT.json --backend gloo   # CPU

Sizes run from --min-bytes to --max-bytes by factors of 2 (1 KiB to 1 GiB by default). Each size: --warmup
calls, then --iters timed calls between barriers; the time is the slowest rank's mean. Algorithm bandwidth S/t and
bus bandwidth (S/t times 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter and all-gather) follow nccl-tests'
doc/PERFORMANCE.md. Rank 0 writes the record.
"""

from __future__ import annotations

import argparse
import subprocess
import time


def main() -> int:
    from gpukb.records import rerecord_option

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", help="write the distributed.collectives record here (rank 0)")
    rerecord_option(parser)
    parser.add_argument("--backend", choices=("nccl", "gloo"), default=None, help="default: nccl with CUDA, else gloo")
    parser.add_argument("--min-bytes", type=int, default=1 << 10)
    parser.add_argument("--max-bytes", type=int, default=1 << 30)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args()

    import torch.distributed as dist

    from gpukb.distributed.benchmark import OPS, check_values, measure
    from gpukb.distributed.launch import init_from_env
    from gpukb.distributed.results import CollectiveBandwidth
    from gpukb.records import describe_run, finished, write

    rank, world, device = init_from_env(args.backend)
    started = time.perf_counter()
    run = describe_run(
        notes=[
            f"{world} ranks, {dist.get_backend()}; {args.warmup} warm-up calls, then the mean of "
            f"{args.iters} calls between barriers, slowest rank; nccl-tests' algbw and busbw."
        ]
    )
    for op in OPS:
        if not check_values(op, world, args.dtype, device):
            raise SystemExit(f"{op} gave wrong values")
    sizes = []
    size = args.min_bytes
    while size <= args.max_bytes:
        sizes.append(size)
        size *= 2
    rows = []
    for op in OPS:
        for row in measure(op, sizes, args.iters, args.warmup, args.dtype, device):
            rows.append(row)
            if rank == 0:
                print(
                    f"{op:<15} {row['size_bytes']:>12} B  {row['seconds'] * 1e6:10.1f} us  "
                    f"algbw {row['algbw'] / 1e9:8.2f} GB/s  busbw {row['busbw'] / 1e9:8.2f} GB/s",
                    flush=True,
                )
    if rank == 0:
        topology = None
        if device.startswith("cuda"):
            try:
                topology = subprocess.run(
                    ["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=20
                ).stdout
            except (OSError, subprocess.SubprocessError):
                topology = None
        record = CollectiveBandwidth(
            run=finished(run, started),
            backend=dist.get_backend(),
            world_size=world,
            dtype=args.dtype,
            iters=args.iters,
            warmup=args.warmup,
            topology=topology,
            rows=rows,
        )
        print("wrote", write(record, args.output, replace=args.rerecord))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
