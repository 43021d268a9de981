"""Each scheme trained on the ranks of one process group, timed in interleaved rounds, its memory and traffic read.

:func:`build` sets up every scheme on every rank (model, optimizer, a first step), :func:`measure` times them in
rounds (each round steps every scheme in turn, so drift in clocks or temperature spreads over all of them) and logs
one step of each with :class:`~gpukb.parallelism.traffic.CollectiveLog`. Models are the chapter's block
(:mod:`gpukb.parallelism.model`) stacked ``layers`` deep, in bfloat16 throughout (parameters, gradients and AdamW's
two moments: 8 bytes per parameter), so every activation a collective moves is bfloat16 and the formulas of
:mod:`gpukb.parallelism.communication` apply with 2 bytes per element. Runs on NCCL with one GPU per rank, or on
gloo (``device="cpu"``) at small sizes to check the script.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gpukb.arguments import non_negative_int, positive_int
from gpukb.parallelism import communication as comm
from gpukb.parallelism.model import BlockShape

#: Bytes per parameter held by the benchmark's models: bfloat16 parameter, gradient and two AdamW moments.
STATE_BYTES_PER_PARAM = 8


@dataclass(frozen=True)
class Sizes:
    """The benchmark's sizes: ``batch`` sequences of ``seq`` tokens per step across all ranks."""

    hidden: int = 2048
    heads: int = 16
    seq: int = 2048
    batch: int = 8
    layers: int = 4
    micro_batches: int = 8
    experts: int = 8
    top_k: int = 2

    def __post_init__(self) -> None:
        for name in ("hidden", "heads", "seq", "batch", "layers", "micro_batches", "experts", "top_k"):
            positive_int(name, getattr(self, name))

    @classmethod
    def tiny(cls) -> Sizes:
        """Sizes for a check on CPU ranks."""
        return cls(hidden=32, heads=4, seq=16, batch=8, layers=4, micro_batches=8, experts=8, top_k=2)

    def split_params(self) -> int:
        """Parameters of the split matrices of all layers (Q, K, V, O and the MLP: ``12h²`` each)."""
        return 12 * self.hidden**2 * self.layers

    def replicated_params(self) -> int:
        """LayerNorm parameters of all layers (``4h`` each)."""
        return 4 * self.hidden * self.layers


@dataclass
class Scheme:
    """One scheme ready to train on this rank.

    Attributes:
        name: As in the tables.
        step: One training step (forward, backward, optimizer).
        tokens: Tokens the whole group processes per step.
        active: Whether this rank takes part (the one-GPU baseline runs on rank 0 only).
        predicted_state_bytes: Parameters, gradients and optimizer state this rank should hold, from the sizes.
        formula: This rank's collectives per step from :mod:`gpukb.parallelism.communication`.
        state_bytes: What the allocator holds for them after the first step (measured).
        extra: Scheme-specific facts (the pipeline's stage time, the experts' load, a correctness check).
    """

    name: str
    step: Callable[[], None]
    tokens: int
    active: bool
    predicted_state_bytes: int
    formula: list = field(default_factory=list)
    state_bytes: int = 0
    extra: dict = field(default_factory=dict)


def _stack(sizes: Sizes, device, layers: int | None = None, first: int = 0):
    import torch

    from gpukb.parallelism.model import block

    shape = BlockShape(batch=1, seq=sizes.seq, hidden=sizes.hidden, heads=sizes.heads)
    blocks = [block(shape, seed=first + i) for i in range(sizes.layers if layers is None else layers)]
    return torch.nn.Sequential(*blocks).to(device=device, dtype=torch.bfloat16)


def _tokens(sizes: Sizes, batch: int, device, seed: int = 0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    return torch.randn(batch, sizes.seq, sizes.hidden, generator=g).to(device=device, dtype=torch.bfloat16)


def _trainer(model, forward: Callable[[], object], before_step: Callable[[], None] | None = None):
    import torch

    opt = torch.optim.AdamW(
        model.parameters(), lr=1e-4, foreach=False
    )  # a plain Tensor and a DTensor cannot share a foreach kernel

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        loss = forward()
        loss.backward()
        if before_step is not None:
            before_step()
        opt.step()

    return step


def _loss(y):
    return y.float().square().mean()


def _sync(device) -> None:
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def _allocated(device) -> int:
    import torch

    return torch.cuda.memory_allocated() if str(device).startswith("cuda") else 0


def _first_step(scheme: Scheme, before: int, device) -> Scheme:
    """Run the scheme's first step (it allocates gradients and optimizer state) and record what the allocator
    gained since ``before`` (read after the inputs were made, before the model was)."""
    if scheme.active:
        try:
            scheme.step()
        except Exception as err:
            scheme.active = False
            scheme.extra["error"] = f"{type(err).__name__}: {str(err).splitlines()[0][:300]}"
            return scheme
        _sync(device)
        scheme.state_bytes = _allocated(device) - before
    return scheme


def build(rank: int, world: int, sizes: Sizes, device) -> list[Scheme]:
    """Every scheme set up on this rank of a group of ``world`` ranks (``world`` divisible by 2 for FSDP + TP and
    dividing ``layers`` for the pipeline)."""
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
    from torch.distributed.tensor.parallel import parallelize_module

    from gpukb.parallelism.demos import tp_plan

    kind = "cuda" if str(device).startswith("cuda") else "cpu"
    s, h, b, n = sizes.seq, sizes.hidden, sizes.batch, sizes.layers
    split, repl = sizes.split_params(), sizes.replicated_params()
    e = 2  # bfloat16
    tokens = b * s
    schemes: list[Scheme] = []

    # one GPU: the whole model and batch on rank 0
    if rank == 0:
        x = _tokens(sizes, b, device)
        before = _allocated(device)
        model = _stack(sizes, device)
        one = Scheme(
            "one GPU",
            _trainer(model, lambda m=model, x=x: _loss(m(x))),
            tokens,
            True,
            STATE_BYTES_PER_PARAM * (split + repl),
        )
        schemes.append(_first_step(one, before, device))
    else:
        schemes.append(Scheme("one GPU", lambda: None, tokens, False, 0))

    # FSDP over all ranks: each block a unit, each rank a quarter of the batch
    mesh = init_device_mesh(kind, (world,))
    x = _tokens(sizes, b // world, device, seed=rank)
    before = _allocated(device)
    model = _stack(sizes, device)
    for blk in model:
        fully_shard(blk, mesh=mesh)
    fully_shard(model, mesh=mesh)
    per_block = (split + repl) // n
    formula = [t for _ in range(n) for t in comm.fsdp(per_block, world, e)]
    fsdp = Scheme(
        f"FSDP ({world})",
        _trainer(model, lambda m=model, x=x: _loss(m(x))),
        tokens,
        True,
        STATE_BYTES_PER_PARAM * (split + repl) // world,
        formula,
    )
    schemes.append(_first_step(fsdp, before, device))

    # tensor parallelism and tensor + sequence parallelism over all ranks, one replica of the whole batch
    for sequence in (False, True):
        x = _tokens(sizes, b, device)
        local = x.chunk(world, dim=1)[rank].contiguous()
        before = _allocated(device)
        model = _stack(sizes, device)
        for blk in model:
            parallelize_module(blk, mesh, tp_plan(sequence=sequence))
        if sequence:

            def forward(m=model, local=local):
                xs = DTensor.from_local(local, mesh, [Shard(1)], run_check=False)
                return _loss(m(xs).to_local())

            def reduce_norms(m=model):  # the LayerNorms' gradients are partial sums until reduced
                for p in m.parameters():
                    if isinstance(p.grad, DTensor) and any(isinstance(q, Partial) for q in p.grad.placements):
                        p.grad = p.grad.redistribute(placements=[Replicate()])

            step = _trainer(model, forward, reduce_norms)
        else:
            step = _trainer(model, lambda m=model, x=x: _loss(m(x)))
        formula = comm.tensor_parallel(b, s, h, world, e, n, sequence=sequence)
        name = f"TP + SP ({world})" if sequence else f"TP ({world})"
        tp_scheme = Scheme(name, step, tokens, True, STATE_BYTES_PER_PARAM * (split // world + repl), formula)
        schemes.append(_first_step(tp_scheme, before, device))

    # FSDP + TP on a (world/2, 2) mesh
    dp, tp = world // 2, 2
    mesh2 = init_device_mesh(kind, (dp, tp), mesh_dim_names=("dp", "tp"))
    x = _tokens(sizes, b // dp, device, seed=mesh2.get_local_rank("dp"))
    before = _allocated(device)
    model = _stack(sizes, device)
    for blk in model:
        parallelize_module(blk, mesh2["tp"], tp_plan())
        fully_shard(blk, mesh=mesh2["dp"])
    fully_shard(model, mesh=mesh2["dp"])
    formula = [t for _ in range(n) for t in comm.fsdp((split // tp + repl) // n, dp, e)]
    formula += comm.tensor_parallel(b // dp, s, h, tp, e, n)
    both = Scheme(
        f"FSDP ({dp}) + TP ({tp})",
        _trainer(model, lambda m=model, x=x: _loss(m(x))),
        tokens,
        True,
        STATE_BYTES_PER_PARAM * (split // tp + repl) // dp,
        formula,
    )
    schemes.append(_first_step(both, before, device))

    # pipelines: world stages of layers/world blocks, micro_batches micro-batches
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

    per_stage = n // world
    m = sizes.micro_batches
    for name, runner in (("GPipe", ScheduleGPipe), ("1F1B", Schedule1F1B)):
        x = _tokens(sizes, b, device)
        target = torch.zeros(b, 1, device=device)
        micro = _tokens(sizes, b // m, device, seed=99)
        before = _allocated(device)
        part = _stack(sizes, device, per_stage, first=rank * per_stage)
        stage = PipelineStage(part, rank, world, torch.device(device))
        sched = runner(stage, m, loss_fn=lambda y, _t: _loss(y))
        opt = torch.optim.AdamW(
            part.parameters(), lr=1e-4, foreach=False
        )  # a plain Tensor and a DTensor cannot share a foreach kernel

        def step(sched=sched, x=x, target=target, opt=opt, part=part) -> None:
            opt.zero_grad(set_to_none=True)
            if rank == 0:
                sched.step(x)
            elif rank == world - 1:
                sched.step(target=target)
            else:
                sched.step()
            opt.step()

        def stage_alone(part=part, micro=micro) -> None:  # one micro-batch through this stage, no communication
            y = part(micro.requires_grad_())
            y.backward(torch.ones_like(y))

        scheme = Scheme(
            f"PP ({world}) {name}",
            step,
            tokens,
            True,
            STATE_BYTES_PER_PARAM * (split + repl) // world,
            comm.pipeline_parallel(b // m, s, h, world, m, rank, e),
        )
        scheme.extra["stage_alone"] = stage_alone
        schemes.append(_first_step(scheme, before, device))

    # context parallelism: PyTorch's context_parallel with the all-to-all rotation; gradients all-reduced
    schemes.append(_context_parallel(rank, world, sizes, device, mesh))

    # expert parallelism: one mixture-of-experts layer, experts spread over the ranks
    schemes.append(_expert_parallel(rank, world, sizes, device))
    dist.barrier()
    return schemes


def _context_parallel(rank: int, world: int, sizes: Sizes, device, mesh) -> Scheme:
    import torch
    import torch.distributed as dist

    s, h, b, n = sizes.seq, sizes.hidden, sizes.batch, sizes.layers
    name = f"CP ({world})"
    predicted = STATE_BYTES_PER_PARAM * (sizes.split_params() + sizes.replicated_params())
    try:
        from torch.distributed.tensor.experimental import context_parallel
        from torch.distributed.tensor.experimental._attention import set_rotate_method

        set_rotate_method("alltoall")  # the ring: each step passes K and V to the next rank
    except ImportError as err:
        return Scheme(name, lambda: None, b * s, False, 0, extra={"error": f"{type(err).__name__}: {err}"})
    x = _tokens(sizes, b, device)
    before = _allocated(device)
    model = _stack(sizes, device)

    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)

    def step(m=model) -> None:
        opt.zero_grad(set_to_none=True)
        buffer = x.clone()
        # backward inside the context: leaving it restores the buffer in place, which autograd saved
        with context_parallel(mesh, buffers=[buffer], buffer_seq_dims=[1]):
            _loss(m(buffer)).backward()
        for p in m.parameters():  # the parameters are replicated: average their gradients as data parallelism does
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()

    formula = comm.context_parallel(b, s, h, world, 2, n, implementation="pytorch")
    formula += [comm.Traffic("gradients", "all_reduce", 1, p.numel() * 2, world) for p in model.parameters()]
    scheme = _first_step(Scheme(name, step, b * s, True, predicted, formula), before, device)
    if not scheme.active:  # on the CPU: PyTorch has no sharding rule for its attention kernel
        return scheme
    # the output, gathered back into sequence order, against the same model on one GPU
    try:
        # public in later releases; in torch 2.11 to 2.13 it is only in the private module
        from torch.distributed.tensor.experimental._attention import context_parallel_unshard

        with torch.no_grad():
            want = model(x[:1])
            buffer = x[:1].clone()
            with context_parallel(mesh, buffers=[buffer], buffer_seq_dims=[1]):
                got = model(buffer)
            (got,) = context_parallel_unshard(mesh, [got], [1])
        scheme.extra["max_abs_error"] = float((got.float() - want.float()).abs().max())
        scheme.extra["max_abs_output"] = float(want.float().abs().max())
    except Exception as err:
        scheme.extra["error"] = f"{type(err).__name__}: {str(err).splitlines()[0][:300]}"
        scheme.active = False
    return scheme


def _expert_parallel(rank: int, world: int, sizes: Sizes, device) -> Scheme:
    import torch

    from gpukb.parallelism.experts import expert_parallel_forward, moe

    h = sizes.hidden
    tokens = sizes.batch * sizes.seq // world
    x = _tokens(sizes, sizes.batch // world, device, seed=50 + rank).view(-1, h).requires_grad_()
    before = _allocated(device)
    layer = moe(h, sizes.experts, sizes.top_k).to(device=device, dtype=torch.bfloat16)
    routed: dict[str, list[int]] = {}

    def forward():
        out, rows = expert_parallel_forward(layer, x)
        routed["rows"] = rows
        return _loss(out)

    scheme = Scheme(
        f"EP ({world})",
        _trainer(layer, forward),
        tokens * world,
        True,
        STATE_BYTES_PER_PARAM * sum(p.numel() for p in layer.parameters()),
    )
    scheme.extra["routed"] = routed
    scheme.extra["tokens_per_rank"] = tokens
    return _first_step(scheme, before, device)


def _elapsed_max(seconds: float, device) -> float:
    """The slowest rank's time."""
    import torch
    import torch.distributed as dist

    t = torch.tensor([seconds], dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t.item())


def measure(schemes: list[Scheme], device, rounds: int = 5, steps: int = 5, warmup: int = 1) -> dict[str, dict]:
    """Warm each scheme up, log one step's collectives and its peak memory above the state, then time ``steps``
    steps of each scheme in each of ``rounds`` rounds, the schemes in turn within a round. Returns, by scheme name,
    this rank's readings; times are the slowest rank's, per step.

    Raises:
        ValueError: For ``rounds`` or ``steps`` below 1 or a ``warmup`` below 0 (zero steps divided a time by zero,
            zero rounds left every scheme without a time), before any scheme steps.
        TypeError: For one that is not an int.
    """
    rounds, steps = positive_int("rounds", rounds), positive_int("steps", steps)
    warmup = non_negative_int("warmup", warmup)
    import torch
    import torch.distributed as dist

    from gpukb.parallelism.traffic import CollectiveLog

    out: dict[str, dict] = {}
    cuda = str(device).startswith("cuda")
    for scheme in schemes:
        log, peak = None, 0
        if scheme.active:
            for _ in range(warmup):
                scheme.step()
            _sync(device)
            if cuda:
                torch.cuda.reset_peak_memory_stats()
            base = _allocated(device)
            with CollectiveLog() as log:
                scheme.step()
                _sync(device)
            peak = torch.cuda.max_memory_allocated() - base if cuda else 0
            routed = scheme.extra.get("routed", {}).get("rows")
        dist.barrier()
        out[scheme.name] = {
            "log": [] if log is None else [(c.kind, c.ranks, c.whole_bytes, c.sent_bytes) for c in log.collectives],
            "step_peak_bytes": peak,
            "seconds": [],
            "routed": list(routed) if scheme.active and routed else [],  # the experts' routing of the logged step
        }
    for _ in range(rounds):
        for scheme in schemes:
            dist.barrier()
            _sync(device)
            start = time.perf_counter()
            if scheme.active:
                for _ in range(steps):
                    scheme.step()
            _sync(device)
            out[scheme.name]["seconds"].append(_elapsed_max(time.perf_counter() - start, device) / steps)
    for scheme in schemes:
        if "stage_alone" in scheme.extra:  # this stage's forward and backward of one micro-batch, alone
            fn = scheme.extra.pop("stage_alone")
            fn()
            _sync(device)
            start = time.perf_counter()
            for _ in range(steps):
                fn()
            _sync(device)
            out[scheme.name]["stage_alone_s"] = _elapsed_max((time.perf_counter() - start) / steps, device)
    return out
