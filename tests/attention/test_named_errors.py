"""Each argument of the attention library refused by its own name: a bad value for one argument gives an error whose
message starts with that argument's name (and says what was wrong), not another argument's or a bare numpy error.

The other arguments of each call are valid, so the test also shows which check fires first. The expected messages
are written from the argument names of each signature and the limits of ``gpukb.arguments``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from gpukb.attention import costs, flash
from gpukb.attention import reference as ref

X = np.ones((2, 3, 4))  # (batch, length, width)
E = np.ones((1, 2, 8))  # (batch, length, E = 8) for the multi-head functions
W_IN, W_OUT = np.ones((24, 8)), np.ones((8, 8))
M2 = np.ones((3, 4))
S = "text"  # a string where an array is expected


def _sdpa(**kw):
    return ref.scaled_dot_product_attention(**{"q": X, "k": X, "v": X, **kw})


def _attn(**kw):
    return ref.attention(**{"q": X, "k": X, "v": X, **kw})


def _additive(**kw):
    args = {"query": X, "keys": X, "values": X, "w_query": np.ones((4, 5)), "w_key": np.ones((4, 5)), "v": np.ones(5)}
    return ref.additive_attention(**{**args, **kw})


def _self(**kw):
    return ref.self_attention(**{"x": X, "w_q": np.ones((4, 2)), "w_k": np.ones((4, 2)), "w_v": np.ones((4, 2)), **kw})


def _mha(**kw):
    args = {"query": E, "key": E, "value": E, "num_heads": 2, "in_proj_weight": W_IN, "out_proj_weight": W_OUT}
    return ref.multi_head_attention(**{**args, **kw})


def _gqa(**kw):
    args = {
        "x": E,
        "w_q": np.ones((8, 8)),
        "w_k": np.ones((4, 8)),
        "w_v": np.ones((4, 8)),
        "w_o": np.ones((8, 8)),
        "num_heads": 4,
        "num_kv_heads": 2,
    }
    return ref.grouped_query_attention(**{**args, **kw})


def _block(**kw):
    w = ref.BlockWeights(
        W_IN,
        np.zeros(24),
        W_OUT,
        np.zeros(8),
        np.ones((4, 8)),
        np.zeros(4),
        np.ones((8, 4)),
        np.zeros(8),
        np.ones(8),
        np.zeros(8),
        np.ones(8),
        np.zeros(8),
    )
    return ref.transformer_block(**{"x": E, "weights": w, "num_heads": 2, **kw})


def _flash(**kw):
    return flash.flash_forward(**{"q": X, "k": X, "v": X, **kw})


def _backward(**kw):
    return flash.attention_backward(**{"q": X, "k": X, "v": X, "d_out": X, **kw})


def _traffic(**kw):
    args = {"batch": 1, "heads": 4, "q_len": 8, "kv_len": 8, "head_dim": 4, "block_m": 2}
    return costs.flash_traffic_bytes(**{**args, **kw})


def _costs(**kw):
    return costs.attention_costs(**{"batch": 1, "heads": 4, "q_len": 8, "kv_len": 8, "head_dim": 4, **kw})


def _kv(**kw):
    return costs.kv_cache_bytes(**{"layers": 1, "batch": 1, "seq": 8, "kv_heads": 2, "head_dim": 4, **kw})


ARRAY = "must be an array of numbers; got str"
CASES = [
    # (call, error, message start)
    *[(lambda n=n: _attn(**{n: S}), TypeError, f"{n} {ARRAY}") for n in ("q", "k", "v")],
    *[
        (lambda n=n: _attn(**{n: np.ones(4)}), ValueError, f"{n} must have at least 2 dimensions; got shape (4,)")
        for n in ("q", "k", "v")
    ],
    (lambda: _attn(scale="a"), TypeError, "scale must be a real number; got 'a' (str)"),
    (lambda: _attn(mask="ab"), TypeError, "mask must be a boolean or float array; got str"),
    (lambda: _sdpa(q=S), TypeError, f"q {ARRAY}"),
    (lambda: _sdpa(q=np.ones(4)), ValueError, "q must have at least 2 dimensions; got shape (4,)"),
    (lambda: _sdpa(causal=1), TypeError, "causal must be True or False; got 1 (int)"),
    (lambda: _sdpa(scale="a"), TypeError, "scale must be a real number; got 'a' (str)"),
    (lambda: ref.softmax(S), TypeError, f"x {ARRAY}"),
    (lambda: ref.softmax(M2, axis=2), ValueError, "axis must be an int ≥ -2, ≤ 1; got 2"),
    (lambda: ref.causal_mask(0), ValueError, "q_len must be an int ≥ 1; got 0"),
    (lambda: ref.causal_mask(2, 0), ValueError, "kv_len must be an int ≥ 1; got 0"),
    (lambda: ref.causal_mask(2, 10**9), ValueError, "a causal mask would hold 2,000,000,000 elements"),
    (lambda: ref.padding_mask([1], 0), ValueError, "max_len must be an int ≥ 1; got 0"),
    (lambda: ref.padding_mask([1], 10**9), ValueError, "a padding mask row would hold 1,000,000,000 elements"),
    (
        lambda: ref.padding_mask("ab", 3),
        TypeError,
        "lengths must be a 1-D sequence of integers, one per sequence; got 'ab' (str)",
    ),
    (lambda: ref.padding_mask(5, 3), TypeError, "lengths must be a 1-D sequence of integers"),
    (lambda: ref.padding_mask(np.ones((2, 2), dtype=int), 3), TypeError, "lengths must be a 1-D sequence"),
    *[
        (lambda n=n: _additive(**{n: S}), TypeError, f"{n} {ARRAY}")
        for n in ("query", "keys", "values", "w_query", "w_key", "v")
    ],
    *[
        (lambda n=n: _additive(**{n: np.ones(4)}), ValueError, f"{n} must have at least 2 dimensions")
        for n in ("query", "keys", "values", "w_query", "w_key")
    ],
    (
        lambda: _additive(w_query=np.ones((3, 5))),
        ValueError,
        "w_query must be (d_q, d_a) and w_key (d_k, d_a); got (3, 5) and (4, 5)",
    ),
    (
        lambda: _additive(values=np.ones((2, 2, 4))),
        ValueError,
        "keys and values must have one length; got (2, 3, 4) and (2, 2, 4)",
    ),
    *[(lambda n=n: _self(**{n: S}), TypeError, f"{n} {ARRAY}") for n in ("x", "w_q", "w_k", "w_v")],
    *[
        (lambda n=n: _self(**{n: np.ones(4)}), ValueError, f"{n} must have at least 2 dimensions")
        for n in ("x", "w_q", "w_k", "w_v")
    ],
    *[
        (lambda n=n: _self(**{n: np.ones((5, 2))}), ValueError, f"{n} must have 4 rows (x's width); got shape (5, 2)")
        for n in ("w_q", "w_k", "w_v")
    ],
    *[
        (lambda n=n: _mha(**{n: S}), TypeError, f"{n} {ARRAY}")
        for n in ("query", "key", "value", "in_proj_weight", "out_proj_weight", "in_proj_bias", "out_proj_bias")
    ],
    *[
        (lambda n=n: _mha(**{n: np.ones((2, 8))}), ValueError, f"{n} must have at least 3 dimensions")
        for n in ("query", "key", "value")
    ],
    *[
        (lambda n=n: _mha(**{n: np.ones(8)}), ValueError, f"{n} must have at least 2 dimensions")
        for n in ("in_proj_weight", "out_proj_weight")
    ],
    (lambda: _mha(num_heads=0), ValueError, "num_heads must be an int ≥ 1; got 0"),
    (
        lambda: _mha(value=np.ones((1, 3, 8))),
        ValueError,
        "key and value must be (batch, L_k, 8) with query's batch; got query (1, 2, 8), key (1, 2, 8), value (1, 3, 8)",
    ),
    (lambda: _mha(key=np.ones((1, 2, 6)), value=np.ones((1, 2, 6))), ValueError, "key and value must be"),
    (lambda: _mha(key=np.ones((2, 2, 8)), value=np.ones((2, 2, 8))), ValueError, "key and value must be"),
    (
        lambda: _mha(in_proj_weight=np.ones((16, 8))),
        ValueError,
        "in_proj_weight must be (24, 8) and out_proj_weight (8, 8); got (16, 8), (8, 8)",
    ),
    (lambda: _mha(out_proj_weight=np.ones((8, 4))), ValueError, "in_proj_weight must be (24, 8)"),
    (lambda: _mha(in_proj_bias=np.ones(8)), ValueError, "in_proj_bias must be (24,) and out_proj_bias (8,)"),
    (lambda: _mha(out_proj_bias=np.ones(24)), ValueError, "in_proj_bias must be (24,) and out_proj_bias (8,)"),
    (
        lambda: _mha(attn_mask=np.ones((2, 2))),
        TypeError,
        "attn_mask must be boolean (True = may attend); got dtype float64",
    ),
    (
        lambda: _mha(key_padding_mask=np.ones((1, 3), dtype=bool)),
        ValueError,
        "key_padding_mask must be (batch, L_k) = (1, 2); got (1, 3)",
    ),
    (lambda: _mha(causal=1), TypeError, "causal must be True or False; got 1 (int)"),
    *[(lambda n=n: _gqa(**{n: S}), TypeError, f"{n} {ARRAY}") for n in ("x", "w_q", "w_k", "w_v", "w_o")],
    (lambda: _gqa(x=np.ones((2, 8))), ValueError, "x must have at least 3 dimensions"),
    *[
        (lambda n=n: _gqa(**{n: np.ones(8)}), ValueError, f"{n} must have at least 2 dimensions")
        for n in ("w_q", "w_k", "w_v", "w_o")
    ],
    *[
        (lambda n=n, s=s: _gqa(**{n: np.ones((2, 8))}), ValueError, f"{n} must be {s}; got (2, 8)")
        for n, s in (("w_q", (8, 8)), ("w_k", (4, 8)), ("w_v", (4, 8)), ("w_o", (8, 8)))
    ],
    (lambda: _gqa(num_kv_heads=0), ValueError, "num_kv_heads must be an int ≥ 1; got 0"),
    (lambda: ref.layer_norm(S, 1.0, 0.0), TypeError, f"x {ARRAY}"),
    (lambda: _block(x=S), TypeError, f"x {ARRAY}"),
    (lambda: _block(x=np.ones((2, 8))), ValueError, "x must have at least 3 dimensions"),
    (lambda: _block(norm_first=1), TypeError, "norm_first must be True or False; got 1 (int)"),
    (lambda: _block(eps="a"), TypeError, "eps must be a real number; got 'a' (str)"),
    (lambda: ref.BlockWeights.from_state_dict(dict.fromkeys(ref.STATE_KEYS.values(), S)), TypeError, f"weight {ARRAY}"),
    # flash
    (lambda: flash.online_softmax(S, 2), TypeError, f"x {ARRAY}"),
    (lambda: flash.online_softmax(None, 2), TypeError, "x must be an array of numbers; got NoneType"),
    (lambda: flash.online_softmax(M2, 0), ValueError, "block must be an int ≥ 1; got 0"),
    *[(lambda n=n: _flash(**{n: S}), TypeError, f"{n} {ARRAY}") for n in ("q", "k", "v")],
    *[
        (lambda n=n: _flash(**{n: np.ones(4)}), ValueError, "q, k and v must be (..., length, width)")
        for n in ("q", "k", "v")
    ],
    (lambda: _flash(v=np.ones((2, 2, 4))), ValueError, "need q (..., L_q, d), k (..., L_k, d), v (..., L_k, d_v)"),
    *[
        (
            lambda s=s: _flash(**{n: np.ones(s) for n, s in zip("qkv", s, strict=True)}),
            ValueError,
            "need q (..., L_q, d)",
        )
        for s in (
            ((1, 3, 4), (2, 3, 4), (2, 3, 4)),
            ((2, 3, 4), (1, 3, 4), (1, 3, 4)),
            ((2, 3, 4), (2, 3, 4), (1, 3, 4)),
            ((3, 4), (2, 3, 4), (2, 3, 4)),
            ((2, 2, 3, 4), (2, 3, 3, 4), (2, 3, 3, 4)),
        )
    ],
    (lambda: _flash(block_m=0), ValueError, "block_m must be an int ≥ 1; got 0"),
    (lambda: _flash(block_n=0), ValueError, "block_n must be an int ≥ 1; got 0"),
    (lambda: _flash(causal=1), TypeError, "causal must be True or False; got 1 (int)"),
    (lambda: _backward(d_out=S), TypeError, f"d_out {ARRAY}"),
    (lambda: _backward(causal=1), TypeError, "causal must be True or False; got 1 (int)"),
    # costs
    (lambda: costs.dot_product_statistics(0), ValueError, "d must be an int ≥ 1; got 0"),
    (lambda: costs.dot_product_statistics(4, samples=0), ValueError, "samples must be an int ≥ 1; got 0"),
    (lambda: costs.dot_product_statistics(4, keys=0), ValueError, "keys must be an int ≥ 1; got 0"),
    (lambda: costs.dot_product_statistics(4, seed=-1), ValueError, "seed must be an int ≥ 0; got -1"),
    (lambda: _costs(kv_heads=0), ValueError, "kv_heads must be an int ≥ 1; got 0"),
    (lambda: _costs(heads=0, kv_heads=1), ValueError, "heads must be an int ≥ 1; got 0"),
    (lambda: _costs(causal=1), TypeError, "causal must be True or False; got 1 (int)"),
    (lambda: _traffic(kv_heads=0), ValueError, "kv_heads must be an int ≥ 1; got 0"),
    (lambda: _traffic(kv_heads=3), ValueError, "kv_heads (3) must divide heads (4)"),
    (lambda: _traffic(heads=0, kv_heads=1), ValueError, "heads must be an int ≥ 1; got 0"),
    *[
        (lambda n=n: _traffic(**{n: 0}), ValueError, f"{n} must be an int ≥ 1; got 0")
        for n in ("batch", "q_len", "kv_len", "head_dim", "block_m")
    ],
    (lambda: _traffic(causal=1), TypeError, "causal must be True or False; got 1 (int)"),
    *[
        (lambda n=n: _kv(**{n: 0}), ValueError, f"{n} must be an int ≥ 1; got 0")
        for n in ("layers", "batch", "seq", "kv_heads", "head_dim")
    ],
]


# ASCII ids: mutmut passes node ids back to pytest, which does not find an id it escaped (≥ as \\u2265)
@pytest.mark.parametrize(
    ("call", "error", "start"), CASES, ids=[re.sub(r"\W+", "-", c[2].replace("≥", "ge"))[:40] for c in CASES]
)
def test_a_bad_argument_is_refused_by_its_name(call, error, start) -> None:
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value).startswith(start), f"{caught.value!s} does not start with {start!r}"
