"""DDP's gradient buckets: how many bytes hold the gradients, with and without ``gradient_as_bucket_view``.

``DistributedDataParallel`` all-reduces gradients in buckets (flat tensors of about ``bucket_cap_mb`` each). By
default (``gradient_as_bucket_view=False``) each parameter's ``.grad`` is a tensor of its own and is copied into its
bucket before the all-reduce and back after it, so every gradient is held twice; with ``True`` the ``.grad`` tensors
are views into the buckets and the second copy disappears. PyTorch's documentation of the argument says so ("the
saved memory size will be equal to the total gradients size"); :func:`gradient_storage` measures it on any process
group, gloo on the CPU included, by looking at the storages.
"""

from __future__ import annotations

from gpukb.arguments import flag, positive_int, real


# --8<-- [start:storage]
def gradient_storage(
    gradient_as_bucket_view: bool, device: str = "cpu", bucket_cap_mb: float = 0.05, steps: int = 3
) -> dict[str, int]:
    """Train a small MLP wrapped in DDP for ``steps`` steps and count the bytes that hold its gradients.

    Runs on every rank of an initialized process group. A communication hook records the bucket each all-reduce
    sends (then all-reduces it as DDP's default hook does); after the last step, the storages of the ``.grad``
    tensors and of the buckets are compared.

    Returns:
        ``gradient_bytes`` (the gradients' own size), ``bucket_bytes`` (the buckets of the last step),
        ``distinct_bytes`` (of the storages behind both, each counted once) and ``buckets``.
    """
    import torch
    from torch import nn
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
    from torch.nn.parallel import DistributedDataParallel

    view = flag("gradient_as_bucket_view", gradient_as_bucket_view)
    steps = positive_int("steps", steps)
    bucket_cap_mb = real("bucket_cap_mb", bucket_cap_mb, positive=True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64)).to(device)
    ddp = DistributedDataParallel(model, gradient_as_bucket_view=view, bucket_cap_mb=bucket_cap_mb)
    buckets: dict[int, int] = {}

    def record(state, bucket):  # the bucket's flat tensor, by the address of its storage
        storage = bucket.buffer().untyped_storage()
        buckets[storage.data_ptr()] = storage.nbytes()
        return allreduce_hook(state, bucket)

    ddp.register_comm_hook(None, record)
    for _ in range(steps):  # DDP rebuilds its buckets after the first step: keep the last step's
        buckets.clear()
        ddp(torch.randn(8, 64, device=device)).sum().backward()
    grads = {p.grad.untyped_storage().data_ptr(): p.grad.untyped_storage().nbytes() for p in model.parameters()}
    return {
        "gradient_bytes": sum(p.grad.nbytes for p in model.parameters()),
        "bucket_bytes": sum(buckets.values()),
        "distinct_bytes": sum({**grads, **buckets}.values()),
        "buckets": len(buckets),
    }
    # --8<-- [end:storage]
