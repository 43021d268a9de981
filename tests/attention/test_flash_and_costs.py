"""The online softmax and the tiled FlashAttention reference equal naive attention; the backward reference equals
autograd; the cost counts agree with the shared counting module and with first principles."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402, N812

from gpukb.attention import costs, flash  # noqa: E402
from gpukb.attention.pages.cost import flash_rereads  # noqa: E402
from gpukb.attention.reference import scaled_dot_product_attention, softmax  # noqa: E402
from gpukb.measuring.counting import attention_bytes, attention_flops  # noqa: E402
from gpukb.performance.ceilings import measured_ceilings, measured_ridge  # noqa: E402
from gpukb.performance.results import H100_SWEEP  # noqa: E402


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(5)


@pytest.mark.parametrize("block", [1, 3, 16, 100])
def test_online_softmax_equals_softmax(rng, block) -> None:
    x = rng.standard_normal((4, 37)) * 30
    x[1, 20] = 800.0  # a late, huge maximum forces the rescale
    got, m, total = flash.online_softmax(x, block)
    np.testing.assert_allclose(got, softmax(x), rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(m, x.max(axis=1))
    np.testing.assert_allclose(total, np.exp(x - m[:, None]).sum(1), rtol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("block_m", "block_n"), [(16, 16), (8, 32), (64, 5)])
def test_tiled_forward_equals_naive_attention(rng, causal, block_m, block_n) -> None:
    q, k, v = rng.standard_normal((2, 37, 8)), rng.standard_normal((2, 37, 8)), rng.standard_normal((2, 37, 6))
    out, lse = flash.flash_forward(q, k, v, block_m, block_n, causal=causal)
    np.testing.assert_allclose(out, scaled_dot_product_attention(q, k, v, causal=causal), rtol=1e-12, atol=1e-13)
    s = q @ k.transpose(0, 2, 1) / math.sqrt(8)
    if causal:
        s = np.where(np.tril(np.ones((37, 37), dtype=bool)), s, -np.inf)
    top = s.max(-1)
    np.testing.assert_allclose(lse, top + np.log(np.exp(s - top[..., None]).sum(-1)), rtol=1e-12)


def test_tiled_forward_with_more_queries_than_keys(rng) -> None:
    q, k, v = rng.standard_normal((9, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    out, _ = flash.flash_forward(q, k, v, 4, 2, causal=True)
    want = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)), is_causal=True).numpy()
    np.testing.assert_allclose(out, want, rtol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_backward_reference_equals_autograd(rng, causal) -> None:
    q, k, v = (rng.standard_normal((2, 3, 11, 8)) for _ in range(3))
    d_out = rng.standard_normal((2, 3, 11, 8))
    dq, dk, dv = flash.attention_backward(q, k, v, d_out, causal=causal)
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    out = F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    out.backward(torch.from_numpy(d_out))
    for got, t in ((dq, tq), (dk, tk), (dv, tv)):
        np.testing.assert_allclose(got, t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_dot_product_variance_grows_with_d_and_the_scale_removes_it() -> None:
    for d in (16, 256):
        s = costs.dot_product_statistics(d)
        assert s["variance"] == pytest.approx(d, rel=0.05)  # analytic: d
        assert s["scaled_variance"] == pytest.approx(1.0, rel=0.05)  # analytic: 1
    wide = costs.dot_product_statistics(512)
    assert wide["max_weight"] > 0.5 > 0.2 > wide["scaled_max_weight"]  # unscaled: nearly one-hot


def test_costs_reuse_the_shared_counts_and_add_gqa() -> None:
    c = costs.attention_costs(4, 32, 4096, 4096, 128)
    assert c.flops == attention_flops(4, 32, 4096, 4096, 128) == 4 * 4 * 32 * 4096 * 4096 * 128
    assert c.io_bytes == attention_bytes(4, 32, 4096, 4096, 128, 2)
    assert c.score_bytes == 4 * 32 * 4096 * 4096 * 2
    assert c.unfused_bytes == c.io_bytes + 4 * c.score_bytes
    g = costs.attention_costs(4, 32, 4096, 4096, 128, kv_heads=8)
    assert g.flops == c.flops  # sharing K and V saves memory, not arithmetic
    assert g.io_bytes == 4 * 128 * 2 * (2 * 32 * 4096 + 2 * 8 * 4096)
    causal = costs.attention_costs(1, 1, 4, 4, 1, causal=True)
    assert causal.flops == 4 * (1 + 2 + 3 + 4)
    with pytest.raises(ValueError, match=r"kv_heads \(3\) must divide heads \(32\)"):
        costs.attention_costs(1, 32, 8, 8, 64, kv_heads=3)


def test_kv_cache_bytes() -> None:
    # 32 layers, 8 KV heads of 128, 8192 tokens, bf16: 2 · 32 · 8192 · 8 · 128 · 2 bytes = 1 GiB
    assert costs.kv_cache_bytes(32, 1, 8192, 8, 128) == 2**30
    assert costs.kv_cache_bytes(32, 1, 8192, 8, 128, "fp8") == 2**29
    with pytest.raises(ValueError, match="unknown element type 'int4'"):
        costs.kv_cache_bytes(1, 1, 1, 1, 1, "int4")
    with pytest.raises(ValueError, match="seq"):
        costs.kv_cache_bytes(1, 1, 0, 1, 1)


def test_bad_input_is_named(rng) -> None:
    x = rng.standard_normal((3, 4))
    with pytest.raises(ValueError, match=r"need q \(..., L_q, d\).*got \(3, 4\), \(3, 5\), \(3, 4\)"):
        flash.flash_forward(x, rng.standard_normal((3, 5)), x)
    with pytest.raises(TypeError, match="q must hold real numbers; got dtype bool"):
        flash.flash_forward(x > 0, x, x)
    with pytest.raises(ValueError, match=r"d_out must have the output's shape \(3, 4\); got \(4, 3\)"):
        flash.attention_backward(x, x, x, x.T)
    with pytest.raises(ValueError, match="block"):
        flash.online_softmax(x, 0)


def test_flash_traffic_counts_k_and_v_once_per_query_block() -> None:
    """K and V are read once per block of queries: ceil(L_q / block_m) times, fewer keys per block when causal."""
    one_block = costs.flash_traffic_bytes(1, 1, 100, 100, 8, 128, dtype="fp32")
    assert one_block == costs.attention_costs(1, 1, 100, 100, 8, dtype="fp32").io_bytes  # one block: compulsory
    # 3 blocks of 4 queries over 10 keys, d = 2, fp32: Q and O 10 rows each, K and V 3 × 10 rows each
    assert costs.flash_traffic_bytes(1, 1, 10, 10, 2, 4, dtype="fp32") == 4 * 2 * (2 * 10 + 2 * 30)
    # causal, top-left: the blocks read keys 0..3, 0..7, 0..9
    assert costs.flash_traffic_bytes(1, 1, 10, 10, 2, 4, causal=True, dtype="fp32") == 4 * 2 * (20 + 2 * (4 + 8 + 10))
    # grouped-query: each query head's program reads its key/value head, so the count follows the query heads
    assert costs.flash_traffic_bytes(2, 8, 64, 64, 16, 16, kv_heads=2) == costs.flash_traffic_bytes(
        2, 8, 64, 64, 16, 16
    )
    with pytest.raises(ValueError, match="block_m must be an int ≥ 1"):
        costs.flash_traffic_bytes(1, 1, 10, 10, 2, 0)


def test_the_fused_intensities_bracket_the_ridge() -> None:
    """The cost page: on compulsory bytes every case reaches the H100's measured ridge (the short causal one to
    within 1%); with every re-read from HBM none does (at most block_m FLOP/B); and the measured kernel was too fast
    for its re-reads to have come from HBM."""
    ridge = measured_ridge(measured_ceilings(H100_SWEEP), "bf16")
    _, rows = costs.costs_table()
    for row in rows:
        fused, reread = row[6], row[8]
        assert fused >= 0.99 * ridge, row
        assert reread <= 128 < ridge, row
    assert min(row[6] for row in rows) < ridge  # the short causal case is just below: "to within 1%"
    said = flash_rereads()
    times = float(said.split(" times the ")[0].rsplit(", ", 1)[1])
    assert times > 2


def test_a_masked_probability_does_not_cancel_a_non_finite_value() -> None:
    """The TMA variant's caveat: a key past the end of a head gets probability 0, but its value row (the next head's)
    still enters P·V, and 0 · inf is NaN, so one non-finite value there spoils the output row."""
    p = np.array([[1.0, 0.0]])  # the second key is masked: probability exactly 0
    with np.errstate(invalid="ignore"):
        assert np.isnan(p @ np.array([[2.0], [np.inf]]))[0, 0]
    assert (p @ np.array([[2.0], [1e30]]))[0, 0] == 2.0  # finite values are harmless


def test_a_decoding_step_is_bound_by_memory() -> None:
    """L_q = 1: about heads / kv_heads FLOP per byte in bf16 whatever the batch, far below the H100's ridge even
    for multi-query attention; grouped-query attention cuts the bytes, not the operations."""
    ridge = measured_ridge(measured_ceilings(H100_SWEEP), "bf16")
    for batch in (1, 16):
        _, rows = costs.decode_table(batch=batch)
        assert len({r[2] for r in rows}) == 1  # one operation count for every kv-head count
        for label, kv, _, _, intensity, _ in rows:
            assert intensity == pytest.approx(32 / kv, rel=0.01), label
            assert intensity < ridge / 8
    _, one = costs.decode_table(batch=1)
    _, many = costs.decode_table(batch=16)
    assert [r[4] for r in one] == [r[4] for r in many]
    assert one[0][3] == pytest.approx(4 * one[1][3], rel=0.01)  # 8 kv heads instead of 32: a quarter of the bytes


def test_attention_summary_is_the_costs_and_the_cache() -> None:
    s = costs.attention_summary(4, 32, 8192, 8192, 128, kv_heads=8, causal=True, dtype="bf16", layers=32)
    assert s.costs == costs.attention_costs(4, 32, 8192, 8192, 128, 8, True, "bf16")
    assert s.kv_per_sequence == 2**30  # the page's example: 32 layers, 8 heads of 128, 8192 tokens, bf16
    assert s.kv_per_token * 8192 == s.kv_per_sequence
    assert s.kv_total == 4 * 2**30
    assert costs.attention_summary(1, 4, 16, 16, 8).kv_per_token == 2 * 4 * 8 * 2  # kv_heads defaults to heads
    with pytest.raises(ValueError, match="layers must be an int ≥ 1; got 0"):
        costs.attention_summary(1, 4, 16, 16, 8, layers=0)
