"""The numpy attention references equal torch's implementations on random inputs, with the same weights."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402, N812
from torch.nn.attention.bias import causal_lower_right, causal_upper_left  # noqa: E402

from gpukb.attention import reference as ref  # noqa: E402

RTOL = 1e-10


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12)


def test_softmax_is_stable_and_equals_torch(rng) -> None:
    x = rng.standard_normal((3, 7)) * 50
    x[0, 0] = 1000.0  # exp(1000) overflows float64; the shifted form does not
    got = ref.softmax(x)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, torch.softmax(_t(x), -1).numpy(), rtol=RTOL, atol=1e-300)
    np.testing.assert_allclose(got.sum(-1), 1.0, rtol=1e-14)
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(x) / np.exp(x).sum(-1, keepdims=True)
    assert np.isnan(naive[0]).any()  # the unshifted formula gives inf / inf
    masked = ref.softmax(np.array([[0.0, -np.inf, 1.0]]))
    assert masked[0, 1] == 0.0


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention_equals_torch(rng, causal) -> None:
    q, k, v = rng.standard_normal((2, 3, 5, 8)), rng.standard_normal((2, 3, 7, 8)), rng.standard_normal((2, 3, 7, 4))
    got = ref.scaled_dot_product_attention(q, k, v, causal=causal)
    want = F.scaled_dot_product_attention(_t(q), _t(k), _t(v), is_causal=causal).numpy()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-12)


def test_masks_equal_torch(rng) -> None:
    q, k, v = (rng.standard_normal((3, 2, 6, 4)) for _ in range(3))
    keep = ref.padding_mask(np.array([6, 3, 1]), 6)
    assert keep.shape == (3, 1, 1, 6)
    assert keep[1, 0, 0].tolist() == [True] * 3 + [False] * 3
    got = ref.scaled_dot_product_attention(q, k, v, mask=keep, causal=True)
    both = _t(keep & ref.causal_mask(6))
    want = F.scaled_dot_product_attention(_t(q), _t(k), _t(v), attn_mask=both).numpy()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-12)
    # a float mask is added to the scores
    bias = rng.standard_normal((6, 6))
    got = ref.scaled_dot_product_attention(q, k, v, mask=bias)
    want = F.scaled_dot_product_attention(_t(q), _t(k), _t(v), attn_mask=_t(bias)).numpy()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-12)
    # the padded keys get exactly zero weight
    _, weights = ref.attention(q, k, v, mask=keep)
    assert (weights[1, :, :, 3:] == 0).all()
    assert np.allclose(weights.sum(-1), 1.0)
    assert ref.causal_mask(2, 3).tolist() == [[True, False, False], [True, True, False]]


def test_causal_mask_alignments() -> None:
    # bottom-right: the last query sees every key; with more queries than keys the first rows see none
    assert ref.causal_mask(2, 3, align="bottom-right").tolist() == [[True, True, False], [True, True, True]]
    assert ref.causal_mask(3, 2, align="bottom-right").tolist() == [[False, False], [True, False], [True, True]]
    assert ref.causal_mask(3, 2).tolist() == [[True, False], [True, True], [True, True]]
    assert (ref.causal_mask(4, 4, "bottom-right") == ref.causal_mask(4, 4)).all()  # equal lengths: one mask
    with pytest.raises(ValueError, match=r"unknown align 'left'; choose one of \['top-left', 'bottom-right'\]"):
        ref.causal_mask(2, 2, align="left")


def test_general_attention_with_its_own_scale(rng) -> None:
    q, k, v = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    out, weights = ref.attention(q, k, v, scale=1.0)
    scores = q @ k.T
    np.testing.assert_allclose(weights, np.exp(scores) / np.exp(scores).sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(out, F.scaled_dot_product_attention(_t(q), _t(k), _t(v), scale=1.0).numpy(), rtol=RTOL)


def test_additive_attention_equals_the_same_equations_in_torch(rng) -> None:
    b, lq, lk, dq, dk, da, dv = 2, 3, 6, 5, 4, 7, 3
    query, keys, values = (
        rng.standard_normal((b, lq, dq)),
        rng.standard_normal((b, lk, dk)),
        rng.standard_normal((b, lk, dv)),
    )
    wq, wk, v = rng.standard_normal((dq, da)), rng.standard_normal((dk, da)), rng.standard_normal(da)
    out, weights = ref.additive_attention(query, keys, values, wq, wk, v)
    # torch: the score of every (query, key) pair by its own loop, e_ij = v · tanh(Wq q_i + Wk k_j)
    tq, tk = _t(query) @ _t(wq), _t(keys) @ _t(wk)
    e = torch.stack(
        [torch.stack([torch.tanh(tq[:, i] + tk[:, j]) @ _t(v) for j in range(lk)], -1) for i in range(lq)], 1
    )
    a = torch.softmax(e, -1)
    np.testing.assert_allclose(weights, a.numpy(), rtol=RTOL)
    np.testing.assert_allclose(out, (a @ _t(values)).numpy(), rtol=RTOL)


def test_self_attention_is_attention_of_projections(rng) -> None:
    x = rng.standard_normal((2, 5, 6))
    wq, wk, wv = (rng.standard_normal((6, 4)) for _ in range(3))
    got = ref.self_attention(x, wq, wk, wv, causal=True)
    want = F.scaled_dot_product_attention(_t(x @ wq), _t(x @ wk), _t(x @ wv), is_causal=True).numpy()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("masks", ["none", "padding+causal"])
def test_multi_head_attention_equals_torch_module(rng, masks) -> None:
    torch.manual_seed(0)
    e, heads, b, lq, lk = 12, 3, 2, 4, 6
    mha = torch.nn.MultiheadAttention(e, heads, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    query, key = rng.standard_normal((b, lq, e)), rng.standard_normal((b, lk, e))
    value = rng.standard_normal((b, lk, e))
    kwargs, torch_kwargs = {}, {}
    if masks != "none":
        pad = ~ref.padding_mask(np.array([6, 4]), lk)[:, 0, 0]  # torch: True = padding
        kwargs = {"key_padding_mask": pad, "causal": True}
        torch_kwargs = {"key_padding_mask": _t(pad), "attn_mask": _t(~ref.causal_mask(lq, lk))}  # True = not allowed
    got, weights = ref.multi_head_attention(
        query, key, value, heads, mha.in_proj_weight.detach().numpy(), mha.out_proj.weight.detach().numpy(),
        mha.in_proj_bias.detach().numpy(), mha.out_proj.bias.detach().numpy(), **kwargs,
    )  # fmt: skip
    want, want_weights = mha(_t(query), _t(key), _t(value), **torch_kwargs)
    np.testing.assert_allclose(got, want.detach().numpy(), rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(weights, want_weights.detach().numpy(), rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_grouped_query_attention_equals_sdpa_with_gqa(rng, kv_heads) -> None:
    e, heads, d = 16, 4, 4
    x = rng.standard_normal((2, 5, e))
    wq, wo = rng.standard_normal((e, e)), rng.standard_normal((e, e))
    wk, wv = rng.standard_normal((kv_heads * d, e)), rng.standard_normal((kv_heads * d, e))
    got = ref.grouped_query_attention(x, wq, wk, wv, wo, heads, kv_heads, causal=True)
    tx = _t(x)
    q = (tx @ _t(wq).T).view(2, 5, heads, d).transpose(1, 2)
    k = (tx @ _t(wk).T).view(2, 5, kv_heads, d).transpose(1, 2)
    v = (tx @ _t(wv).T).view(2, 5, kv_heads, d).transpose(1, 2)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    want = (o.transpose(1, 2).reshape(2, 5, e) @ _t(wo).T).numpy()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("causal", [False, True])
def test_transformer_block_equals_torch_encoder_layer(rng, norm_first, causal) -> None:
    torch.manual_seed(1)
    e, heads = 16, 4
    layer = torch.nn.TransformerEncoderLayer(
        e, heads, dim_feedforward=24, dropout=0.0, batch_first=True, norm_first=norm_first, dtype=torch.float64
    ).eval()
    with torch.no_grad():
        for p in layer.parameters():  # non-trivial norms and biases too
            p.add_(0.1 * torch.randn_like(p))
    x = rng.standard_normal((2, 5, e))
    got = ref.transformer_block(x, ref.BlockWeights.from_state_dict(layer.state_dict()), heads, norm_first, causal)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64) if causal else None
    with torch.no_grad():
        want = layer(_t(x), src_mask=mask, is_causal=causal).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_bad_input_is_named(rng) -> None:
    q = rng.standard_normal((2, 3, 4))
    with pytest.raises(
        ValueError, match=r"q and k must share their last dimension; got q \(2, 3, 4\) and k \(2, 3, 5\)"
    ):
        ref.attention(q, rng.standard_normal((2, 3, 5)), q)
    with pytest.raises(ValueError, match="k and v must have one length"):
        ref.attention(q, q, rng.standard_normal((2, 2, 4)))
    with pytest.raises(TypeError, match=r"mask must be boolean .* got dtype int64"):
        ref.attention(q, q, q, mask=np.ones((3, 3), dtype=np.int64))
    with pytest.raises(ValueError, match=r"mask of shape \(4, 3\) does not broadcast to the scores' shape \(2, 3, 3\)"):
        ref.attention(q, q, q, mask=np.ones((4, 3), dtype=bool))
    with pytest.raises(TypeError, match="q must be an array of numbers; got str"):
        ref.attention("q", q, q)
    with pytest.raises(TypeError, match="q must hold real numbers; got dtype bool"):
        ref.attention(np.ones((2, 2), dtype=bool), q, q)
    w = rng.standard_normal((30, 10))
    with pytest.raises(ValueError, match=r"num_heads \(3\) must divide the model width \(10\)"):
        ref.multi_head_attention(*(rng.standard_normal((1, 2, 10)),) * 3, 3, w, rng.standard_normal((10, 10)))
    with pytest.raises(TypeError, match="key_padding_mask must be boolean"):
        ref.multi_head_attention(*(rng.standard_normal((1, 2, 10)),) * 3, 2, w, rng.standard_normal((10, 10)),
                                 key_padding_mask=np.zeros((1, 2)))  # fmt: skip
    with pytest.raises(ValueError, match=r"attn_mask must be \(L_q, L_k\) = \(2, 2\); got \(2, 3\)"):
        ref.multi_head_attention(*(rng.standard_normal((1, 2, 10)),) * 3, 2, w, rng.standard_normal((10, 10)),
                                 attn_mask=np.ones((2, 3), dtype=bool))  # fmt: skip
    x = rng.standard_normal((1, 3, 8))
    with pytest.raises(ValueError, match=r"num_kv_heads \(3\) must divide num_heads \(4\)"):
        ref.grouped_query_attention(x, np.eye(8), np.eye(8)[:6], np.eye(8)[:6], np.eye(8), 4, 3)
    with pytest.raises(ValueError, match=r"w_k must be \(4, 8\); got \(8, 8\)"):
        ref.grouped_query_attention(x, np.eye(8), np.eye(8), np.eye(8), np.eye(8), 4, 2)
    with pytest.raises(ValueError, match="w_query, w_key and v must share the alignment width"):
        ref.additive_attention(q, q, q, np.eye(4), np.eye(4), np.ones(3))
    with pytest.raises(ValueError, match=r"lengths\[0\] must be an int ≥ 1, ≤ 4; got 5"):
        ref.padding_mask(np.array([5]), 4)
    with pytest.raises(ValueError, match="state dict lacks"):
        ref.BlockWeights.from_state_dict({})


def test_a_width_of_512_cannot_be_split_into_6_heads(rng) -> None:
    """The original transformer's base model: d_model = 512 in h = 8 heads of d_k = 64; 6 heads do not divide it."""
    x = rng.standard_normal((1, 4, 512))
    w_in, w_out = rng.standard_normal((1536, 512)) / 23, rng.standard_normal((512, 512)) / 23
    with pytest.raises(ValueError, match=r"num_heads \(6\) must divide the model width \(512\)"):
        ref.multi_head_attention(x, x, x, 6, w_in, w_out)
    out, _ = ref.multi_head_attention(x, x, x, 8, w_in, w_out)
    assert out.shape == (1, 4, 512)
    assert 512 // 8 == 64


def test_additive_score_is_v_dot_tanh_not_tanh_alone(rng) -> None:
    """tanh(W q + U k) is a vector of the alignment width for each (query, key) pair; v turns it into one score."""
    query, keys = rng.standard_normal((1, 3)), rng.standard_normal((5, 4))
    wq, wk, v = rng.standard_normal((3, 7)), rng.standard_normal((4, 7)), rng.standard_normal(7)
    hidden = np.tanh((query @ wq)[:, None, :] + (keys @ wk)[None, :, :])
    assert hidden.shape == (1, 5, 7)  # not a score: 7 numbers per pair
    _, weights = ref.additive_attention(query, keys, keys, wq, wk, v)
    np.testing.assert_allclose(weights, ref.softmax(hidden @ v), rtol=1e-14)
    assert weights.shape == (1, 5)


def test_heads_split_the_width_and_each_sees_the_whole_sequence(rng) -> None:
    """Multi-head attention is h attentions over the full sequence, each on a d_model/h-wide slice of the
    projections, concatenated: the sequence is never cut into pieces."""
    e, heads, length = 12, 3, 7
    d = e // heads
    x = rng.standard_normal((1, length, e))
    w_in, w_out = rng.standard_normal((3 * e, e)), rng.standard_normal((e, e))
    out, weights = ref.multi_head_attention(x, x, x, heads, w_in, w_out)
    q, k, v = x @ w_in[:e].T, x @ w_in[e : 2 * e].T, x @ w_in[2 * e :].T
    per_head = [
        ref.scaled_dot_product_attention(
            q[..., h * d : (h + 1) * d], k[..., h * d : (h + 1) * d], v[..., h * d : (h + 1) * d]
        )
        for h in range(heads)
    ]
    np.testing.assert_allclose(out, np.concatenate(per_head, -1) @ w_out.T, rtol=1e-12)
    assert (weights > 0).all()  # every query gives weight to every position of the sequence


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), 1e308, -1e308])
def test_a_scale_that_makes_the_scores_nan_is_refused(scale) -> None:
    """A NaN or infinite scale, or one whose scores overflow float64, would give all-NaN output silently."""
    from gpukb.attention import flash

    x = np.ones((1, 2, 4))
    for call in (lambda: ref.attention(x, x, x, scale=scale), lambda: flash.flash_forward(x, x, x, scale=scale),
                 lambda: ref.scaled_dot_product_attention(x, x, x, scale=scale)):  # fmt: skip
        with pytest.raises(ValueError, match="scale"):
            call()
    assert np.isfinite(ref.attention(x, x, x, scale=1e300)[0]).all()  # large, but the scores still fit


@pytest.mark.parametrize("eps", [-1e-5, float("nan"), float("inf")])
def test_a_negative_or_nan_eps_is_refused(eps) -> None:
    with pytest.raises(ValueError, match="eps must be"):
        ref.layer_norm(np.ones((2, 4)), np.ones(4), np.zeros(4), eps=eps)


def test_causal_alignment_top_left_against_bottom_right(rng) -> None:
    """torch's ``is_causal`` is top-left; ``causal_lower_right`` (FlashAttention >= 2.1) is bottom-right. For one new
    query against a cache of 8 keys, top-left lets it see only the first key; bottom-right lets it see all 8."""
    for lq, lk in ((1, 8), (3, 8), (5, 5), (6, 4)):
        assert ref.causal_mask(lq, lk).tolist() == causal_upper_left(lq, lk)._materialize().tolist()
    for lq, lk in ((1, 8), (3, 8), (5, 5)):  # more queries than keys: torch warns that rows see no key at all
        assert ref.causal_mask(lq, lk, "bottom-right").tolist() == causal_lower_right(lq, lk)._materialize().tolist()
    assert ref.causal_mask(1, 8).sum() == 1
    assert ref.causal_mask(1, 8, "bottom-right").sum() == 8
    q, k, v = rng.standard_normal((1, 2, 1, 4)), rng.standard_normal((1, 2, 8, 4)), rng.standard_normal((1, 2, 8, 4))
    # one decoding step with is_causal=True returns the first value row: the cache is ignored
    top_left = F.scaled_dot_product_attention(_t(q), _t(k), _t(v), is_causal=True).numpy()
    np.testing.assert_allclose(top_left, v[:, :, :1], rtol=RTOL)
    bottom_right = F.scaled_dot_product_attention(_t(q), _t(k), _t(v), attn_mask=causal_lower_right(1, 8)).numpy()
    np.testing.assert_allclose(bottom_right, ref.scaled_dot_product_attention(q, k, v), rtol=RTOL)
    with pytest.raises(ValueError, match=r"align.*'left'"):
        ref.causal_mask(2, 3, "left")
