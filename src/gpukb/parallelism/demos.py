"""Each scheme run with PyTorch's engines on the ranks of an initialized process group, against one process.

Every function here runs on every rank (started by :func:`gpukb.distributed.launch.run_spawned`, which kills a
rank that hangs) and returns plain data: whether the outputs and the gradients equal those of the same model on one
process (to ``TOLERANCE``), and the collectives the step ran (:class:`~gpukb.parallelism.traffic.CollectiveLog`),
for the tests to compare with :mod:`gpukb.parallelism.communication`. :func:`run_two` runs the one-dimensional
schemes on one group of two ranks, :func:`run_four` FSDP + TP on a 2 × 2 mesh.
"""

from __future__ import annotations

import warnings

from gpukb.parallelism.model import BlockShape

#: Absolute tolerance for float32 results of a split computation against one process (summation order differs).
TOLERANCE = 1e-5


def _close(a, b) -> bool:
    import torch

    return bool(torch.allclose(a, b, atol=TOLERANCE, rtol=TOLERANCE))


def _log_rows(log) -> list[tuple[str, int, int, int]]:
    return [(c.kind, c.ranks, c.whole_bytes, c.sent_bytes) for c in log.collectives]


# --8<-- [start:tp-plan]
def tp_plan(sequence: bool = False, naive: bool = False) -> dict:
    """The ``parallelize_module`` plan for :func:`gpukb.parallelism.model.block`.

    Column-parallel Q, K, V and ``w1`` (each rank computes ``heads/t`` heads and ``4h/t`` of the MLP), row-parallel
    ``wo`` and ``w2`` (partial sums, reduced). ``PrepareModuleInput`` on the attention turns its input into one
    replicated DTensor, so backward reduces its gradient once, not once per projection (``naive`` leaves it out).
    ``sequence``: LayerNorms on sequence shards (``SequenceParallel``), gathered before the attention and the MLP,
    reduce-scattered back to sequence shards after them.
    """
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import ColwiseParallel, PrepareModuleInput, RowwiseParallel, SequenceParallel

    columns = {name: ColwiseParallel() for name in ("attention.wq", "attention.wk", "attention.wv", "mlp.w1")}
    if not sequence:
        plan = {**columns, "attention.wo": RowwiseParallel(), "mlp.w2": RowwiseParallel()}
        if not naive:
            plan["attention"] = PrepareModuleInput(
                input_layouts=(Replicate(),), desired_input_layouts=(Replicate(),), use_local_output=False
            )
        return plan
    gather = PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),), use_local_output=False)
    return {
        "norm1": SequenceParallel(),
        "norm2": SequenceParallel(),
        "attention": gather,
        "mlp": gather,
        **columns,
        "attention.wo": RowwiseParallel(output_layouts=Shard(1), use_local_output=False),
        "mlp.w2": RowwiseParallel(output_layouts=Shard(1), use_local_output=False),
    }
    # --8<-- [end:tp-plan]


def _reference(shape: BlockShape, x):
    """The block on one process: output, input gradient and parameter gradients of ``sum(y²)``."""
    from gpukb.parallelism.model import block

    ref = block(shape)
    x = x.clone().requires_grad_()
    y = ref(x)
    y.square().sum().backward()
    return y.detach(), x.grad, {n: p.grad for n, p in ref.named_parameters()}


def _full(t):
    return t.full_tensor() if hasattr(t, "full_tensor") else t


def tensor_parallel(rank: int, world: int, shape: BlockShape, sequence: bool = False, naive: bool = False) -> dict:
    """One training step of the block under tensor (and ``sequence``) parallelism with ``parallelize_module``."""
    import torch
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    from torch.distributed.tensor.debug import CommDebugMode
    from torch.distributed.tensor.parallel import parallelize_module

    from gpukb.parallelism.model import block
    from gpukb.parallelism.traffic import CollectiveLog

    mesh = init_device_mesh("cpu", (world,))
    torch.manual_seed(1)
    x = torch.randn(shape.batch, shape.seq, shape.hidden)
    want_y, want_dx, want_grads = _reference(shape, x)
    model = parallelize_module(block(shape), mesh, tp_plan(sequence, naive))
    # under sequence parallelism the block takes and returns sequence shards (Shard(1) DTensors)
    xs = (distribute_tensor(x, mesh, [Shard(1)]) if sequence else x.clone()).requires_grad_()
    with CommDebugMode() as pytorch_count, CollectiveLog() as forward:
        y = model(xs)
    with CollectiveLog() as backward:
        (y.to_local() if sequence else y).square().sum().backward()  # each rank's share of sum(y²)
    with CollectiveLog() as reduce:  # sequence parallelism leaves the LayerNorm gradients as partial sums
        grads = {
            n: (p.grad.redistribute(placements=[Replicate()]) if sequence and "norm" in n else p.grad)
            for n, p in model.named_parameters()
        }
    grads = {n: _full(g) for n, g in grads.items()}
    return {
        "output_equal": _close(_full(y), want_y),
        "input_grad_equal": _close(_full(xs.grad), want_dx),
        "param_grads_equal": all(_close(grads[n], want_grads[n]) for n in want_grads),
        "local_q_shape": list(model.attention.wq.weight.to_local().shape),
        "forward": _log_rows(forward),
        "backward": _log_rows(backward),
        "reduce": _log_rows(reduce),
        "commdebug_forward": {str(k).rsplit(".", 1)[-1]: v for k, v in pytorch_count.get_comm_counts().items()},
    }


def context_parallel(rank: int, world: int, batch: int = 1, heads: int = 2, seq: int = 8, dim: int = 4) -> dict:
    """Causal ring attention on sequence blocks against ``scaled_dot_product_attention`` on one process, and
    whether PyTorch's own ``context_parallel`` runs here."""
    import torch
    import torch.nn.functional as functional
    from torch.distributed.device_mesh import init_device_mesh

    from gpukb.parallelism.ring_attention import ring_attention
    from gpukb.parallelism.traffic import CollectiveLog

    torch.manual_seed(2)
    q, k, v = (torch.randn(batch, heads, seq, dim, requires_grad=True) for _ in range(3))
    want = functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    want.square().sum().backward()
    block = slice(rank * seq // world, (rank + 1) * seq // world)
    mine = [t.detach()[:, :, block].clone().requires_grad_() for t in (q, k, v)]
    with CollectiveLog() as forward:
        out = ring_attention(*mine)
    with CollectiveLog() as backward:
        out.square().sum().backward()
    result = {
        "output_equal": _close(out, want[:, :, block]),
        "grads_equal": all(_close(m.grad, t.grad[:, :, block]) for m, t in zip(mine, (q, k, v), strict=True)),
        "forward": _log_rows(forward),
        "backward": _log_rows(backward),
        "shard_bytes": mine[1].numel() * mine[1].element_size(),
    }
    from torch.distributed.tensor.experimental import context_parallel as pytorch_cp

    buffers = [t.detach().clone() for t in (q, k, v)]
    try:
        with pytorch_cp(init_device_mesh("cpu", (world,)), buffers=buffers, buffer_seq_dims=[2, 2, 2]):
            functional.scaled_dot_product_attention(*buffers, is_causal=True)
        result["pytorch_cp"] = "ran"
    except Exception as e:
        messages = [str(e)] + [str(c) for c in (e.__cause__, e.__context__) if c is not None]
        result["pytorch_cp"] = next((m for m in messages if "sharding strategy" in m), messages[0]).splitlines()[0]
    return result


class _Order:
    """The order in which a pipeline stage ran forwards and backwards, recorded by an identity with a hook."""

    def __init__(self) -> None:
        self.actions: list[str] = []

    def module(self):
        import torch

        order = self

        class _Mark(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                order.actions.append("F")
                return x.view_as(x)

            @staticmethod
            def backward(ctx, grad):
                order.actions.append("B")
                return grad

        class Mark(torch.nn.Module):
            def forward(self, x):
                return _Mark.apply(x)

        return Mark()


def _chain(hidden: int, layers: int, seed: int = 3):
    import torch

    torch.manual_seed(seed)
    return torch.nn.Sequential(
        *[torch.nn.Sequential(torch.nn.Linear(hidden, hidden), torch.nn.Tanh()) for _ in range(layers)]
    )


# --8<-- [start:pipeline]
def pipeline(
    rank: int, world: int, schedule: str, micro_batches: int = 4, batch: int = 8, hidden: int = 8, layers: int = 4
) -> dict:
    """One step of a chain of ``layers`` layers cut into ``world`` stages, run by ``ScheduleGPipe`` or
    ``Schedule1F1B``; the order each stage ran its micro-batches, gradients against one process."""
    import torch
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

    from gpukb.parallelism.traffic import CollectiveLog

    per_stage = layers // world
    full = _chain(hidden, layers)
    torch.manual_seed(4)
    x, target = torch.randn(batch, hidden), torch.randn(batch, hidden)
    torch.nn.functional.mse_loss(full(x), target).backward()
    order = _Order()
    # the mark sits after the layers, where every stage's output needs a gradient, so each backward is seen
    part = torch.nn.Sequential(*_chain(hidden, layers)[rank * per_stage : (rank + 1) * per_stage], order.module())
    micro = torch.empty(batch // micro_batches, hidden)
    stage = PipelineStage(part, rank, world, torch.device("cpu"))
    runner = {"GPipe": ScheduleGPipe, "1F1B": Schedule1F1B}[schedule]
    step = runner(stage, micro_batches, loss_fn=torch.nn.functional.mse_loss)  # gradients scaled by 1/m

    def run() -> None:
        if rank == 0:
            step.step(x)
        elif rank == world - 1:
            step.step(target=target)
        else:
            step.step()

    run()  # the first step also agrees on shapes between the stages: not part of a step's traffic
    part.zero_grad()
    order.actions.clear()
    with CollectiveLog() as log:
        run()
    # --8<-- [end:pipeline]
    mine = full[rank * per_stage : (rank + 1) * per_stage]
    grads = [p.grad for p in part.parameters()]
    return {
        "order": order.actions,
        "grads_equal": all(_close(g, w.grad) for g, w in zip(grads, mine.parameters(), strict=True)),
        "log": _log_rows(log),
        "activation_bytes": micro.numel() * micro.element_size(),
    }


def expert_parallel(rank: int, world: int, tokens: int = 8, hidden: int = 8, experts: int = 4, top_k: int = 2) -> dict:
    """A mixture-of-experts step with each rank's tokens dispatched to the ranks owning their experts, against the
    same layer on one process over every rank's tokens."""
    import torch
    import torch.distributed as dist

    from gpukb.parallelism.experts import expert_parallel_forward, load, moe
    from gpukb.parallelism.traffic import CollectiveLog

    every = [torch.randn(tokens, hidden, generator=torch.Generator().manual_seed(10 + r)) for r in range(world)]
    reference = moe(hidden, experts, top_k)
    everything = torch.cat(every).requires_grad_()
    want = reference(everything)
    want.square().sum().backward()
    layer = moe(hidden, experts, top_k)
    mine_x = every[rank].clone().requires_grad_()  # as if an earlier layer needed its gradient
    with CollectiveLog() as log:
        out, routed = expert_parallel_forward(layer, mine_x)
        out.square().sum().backward()
    dist.all_reduce(layer.router.weight.grad)  # the router is replicated: its gradient is summed over ranks
    mine = slice(rank * experts // world, (rank + 1) * experts // world)
    return {
        "output_equal": _close(out, want[rank * tokens : (rank + 1) * tokens]),
        "expert_grads_equal": _close(layer.w1.grad[mine], reference.w1.grad[mine])
        and _close(layer.w2.grad[mine], reference.w2.grad[mine]),
        "router_grad_equal": _close(layer.router.weight.grad, reference.router.weight.grad),
        "input_grad_equal": _close(mine_x.grad, everything.grad[rank * tokens : (rank + 1) * tokens]),
        "routed": routed,
        "load": load(reference.route(torch.cat(every))[1], experts),
        "log": _log_rows(log),
    }


def fsdp_tp(rank: int, world: int, shape: BlockShape, tp: int = 2) -> dict:
    """FSDP (``fully_shard``) over the first dimension of a ``(dp, tp)`` mesh, tensor parallelism over the second;
    each data-parallel replica gets its own batch, gradients against one process averaged over replicas."""
    import torch
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor.parallel import parallelize_module

    from gpukb.parallelism.model import block
    from gpukb.parallelism.traffic import CollectiveLog

    dp = world // tp
    # --8<-- [start:fsdp-tp]
    mesh = init_device_mesh("cpu", (dp, tp), mesh_dim_names=("dp", "tp"))
    model = parallelize_module(block(shape), mesh["tp"], tp_plan())
    fully_shard(model, mesh=mesh["dp"])
    # --8<-- [end:fsdp-tp]
    replica = mesh.get_local_rank("dp")
    xs = [
        torch.randn(shape.batch, shape.seq, shape.hidden, generator=torch.Generator().manual_seed(20 + d))
        for d in range(dp)
    ]
    ref = block(shape)
    for x in xs:
        (ref(x).square().sum() / dp).backward()  # FSDP averages gradients over replicas
    with CollectiveLog() as log:
        y = model(xs[replica])
        y.square().sum().backward()
    grads = {n: p.grad.full_tensor() for n, p in model.named_parameters()}
    want = dict(ref.named_parameters())
    with torch.no_grad():
        want_y = ref(xs[replica])
    return {
        "mesh": [dp, tp],
        "output_equal": _close(y, want_y),
        "param_grads_equal": all(_close(grads[n], want[n].grad) for n in want),
        "local_shapes": {n: list(p.to_local().shape) for n, p in model.named_parameters()},
        "log": _log_rows(log),
    }


def hang(rank: int, world: int) -> None:
    """A deadlock: every rank waits to receive from the next one, and nobody sends."""
    import torch
    import torch.distributed as dist

    dist.recv(torch.empty(1), src=(rank + 1) % world)


def run_two(rank: int, world: int) -> dict:
    """Every one-dimensional scheme on one group (two ranks in the tests)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DTensor's and pipelining's experimental-API warnings
        shape = BlockShape()
        return {
            "tp": tensor_parallel(rank, world, shape),
            "tp_naive": tensor_parallel(rank, world, shape, naive=True),
            "sp": tensor_parallel(rank, world, shape, sequence=True),
            "cp": context_parallel(rank, world),
            "gpipe": pipeline(rank, world, "GPipe"),
            "1f1b": pipeline(rank, world, "1F1B"),
            "ep": expert_parallel(rank, world),
        }


def run_four(rank: int, world: int) -> dict:
    """FSDP + TP on a ``(world/2, 2)`` mesh, and a four-stage pipeline under both schedules."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "fsdp_tp": fsdp_tp(rank, world, BlockShape()),
            "gpipe": pipeline(rank, world, "GPipe", micro_batches=4, layers=world),
            "1f1b": pipeline(rank, world, "1F1B", micro_batches=4, layers=world),
        }
