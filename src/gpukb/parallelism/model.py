"""The chapter's block: a pre-LayerNorm transformer block with separate Q, K, V projections and no linear biases.

Separate projections let ``ColwiseParallel`` give each rank whole heads (a fused QKV weight split on its output
dimension would hand rank 0 all of Q and half of K); the attention reshapes to ``-1`` heads so the same code runs
on a full block and on a rank's shard of it. Linear layers have no bias, so the only replicated parameters are the
LayerNorms' (what sequence parallelism must all-reduce the gradients of).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpukb.arguments import MAX_TORCH_ELEMENTS, array_size, given, positive_int, torch_seed


@dataclass(frozen=True)
class BlockShape:
    """Sizes of one block and of its input ``(batch, seq, hidden)``; ``hidden`` divisible by ``heads``."""

    batch: int = 2
    seq: int = 8
    hidden: int = 16
    heads: int = 4

    def __post_init__(self) -> None:
        for name in ("batch", "seq", "hidden", "heads"):
            positive_int(name, getattr(self, name))
        if self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} is not divisible by heads {self.heads}")

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def block_parameters(self) -> int:
        """Parameters of one block: Q, K, V, O (``4h²``), the MLP (``8h²``), two LayerNorms (``4h``)."""
        h = self.hidden
        return 12 * h * h + 4 * h


def _modules():
    import torch.nn.functional as functional
    from torch import nn

    class Attention(nn.Module):
        """Causal multi-head attention through ``scaled_dot_product_attention``."""

        def __init__(self, hidden: int, heads: int) -> None:
            super().__init__()
            self.head_dim = hidden // heads
            self.wq, self.wk, self.wv, self.wo = (nn.Linear(hidden, hidden, bias=False) for _ in range(4))

        def forward(self, x):
            b, s, _ = x.shape
            # -1 heads: all of them on one process, heads / t on a tensor-parallel rank
            q, k, v = (w(x).view(b, s, -1, self.head_dim).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
            out = functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.wo(out.transpose(1, 2).reshape(b, s, -1))

    class Mlp(nn.Module):
        """``w2(gelu(w1(x)))``, width ``4·hidden``."""

        def __init__(self, hidden: int) -> None:
            super().__init__()
            self.w1 = nn.Linear(hidden, 4 * hidden, bias=False)
            self.w2 = nn.Linear(4 * hidden, hidden, bias=False)

        def forward(self, x):
            return self.w2(functional.gelu(self.w1(x)))

    class Block(nn.Module):
        """``x + attention(norm1(x))``, then ``+ mlp(norm2(.))``."""

        def __init__(self, hidden: int, heads: int) -> None:
            super().__init__()
            self.norm1 = nn.LayerNorm(hidden)
            self.attention = Attention(hidden, heads)
            self.norm2 = nn.LayerNorm(hidden)
            self.mlp = Mlp(hidden)

        def forward(self, x):
            x = x + self.attention(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    return Attention, Mlp, Block


def block(shape: BlockShape, seed: int = 0):
    """A new :class:`Block` for ``shape`` with weights drawn from ``seed`` (the same on every rank).

    Raises:
        TypeError: For a ``shape`` that is not a :class:`BlockShape` or a seed that is not an int.
        ValueError: For a seed outside ``[0, 2^64 - 1]``, or a block of more than
            :data:`gpukb.arguments.MAX_TORCH_ELEMENTS` weights in one matrix.
    """
    import torch

    if not isinstance(shape, BlockShape):
        raise TypeError(f"shape must be a BlockShape; got {given(shape)}")
    array_size("the block's MLP weight (hidden × 4·hidden)", (shape.hidden, 4 * shape.hidden), MAX_TORCH_ELEMENTS)
    torch.manual_seed(torch_seed("seed", seed))
    return _modules()[2](shape.hidden, shape.heads)


def mlp(hidden: int, seed: int = 0):
    """A new :class:`Mlp` of width ``4·hidden`` with weights drawn from ``seed``.

    Raises:
        TypeError: For a ``hidden`` or a seed that is not an int.
        ValueError: For a ``hidden`` below 1 or whose weight (``hidden × 4·hidden``) would hold more than
            :data:`gpukb.arguments.MAX_TORCH_ELEMENTS` elements, or a seed outside ``[0, 2^64 - 1]``.
    """
    import torch

    hidden = positive_int("hidden", hidden)
    array_size("the MLP weight (hidden × 4·hidden)", (hidden, 4 * hidden), MAX_TORCH_ELEMENTS)
    torch.manual_seed(torch_seed("seed", seed))
    return _modules()[1](hidden)
