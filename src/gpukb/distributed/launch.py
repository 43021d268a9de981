"""Start a process group of several local processes, run a function on every rank, and never hang.

:func:`run_spawned` spawns ``world_size`` processes (the ``spawn`` start method), each joins a process group over
TCP on a free local port and calls ``fn(rank, world_size, *args)``; the parent collects every rank's return value
or error within ``timeout`` seconds and kills the workers otherwise. With ``backend="gloo"`` the workers see no GPU
(``CUDA_VISIBLE_DEVICES=""``), so nothing is moved to CUDA, and use one CPU thread each. Under ``torchrun`` a
bench script joins the group ``torchrun`` started through its skeleton
(:func:`gpukb.records.script.join_process_group`).
"""

from __future__ import annotations

import os
import queue
import socket
import time
import traceback
from collections.abc import Callable
from typing import Any

from gpukb.arguments import choice, positive_int, real


def free_port() -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank, world_size, backend, port, fn, args, results) -> None:
    if backend == "gloo":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    import torch
    import torch.distributed as dist

    if backend == "gloo":
        torch.set_num_threads(1)  # one CPU thread per rank: the ranks share the machine's cores
    else:
        torch.cuda.set_device(rank % torch.cuda.device_count())  # one GPU per rank

    try:
        dist.init_process_group(
            backend,
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=world_size,
        )
        try:
            results.put((rank, True, fn(rank, world_size, *args)))
        finally:
            dist.destroy_process_group()
    except BaseException:  # report every failure to the parent, which raises it
        results.put((rank, False, traceback.format_exc()))


def run_spawned(
    fn: Callable[..., Any],
    world_size: int = 2,
    backend: str = "gloo",
    timeout: float = 60.0,
    args: tuple = (),
    start_method: str = "spawn",
) -> list[Any]:
    """``[fn(0, world_size, *args), ..., fn(world_size - 1, ...)]``, each run in its own process of one group.

    ``fn`` must be importable by name (a module-level function) and its result picklable. ``start_method``
    ``"fork"`` (Linux, CPU only) saves each worker the import of torch, as DataLoader workers do.

    Raises:
        TimeoutError: If a rank has not answered within ``timeout`` seconds (all workers are then killed).
        RuntimeError: If a rank raised (the message holds its traceback).
    """
    import multiprocessing as mp

    world_size = positive_int("world_size", world_size)
    choice("backend", backend, ("gloo", "nccl"))
    deadline = time.monotonic() + real("timeout", timeout, positive=True)
    choice("start_method", start_method, ("spawn", "fork", "forkserver"))
    if start_method == "fork" and backend == "nccl":
        raise ValueError("start_method 'fork' cannot be used with NCCL (CUDA does not survive a fork); use 'spawn'")
    ctx = mp.get_context(start_method)
    results = ctx.Queue()
    port = free_port()
    procs = [
        ctx.Process(target=_worker, args=(r, world_size, backend, port, fn, args, results), daemon=True)
        for r in range(world_size)
    ]
    for p in procs:
        p.start()
    answers: dict[int, Any] = {}
    try:
        while len(answers) < world_size:
            try:
                rank, ok, value = results.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(
                    f"ranks {sorted(set(range(world_size)) - set(answers))} did not finish within {timeout} s"
                ) from None
            if not ok:
                raise RuntimeError(f"rank {rank} failed:\n{value}")
            answers[rank] = value
    finally:
        for p in procs:
            p.join(timeout=max(0.0, min(5.0, deadline - time.monotonic())))
            if p.is_alive():
                p.kill()
                p.join()
    return [answers[r] for r in range(world_size)]
