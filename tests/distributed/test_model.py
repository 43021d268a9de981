"""The chapter's transformer computes what its docstrings say: each block, the whole model and the loss written out
here from the modules' own weights with plain tensor operations, and the fused block keeping no softmax output."""

from __future__ import annotations

import math

import pytest
import torch

from gpukb.distributed.model import ModelConfig, block, loss_fn, transformer

B, S, H, A = 2, 5, 12, 3


def _layer_norm(x: torch.Tensor, ln: torch.nn.LayerNorm) -> torch.Tensor:
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + ln.eps) * ln.weight + ln.bias


def _reference_block(blk, x: torch.Tensor) -> torch.Tensor:
    """Pre-LN block, one head at a time: x + proj(softmax(q kᵀ / √d) v), then + fc2(gelu(fc1(ln2(.))))."""
    h = x.shape[-1]
    d = h // A
    qkv = _layer_norm(x, blk.ln1) @ blk.qkv.weight.T + blk.qkv.bias  # (b, s, 3h): q | k | v, each heads × d
    heads = []
    for i in range(A):
        q = qkv[..., i * d : (i + 1) * d]
        k = qkv[..., h + i * d : h + (i + 1) * d]
        v = qkv[..., 2 * h + i * d : 2 * h + (i + 1) * d]
        weights = torch.exp(q @ k.transpose(1, 2) / math.sqrt(d))
        heads.append(weights / weights.sum(-1, keepdim=True) @ v)  # softmax over the keys
    x = x + torch.cat(heads, -1) @ blk.proj.weight.T + blk.proj.bias
    hidden = _layer_norm(x, blk.ln2) @ blk.fc1.weight.T + blk.fc1.bias
    gelu = 0.5 * hidden * (1 + torch.erf(hidden / math.sqrt(2)))  # GELU, exact form
    return x + gelu @ blk.fc2.weight.T + blk.fc2.bias


@pytest.mark.parametrize("attention", ["written-out", "fused"])
def test_a_block_computes_pre_ln_attention_and_mlp(attention: str) -> None:
    torch.manual_seed(1)
    blk = block(H, A, attention=attention).double()
    x = torch.randn(B, S, H, dtype=torch.float64)
    with torch.no_grad():
        assert torch.allclose(blk(x), _reference_block(blk, x), rtol=1e-10, atol=1e-10)


def _saved_shapes(blk, x: torch.Tensor) -> list[tuple[int, ...]]:
    shapes: list[tuple[int, ...]] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        shapes.append(tuple(t.shape))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        blk(x)
    return shapes


def test_only_the_written_out_block_saves_the_attention_probabilities() -> None:
    """The memory model counts a·b·s² saved elements for written-out attention and none for the fused kernel."""
    torch.manual_seed(2)
    x = torch.randn(B, S, H, requires_grad=True)
    scores = (B, A, S, S)
    assert scores in _saved_shapes(block(H, A), x)  # the default is written out
    assert scores in _saved_shapes(block(H, A, attention="written-out"), x)
    assert scores not in _saved_shapes(block(H, A, attention="fused"), x)


def test_the_transformer_is_embeddings_blocks_norm_and_head() -> None:
    torch.manual_seed(3)
    config = ModelConfig(vocab=11, seq=6, hidden=H, heads=A, layers=2)
    model = transformer(config).double()
    tokens = torch.randint(0, config.vocab, (B, 4))  # shorter than seq: positions 0..3
    with torch.no_grad():
        x = model.tok.weight[tokens] + model.pos.weight[:4]
        for blk in model.blocks:
            x = _reference_block(blk, x)
        want = _layer_norm(x, model.ln) @ model.head.weight.T
        assert model.head.bias is None  # untied head, no bias: the parameter count assumes it
        assert torch.allclose(model(tokens), want, rtol=1e-10, atol=1e-10)
    assert model.config == config


def test_the_loss_is_float32_cross_entropy_over_every_token() -> None:
    torch.manual_seed(4)
    logits = torch.randn(B, S, 7).to(torch.bfloat16)
    targets = torch.randint(0, 7, (B, S))
    loss = loss_fn(logits, targets)
    assert loss.dtype == torch.float32
    wide = logits.double()
    log_probs = wide - torch.logsumexp(wide, -1, keepdim=True)
    want = -log_probs.gather(-1, targets[..., None]).mean()
    assert loss.item() == pytest.approx(want.item(), rel=1e-6)


def test_an_unknown_attention_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^unknown attention 'flash'; choose one of \['written-out', 'fused'\]"):
        block(H, A, attention="flash")
