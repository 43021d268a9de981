"""A small causal transformer trained with a chosen attention function: the test that a backward pass is right
enough to train with, beyond gradients on one batch.

:func:`train_losses` builds the model from a seed, trains it on the previous-token task
(:func:`previous_token_batch`: the target at each position is the token before it, so the loss can fall below
that of guessing only by attending to that position), and returns the loss of every step. Two attention functions
trained from the same seed on the same batches should give losses that differ only by the rounding of bf16
arithmetic. torch is imported when the functions run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from gpukb.arguments import array_size, given, integer, non_negative_int, positive_int, real, text

__all__ = ["BF16_ROUNDOFF", "previous_token_batch", "steps_in_agreement", "train_losses"]

#: bf16's unit roundoff, 2⁻⁸ (8 significand bits): two losses whose relative difference is below it are equal to
#: within one bf16 rounding.
BF16_ROUNDOFF = 2.0**-8

#: The most training steps one call runs (the chapter's runs take a few hundred).
MAX_STEPS = 100_000

#: An attention function: ``(q, k, v) -> out`` on (batch, heads, length, head_dim) tensors, causal.
Attention = Callable[[Any, Any, Any], Any]


def previous_token_batch(batch: int, seq: int, vocab: int, generator: Any) -> tuple[Any, Any]:
    """Inputs and targets of the previous-token task: random tokens, and at each position the token one before it.

    No token predicts its own target: the model must attend to the position before its own, so the loss can
    fall below that of guessing, ``ln(vocab)``, only through attention.

    Args:
        batch: Sequences per batch.
        seq: Tokens per sequence (≥ 2).
        vocab: Token values are ``0 .. vocab - 1``.
        generator: A ``torch.Generator`` (CPU) the tokens are drawn from.

    Returns:
        ``(inputs, targets)``: (batch, seq - 1) long tensors on the CPU, ``targets[:, i] = inputs[:, i - 1]``
        (and for ``i = 0``, the token before the inputs).
    """
    import torch

    batch, seq, vocab = positive_int("batch", batch), positive_int("seq", seq), positive_int("vocab", vocab)
    if seq < 2:
        raise ValueError(f"seq must be ≥ 2; got {seq}")
    array_size("a batch of tokens", (batch, seq))
    if not isinstance(generator, torch.Generator) or generator.device.type != "cpu":
        raise TypeError(f"generator must be a torch.Generator on the CPU; got {given(generator)}")
    tokens = torch.randint(0, vocab, (batch, seq), generator=generator)
    return tokens[:, 1:], tokens[:, :-1]


def _model(torch: Any, vocab: int, seq: int, d_model: int, heads: int, kv_heads: int, attention: Attention) -> Any:
    nn = torch.nn
    head_dim = d_model // heads

    class Block(nn.Module):
        """Embeddings, one pre-norm block (attention with grouped key/value heads, then an MLP), a head."""

        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(vocab, d_model)
            self.position = nn.Parameter(torch.randn(seq, d_model) * 0.02)
            self.norm1, self.norm2, self.norm3 = nn.LayerNorm(d_model), nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            self.qkv = nn.Linear(d_model, (heads + 2 * kv_heads) * head_dim, bias=False)
            self.proj = nn.Linear(d_model, d_model, bias=False)
            self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
            self.head = nn.Linear(d_model, vocab, bias=False)

        def forward(self, tokens: Any) -> Any:
            b, n = tokens.shape
            x = self.embed(tokens) + self.position[:n]
            q, k, v = self.qkv(self.norm1(x)).split([heads * head_dim, kv_heads * head_dim, kv_heads * head_dim], -1)
            q = q.view(b, n, heads, head_dim).transpose(1, 2)
            k = k.view(b, n, kv_heads, head_dim).transpose(1, 2)
            v = v.view(b, n, kv_heads, head_dim).transpose(1, 2)
            y = attention(q, k, v).transpose(1, 2).reshape(b, n, d_model)
            x = x + self.proj(y)
            x = x + self.mlp(self.norm2(x))
            return self.head(self.norm3(x))

    return Block()


def train_losses(
    attention: Attention,
    *,
    steps: int,
    seed: int = 0,
    device: str = "cuda",
    batch: int = 16,
    seq: int = 256,
    d_model: int = 256,
    heads: int = 4,
    kv_heads: int = 2,
    vocab: int = 64,
    lr: float = 3e-3,
) -> list[float]:
    """Train the block for ``steps`` steps of AdamW on fresh previous-token batches; the loss of every step.

    Parameters are float32; the forward runs under ``torch.autocast`` in bf16, so the attention function gets
    bf16 queries, keys and values, as in mixed-precision training. The model's initial weights and the batches
    depend only on ``seed``, so two attention functions see the same model and the same data.

    Raises:
        TypeError: For an ``attention`` that is not callable, a size or seed that is not an int, an ``lr`` that is
            not a real number, a ``device`` that is not a string.
        ValueError: If ``d_model`` is not a multiple of ``heads`` or ``kv_heads`` does not divide ``heads``, for
            a size below 1 (``seq`` below 2), more than :data:`MAX_STEPS` steps, a negative seed, an ``lr`` that is
            not positive and finite, a device torch does not know, or a model or batch too large to build.
    """
    import torch

    if not callable(attention):
        raise TypeError(f"attention must be a function (q, k, v) -> out; got {given(attention)}")
    steps = integer("steps", steps, minimum=1, maximum=MAX_STEPS)
    heads, kv_heads = positive_int("heads", heads), positive_int("kv_heads", kv_heads)
    batch, seq = positive_int("batch", batch), positive_int("seq", seq)
    d_model, vocab = positive_int("d_model", d_model), positive_int("vocab", vocab)
    seed = non_negative_int("seed", seed)
    integer("seed", seed, maximum=2**63 - 2)  # torch.manual_seed takes a 64-bit seed; batches use seed + 1
    lr = real("lr", lr, positive=True)
    try:
        device = torch.device(text("device", device, max_length=40))
    except RuntimeError as err:
        raise ValueError(f"device must be one torch knows (e.g. 'cuda', 'cpu'); got {device!r} ({err})") from None
    if device.type == "cuda" and (not torch.cuda.is_available() or (device.index or 0) >= torch.cuda.device_count()):
        raise ValueError(f"device {str(device)!r}: no such CUDA device here ({torch.cuda.device_count()} GPUs)")
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be a CPU or a CUDA device; got {str(device)!r}")
    for what, shape in (("the embedding", (vocab, d_model)), ("the attention weights", (d_model, d_model)),
                        ("a batch of activations", (batch, seq, d_model))):  # fmt: skip
        array_size(what, shape)
    if d_model % heads or heads % kv_heads:
        raise ValueError(f"need heads | d_model and kv_heads | heads; got d_model {d_model}, heads {heads}, "
                         f"kv_heads {kv_heads}")  # fmt: skip
    torch.manual_seed(seed)
    model = _model(torch, vocab, seq, d_model, heads, kv_heads, attention).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    data = torch.Generator().manual_seed(seed + 1)
    losses = []
    for _ in range(steps):
        inputs, targets = (t.to(device) for t in previous_token_batch(batch, seq, vocab, data))
        with torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16):
            logits = model(inputs)
        loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, vocab), targets.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
        if not math.isfinite(losses[-1]):
            break
    return losses


def steps_in_agreement(losses: Sequence[float], reference: Sequence[float], tolerance: float = BF16_ROUNDOFF) -> int:
    """How many leading steps have ``|loss - reference| <= tolerance · |reference|``.

    Training amplifies rounding: two correct bf16 implementations agree step for step until the model changes
    fast (a loss that drops), then drift apart. The count says for how long they agreed.

    Raises:
        TypeError: If either is not a sequence of real numbers, or the tolerance is not a real number.
        ValueError: If the sequences differ in length or the tolerance is not positive and finite.
    """
    tolerance = real("tolerance", tolerance, positive=True)
    for name, values in (("losses", losses), ("reference", reference)):
        if isinstance(values, str | bytes) or not isinstance(values, Sequence):
            raise TypeError(f"{name} must be a sequence of losses; got {given(values)}")
        for i, value in enumerate(values):
            real(f"{name}[{i}]", value, finite=False)  # a NaN loss is a loss (it agrees with nothing)
    if len(losses) != len(reference):
        raise ValueError(f"losses and reference must have one length; got {len(losses)} and {len(reference)}")
    for step, (a, b) in enumerate(zip(losses, reference, strict=True)):
        if not abs(a - b) <= tolerance * abs(b):
            return step
    return len(losses)
