"""Everything the CI runs on one process group: FSDP2 dtypes under FULL/DEFAULT/PURE, the collective benchmark and
its checks, and which dtypes the backend refuses to reduce. :func:`run_all` is what every rank calls; the same
function runs on NCCL with one GPU per rank (``device="cuda"``)."""

from __future__ import annotations

import warnings

from gpukb.dtypes import torch_dtype


def run_all(rank: int, world_size: int, device: str = "cpu", sizes: tuple[int, ...] = (4096, 65536)) -> dict:
    """Run on every rank of an initialized group; returns plain data (picklable)."""
    import torch
    import torch.distributed as dist

    from gpukb.distributed.benchmark import OPS, check_values, measure
    from gpukb.distributed.dtypes import capture
    from gpukb.distributed.fsdp_config import MODES, plan

    out: dict = {"torch": torch.__version__, "backend": dist.get_backend(), "world_size": world_size}
    out["dtypes"] = {mode: capture(plan(mixed_precision=mode), device=device) for mode in MODES}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        out["values_ok"] = {op: check_values(op, world_size, device=device) for op in OPS}
    out["bandwidth"] = [row for op in OPS for row in measure(op, list(sizes), iters=5, warmup=2, device=device)]
    refused = {}
    for dtype in ("float8_e4m3fn",):
        try:
            dist.all_reduce(torch.ones(4, dtype=torch_dtype(dtype), device=device))
            refused[dtype] = None
        except Exception as e:  # the backend's own message
            refused[dtype] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    out["refused"] = refused
    from gpukb.distributed.ddp import gradient_storage

    out["ddp_gradients"] = {view: gradient_storage(view, device=device) for view in (False, True)}
    from gpukb.distributed.fsdp_config import device_mesh

    hybrid = device_mesh(plan(data_parallel_replicate_degree=world_size), world_size, torch.device(device).type)
    out["hybrid_mesh"] = {"shape": list(hybrid.shape), "names": list(hybrid.mesh_dim_names)}
    try:
        device_mesh(plan(), world_size + 1, torch.device(device).type)
        out["mesh_error"] = None
    except ValueError as e:
        out["mesh_error"] = str(e)
    from gpukb.distributed.model import ModelConfig
    from gpukb.distributed.training import train

    run = train(
        ModelConfig.tiny(),
        plan(mixed_precision="PURE", activation_checkpointing=True, activation_checkpointing_reentrant=False),
        batch=2,
        steps=1,
        warmup=0,
        repeats=1,
        device=device,
    )
    out["train_losses"] = run.losses
    dist.barrier()
    return out
