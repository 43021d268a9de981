"""Train the chapter's transformer for a fixed number of steps and measure tokens/s and memory.

:func:`train` runs on one process (and, through ``fully_shard``, on every rank of an initialized process group):
FSDP2 as an :class:`gpukb.distributed.fsdp_config.FsdpPlan` says, or plain training (``plan=None``) of the same
model. Used by ``bench/distributed_fsdp.py``; the CPU tests run it on the tiny model.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from gpukb.arguments import choice, non_negative_int, positive_int
from gpukb.distributed.checkpointing import IMPLS
from gpukb.distributed.model import ModelConfig, loss_fn, transformer
from gpukb.dtypes import torch_dtype


@dataclass
class TrainResult:
    """Seconds of each timed repeat, tokens per repeat, memory and the losses of the first and last step."""

    seconds: list[float] = field(default_factory=list)
    tokens_per_repeat: int = 0
    peak_bytes: int = 0
    activation_bytes: int = 0
    losses: list[float] = field(default_factory=list)

    @property
    def tokens_per_s(self) -> list[float]:
        return [self.tokens_per_repeat / s for s in self.seconds]


def checkpointing_of(plan) -> str:
    """The plan's activation checkpointing as one of :data:`gpukb.distributed.checkpointing.IMPLS`."""
    if plan is None or not plan.activation_checkpointing:
        return "none"
    return "reentrant" if plan.reentrant else "non-reentrant"


def build(config: ModelConfig, plan=None, checkpointing: str | None = None, device: str = "cpu", mesh=None):
    """The model on ``device``: each block wrapped with ``checkpoint_wrapper`` (``checkpointing`` is one of
    :data:`gpukb.distributed.checkpointing.IMPLS`; ``None`` takes the plan's choice), then ``fully_shard`` on each
    block and on the root when ``plan`` is given."""
    import torch
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointImpl, checkpoint_wrapper

    checkpointing = choice("checkpointing", checkpointing or checkpointing_of(plan), IMPLS)
    with torch.device(device):
        model = transformer(config)
    if checkpointing != "none":
        impl = CheckpointImpl.REENTRANT if checkpointing == "reentrant" else CheckpointImpl.NO_REENTRANT
        for i, block in enumerate(model.blocks):
            model.blocks[i] = checkpoint_wrapper(block, checkpoint_impl=impl)
    if plan is not None:
        from torch.distributed.fsdp import fully_shard

        for block in model.blocks:
            fully_shard(block, **plan.fully_shard_kwargs(mesh))
        fully_shard(model, **plan.fully_shard_kwargs(mesh))
    return model


def train(
    config: ModelConfig,
    plan=None,
    checkpointing: str | None = None,
    batch: int = 8,
    steps: int = 10,
    warmup: int = 3,
    repeats: int = 3,
    device: str = "cpu",
    autocast: str | None = None,
    seed: int = 0,
    mesh=None,
    ddp: bool = False,
) -> TrainResult:
    """``warmup`` untimed steps, then ``repeats`` timed runs of ``steps`` AdamW steps on random tokens.

    Runs on every rank of an initialized process group (or alone): each rank draws its own batch (seed + rank);
    ``plan=None`` with ``ddp=True`` wraps the model in ``DistributedDataParallel``. Gradients are zeroed in place
    (``set_to_none=False``) so they stay allocated, as the memory model assumes. ``tokens_per_repeat`` counts all
    ranks' tokens and each repeat's seconds are the slowest rank's; ``peak_bytes`` (CUDA only) is the largest
    rank's allocator peak after warm-up, earlier runs' objects collected first; ``activation_bytes`` is what one
    forward adds on this rank.
    """
    import gc

    import torch
    import torch.distributed as dist

    batch, steps, repeats = (positive_int(n, v) for n, v in (("batch", batch), ("steps", steps), ("repeats", repeats)))
    warmup = non_negative_int("warmup", warmup)
    if autocast is not None:
        choice("autocast", autocast, ("bfloat16", "float16"))
    cuda = torch.device(device).type == "cuda"
    # an earlier model and optimizer of this process may survive in reference cycles (FSDP2's hooks make some):
    # collect them, or the allocator's peak below would count them too
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    grouped = dist.is_available() and dist.is_initialized()
    rank, world = (dist.get_rank(), dist.get_world_size()) if grouped else (0, 1)
    torch.manual_seed(seed)
    model = build(config, plan, checkpointing, device, mesh)
    if plan is None and ddp:
        from torch.nn.parallel import DistributedDataParallel

        index = torch.device(device).index
        model = DistributedDataParallel(
            model, device_ids=[torch.cuda.current_device() if index is None else index] if cuda else None
        )
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator(device=device).manual_seed(seed + rank)
    data = torch.randint(0, config.vocab, (batch, config.seq + 1), device=device, generator=gen)
    inputs, targets = data[:, :-1], data[:, 1:]
    result = TrainResult(tokens_per_repeat=steps * batch * config.seq * world)

    def slowest(value: float) -> float:
        if world == 1:
            return value
        t = torch.tensor([value], dtype=torch.float64, device=device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return float(t)

    def step(record_activations: bool = False) -> float:
        optimizer.zero_grad(set_to_none=False)
        before = torch.cuda.memory_allocated() if cuda else 0
        with torch.autocast(
            torch.device(device).type, dtype=torch_dtype(autocast or "bfloat16"), enabled=autocast is not None
        ):
            loss = loss_fn(model(inputs), targets)
        if record_activations and cuda:
            result.activation_bytes = torch.cuda.memory_allocated() - before
        loss.backward()
        optimizer.step()
        return loss.detach()

    losses = [step() for _ in range(warmup)]
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    for _ in range(repeats):
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        losses += [step() for _ in range(steps)]
        if cuda:
            torch.cuda.synchronize()
        result.seconds.append(slowest(time.perf_counter() - start))
    if cuda:
        result.peak_bytes = int(slowest(float(torch.cuda.max_memory_allocated())))
    losses.append(step(record_activations=True))
    result.losses = [float(losses[0]), float(losses[-1])]
    return result
