"""Split an MLP over two CPU ranks with PyTorch's tensor parallelism and check it against one process."""

# --8<-- [start:example]
import torch  # imported once here: the forked ranks inherit it

from gpukb.distributed.launch import run_spawned


def mlp_step(rank: int, world: int) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.debug import CommDebugMode
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    from gpukb.parallelism.model import mlp

    x = torch.randn(4, 16, generator=torch.Generator().manual_seed(0))
    whole = mlp(16)  # w2(gelu(w1(x))), the same weights on every rank (seed 0)
    want = whole(x)
    mesh = init_device_mesh("cpu", (world,))
    split = parallelize_module(mlp(16), mesh, {"w1": ColwiseParallel(), "w2": RowwiseParallel()})
    with CommDebugMode() as comms:
        got = split(x)
    return {
        "equal": torch.allclose(got, want, atol=1e-6),
        "w1 shard": tuple(split.w1.weight.to_local().shape),
        "collectives": {str(k).split(".")[-1]: n for k, n in comms.get_comm_counts().items()},
    }


if __name__ == "__main__":
    # two gloo ranks on this machine's CPU; "spawn" works everywhere, "fork" (Linux, macOS) starts faster
    for rank, result in enumerate(run_spawned(mlp_step, world_size=2, timeout=60, start_method="fork")):
        print(f"rank {rank}: output equals one process: {result['equal']}, W1 shard {result['w1 shard']}, "
              f"forward collectives {result['collectives']}")  # fmt: skip
# --8<-- [end:example]
