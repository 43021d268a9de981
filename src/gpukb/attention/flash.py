"""The online softmax and FlashAttention's tiling, in numpy: the algorithm of the Triton kernel
(:mod:`gpukb.attention.kernel`) without the GPU, to read and to test.

* :func:`online_softmax` computes the normalizer of a softmax in one pass over blocks of a row, rescaling a running
  sum whenever the running maximum grows, then normalizes in a second pass (Milakov and Gimelshein, 2018,
  arXiv:1805.02867).
* :func:`flash_forward` applies the same recurrence to whole attention rows, block of queries by block of keys,
  carrying an unnormalized output beside the running maximum and sum (Dao et al., 2022, arXiv:2205.14135, with
  the FlashAttention-2 loop order and single final division, arXiv:2307.08691). The L_q × L_k score matrix is
  never formed: one block_m × block_n tile at a time.
* :func:`attention_backward` gives the gradients from the saved log-sum-exp, the way FlashAttention's backward
  pass recomputes the probabilities instead of storing them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gpukb.arguments import flag, positive_int
from gpukb.attention.reference import checked_scale

__all__ = ["attention_backward", "flash_forward", "online_softmax"]


def _rows(name: str, x: Any) -> np.ndarray:
    if isinstance(x, str | bytes) or x is None:
        raise TypeError(f"{name} must be an array of numbers; got {type(x).__name__}")
    a = np.asarray(x)
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise TypeError(f"{name} must hold real numbers; got dtype {a.dtype}")
    return a.astype(np.float64)


# --8<-- [start:online]
def online_softmax(x: Any, block: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Softmax of each row of ``x`` (shape (..., n)): the normalizer in one pass over blocks of ``block`` entries,
    then a second pass that normalizes (three passes become two; only fused with a product, as in attention, does
    the second disappear).

    After each block the state is the maximum ``m`` of the entries seen so far and ``l = Σ exp(x_j - m)`` over
    them. A new block with maximum ``m_b`` and sum ``l_b = Σ exp(x_j - m_b)`` updates them to

        m' = max(m, m_b),    l' = l · exp(m - m') + l_b · exp(m_b - m'),

    which is exact: both terms are re-expressed relative to the new maximum. At the end
    ``softmax(x)_j = exp(x_j - m) / l``.

    Returns:
        ``(softmax, m, l)``: the softmax, the row maxima and the row sums relative to them.
    """
    x = _rows("x", x)
    block = positive_int("block", block)
    m = np.full(x.shape[:-1], -np.inf)
    total = np.zeros(x.shape[:-1])
    for start in range(0, x.shape[-1], block):
        chunk = x[..., start : start + block]
        m_new = np.maximum(m, chunk.max(axis=-1))
        total = total * np.exp(m - m_new) + np.exp(chunk - m_new[..., None]).sum(axis=-1)
        m = m_new
    return np.exp(x - m[..., None]) / total[..., None], m, total
    # --8<-- [end:online]


def _check_qkv(q: Any, k: Any, v: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, k, v = _rows("q", q), _rows("k", k), _rows("v", v)
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(f"q, k and v must be (..., length, width); got {q.shape}, {k.shape}, {v.shape}")
    # all three leading shapes equal (a chained `!=` let a q batch differ from k's and v's, which numpy broadcast)
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2] or not q.shape[:-2] == k.shape[:-2] == v.shape[:-2]:
        raise ValueError(
            f"need q (..., L_q, d), k (..., L_k, d), v (..., L_k, d_v) with one leading shape; "
            f"got {q.shape}, {k.shape}, {v.shape}"
        )
    return q, k, v


# --8<-- [start:flash]
def flash_forward(
    q: Any, k: Any, v: Any, block_m: int = 64, block_n: int = 64, causal: bool = False, scale: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Attention, ``softmax(scale · Q Kᵀ [causal]) V``, computed tile by tile with the online softmax.

    For each block of ``block_m`` query rows: start from ``m = -inf``, ``l = 0``, ``acc = 0``; for each block of
    ``block_n`` keys compute the tile of scores ``S``, then

        m' = max(m, rowmax(S)),  P = exp(S - m'),  l' = l · exp(m - m') + rowsum(P),
        acc' = acc · exp(m - m') + P V_block,

    and after the last key block divide once: ``O = acc / l``. Under a causal mask, key blocks entirely to the
    right of the query block's last row are skipped (never loaded), which halves the work.

    Returns:
        ``(output, lse)``: the output (..., L_q, d_v) and the log-sum-exp of each row's scores, ``m + log l``,
        which is all a backward pass needs to recompute the probabilities.
    """
    q, k, v = _check_qkv(q, k, v)
    block_m, block_n = positive_int("block_m", block_m), positive_int("block_n", block_n)
    causal = flag("causal", causal)
    scale = checked_scale(q, k, 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale)
    lq, lk = q.shape[-2], k.shape[-2]
    out = np.empty(q.shape[:-1] + v.shape[-1:])
    lse = np.empty(q.shape[:-1])
    for i0 in range(0, lq, block_m):
        rows = np.arange(i0, min(i0 + block_m, lq))
        qi = q[..., rows, :]
        m = np.full(qi.shape[:-1], -np.inf)
        l_sum = np.zeros(qi.shape[:-1])
        acc = np.zeros(qi.shape[:-1] + v.shape[-1:])
        stop = min(lk, rows[-1] + 1) if causal else lk  # the last key any row of this block may see
        for j0 in range(0, stop, block_n):
            cols = np.arange(j0, min(j0 + block_n, lk))
            s = scale * (qi @ np.swapaxes(k[..., cols, :], -1, -2))
            if causal:
                s = np.where(cols[None, :] <= rows[:, None], s, -np.inf)
            m_new = np.maximum(m, s.max(axis=-1))
            p = np.exp(s - m_new[..., None])
            alpha = np.exp(m - m_new)
            l_sum = l_sum * alpha + p.sum(axis=-1)
            acc = acc * alpha[..., None] + p @ v[..., cols, :]
            m = m_new
        out[..., rows, :] = acc / l_sum[..., None]
        lse[..., rows] = m + np.log(l_sum)
    return out, lse
    # --8<-- [end:flash]


# --8<-- [start:backward]
def attention_backward(
    q: Any, k: Any, v: Any, d_out: Any, causal: bool = False, scale: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of a loss with respect to Q, K and V, given its gradient ``d_out`` with respect to the output.

    With ``S = scale · Q Kᵀ``, ``P = softmax(S)`` (rebuilt as ``exp(S - lse)`` from the forward pass's
    log-sum-exp) and ``O = P V``:

        dV = Pᵀ dO,   dP = dO Vᵀ,   dS = P ∘ (dP - D) with D = rowsum(dO ∘ O),
        dQ = scale · dS K,   dK = scale · dSᵀ Q.

    ``D`` is the softmax's Jacobian contracted with dP, rowsum(P ∘ dP), computed the cheaper way, from O.

    Returns:
        ``(dq, dk, dv)``, shaped like q, k and v.
    """
    q, k, v = _check_qkv(q, k, v)
    d_out = _rows("d_out", d_out)
    causal = flag("causal", causal)
    scale = checked_scale(q, k, 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale)
    out, lse = flash_forward(q, k, v, causal=causal, scale=scale)
    if d_out.shape != out.shape:
        raise ValueError(f"d_out must have the output's shape {out.shape}; got {d_out.shape}")
    s = scale * (q @ np.swapaxes(k, -1, -2))
    if causal:
        lq, lk = s.shape[-2:]
        s = np.where(np.arange(lk)[None, :] <= np.arange(lq)[:, None], s, -np.inf)
    p = np.exp(s - lse[..., None])
    dv = np.swapaxes(p, -1, -2) @ d_out
    dp = d_out @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (d_out * out).sum(axis=-1, keepdims=True))
    return scale * ds @ k, scale * np.swapaxes(ds, -1, -2) @ q, dv
    # --8<-- [end:backward]
