"""Worked problems of the attention chapter, every answer computed by the library (see :mod:`gpukb.problems`).

Model shapes are Llama-3-8B's (the Llama 3 paper, table 3); ceilings are the committed H100 sweep's.
"""

from __future__ import annotations

import math

import numpy as np

from gpukb.attention.costs import attention_costs, kv_cache_bytes
from gpukb.attention.flash import online_softmax
from gpukb.performance.ceilings import h100_ceilings
from gpukb.performance.problems import LLAMA3_PAPER
from gpukb.performance.roofline import bound
from gpukb.problems import Problem

#: Llama-3-8B's attention (the Llama 3 paper, table 3): 32 layers, 32 query heads, 8 key/value heads, 4096 / 32.
LAYERS, HEADS, KV_HEADS, HEAD_DIM = 32, 32, 8, 128


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:g} GiB"


def kv_cache() -> Problem:
    seq, batch = 8192, 1
    gqa = kv_cache_bytes(LAYERS, batch, seq, KV_HEADS, HEAD_DIM, "bf16")
    mha = kv_cache_bytes(LAYERS, batch, seq, HEADS, HEAD_DIM, "bf16")
    fp8 = kv_cache_bytes(LAYERS, batch, seq, KV_HEADS, HEAD_DIM, "fp8")
    return Problem(
        id="kv-cache",
        title="The KV cache of one long conversation",
        question=f"How much memory does Llama-3-8B's key/value cache take for one sequence of {seq:,} tokens in "
        "bf16, and how much would it take without grouped-query attention?",
        answer=f"{_gib(gqa)} with its {KV_HEADS} key/value heads ({_gib(fp8)} in fp8); {_gib(mha)} if all "
        f"{HEADS} heads kept their own keys and values.",
        working=(
            f"Per token and layer: a key and a value vector per key/value head: 2 · {KV_HEADS} · {HEAD_DIM} values "
            f"× 2 B = {2 * KV_HEADS * HEAD_DIM * 2:,} B.",
            f"× {LAYERS} layers × {seq:,} tokens = {gqa:,} B = {_gib(gqa)} (`kv_cache_bytes`).",
            f"Multi-head attention keeps {HEADS} heads: {HEADS // KV_HEADS}× more, {_gib(mha)}; the query heads never "
            "enter the cache.",
        ),
        sources=(LLAMA3_PAPER,),
    )


def score_matrix() -> Problem:
    seq = 32768
    c = attention_costs(1, HEADS, seq, seq, HEAD_DIM, kv_heads=KV_HEADS, causal=True)
    return Problem(
        id="score-matrix",
        title="Why attention is not computed as two matrix products",
        question=f"A non-fused implementation writes the score matrix QKᵀ to memory. How large is it for one layer of "
        f"Llama-3-8B at {seq:,} tokens (batch 1, bf16), against the inputs and output a fused kernel moves?",
        answer=f"{_gib(c.score_bytes)} per layer, against {c.io_bytes / 2**20:,.0f} MiB of Q, K, V and output: a "
        "fused (flash) kernel keeps the scores on chip, one tile at a time.",
        working=(
            f"Scores: {HEADS} heads × {seq:,} × {seq:,} × 2 B = {c.score_bytes:,} B (stored whole, even when causal).",
            f"Fused: Q and O over {HEADS} heads, K and V over {KV_HEADS}: {seq:,} × {HEAD_DIM} × 2 B × (2·{HEADS} + "
            f"2·{KV_HEADS}) = {c.io_bytes:,} B.",
            f"Unfused, the scores are written, read for the softmax, written as probabilities and read again: "
            f"{c.unfused_bytes / 2**30:,.1f} GiB in all, intensity {c.unfused_intensity:,.0f} FLOP/B against "
            f"{c.intensity:,.0f} fused.",
        ),
        sources=(LLAMA3_PAPER,),
    )


def online_state() -> Problem:
    x = np.array([3.0, 1.0, 5.0, 2.0])
    a, b = x[:2], x[2:]
    _, m1, l1 = online_softmax(a, 2)
    p, m2, l2 = online_softmax(x, 2)
    local = float(np.exp(b - b.max()).sum())

    def row(v: np.ndarray) -> str:
        return f"[{', '.join(f'{e:g}' for e in v)}]"

    return Problem(
        id="online-softmax",
        title="The online softmax, by hand",
        question=f"A row of scores {row(x)} is read two at a time. What are the running maximum m and the running "
        "sum l after each block, and the softmax at the end?",
        answer=f"After {row(a)}: m = {m1:g}, l = {l1:.4f}; after {row(b)}: m = {m2:g}, l = {l2:.4f}; softmax "
        f"[{', '.join(f'{v:.4f}' for v in p)}].",
        working=(
            f"Block 1: m = max({', '.join(f'{e:g}' for e in a)}) = {m1:g}; l = "
            f"{' + '.join(f'e^({e:g}−{m1:g})' for e in a)} = {l1:.4f}.",
            f"Block 2 has maximum {b.max():g} and local sum {' + '.join(f'e^({e:g}−{b.max():g})' for e in b)} = "
            f"{local:.4f}. The new maximum is {m2:g}, so the old sum is rescaled by e^({m1:g}−{m2:g}): "
            f"l = {l1:.4f} · {math.exp(m1 - m2):.4f} + {local * math.exp(b.max() - m2):.4f} = {l2:.4f}.",
            f"softmax_j = e^(x_j − {m2:g}) / {l2:.4f}; FlashAttention rescales its output accumulator by the same "
            "factor, so the row is never stored whole.",
        ),
    )


def attention_floor() -> Problem:
    batch, seq = 1, 8192
    c = attention_costs(batch, HEADS, seq, seq, HEAD_DIM, kv_heads=KV_HEADS, causal=True)
    ceilings = h100_ceilings()
    b = bound(c.flops, c.io_bytes, ceilings["bf16"] * 1e12, ceilings["bandwidth"] * 1e9)
    return Problem(
        id="attention-floor",
        title="A floor under causal attention on an H100",
        question=f"What is the least time one causal attention layer of Llama-3-8B can take at {seq:,} tokens "
        "(batch 1, bf16, forward) on an H100?",
        answer=f"{b.time_s * 1e6:,.0f} µs, set by {b.limiter}: {c.flops / 1e12:.3f} TFLOP at the measured "
        f"{ceilings['bf16']:,.1f} TFLOP/s; its {c.io_bytes / 2**20:,.0f} MiB take {b.memory_s * 1e6:.1f} µs.",
        working=(
            f"A causal mask keeps {seq:,}·{seq + 1:,}/2 query-key pairs per head; each costs 4 · {HEAD_DIM} FLOP (two "
            f"products): {c.flops:,} FLOP over {HEADS} heads.",
            f"Bytes of a fused kernel: {c.io_bytes:,}; intensity {c.intensity:,.0f} FLOP/B, far above the ridge.",
            f"Measured ceilings of the committed H100 sweep: {ceilings['bf16']:,.1f} TFLOP/s bf16 and "
            f"{ceilings['bandwidth']:,.1f} GB/s; compute {b.compute_s * 1e6:,.0f} µs, memory "
            f"{b.memory_s * 1e6:.1f} µs.",
        ),
        sources=(LLAMA3_PAPER,),
    )


def problems() -> list[Problem]:
    """The chapter's worked problems, computed now."""
    return [kv_cache(), score_matrix(), online_state(), attention_floor()]
