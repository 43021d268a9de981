"""The chapter's transformer: a pre-LayerNorm decoder whose saved activations follow a formula exactly.

Attention is written out (``softmax(QKᵀ/√d)·V`` with explicit matmuls, no dropout) so that what autograd saves for
backward is the same on the CPU and the GPU and matches :func:`gpukb.distributed.memory.block_activation_bytes`
(Korthikanti et al. 2022's count without the dropout terms). ``ModelConfig.gpt_small`` (d=768, 12 layers, 12 heads,
vocabulary 16384, untied head) has 111 million parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpukb.arguments import MAX_TORCH_ELEMENTS, choice, integer

#: The most elements the model, or one sequence's attention scores, may have: torch counts elements in an int64.
MAX_ELEMENTS = MAX_TORCH_ELEMENTS


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the transformer: ``hidden`` must be divisible by ``heads``, and the model must be one torch can
    hold: at most :data:`MAX_ELEMENTS` parameters, and as many attention scores for one sequence (``heads·seq²``).

    Raises:
        TypeError: For a size that is not an int (a bool is not).
        ValueError: For a size below 1 or above :data:`MAX_ELEMENTS`, ``hidden`` not divisible by ``heads``, or a
            model with more parameters or scores per sequence than :data:`MAX_ELEMENTS`.
    """

    vocab: int = 16384
    seq: int = 1024
    hidden: int = 768
    heads: int = 12
    layers: int = 12

    def __post_init__(self) -> None:
        for name in ("vocab", "seq", "hidden", "heads", "layers"):
            integer(name, getattr(self, name), minimum=1, maximum=MAX_ELEMENTS)
        if self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} is not divisible by heads {self.heads}")
        # 10^100 layers gave a parameter count and memory figures for a model that cannot exist
        for what, count in (("parameters", self.parameter_count()), ("attention scores per sequence",
                                                                     self.heads * self.seq * self.seq)):  # fmt: skip
            if count > MAX_ELEMENTS:
                raise ValueError(
                    f"{self} would have {count:.3g} {what}; torch counts elements in an int64, so at most "
                    f"2^63 - 1 ≈ {MAX_ELEMENTS:.3g}"
                )

    @classmethod
    def gpt_small(cls) -> ModelConfig:
        """The measured model: 111M parameters."""
        return cls()

    @classmethod
    def gpu_bound(cls) -> ModelConfig:
        """A model whose step an H100 spends in matmuls, not in the host (875M parameters, d=2048, 16 layers):
        the size at which FSDP's precision modes are compared for throughput."""
        return cls(hidden=2048, heads=16, layers=16)

    @classmethod
    def tiny(cls) -> ModelConfig:
        """A model for CPU tests (30,080 parameters)."""
        return cls(vocab=64, seq=16, hidden=32, heads=4, layers=2)

    def parameter_count(self) -> int:
        """Parameters of :class:`Transformer` (weights and biases, token and position embeddings, head)."""
        h, v = self.hidden, self.vocab
        block = 4 * h + (3 * h * h + 3 * h) + (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h)
        return v * h + self.seq * h + self.layers * block + 2 * h + v * h


def _torch_modules():
    import torch
    import torch.nn.functional as functional
    from torch import nn

    class Block(nn.Module):
        """Pre-LN block: x + attn(ln1(x)), then + mlp(ln2(.)), GELU MLP of width 4·hidden."""

        def __init__(self, hidden: int, heads: int, attention: str = "written-out") -> None:
            super().__init__()
            self.heads = heads
            self.attention = attention
            self.ln1 = nn.LayerNorm(hidden)
            self.qkv = nn.Linear(hidden, 3 * hidden)
            self.proj = nn.Linear(hidden, hidden)
            self.ln2 = nn.LayerNorm(hidden)
            self.fc1 = nn.Linear(hidden, 4 * hidden)
            self.fc2 = nn.Linear(4 * hidden, hidden)

        def forward(self, x):
            b, s, h = x.shape
            a = self.heads
            qkv = self.qkv(self.ln1(x)).view(b, s, 3, a, h // a).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            if self.attention == "fused":  # keeps the log-sum-exp per row for backward, not the probabilities
                out = functional.scaled_dot_product_attention(q, k, v)
            else:
                scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(h // a))
                out = functional.softmax(scores, dim=-1) @ v
            out = out.transpose(1, 2).reshape(b, s, h)
            x = x + self.proj(out)
            return x + self.fc2(functional.gelu(self.fc1(self.ln2(x))))

    class Transformer(nn.Module):
        """Token + position embeddings, ``layers`` blocks, final LayerNorm, untied head."""

        def __init__(self, config: ModelConfig) -> None:
            super().__init__()
            self.config = config
            self.tok = nn.Embedding(config.vocab, config.hidden)
            self.pos = nn.Embedding(config.seq, config.hidden)
            self.blocks = nn.ModuleList(Block(config.hidden, config.heads) for _ in range(config.layers))
            self.ln = nn.LayerNorm(config.hidden)
            self.head = nn.Linear(config.hidden, config.vocab, bias=False)

        def forward(self, tokens):
            positions = torch.arange(tokens.shape[1], device=tokens.device)
            x = self.tok(tokens) + self.pos(positions)
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln(x))

    return Block, Transformer


#: How a :class:`Block` computes attention: written out (the softmax output is saved for backward) or through
#: ``scaled_dot_product_attention`` (a fused kernel, which saves one log-sum-exp per row instead).
ATTENTION = ("written-out", "fused")


def block(hidden: int, heads: int, attention: str = "written-out"):
    """A new :class:`Block` module (torch is imported on first use); ``attention`` is one of :data:`ATTENTION`."""
    return _torch_modules()[0](hidden, heads, choice("attention", attention, ATTENTION))


def transformer(config: ModelConfig):
    """A new :class:`Transformer` module for ``config``."""
    return _torch_modules()[1](config)


def loss_fn(logits, targets):
    """Cross entropy in float32 (the logits are upcast first, whatever dtype the head computed in)."""
    import torch.nn.functional as functional

    return functional.cross_entropy(logits.float().flatten(0, 1), targets.flatten())
