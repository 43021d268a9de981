"""Attention in numpy, one function per variant, written from the equations of the papers that introduced them.

Shapes follow ``torch``: a leading batch shape ``...``, then sequence, then features. Every function takes float
arrays (computed in float64 unless the inputs are float32), checks its arguments, and raises a ``ValueError``
(shapes, head counts) or ``TypeError`` (types, mask dtypes) that names what it was given. The tests compare each
with its ``torch`` counterpart on random inputs with the same weights.

* :func:`additive_attention`: Bahdanau, Cho and Bengio (2014, arXiv:1409.0473), the score
  ``vᵀ tanh(W_q q + W_k k)``.
* :func:`attention`: the general form ``softmax(score(Q, K) + mask) V`` with the dot-product score and a scale,
  which :func:`scaled_dot_product_attention` fixes to ``1/√d`` (Vaswani et al., 2017, arXiv:1706.03762, eq. 1).
* :func:`causal_mask`, :func:`padding_mask`: the two masks a transformer uses, as boolean "may attend" arrays.
* :func:`self_attention`, :func:`multi_head_attention`, :func:`grouped_query_attention`: projections around it.
* :func:`transformer_block`: a whole encoder layer (attention, MLP, residuals, layer norm before or after).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpukb.arguments import array_size, choice, flag, given, integer, positive_int, real

__all__ = [
    "BlockWeights",
    "additive_attention",
    "attention",
    "causal_mask",
    "grouped_query_attention",
    "layer_norm",
    "multi_head_attention",
    "padding_mask",
    "scaled_dot_product_attention",
    "self_attention",
    "softmax",
    "transformer_block",
]


def _array(name: str, x: Any, ndim_min: int = 1) -> np.ndarray:
    """A float array of at least ``ndim_min`` dimensions (float32 stays float32, anything else becomes float64)."""
    if isinstance(x, str | bytes) or x is None:
        raise TypeError(f"{name} must be an array of numbers; got {type(x).__name__}")
    a = np.asarray(x)
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise TypeError(f"{name} must hold real numbers; got dtype {a.dtype}")
    if a.ndim < ndim_min:
        raise ValueError(f"{name} must have at least {ndim_min} dimensions; got shape {a.shape}")
    return a if a.dtype == np.float32 else a.astype(np.float64)


def checked_scale(q: np.ndarray, k: np.ndarray, scale: object) -> float:
    """``scale`` as a finite float whose scores ``scale · Q Kᵀ`` stay finite in float64.

    Every score is at most ``d · max|Q| · max|K| · |scale|``; where that bound (doubled, for the subtraction of
    the row maximum) overflows, a softmax of infinities would give NaN rather than its one-hot limit.

    Raises:
        TypeError: If ``scale`` is not a real number.
        ValueError: If it is NaN or infinite, or the scores could overflow float64.
    """
    scale = real("scale", scale)
    if q.size and k.size and np.isfinite(q).all() and np.isfinite(k).all():
        bound = 2.0 * q.shape[-1] * float(np.abs(q).max()) * float(np.abs(k).max()) * abs(scale)
        if not math.isfinite(bound):
            raise ValueError(
                f"scale {scale!r} with these Q and K (largest |q| {np.abs(q).max():.3g}, |k| {np.abs(k).max():.3g}) "
                f"can take a score past float64's range (about 1.8e308); the softmax would be NaN"
            )
    return scale


# --8<-- [start:softmax]
def softmax(x: Any, axis: int = -1) -> np.ndarray:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed as ``exp(x - max) / sum(exp(x - max))``.

    Subtracting the row maximum changes nothing mathematically (the factor ``exp(-max)`` cancels) but keeps
    every exponent ≤ 0, so nothing overflows; the largest term is exactly 1, so the sum is ≥ 1. Entries of
    ``-inf`` (masked) get weight 0; a row that is all ``-inf`` has no defined softmax and gives NaN.
    """
    x = _array("x", x)
    axis = integer("axis", axis, minimum=-x.ndim, maximum=x.ndim - 1)
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)  # an all -inf row stays NaN below, not a warning here
    e = np.exp(x - top)
    with np.errstate(invalid="ignore"):
        return e / np.sum(e, axis=axis, keepdims=True)
    # --8<-- [end:softmax]


def _mask_bias(mask: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A mask as an additive bias broadcast to ``shape``: boolean True → 0 and False → -inf; float → itself."""
    if isinstance(mask, str | bytes):
        raise TypeError(f"mask must be a boolean or float array; got {type(mask).__name__}")
    m = np.asarray(mask)
    if not (m.dtype == np.bool_ or np.issubdtype(m.dtype, np.floating)):
        raise TypeError(f"mask must be boolean (True = may attend) or float (added to the scores); got dtype {m.dtype}")
    try:
        np.broadcast_shapes(m.shape, shape)
        if np.broadcast_shapes(m.shape, shape) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"mask of shape {m.shape} does not broadcast to the scores' shape {shape}") from None
    if m.dtype == np.bool_:
        return np.where(m, 0.0, -np.inf).astype(dtype)
    return m.astype(dtype)


# --8<-- [start:attention]
def attention(q: Any, k: Any, v: Any, mask: Any = None, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """General dot-product attention: ``A = softmax(scale · Q Kᵀ + mask)``, output ``A V``.

    Args:
        q: Queries, (..., L_q, d).
        k: Keys, (..., L_k, d).
        v: Values, (..., L_k, d_v).
        mask: Optional; boolean (True where a query may attend to a key, the convention of torch's
            ``scaled_dot_product_attention``) or float (added to the scores), broadcastable to (..., L_q, L_k).
        scale: Multiplies the scores before the mask is applied.

    Returns:
        ``(output, weights)``: (..., L_q, d_v) and the attention weights (..., L_q, L_k), each row summing to 1.

    Raises:
        ValueError: If the shapes do not agree or the mask does not broadcast.
        TypeError: If an input is not numeric or the mask is neither boolean nor float.
    """
    q, k, v = _array("q", q, 2), _array("k", k, 2), _array("v", v, 2)
    scale = checked_scale(q, k, scale)  # a NaN, infinite or overflowing scale makes every score NaN
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share their last dimension; got q {q.shape} and k {k.shape}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have one length (dimension -2); got k {k.shape} and v {v.shape}")
    scores = scale * (q @ np.swapaxes(k, -1, -2))
    if mask is not None:
        scores = scores + _mask_bias(mask, scores.shape, scores.dtype)
    weights = softmax(scores, axis=-1)
    return weights @ v, weights
    # --8<-- [end:attention]


def scaled_dot_product_attention(
    q: Any, k: Any, v: Any, mask: Any = None, causal: bool = False, scale: float | None = None
) -> np.ndarray:
    """``softmax(Q Kᵀ / √d + mask) V``: :func:`attention` with the scale of Vaswani et al. (``1/√d``, d the
    query/key width) and an optional causal mask, as ``torch.nn.functional.scaled_dot_product_attention``.

    ``causal`` keeps key ``j`` for query ``i`` when ``j ≤ i`` (aligned to the top left, torch's ``is_causal``);
    it combines with ``mask`` by taking both.
    """
    q = _array("q", q, 2)
    causal = flag("causal", causal)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else real("scale", scale)
    if causal:
        keep = causal_mask(q.shape[-2], np.shape(k)[-2])
        if mask is not None:
            m = np.asarray(mask)
            mask = (keep & m) if m.dtype == np.bool_ else np.where(keep, m, -np.inf)
        else:
            mask = keep
    return attention(q, k, v, mask=mask, scale=scale)[0]


# --8<-- [start:masks]
def causal_mask(q_len: int, kv_len: int | None = None, align: str = "top-left") -> np.ndarray:
    """(q_len, kv_len) boolean: query ``i`` may attend to key ``j`` when ``j ≤ i`` (``align="top-left"``, the
    alignment of torch's ``is_causal``) or when ``j ≤ i + kv_len - q_len`` (``"bottom-right"``: the last query
    sees every key, as a query appended after a KV cache does; FlashAttention's since 2.1). The two differ only
    when ``q_len ≠ kv_len``; bottom-right with ``q_len > kv_len`` leaves the first rows with no key at all."""
    q_len = positive_int("q_len", q_len)
    kv_len = q_len if kv_len is None else positive_int("kv_len", kv_len)
    array_size("a causal mask", (q_len, kv_len))
    align = choice("align", align, ("top-left", "bottom-right"))
    offset = kv_len - q_len if align == "bottom-right" else 0
    return np.arange(kv_len)[None, :] <= np.arange(q_len)[:, None] + offset


def padding_mask(lengths: Any, max_len: int) -> np.ndarray:
    """(batch, 1, 1, max_len) boolean: in sequence ``b`` only the first ``lengths[b]`` keys are real tokens.

    The two unit dimensions broadcast over heads and queries. torch's ``key_padding_mask`` of
    ``nn.MultiheadAttention`` is the opposite convention, True where a key is *padding*: it is ``~mask[:, 0, 0]``.
    """
    max_len = positive_int("max_len", max_len)
    array_size("a padding mask row", (max_len,))
    if isinstance(lengths, str | bytes) or not isinstance(lengths, Sequence | np.ndarray) or np.ndim(lengths[:0]) > 1:
        raise TypeError(f"lengths must be a 1-D sequence of integers, one per sequence; got {given(lengths)}")
    lengths = np.array([integer(f"lengths[{i}]", n, 1, max_len) for i, n in enumerate(lengths)], dtype=np.int64)
    return (np.arange(max_len)[None, :] < lengths[:, None])[:, None, None, :]
    # --8<-- [end:masks]


# --8<-- [start:additive]
def additive_attention(
    query: Any, keys: Any, values: Any, w_query: Any, w_key: Any, v: Any, mask: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Additive attention (Bahdanau et al.): score ``e_j = vᵀ tanh(W_q q + W_k k_j)``, weights ``softmax(e)``,
    output ``Σ_j a_j values_j``.

    In the paper's translation model the query is the decoder's previous state ``s_{i-1}`` and the keys and
    values are both the encoder's annotations ``h_j``; here they are separate arguments.

    Args:
        query: (..., L_q, d_q) queries (L_q = 1 for one decoder step).
        keys: (..., L_k, d_k).
        values: (..., L_k, d_v).
        w_query: (d_q, d_a) projection of the query into the alignment space.
        w_key: (d_k, d_a) projection of the keys.
        v: (d_a,) vector that turns each tanh vector into one score.
        mask: Optional boolean or float mask broadcastable to (..., L_q, L_k).

    Returns:
        ``(output, weights)``: (..., L_q, d_v) and (..., L_q, L_k).
    """
    query, keys, values = _array("query", query, 2), _array("keys", keys, 2), _array("values", values, 2)
    w_query, w_key, v = _array("w_query", w_query, 2), _array("w_key", w_key, 2), _array("v", v, 1)
    if w_query.shape[0] != query.shape[-1] or w_key.shape[0] != keys.shape[-1]:
        raise ValueError(
            f"w_query must be (d_q, d_a) and w_key (d_k, d_a); got {w_query.shape} and {w_key.shape} "
            f"for query {query.shape} and keys {keys.shape}"
        )
    if not w_query.shape[1] == w_key.shape[1] == v.shape[0] or v.ndim != 1:
        raise ValueError(
            f"w_query, w_key and v must share the alignment width d_a; got {w_query.shape}, {w_key.shape}, {v.shape}"
        )
    if keys.shape[-2] != values.shape[-2]:
        raise ValueError(f"keys and values must have one length; got {keys.shape} and {values.shape}")
    hidden = np.tanh((query @ w_query)[..., :, None, :] + (keys @ w_key)[..., None, :, :])  # (..., L_q, L_k, d_a)
    scores = hidden @ v
    if mask is not None:
        scores = scores + _mask_bias(mask, scores.shape, scores.dtype)
    weights = softmax(scores, axis=-1)
    return weights @ values, weights
    # --8<-- [end:additive]


def _linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """``x Wᵀ + b`` with torch's weight layout (out_features, in_features)."""
    y = x @ weight.T
    return y if bias is None else y + bias


# --8<-- [start:self-attention]
def self_attention(x: Any, w_q: Any, w_k: Any, w_v: Any, mask: Any = None, causal: bool = False) -> np.ndarray:
    """Single-head self-attention: queries, keys and values are all projections of the same sequence,
    ``Q = X W_q``, ``K = X W_k``, ``V = X W_v`` (weights (d_model, d) here, as in the papers' ``X W``),
    then :func:`scaled_dot_product_attention`."""
    x = _array("x", x, 2)
    w_q, w_k, w_v = _array("w_q", w_q, 2), _array("w_k", w_k, 2), _array("w_v", w_v, 2)
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        if w.shape[0] != x.shape[-1]:
            raise ValueError(f"{name} must have {x.shape[-1]} rows (x's width); got shape {w.shape}")
    return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, mask=mask, causal=causal)
    # --8<-- [end:self-attention]


def _split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """(..., L, heads · d) → (..., heads, L, d)."""
    *lead, length, width = x.shape
    return np.swapaxes(x.reshape(*lead, length, heads, width // heads), -2, -3)


def _merge_heads(x: np.ndarray) -> np.ndarray:
    """(..., heads, L, d) → (..., L, heads · d)."""
    x = np.swapaxes(x, -2, -3)
    return x.reshape(*x.shape[:-2], x.shape[-2] * x.shape[-1])


def _heads(embed_dim: int, num_heads: Any) -> int:
    num_heads = positive_int("num_heads", num_heads)
    if embed_dim % num_heads:
        raise ValueError(f"num_heads ({num_heads}) must divide the model width ({embed_dim})")
    return num_heads


# --8<-- [start:multi-head]
def multi_head_attention(
    query: Any,
    key: Any,
    value: Any,
    num_heads: int,
    in_proj_weight: Any,
    out_proj_weight: Any,
    in_proj_bias: Any = None,
    out_proj_bias: Any = None,
    attn_mask: Any = None,
    key_padding_mask: Any = None,
    causal: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention with the weights and conventions of ``torch.nn.MultiheadAttention(batch_first=True)``.

    The width E is split into ``num_heads`` heads of ``E / num_heads`` features: each head attends with its own
    slice of the projections, and the heads' outputs are concatenated and projected once more.

    Args:
        query: (batch, L_q, E). key, value: (batch, L_k, E).
        num_heads: Heads; must divide E.
        in_proj_weight: (3E, E), the query, key and value projections stacked (torch's layout, ``y = x Wᵀ + b``).
        out_proj_weight: (E, E).
        in_proj_bias: (3E,) or None. out_proj_bias: (E,) or None.
        attn_mask: Optional (L_q, L_k) boolean mask, **True where attention is allowed** (the opposite of
            torch's boolean ``attn_mask`` here, which marks what is *not* allowed; SDPA uses this one's).
        key_padding_mask: Optional (batch, L_k) boolean, True where a key is padding (torch's convention).
        causal: Add a causal mask.

    Returns:
        ``(output, weights)``: (batch, L_q, E), and the attention weights averaged over heads, (batch, L_q, L_k),
        which ``nn.MultiheadAttention`` returns by default.
    """
    query, key, value = _array("query", query, 3), _array("key", key, 3), _array("value", value, 3)
    e = query.shape[-1]
    heads = _heads(e, num_heads)
    if key.shape != value.shape or key.shape[-1] != e or key.shape[0] != query.shape[0]:
        raise ValueError(
            f"key and value must be (batch, L_k, {e}) with query's batch; got query {query.shape}, "
            f"key {key.shape}, value {value.shape}"
        )
    w_in, w_out = _array("in_proj_weight", in_proj_weight, 2), _array("out_proj_weight", out_proj_weight, 2)
    if w_in.shape != (3 * e, e) or w_out.shape != (e, e):
        raise ValueError(
            f"in_proj_weight must be {(3 * e, e)} and out_proj_weight {(e, e)}; got {w_in.shape}, {w_out.shape}"
        )
    b_in = None if in_proj_bias is None else _array("in_proj_bias", in_proj_bias)
    b_out = None if out_proj_bias is None else _array("out_proj_bias", out_proj_bias)
    if (b_in is not None and b_in.shape != (3 * e,)) or (b_out is not None and b_out.shape != (e,)):
        raise ValueError(f"in_proj_bias must be ({3 * e},) and out_proj_bias ({e},)")
    parts = [None, None, None] if b_in is None else np.split(b_in, 3)
    q = _split_heads(_linear(query, w_in[:e], parts[0]), heads)
    k = _split_heads(_linear(key, w_in[e : 2 * e], parts[1]), heads)
    v = _split_heads(_linear(value, w_in[2 * e :], parts[2]), heads)
    keep = np.ones((query.shape[0], 1, query.shape[1], key.shape[1]), dtype=bool)
    if attn_mask is not None:
        m = np.asarray(attn_mask)
        if m.dtype != np.bool_:
            raise TypeError(f"attn_mask must be boolean (True = may attend); got dtype {m.dtype}")
        if m.shape != (query.shape[1], key.shape[1]):
            raise ValueError(f"attn_mask must be (L_q, L_k) = {(query.shape[1], key.shape[1])}; got {m.shape}")
        keep = keep & m
    if key_padding_mask is not None:
        m = np.asarray(key_padding_mask)
        if m.dtype != np.bool_:
            raise TypeError(f"key_padding_mask must be boolean (True = padding); got dtype {m.dtype}")
        if m.shape != (key.shape[0], key.shape[1]):
            raise ValueError(f"key_padding_mask must be (batch, L_k) = {key.shape[:2]}; got {m.shape}")
        keep = keep & ~m[:, None, None, :]
    if flag("causal", causal):
        keep = keep & causal_mask(query.shape[1], key.shape[1])
    out, weights = attention(q, k, v, mask=keep, scale=1.0 / math.sqrt(e // heads))
    return _linear(_merge_heads(out), w_out, b_out), weights.mean(axis=1)
    # --8<-- [end:multi-head]


# --8<-- [start:gqa]
def grouped_query_attention(
    x: Any, w_q: Any, w_k: Any, w_v: Any, w_o: Any, num_heads: int, num_kv_heads: int, causal: bool = False
) -> np.ndarray:
    """Grouped-query attention (Ainslie et al., 2023, arXiv:2305.13245): ``num_heads`` query heads share
    ``num_kv_heads`` key/value heads, each serving a group of ``num_heads / num_kv_heads`` consecutive query
    heads. ``num_kv_heads = num_heads`` is multi-head attention; ``num_kv_heads = 1`` is multi-query attention.

    Args:
        x: (batch, L, E).
        w_q: (E, E) query projection, torch layout (``y = x Wᵀ``), d = E / num_heads per head.
        w_k: (num_kv_heads · d, E) key projection.
        w_v: (num_kv_heads · d, E) value projection.
        w_o: (E, E) output projection.
        num_heads: Query heads; must divide E.
        num_kv_heads: Key/value heads; must divide num_heads.
        causal: Causal mask.
    """
    x = _array("x", x, 3)
    e = x.shape[-1]
    heads = _heads(e, num_heads)
    kv_heads = positive_int("num_kv_heads", num_kv_heads)
    if heads % kv_heads:
        raise ValueError(f"num_kv_heads ({kv_heads}) must divide num_heads ({heads})")
    d = e // heads
    w_q, w_k, w_v, w_o = (_array(n, w, 2) for n, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("w_o", w_o)))
    for name, w, shape in (("w_q", w_q, (e, e)), ("w_k", w_k, (kv_heads * d, e)), ("w_v", w_v, (kv_heads * d, e)),
                           ("w_o", w_o, (e, e))):  # fmt: skip
        if w.shape != shape:
            raise ValueError(f"{name} must be {shape}; got {w.shape}")
    q = _split_heads(x @ w_q.T, heads)
    k = np.repeat(_split_heads(x @ w_k.T, kv_heads), heads // kv_heads, axis=-3)  # head h reads kv head h // group
    v = np.repeat(_split_heads(x @ w_v.T, kv_heads), heads // kv_heads, axis=-3)
    return _merge_heads(scaled_dot_product_attention(q, k, v, causal=causal)) @ w_o.T
    # --8<-- [end:gqa]


def layer_norm(x: Any, weight: Any, bias: Any, eps: float = 1e-5) -> np.ndarray:
    """``(x - mean) / sqrt(var + eps) · weight + bias`` over the last dimension (biased variance, as torch).

    Raises:
        TypeError: For an ``eps`` that is not a real number.
        ValueError: For a NaN, infinite or negative ``eps`` (a negative one takes the root of a negative
            variance for a constant row).
    """
    eps = real("eps", eps, minimum=0)
    x = _array("x", x)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


#: The parameter names of ``torch.nn.TransformerEncoderLayer``'s state dict that :class:`BlockWeights` takes.
STATE_KEYS = {
    "in_proj_weight": "self_attn.in_proj_weight",
    "in_proj_bias": "self_attn.in_proj_bias",
    "out_proj_weight": "self_attn.out_proj.weight",
    "out_proj_bias": "self_attn.out_proj.bias",
    "w1": "linear1.weight",
    "b1": "linear1.bias",
    "w2": "linear2.weight",
    "b2": "linear2.bias",
    "norm1_weight": "norm1.weight",
    "norm1_bias": "norm1.bias",
    "norm2_weight": "norm2.weight",
    "norm2_bias": "norm2.bias",
}


@dataclass(frozen=True)
class BlockWeights:
    """The weights of a transformer encoder block, in torch's layout (``y = x Wᵀ + b``)."""

    in_proj_weight: np.ndarray
    in_proj_bias: np.ndarray
    out_proj_weight: np.ndarray
    out_proj_bias: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    norm1_weight: np.ndarray
    norm1_bias: np.ndarray
    norm2_weight: np.ndarray
    norm2_bias: np.ndarray

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any]) -> BlockWeights:
        """From a ``torch.nn.TransformerEncoderLayer`` state dict (tensors or arrays).

        Raises:
            ValueError: Naming a missing key.
        """
        missing = [k for k in STATE_KEYS.values() if k not in state]
        if missing:
            raise ValueError(f"state dict lacks {missing}")

        def arr(t: Any) -> np.ndarray:
            t = t.detach().cpu().numpy() if hasattr(t, "detach") else t
            return _array("weight", t)

        return cls(**{field: arr(state[key]) for field, key in STATE_KEYS.items()})


# --8<-- [start:block]
def transformer_block(
    x: Any, weights: BlockWeights, num_heads: int, norm_first: bool = False, causal: bool = False, eps: float = 1e-5
) -> np.ndarray:
    """A transformer encoder block, as ``torch.nn.TransformerEncoderLayer(batch_first=True)`` with ReLU and no
    dropout computes it.

    Post-norm (the original transformer's order, ``norm_first=False``)::

        x = LayerNorm(x + SelfAttention(x));  x = LayerNorm(x + MLP(x))

    Pre-norm (``norm_first=True``, the order most large models use)::

        x = x + SelfAttention(LayerNorm(x));  x = x + MLP(LayerNorm(x))

    with ``MLP(x) = W2 · relu(W1 x + b1) + b2``. Attention is the only place where positions interact; the
    layer norms and the MLP act on each position alone.
    """
    x = _array("x", x, 3)
    norm_first = flag("norm_first", norm_first)
    eps = real("eps", eps, minimum=0)
    w = weights

    def attend(h: np.ndarray) -> np.ndarray:
        return multi_head_attention(h, h, h, num_heads, w.in_proj_weight, w.out_proj_weight, w.in_proj_bias,
                                    w.out_proj_bias, causal=causal)[0]  # fmt: skip

    def mlp(h: np.ndarray) -> np.ndarray:
        return _linear(np.maximum(_linear(h, w.w1, w.b1), 0.0), w.w2, w.b2)

    def norm1(h: np.ndarray) -> np.ndarray:
        return layer_norm(h, w.norm1_weight, w.norm1_bias, eps)

    def norm2(h: np.ndarray) -> np.ndarray:
        return layer_norm(h, w.norm2_weight, w.norm2_bias, eps)

    if norm_first:
        x = x + attend(norm1(x))
        return x + mlp(norm2(x))
    x = norm1(x + attend(x))
    return norm2(x + mlp(x))
    # --8<-- [end:block]
