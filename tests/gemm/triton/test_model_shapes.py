"""The model families and the random sweep drawn from them (``gpukb.gemm.triton.model_shapes``)."""

from __future__ import annotations

import pytest

from gpukb.gemm.triton import model_shapes as ms


def test_the_file_loads_with_a_source_for_every_model():
    table = ms.load()
    assert len(table.models) >= 10
    assert all(m.source.startswith("https://huggingface.co/") for m in table.models)
    llama = next(m for m in table.models if m.name == "Llama-3-8B")
    # Grouped-query attention: 32 query heads and 8 key/value heads of 128 → a fused qkv of 6144 outputs.
    assert llama.projections()["qkv"] == (6144, 4096)
    assert llama.projections()["MLP down"] == (4096, 14336)


def test_each_pass_multiplies_as_a_linear_layer_does():
    gpt2 = next(m for m in ms.load().models if m.name == "GPT-2")
    assert ms.product(gpt2, "MLP up", "forward", 7).model_dump(include={"layout", "m", "n", "k"}) == {
        "layout": "NT", "m": 7, "n": 3072, "k": 768,
    }  # fmt: skip
    grad = ms.product(gpt2, "MLP up", "weight-grad", 7)
    assert (grad.layout, grad.m, grad.n, grad.k) == ("TN", 3072, 768, 7)
    back = ms.product(gpt2, "MLP up", "input-grad", 7)
    assert (back.layout, back.m, back.n, back.k) == ("NN", 7, 768, 3072)


def test_the_draw_is_fixed_by_its_seed():
    shapes = ms.draw()
    assert len(shapes) == ms.RANDOM_COUNT
    assert shapes == ms.draw()
    # The committed draw, pinned: a change to the seed, the generator or the model file shows up here.
    first = shapes[0]
    assert (first.label, first.layout, first.m, first.n, first.k) == (
        "Llama-3-70B attention out, weight-grad, 16 tokens", "TN", 8192, 8192, 16,
    )  # fmt: skip
    assert [(s.m, s.n, s.k) for s in shapes[-3:]] == [(2005, 3072, 1024), (4931, 2048, 2048), (1024, 1024, 1625)]
    assert all(ms.TOKENS[0] <= s.tokens <= ms.TOKENS[1] for s in shapes)
    assert ms.draw(seed=1) != shapes


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"seed": "29"}, "seed must be an int"), ({"count": 0}, "count must be an int ≥ 1")],
)
def test_bad_draws_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ms.draw(**kwargs)


def test_bad_products_are_refused():
    model = ms.load().models[0]
    with pytest.raises(ValueError, match="layer must be one of"):
        ms.product(model, "conv", "forward", 1)
    with pytest.raises(ValueError, match="phase must be one of"):
        ms.product(model, "qkv", "backward", 1)
    with pytest.raises(ValueError, match="tokens must be an int"):
        ms.product(model, "qkv", "forward", 0)


def test_a_bad_file_names_the_model_and_field():
    text = 'checked = 2026-11-27\n[[model]]\nname = "X"\nhidden = "big"\n'
    with pytest.raises(ValueError, match="hidden"):
        ms.parse(text)
