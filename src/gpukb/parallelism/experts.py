"""A mixture-of-experts layer, on one process and with its experts spread over ranks (expert parallelism).

A router scores each token against ``E`` experts; the token goes to its ``k`` best (top-k routing, Shazeer et al.
2017; GShard and Switch), and the layer's output is the experts' outputs weighted by the softmax of those ``k``
scores. Under expert parallelism rank ``r`` owns experts ``[r·E/p, (r+1)·E/p)`` and its own tokens: it sorts its
``tokens·k`` (token, expert) rows by owner, tells every rank how many rows it will send to each of its experts (an
all-to-all of counts), sends them (``all_to_all_single``, the dispatch), runs its experts on what arrived, and
sends the results back (the combine). Both all-to-alls are differentiable
(``torch.distributed.nn.functional.all_to_all_single``), so backward runs two more. No capacity limit: every row
is kept, and the load of each expert is reported.
"""

from __future__ import annotations

from gpukb.arguments import MAX_TORCH_ELEMENTS, array_size, integer, positive_int, torch_seed


def _modules():
    import torch
    import torch.nn.functional as functional
    from torch import nn

    class MoE(nn.Module):
        """Router ``Linear(h, E)`` and ``E`` experts ``w2(gelu(w1(x)))`` of width ``2h``; top-``k`` routing."""

        def __init__(self, hidden: int, experts: int, top_k: int) -> None:
            super().__init__()
            self.top_k = top_k
            self.router = nn.Linear(hidden, experts, bias=False)
            self.w1 = nn.Parameter(torch.randn(experts, hidden, 2 * hidden) / hidden**0.5)
            self.w2 = nn.Parameter(torch.randn(experts, 2 * hidden, hidden) / (2 * hidden) ** 0.5)

        def route(self, x):
            """``(weights, experts)``, each ``(tokens, k)``: softmax over the k best scores, and which experts."""
            scores, chosen = self.router(x).topk(self.top_k, dim=-1)
            return functional.softmax(scores, dim=-1), chosen

        def expert(self, e: int, x):
            return functional.gelu(x @ self.w1[e]) @ self.w2[e]

        def forward(self, x):
            """``x``: ``(tokens, hidden)``; every expert here (one process)."""
            weights, chosen = self.route(x)
            out = torch.zeros_like(x)
            for e in range(self.w1.shape[0]):
                token, slot = (chosen == e).nonzero(as_tuple=True)
                out = out.index_add(0, token, weights[token, slot, None] * self.expert(e, x[token]))
            return out

    return MoE


def moe(hidden: int, experts: int, top_k: int, seed: int = 0):
    """A new mixture-of-experts layer with weights drawn from ``seed``.

    Raises:
        TypeError: For a size or a seed that is not an int.
        ValueError: For a size below 1, ``top_k`` above ``experts``, weights of more than
            :data:`gpukb.arguments.MAX_TORCH_ELEMENTS` elements, or a seed outside ``[0, 2^64 - 1]``.
    """
    import torch

    h, e = positive_int("hidden", hidden), positive_int("experts", experts)
    k = integer("top_k", top_k, minimum=1, maximum=e)
    array_size("the experts' weights (experts × hidden × 2·hidden)", (e, h, 2 * h), MAX_TORCH_ELEMENTS)
    torch.manual_seed(torch_seed("seed", seed))
    return _modules()(h, e, k)


def load(chosen, experts: int) -> list[int]:
    """Rows routed to each expert (``chosen``: ``(tokens, k)`` expert indices).

    Raises:
        TypeError: If ``chosen`` is not an integer torch tensor.
        ValueError: For an index outside ``0 .. experts - 1`` (it would count an expert the layer does not have).
    """
    import torch

    e = positive_int("experts", experts)
    array_size("the load of every expert", (e,))
    integral = isinstance(chosen, torch.Tensor) and not (chosen.is_floating_point() or chosen.is_complex())
    if not integral or chosen.dtype == torch.bool:
        raise TypeError(f"chosen must be a tensor of expert indices (integers); got {type(chosen).__name__}")
    flat = chosen.flatten().long()
    if flat.numel() and not (int(flat.min()) >= 0 and int(flat.max()) < e):
        raise ValueError(f"chosen holds expert indices from {int(flat.min())} to {int(flat.max())}; "
                         f"the layer has experts 0 to {e - 1}")  # fmt: skip
    return torch.bincount(flat, minlength=e).tolist()


def imbalance(counts: list[int]) -> float:
    """The busiest expert's load over the mean load (1.0: perfectly balanced; what a capacity factor must cover).

    Raises:
        ValueError: For an empty list, a negative count or no load at all.
        TypeError: For a count that is not an integer.
    """
    if not isinstance(counts, list | tuple) or not counts:
        raise ValueError(f"counts must be a non-empty list of rows per expert; got {counts!r}")
    counts = [integer("count", c, minimum=0) for c in counts]
    if sum(counts) == 0:
        raise ValueError(f"counts must have a positive sum; got {counts!r}")
    return max(counts) * len(counts) / sum(counts)  # int / int: exact counts beyond a float's range stay finite


# --8<-- [start:dispatch]
def expert_parallel_forward(layer, x):
    """The layer's output for this rank's tokens ``x``, with the experts spread over the default group.

    Returns ``(output, rows routed to each rank)``: ``rows[j]`` of this rank's ``tokens·k`` rows went to rank ``j``.
    """
    import torch
    import torch.distributed as dist
    from torch.distributed.nn.functional import all_to_all_single

    rank, world = dist.get_rank(), dist.get_world_size()
    per_rank = layer.w1.shape[0] // world
    weights, chosen = layer.route(x)
    token = torch.arange(x.shape[0], device=x.device).repeat_interleave(layer.top_k)
    expert, weight = chosen.flatten(), weights.flatten()
    order = expert.argsort(stable=True)  # rows grouped by expert, hence by owning rank
    token, expert, weight = token[order], expert[order], weight[order]
    # rows for each (owning rank, its local expert): the counts tell the receiver which expert each row is for
    send_counts = torch.bincount(expert, minlength=world * per_rank).view(world, per_rank)
    receive_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(receive_counts, send_counts)
    send_sizes, receive_sizes = send_counts.sum(1).tolist(), receive_counts.sum(1).tolist()
    inbox = x.new_empty(sum(receive_sizes), x.shape[1])
    arrived = all_to_all_single(inbox, x[token], receive_sizes, send_sizes)
    mine = torch.arange(rank * per_rank, (rank + 1) * per_rank, device=x.device)
    arrived_expert = mine.repeat(world).repeat_interleave(receive_counts.flatten())
    result = torch.zeros_like(arrived)
    for e in range(rank * per_rank, (rank + 1) * per_rank):  # this rank's experts
        rows = (arrived_expert == e).nonzero(as_tuple=True)[0]
        result = result.index_copy(0, rows, layer.expert(e, arrived[rows]))
    back = all_to_all_single(x.new_empty(len(token), x.shape[1]), result, send_sizes, receive_sizes)
    out = torch.zeros_like(x).index_add(0, token, weight[:, None] * back)
    return out, send_sizes
    # --8<-- [end:dispatch]
