"""What dtype FSDP2 actually uses: parameters in forward, gradients, the all-gather and the reduce-scatter.

:func:`record_collectives` wraps the ``torch.distributed`` collectives FSDP2 calls (it looks them up on the
``torch.distributed`` module at call time, so the wrappers see every call) and records each call's name and the
dtype of its input. :func:`capture` builds a small two-layer model, applies ``fully_shard`` with a plan's
``MixedPrecisionPolicy``, runs one forward and backward, and reports what the hooks saw. It runs on every rank of an
initialized process group (gloo on the CPU in CI, NCCL on GPUs).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator

#: The collectives FSDP2 may call, by torch version (``reduce_scatter_single``/``all_gather_single`` are newer).
COLLECTIVES = (
    "all_gather_into_tensor",
    "all_gather_single",
    "reduce_scatter_tensor",
    "reduce_scatter_single",
    "all_reduce",
)


@contextlib.contextmanager
def record_collectives() -> Iterator[list[tuple[str, str]]]:
    """Within the block, every call of a :data:`COLLECTIVES` function appends ``(name, input dtype)``."""
    import torch.distributed as dist

    calls: list[tuple[str, str]] = []
    originals = {name: getattr(dist, name) for name in COLLECTIVES if hasattr(dist, name)}

    def wrap(name, fn):
        signature = inspect.signature(fn)

        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs).arguments
            tensor = next(bound[k] for k in ("input", "input_tensor", "tensor") if k in bound)
            calls.append((name, str(tensor.dtype).removeprefix("torch.")))
            return fn(*args, **kwargs)

        return wrapper

    for name, fn in originals.items():
        setattr(dist, name, wrap(name, fn))
    try:
        yield calls
    finally:
        for name, fn in originals.items():
            setattr(dist, name, fn)


# --8<-- [start:capture]
def capture(plan, device: str = "cpu", seed: int = 0) -> dict[str, object]:
    """One forward and backward of a ``fully_shard``-ed two-layer MLP under ``plan``'s mixed precision.

    Returns the dtype names of the parameters each layer saw in forward (``forward_params``), of the layer inputs
    (``forward_inputs``), of the unsharded gradients (``unsharded_grads``), of the sharded ``.grad`` the optimizer
    sees (``sharded_grads``) and of the sharded parameters (``sharded_params``), and the collectives called with
    their input dtypes (``collectives``, in call order).
    """
    import torch
    from torch import nn
    from torch.distributed.fsdp import fully_shard

    torch.manual_seed(seed)
    with torch.device(device):
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
    layers = [model[0], model[2]]
    seen: dict[str, list[str]] = {"forward_params": [], "forward_inputs": [], "unsharded_grads": []}

    def pre_hook(module, args):
        seen["forward_params"].append(str(module.weight.dtype).removeprefix("torch."))
        seen["forward_inputs"].append(str(args[0].dtype).removeprefix("torch."))
        if module.weight.requires_grad:
            module.weight.register_hook(lambda g: seen["unsharded_grads"].append(str(g.dtype).removeprefix("torch.")))

    for layer in layers:
        layer.register_forward_pre_hook(pre_hook)
        fully_shard(layer, **plan.fully_shard_kwargs())
    fully_shard(model, **plan.fully_shard_kwargs())
    x = torch.randn(4, 16, device=device)
    with record_collectives() as calls:
        model(x).float().square().mean().backward()
    return {
        **seen,
        "sharded_params": sorted({str(p.dtype).removeprefix("torch.") for p in model.parameters()}),
        "sharded_grads": sorted({str(p.grad.dtype).removeprefix("torch.") for p in model.parameters()}),
        "param_type": type(layers[0].weight).__name__,
        "collectives": list(calls),
    }


# --8<-- [end:capture]
