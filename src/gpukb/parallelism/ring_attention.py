"""Ring attention (Liu et al. 2023) as a reference: causal attention over a sequence split in order across ranks.

Rank ``r`` holds the ``r``-th block of queries, keys and values. For ``p`` steps it attends its queries to the key
and value block it holds, then passes that pair of blocks to rank ``r + 1`` and receives one from rank ``r − 1``
(``p − 1`` passes). Blocks are merged with their log-sum-exp, as FlashAttention merges tiles, so the result is exactly
softmax attention over the whole sequence. Causality: block ``j`` is skipped by queries of an earlier block, masked
within the diagonal block, and used whole by later ones. Autograd differentiates through the merge; the pass
(:class:`_Pass`) sends gradients back around the ring.

PyTorch's ``torch.distributed.tensor.experimental.context_parallel`` does the same on CUDA's attention kernels (it
also reorders the blocks so that causal work is balanced); on the CPU in torch 2.13 it stops with "Operator
aten._scaled_dot_product_flash_attention_for_cpu.default does not have a sharding strategy registered".
"""

from __future__ import annotations

import math


def _pass_fn():
    import torch
    import torch.distributed as dist

    class _Pass(torch.autograd.Function):
        """Send a tensor to rank ``r + 1``, receive one from ``r − 1``; backward passes the gradient the other way."""

        @staticmethod
        def _shift(x, step):
            rank, world = dist.get_rank(), dist.get_world_size()
            x = x.contiguous()  # a gradient may arrive as an expanded view
            received = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            ops = [
                dist.P2POp(dist.isend, x, (rank + step) % world),
                dist.P2POp(dist.irecv, received, (rank - step) % world),
            ]
            for work in dist.batch_isend_irecv(ops):
                work.wait()
            return received

        @staticmethod
        def forward(ctx, x):
            return _Pass._shift(x, 1)

        @staticmethod
        def backward(ctx, grad):
            return _Pass._shift(grad, -1)

    return _Pass


# --8<-- [start:ring]
def ring_attention(q, k, v):
    """Causal attention of this rank's query block against the whole sequence, ``(batch, heads, s/p, d)`` each.

    Every rank of the default process group must call it with its block (rank ``r`` holds positions
    ``[r·s/p, (r+1)·s/p)``).
    """
    import torch
    import torch.distributed as dist

    rank, world = dist.get_rank(), dist.get_world_size()
    shift = _pass_fn().apply
    scale = 1 / math.sqrt(q.shape[-1])
    kv = torch.stack([k, v])  # one pass per step: the backward passes then pair up in the same order on every rank
    out = torch.zeros_like(q)
    lse = torch.full(q.shape[:-1], -math.inf, dtype=q.dtype, device=q.device)
    n = q.shape[-2]
    for step in range(world):
        source = (rank - step) % world  # whose keys and values this rank holds now
        if source <= rank:  # later blocks are in the future of every query here
            k, v = kv[0], kv[1]
            scores = (q @ k.transpose(-2, -1)) * scale
            if source == rank:
                scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1), -math.inf)
            block_lse = scores.logsumexp(-1)
            merged = torch.logaddexp(lse, block_lse)
            out = out * (lse - merged).exp().unsqueeze(-1) + (scores - merged.unsqueeze(-1)).exp() @ v
            lse = merged
        else:
            # a block in this rank's future still joins the graph, times zero: every rank's backward then runs
            # every pass, and the ring's sends and receives pair up (a pass skipped on one rank would hang the other)
            out = out + 0 * kv.sum()
        if step < world - 1:
            kv = shift(kv)
    return out
    # --8<-- [end:ring]
