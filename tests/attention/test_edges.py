"""What the attention library does at its edges, against numpy written out here: the dtypes it keeps, the inputs it
refuses, the bounds of its overflow check, masks of every kind and the defaults its docstrings state; and the cost
tables and statistics recomputed from first principles, to the digit they print."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from gpukb.attention import costs, flash
from gpukb.attention import reference as ref


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(31)


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _naive(q, k, v, keep=None, scale=None, bias=None):
    """softmax(scale · q kᵀ + bias, masked where keep is False) v, written out."""
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if bias is not None:
        s = s + bias
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    return _softmax(s) @ v


# --- dtypes and what is refused ---------------------------------------------------------------------------------


def test_float32_stays_float32_and_integers_become_float64(rng) -> None:
    q = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for mask in (None, np.tril(np.ones((3, 3), dtype=bool)), np.zeros((3, 3), dtype=np.float32)):
        out, weights = ref.attention(q, q, q, mask=mask)
        assert out.dtype == weights.dtype == np.float32
    keys = rng.standard_normal((2, 3, 4)).astype(np.float32)
    out, _ = ref.additive_attention(q, keys, keys, np.ones((4, 2), np.float32), np.ones((4, 2), np.float32),
                                    np.ones(2, np.float32), mask=np.ones((3, 3), dtype=bool))  # fmt: skip
    assert out.dtype == np.float32
    ints = np.arange(24).reshape(2, 3, 4) % 5
    out, _ = ref.attention(ints, ints, ints)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, _naive(ints * 1.0, ints * 1.0, ints * 1.0, scale=1.0), rtol=1e-12)
    half = ints.astype(np.float16)  # any float but float32 is computed in float64
    assert ref.attention(half, half, half)[0].dtype == np.float64
    assert ref.softmax(half).dtype == np.float64
    flash_out, _ = flash.flash_forward(ints, ints, ints, block_m=2, block_n=2)  # integers are taken by flash too
    np.testing.assert_allclose(flash_out, _naive(ints * 1.0, ints * 1.0, ints * 1.0), rtol=1e-12)


@pytest.mark.parametrize("bad", [np.ones((2, 2), dtype=complex), np.array([["a", "b"]]), np.ones((2, 2), dtype=bool),
                                 np.array([[None, 1]], dtype=object)])  # fmt: skip
def test_only_real_numbers_are_taken(bad) -> None:
    x = np.ones((2, 2))
    with pytest.raises(TypeError, match=r"^q must hold real numbers; got dtype"):
        ref.attention(bad, x, x)
    with pytest.raises(TypeError, match=r"^q must hold real numbers; got dtype"):
        flash.flash_forward(bad, x, x)


def test_a_float_mask_of_any_width_is_added() -> None:
    x = np.ones((2, 3))
    bias = np.array([[0.0, -1.0], [2.0, 0.5]], dtype=np.float32)
    _, weights = ref.attention(x, x, np.ones((2, 3)), mask=bias)
    np.testing.assert_allclose(weights, _softmax(3.0 + bias.astype(np.float64)), rtol=1e-6)


def test_a_mask_that_would_widen_the_scores_is_refused() -> None:
    x = np.ones((3, 4))
    with pytest.raises(
        ValueError, match=r"^mask of shape \(2, 3, 3\) does not broadcast to the scores' shape \(3, 3\)"
    ):
        ref.attention(x, x, x, mask=np.ones((2, 3, 3), dtype=bool))


# --- the overflow check of the scale ------------------------------------------------------------------------------


def test_the_scale_check_bounds_2_d_max_q_max_k_scale() -> None:
    """A score is at most d · max|q| · max|k| · |scale|; the check refuses where twice that overflows float64."""
    one = np.ones((1, 1))
    assert np.isfinite(ref.attention(one, one, one, scale=8e307)[0]).all()  # 2 · 8e307 = 1.6e308 fits
    with pytest.raises(ValueError, match="scale"):
        ref.attention(one, one, one, scale=1e308)  # 2e308 does not
    big = np.full((1, 1), 1e160)  # q · k = 1e320 overflows whatever the scale
    with pytest.raises(ValueError, match="scale"):
        ref.attention(big, big, one, scale=1.0)
    x = np.ones((2, 1, 4))  # d = 4, one query: 2 · 4 · 5e307 overflows, 2 · 1 · 5e307 would not
    with pytest.raises(ValueError, match="scale"):
        ref.attention(x, x, x, scale=5e307)


def test_the_scale_check_skips_non_finite_and_empty_inputs() -> None:
    """NaN in q gives NaN rows (no bound to check), and no queries give an empty output, not an error."""
    q = np.array([[np.nan, 1.0], [1.0, 1.0]])
    out, _ = ref.attention(q, np.ones((3, 2)), np.ones((3, 2)))
    assert np.isnan(out[0]).all()
    np.testing.assert_allclose(out[1], 1.0)
    out, weights = ref.attention(np.ones((0, 2)), np.ones((3, 2)), np.ones((3, 5)))
    assert out.shape == (0, 5)
    assert weights.shape == (0, 3)


# --- softmax, attention and the masks ---------------------------------------------------------------------------


def test_softmax_along_every_axis_and_of_a_row_with_no_key(rng) -> None:
    x = rng.standard_normal((3, 4))
    np.testing.assert_allclose(ref.softmax(x, axis=1), _softmax(x), rtol=1e-14)
    np.testing.assert_allclose(ref.softmax(x, axis=0), _softmax(x.T).T, rtol=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NaN, quietly: no invalid-value warning
        assert np.isnan(ref.softmax(np.full((1, 3), -np.inf))).all()


def test_attention_scale_defaults_to_one(rng) -> None:
    q, k, v = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    out, weights = ref.attention(q, k, v)
    np.testing.assert_allclose(out, _naive(q, k, v, scale=1.0), rtol=1e-12)
    np.testing.assert_allclose(weights, _softmax(q @ k.T), rtol=1e-12)


def test_sdpa_takes_two_dimensions_and_a_float_mask_with_causal(rng) -> None:
    q, k, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    bias = rng.standard_normal((4, 4))
    keep = np.tril(np.ones((4, 4), dtype=bool))
    got = ref.scaled_dot_product_attention(q, k, v, mask=bias, causal=True)
    np.testing.assert_allclose(got, _naive(q, k, v, keep=keep, bias=bias), rtol=1e-12)
    got = ref.scaled_dot_product_attention(q, k, v, mask=~np.eye(4, dtype=bool) | keep, causal=True)
    np.testing.assert_allclose(got, _naive(q, k, v, keep=keep), rtol=1e-12)


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_additive_attention_applies_its_mask(rng, kind) -> None:
    query, keys, values = rng.standard_normal((2, 3)), rng.standard_normal((4, 5)), rng.standard_normal((4, 2))
    wq, wk, v = rng.standard_normal((3, 6)), rng.standard_normal((5, 6)), rng.standard_normal(6)
    keep = np.array([[True, False, True, True], [False, True, True, False]])
    mask = keep if kind == "bool" else np.where(keep, 0.5, -3.0)
    out, weights = ref.additive_attention(query, keys, values, wq, wk, v, mask=mask)
    scores = np.array([[v @ np.tanh(wq.T @ qi + wk.T @ kj) for kj in keys] for qi in query])
    want = _softmax(np.where(keep, scores, -np.inf) if kind == "bool" else scores + mask)
    np.testing.assert_allclose(weights, want, rtol=1e-12)
    np.testing.assert_allclose(out, want @ values, rtol=1e-12)


def test_self_attention_masks_and_is_not_causal_by_default(rng) -> None:
    x = rng.standard_normal((4, 3))  # no batch dimension
    wq, wk, wv = (rng.standard_normal((3, 2)) for _ in range(3))
    np.testing.assert_allclose(ref.self_attention(x, wq, wk, wv), _naive(x @ wq, x @ wk, x @ wv), rtol=1e-12)
    keep = np.array([True, False, True, True])
    np.testing.assert_allclose(ref.self_attention(x, wq, wk, wv, mask=keep),
                               _naive(x @ wq, x @ wk, x @ wv, keep=keep), rtol=1e-12)  # fmt: skip


def _mha_naive(query, key, value, heads, w_in, w_out, keep):
    """Multi-head attention head by head; keep is (batch, L_q, L_k)."""
    e = query.shape[-1]
    d = e // heads
    q, k, v = query @ w_in[:e].T, key @ w_in[e : 2 * e].T, value @ w_in[2 * e :].T
    out = np.concatenate(
        [_naive(q[..., h * d : (h + 1) * d], k[..., h * d : (h + 1) * d], v[..., h * d : (h + 1) * d], keep=keep)
         for h in range(heads)], -1)  # fmt: skip
    return out @ w_out.T


def test_multi_head_attention_takes_each_mask_alone(rng) -> None:
    e, heads, b, lq, lk = 4, 2, 2, 3, 5  # L_q differs from E and from L_k
    query, key, value = (
        rng.standard_normal((b, lq, e)),
        rng.standard_normal((b, lk, e)),
        rng.standard_normal((b, lk, e)),
    )
    w_in, w_out = rng.standard_normal((3 * e, e)), rng.standard_normal((e, e))
    allowed = rng.random((lq, lk)) < 0.6
    allowed[:, 0] = True
    got, _ = ref.multi_head_attention(query, key, value, heads, w_in, w_out, attn_mask=allowed)
    want = _mha_naive(query, key, value, heads, w_in, w_out, np.broadcast_to(allowed, (b, lq, lk)))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    padding = np.array([[False] * 5, [False, False, True, True, True]])  # True = padding
    got, weights = ref.multi_head_attention(query, key, value, heads, w_in, w_out, key_padding_mask=padding)
    want = _mha_naive(query, key, value, heads, w_in, w_out, np.broadcast_to(~padding[:, None, :], (b, lq, lk)))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert (weights[1, :, 2:] == 0).all()
    assert (weights[0] > 0).all()


def test_grouped_query_attention_head_by_head_and_not_causal_by_default(rng) -> None:
    e, heads, kv_heads, length = 8, 4, 2, 5
    d, group = e // heads, heads // kv_heads
    x = rng.standard_normal((1, length, e))
    wq, wo = rng.standard_normal((e, e)), rng.standard_normal((e, e))
    wk, wv = rng.standard_normal((kv_heads * d, e)), rng.standard_normal((kv_heads * d, e))
    q, k, v = x @ wq.T, x @ wk.T, x @ wv.T
    heads_out = [_naive(q[..., h * d : (h + 1) * d], k[..., h // group * d : (h // group + 1) * d],
                        v[..., h // group * d : (h // group + 1) * d]) for h in range(heads)]  # fmt: skip
    np.testing.assert_allclose(ref.grouped_query_attention(x, wq, wk, wv, wo, heads, kv_heads),
                               np.concatenate(heads_out, -1) @ wo.T, rtol=1e-12)  # fmt: skip


def test_layer_norm_eps_defaults_to_1e_5() -> None:
    x = np.array([[1.0, 1.001, 0.999, 1.0]])  # a variance of 5e-7: eps matters
    mean, var = x.mean(), x.var()
    np.testing.assert_allclose(ref.layer_norm(x, 1.0, 0.0), (x - mean) / np.sqrt(var + 1e-5), rtol=1e-12)


# --- the block's weights and defaults ------------------------------------------------------------------------------


def _weights(rng, e=8, ff=6):
    shapes = {"in_proj_weight": (3 * e, e), "in_proj_bias": (3 * e,), "out_proj_weight": (e, e), "out_proj_bias": (e,),
              "w1": (ff, e), "b1": (ff,), "w2": (e, ff), "b2": (e,), "norm1_weight": (e,), "norm1_bias": (e,),
              "norm2_weight": (e,), "norm2_bias": (e,)}  # fmt: skip
    return {field: rng.standard_normal(shape) for field, shape in shapes.items()}


def test_block_weights_from_arrays_and_from_tensors_that_need_grad(rng) -> None:
    torch = pytest.importorskip("torch")
    arrays = _weights(rng)
    state = {ref.STATE_KEYS[f]: a for f, a in arrays.items()}
    w = ref.BlockWeights.from_state_dict(state)  # plain numpy arrays: nothing to detach
    tensors = {key: torch.tensor(a, requires_grad=True) for key, a in state.items()}  # as named_parameters() gives
    wt = ref.BlockWeights.from_state_dict(tensors)
    for field, a in arrays.items():
        np.testing.assert_array_equal(getattr(w, field), a)
        np.testing.assert_array_equal(getattr(wt, field), a)


def test_the_block_is_post_norm_and_not_causal_by_default_and_uses_its_eps(rng) -> None:
    w = ref.BlockWeights(**_weights(rng))
    x = rng.standard_normal((1, 4, 8))

    def norm(h, g, b, eps):
        return (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + eps) * g + b

    def attend(h, causal):
        keep = np.tril(np.ones((4, 4), dtype=bool)) if causal else np.ones((4, 4), dtype=bool)
        qkv = w.in_proj_weight, w.in_proj_bias
        q, k, v = (h @ qkv[0][i * 8 : (i + 1) * 8].T + qkv[1][i * 8 : (i + 1) * 8] for i in range(3))
        out = np.concatenate([_naive(q[..., s : s + 4], k[..., s : s + 4], v[..., s : s + 4], keep=keep)
                              for s in (0, 4)], -1)  # fmt: skip
        return out @ w.out_proj_weight.T + w.out_proj_bias

    def mlp(h):
        return np.maximum(h @ w.w1.T + w.b1, 0) @ w.w2.T + w.b2

    def post(eps, causal=False):
        h = norm(x + attend(x, causal), w.norm1_weight, w.norm1_bias, eps)
        return norm(h + mlp(h), w.norm2_weight, w.norm2_bias, eps)

    np.testing.assert_allclose(ref.transformer_block(x, w, 2), post(1e-5), rtol=1e-10)
    np.testing.assert_allclose(ref.transformer_block(x, w, 2, eps=0.5), post(0.5), rtol=1e-10)
    np.testing.assert_allclose(ref.transformer_block(x, w, 2, causal=True, eps=0.5), post(0.5, True), rtol=1e-10)
    h = x + attend(norm(x, w.norm1_weight, w.norm1_bias, 0.5), False)
    pre = h + mlp(norm(h, w.norm2_weight, w.norm2_bias, 0.5))
    np.testing.assert_allclose(ref.transformer_block(x, w, 2, norm_first=True, eps=0.5), pre, rtol=1e-10)


# --- flash -----------------------------------------------------------------------------------------------------


def test_online_softmax_of_a_three_dimensional_array(rng) -> None:
    x = rng.standard_normal((2, 3, 7))
    p, m, total = flash.online_softmax(x, 3)
    np.testing.assert_allclose(p, _softmax(x), rtol=1e-13)
    np.testing.assert_array_equal(m, x.max(-1))
    np.testing.assert_allclose(total, np.exp(x - x.max(-1, keepdims=True)).sum(-1), rtol=1e-13)


def test_backward_of_three_dimensional_inputs_with_a_scale(rng) -> None:
    """dV = Pᵀ dO, dS = P ∘ (dO Vᵀ - rowsum(dO ∘ O)), dQ = scale · dS K, dK = scale · dSᵀ Q, with P written out;
    shapes chosen so that no two of L_q, L_k, d and d_v are equal, not causal unless asked."""
    q, k, v = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6, 4))
    d_out = rng.standard_normal((2, 5, 4))
    for causal, scale in ((None, 0.7), (True, 0.7), (False, None)):
        keep = np.tril(np.ones((5, 6), dtype=bool)) if causal else np.ones((5, 6), dtype=bool)
        s = np.where(keep, q @ np.swapaxes(k, 1, 2) * (1 / math.sqrt(3) if scale is None else scale), -np.inf)
        p = _softmax(s)
        o = p @ v
        ds = p * (d_out @ np.swapaxes(v, 1, 2) - (d_out * o).sum(-1, keepdims=True))
        c = 1 / math.sqrt(3) if scale is None else scale
        want = (c * ds @ k, c * np.swapaxes(ds, 1, 2) @ q, np.swapaxes(p, 1, 2) @ d_out)
        kwargs = {} if causal is None else {"causal": causal}
        got = flash.attention_backward(q, k, v, d_out, scale=scale, **kwargs)
        for g, wnt in zip(got, want, strict=True):
            np.testing.assert_allclose(g, wnt, rtol=1e-10, atol=1e-13)


# --- costs -----------------------------------------------------------------------------------------------------


def _statistics(d, samples=20000, keys=64, seed=0):
    """The same draws (numpy's default generator, queries then keys) and the statistics written with einsum."""
    rng = np.random.default_rng(seed)
    n = samples // keys + 1
    q = rng.standard_normal((n, 1, d))[:, 0]
    k = rng.standard_normal((n, keys, d))
    dots = np.einsum("nd,nkd->nk", q, k)

    def top(s):
        return float(_softmax(s).max(-1).mean())

    return dots.var(), (dots / math.sqrt(d)).var(), top(dots), top(dots / math.sqrt(d))


def test_dot_product_statistics_with_its_defaults() -> None:
    got = costs.dot_product_statistics(16)
    want = _statistics(16)
    assert [got[n] for n in ("variance", "scaled_variance", "max_weight", "scaled_max_weight")] == pytest.approx(
        want, rel=1e-12
    )


def test_scaling_table_to_the_digit() -> None:
    headers, rows = costs.scaling_table(dims=(8, 32), keys=8)
    assert headers[4] == "largest of 8 weights, unscaled"
    for d, row in zip((8, 32), rows, strict=True):
        var, scaled, top, scaled_top = _statistics(d, keys=8)
        assert row == [d, d, round(var, 1), round(scaled, 3), round(top, 3), round(scaled_top, 3)]


@pytest.mark.parametrize(("q_len", "kv_len"), [(3, 8), (8, 3), (7, 7)])
def test_flash_traffic_counts_the_keys_each_block_can_see(q_len, kv_len) -> None:
    block_m, heads, d = 2, 4, 4
    keep = np.tril(np.ones((q_len, kv_len), dtype=bool))
    keys = sum(int(keep[start : start + block_m].any(0).sum()) for start in range(0, q_len, block_m))
    want = 1 * heads * d * 2 * (2 * q_len + 2 * keys)
    assert costs.flash_traffic_bytes(1, heads, q_len, kv_len, d, block_m, kv_heads=2, causal=True) == want
    blocks = -(-q_len // block_m)  # not causal: every block reads every key
    assert costs.flash_traffic_bytes(1, heads, q_len, kv_len, d, block_m) == heads * d * 2 * (
        2 * q_len + 2 * blocks * kv_len
    )


def test_costs_table_to_the_digit() -> None:
    b, h, d, size = 4, 32, 128, 2
    _headers, rows = costs.costs_table()
    assert [(r[0], r[1]) for r in rows] == [(s, c) for s in (1024, 4096, 16384) for c in ("no", "yes")]
    for row in rows:
        seq, causal = row[0], row[1] == "yes"
        pairs = seq * (seq + 1) // 2 if causal else seq * seq
        flops = 4 * b * h * pairs * d
        fused = b * h * d * size * 4 * seq
        scores = b * h * seq * seq * size
        keys = sum(min(start + 128, seq) if causal else seq for start in range(0, seq, 128))
        reread = b * h * d * size * (2 * seq + 2 * keys)
        assert row[2:] == [round(flops / 1e9, 1), f"{pairs / seq**2:.4f}", round(fused / 1e6, 1),
                           round(scores / 1e6, 1), round(flops / fused), round(flops / (fused + 4 * scores), 1),
                           round(flops / reread)]  # fmt: skip


@pytest.mark.parametrize("batch", [1, 2])
def test_kv_cache_table_to_the_digit(batch) -> None:
    """32 layers, 32 query heads of 128, 8192 tokens: multi-head keeps 32 key/value heads, Llama 3's grouped-query
    attention 8, multi-query 1."""
    _headers, rows = costs.kv_cache_table(batch=batch)
    assert [r[:2] for r in rows] == [["multi-head", 32], ["grouped-query", 8], ["multi-query", 1]]
    for row in rows:
        bf16 = 2 * 32 * batch * 8192 * row[1] * 128 * 2
        assert row[2:] == [round(bf16 / 2**30, 4), round(bf16 / 2 / 2**30, 4), round(2 * 32 * row[1] * 128 * 2 / 1024)]


def test_decode_table_to_the_digit() -> None:
    _headers, rows = costs.decode_table()
    assert [r[:2] for r in rows] == [["multi-head", 32], ["grouped-query", 8], ["multi-query", 1]]
    for row in rows:
        flops = 32 * 4 * 32 * 8192 * 128
        moved = 32 * 128 * 2 * (2 * 32 + 2 * row[1] * 8192)
        assert row[2:] == [round(flops / 1e9, 2), round(moved / 1e6, 1), round(flops / moved, 2),
                           round(moved / 3e12 * 1e6)]  # fmt: skip


def test_attention_summary_defaults_and_another_type() -> None:
    s = costs.attention_summary(2, 8, 16, 32, 4, kv_heads=2, dtype="fp32", layers=3)
    assert s.costs.flops == 4 * 2 * 8 * 16 * 32 * 4  # not causal by default: every pair
    assert s.costs.io_bytes == 2 * 4 * 4 * (2 * 8 * 16 + 2 * 2 * 32)
    assert (s.kv_per_token, s.kv_per_sequence, s.kv_total) == (2 * 3 * 2 * 4 * 4, 2 * 3 * 32 * 2 * 4 * 4,
                                                               2 * 3 * 2 * 32 * 2 * 4 * 4)  # fmt: skip
