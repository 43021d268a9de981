"""Time all-reduce, reduce-scatter and all-gather over ``torch.distributed`` and report bandwidth as nccl-tests does.

For each size ``S`` (nccl-tests' definition: the per-rank array for all-reduce, the whole gathered array for
reduce-scatter and all-gather) the collective runs ``warmup`` times, then ``iters`` times between two barriers, in
each of ``repeats`` windows; a window's time of one operation is the slowest rank's mean.
:func:`gpukb.distributed.collectives.bandwidths` turns the median into algorithm and bus bandwidth. Works on gloo
(CPU) and NCCL (one GPU per rank); ``bench/distributed_collectives.py`` is the ``torchrun`` entry point.
"""

from __future__ import annotations

from gpukb.arguments import choice, positive_int
from gpukb.distributed.collectives import bandwidths
from gpukb.dtypes import torch_dtype

OPS = ("all_reduce", "reduce_scatter", "all_gather")


def _buffers(op: str, size_bytes: int, world: int, dtype, device):
    import torch

    elem = torch.empty((), dtype=dtype).element_size()
    if size_bytes % (elem * world):
        raise ValueError(f"size {size_bytes} B is not a multiple of {world} ranks × {elem} B elements")
    n = size_bytes // elem
    if op == "all_reduce":
        return torch.ones(n, dtype=dtype, device=device), None
    if op == "reduce_scatter":
        return torch.ones(n, dtype=dtype, device=device), torch.empty(n // world, dtype=dtype, device=device)
    return torch.ones(n // world, dtype=dtype, device=device), torch.empty(n, dtype=dtype, device=device)


def _call(op: str, inp, out) -> None:
    import torch.distributed as dist

    if op == "all_reduce":
        dist.all_reduce(inp)
    elif op == "reduce_scatter":
        dist.reduce_scatter_tensor(out, inp)
    else:
        dist.all_gather_into_tensor(out, inp)


def check_values(op: str, world: int, dtype="float32", device: str = "cpu") -> bool:
    """One call of ``op`` on ones gives ``world`` everywhere (the sums) or ones (the gather)."""

    inp, out = _buffers(op, 64 * world, world, torch_dtype(dtype), device)
    _call(op, inp, out)
    result = inp if op == "all_reduce" else out
    expected = 1.0 if op == "all_gather" else float(world)
    return bool((result == expected).all())


def measure(
    op: str,
    sizes: list[int],
    iters: int = 20,
    warmup: int = 5,
    dtype: str = "float32",
    device: str = "cpu",
    repeats: int = 1,
) -> list[dict]:
    """Rows ``{op, size_bytes, ms, algbw, busbw, ranks}`` for each size (bandwidths in bytes/s).

    Each of ``repeats`` samples is one window of ``iters`` back-to-back calls between barriers, timed by the host
    clock (:class:`~gpukb.measuring.timing.HostTimer`, the GPU synchronized at both ends): the mean time of one call,
    the slowest rank's. ``ms`` is their summary (:class:`~gpukb.measuring.stats.Summary`, as a dict), and the
    bandwidths are at its median.
    """
    import warnings

    import torch
    import torch.distributed as dist

    from gpukb.measuring.stats import summarize
    from gpukb.measuring.timing import HostTimer

    choice("op", op, OPS)
    iters, warmup = positive_int("iters", iters), positive_int("warmup", warmup)
    repeats = positive_int("repeats", repeats)
    world = dist.get_world_size()
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else None

    def settle() -> None:  # every rank's earlier work done, then all ranks start together
        if sync is not None:
            sync()
        dist.barrier()

    timer = HostTimer(sync, calls_per_sample=iters)
    rows = []
    with warnings.catch_warnings():  # torch ≥ 2.12 suggests the *_single names; both exist in 2.11 and 2.13
        warnings.simplefilter("ignore", FutureWarning)
        for size in sizes:
            inp, out = _buffers(op, positive_int("size", size), world, torch_dtype(dtype), device)
            for _ in range(warmup):
                _call(op, inp, out)
            samples = timer.time(lambda inp=inp, out=out: _call(op, inp, out), repeats, before=settle)
            slowest = torch.tensor(samples, dtype=torch.float64, device=device)
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            ms = summarize(slowest.tolist())
            algbw, busbw = bandwidths(op, size, ms.median * 1e-3, world)
            rows.append(
                {"op": op, "size_bytes": size, "ms": ms.model_dump(), "algbw": algbw, "busbw": busbw, "ranks": world}
            )
    return rows
