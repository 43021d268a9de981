"""The dtypes FSDP2 actually uses under FULL/DEFAULT/PURE, captured on every rank of one process group.

Usage (one process per GPU, any number of GPUs):
    NCCL_NVLS_ENABLE=0 torchrun --nproc_per_node=2 bench/distributed_dtypes.py OUTPUT.json
    torchrun --nproc_per_node=2 bench/distributed_dtypes.py OUTPUT.json --backend gloo   # CPU

Each rank runs :func:`gpukb.distributed.dtypes.capture` (one forward and backward of a ``fully_shard``-ed two-layer
MLP) under each mode's ``MixedPrecisionPolicy``: the dtypes of the parameters and inputs each layer saw in forward,
of the unsharded and sharded gradients, of the sharded parameters, and every collective FSDP2 called with its input
dtype. NCCL with one GPU per rank when CUDA is available, else gloo on the CPU. Rank 0 gathers every rank's
captures and writes the record.
"""

from __future__ import annotations

from gpukb.distributed.dtypes import capture
from gpukb.distributed.fsdp_config import MODES, plan
from gpukb.distributed.results import FsdpDtypes
from gpukb.records.script import Script, main


def dtypes(script: Script) -> FsdpDtypes | None:
    import torch.distributed as dist

    script.note(
        f"{script.world} ranks, {dist.get_backend()}; one forward and backward of a fully_shard-ed two-layer MLP "
        "(16-32-8, batch 4) per mode on every rank, dtypes seen by hooks and by wrappers of the "
        "torch.distributed collectives."
    )
    captures = []
    for mode in MODES:
        p = plan(mixed_precision=mode)
        got = capture(p, device=script.device)
        captures.append(
            {
                "rank": script.rank,
                "mode": mode,
                "param_dtype": p.param_dtype,
                "reduce_dtype": p.reduce_dtype,
                **{k: v for k, v in got.items() if k != "collectives"},
                "collectives": [{"op": op, "dtype": dtype} for op, dtype in got["collectives"]],
            }
        )
    every: list[list[dict] | None] = [None] * script.world
    dist.all_gather_object(every, captures)
    dist.barrier()
    if script.rank != 0:
        return None
    rows = [c for ranks in every for c in ranks]
    for c in rows:
        print(
            f"rank {c['rank']} {c['mode']:<8} forward {c['forward_params']} grads {c['unsharded_grads']} -> "
            f"{c['sharded_grads']}  collectives {[(x['op'], x['dtype']) for x in c['collectives']]}",
            flush=True,
        )
    return FsdpDtypes(
        run=script.finished(),
        backend=dist.get_backend(),
        world_size=script.world,
        device="cuda" if script.on_gpu else "cpu",
        captures=rows,
    )


if __name__ == "__main__":
    raise SystemExit(main(dtypes, __doc__, device="ranks"))
