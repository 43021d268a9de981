"""The model families and the random sweep drawn from them (``gpukb.gemm.triton.model_shapes``)."""

from __future__ import annotations

import re

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


#: Every held-out draw's products, by name, pinned when the draw was committed: a change to a seed, the generator or
#: the model file shows up here.
HELD_OUT: dict[str, list[tuple[str, int, int, int]]] = {
    # seed 909044: committed before the tuning that followed the random sweep (and never tuned on)
    "held-out": [
        ("NN", 1127, 28672, 8192),
        ("NT", 1, 16384, 2048),
        ("NN", 1239, 8192, 8192),
        ("NT", 159, 768, 3072),
        ("TN", 30522, 1024, 3),
        ("NN", 7, 8192, 128256),
        ("TN", 4608, 3584, 15034),
        ("TN", 10240, 8192, 99),
        ("NT", 28, 15360, 5120),
        ("NT", 128, 32000, 4096),
        ("NT", 9642, 14336, 4096),
        ("NT", 1, 4864, 896),
        ("NN", 69, 896, 4864),
        ("NT", 8305, 3072, 24576),
        ("NT", 932, 768, 3072),
        ("NT", 209, 128256, 4096),
        ("NT", 4, 28672, 8192),
        ("NN", 12, 3072, 768),
        ("NN", 11640, 896, 896),
        ("NT", 14101, 4096, 11008),
        ("NT", 1, 896, 4864),
        ("TN", 6144, 4096, 1453),
        ("NT", 4, 4096, 14336),
        ("TN", 13824, 5120, 3549),
        ("NT", 10443, 896, 4864),
        ("TN", 28672, 8192, 226),
        ("NN", 5197, 1024, 30522),
        ("NT", 3533, 4096, 4096),
        ("NT", 116, 2304, 768),
        ("NN", 3708, 3584, 18944),
        ("NT", 1, 10240, 8192),
        ("TN", 11008, 4096, 1),
    ],
    # seed 961848: committed after the fourth tuning and before the run that measured it
    "held-out-2": [
        ("TN", 4096, 11008, 30),
        ("NT", 2605, 11008, 4096),
        ("NT", 1052, 1024, 1024),
        ("TN", 2048, 2048, 2054),
        ("TN", 151936, 896, 1),
        ("NT", 1209, 2048, 2048),
        ("TN", 12288, 3072, 149),
        ("NN", 1, 3072, 768),
        ("NT", 49, 4096, 14336),
        ("TN", 2304, 768, 1),
        ("NT", 15598, 768, 3072),
        ("NT", 914, 2048, 16384),
        ("TN", 18944, 3584, 19),
        ("NT", 7910, 8192, 28672),
        ("NN", 1, 8192, 28672),
        ("TN", 10240, 8192, 4),
        ("NN", 1075, 3072, 768),
        ("NN", 7313, 4096, 6144),
        ("NT", 5, 4096, 14336),
        ("NT", 23, 12288, 3072),
        ("NN", 127, 2048, 256000),
        ("NN", 9334, 16384, 2048),
        ("TN", 1024, 4096, 1837),
        ("NT", 7, 1024, 1024),
        ("NT", 15, 6144, 4096),
        ("NN", 1, 896, 896),
        ("TN", 3072, 768, 40),
        ("TN", 5120, 5120, 3261),
        ("NT", 574, 12288, 3072),
        ("NN", 170, 28672, 8192),
        ("TN", 6144, 4096, 46),
        ("NN", 30, 4096, 32000),
    ],
    # seed 877618: committed after the look-up's rules changed and before the run that measured it
    "held-out-3": [
        ("NT", 2, 4096, 1024),
        ("NT", 52, 768, 768),
        ("NN", 5494, 4096, 32000),
        ("NT", 2036, 3072, 1024),
        ("TN", 768, 3072, 59),
        ("NT", 4987, 3072, 1024),
        ("NT", 6461, 16384, 2048),
        ("NT", 4, 16384, 2048),
        ("NT", 6, 3584, 3584),
        ("NT", 1, 14336, 4096),
        ("NT", 6, 3072, 768),
        ("TN", 2048, 2048, 10),
        ("NT", 9, 128256, 4096),
        ("NT", 4, 4608, 3584),
        ("NT", 16, 12288, 3072),
        ("NT", 2, 12288, 3072),
        ("TN", 3584, 3584, 314),
        ("TN", 16384, 2048, 6205),
        ("NT", 979, 768, 768),
        ("TN", 768, 768, 60),
        ("NT", 5, 3072, 1024),
        ("NT", 417, 32000, 4096),
        ("NN", 719, 1024, 30522),
        ("TN", 4096, 4096, 7),
        ("TN", 1024, 1024, 531),
        ("NN", 1690, 4096, 6144),
        ("NN", 362, 5120, 32000),
        ("NN", 728, 2048, 16384),
        ("TN", 3072, 24576, 9275),
        ("NN", 427, 4096, 4096),
        ("NT", 11655, 4096, 1024),
        ("NN", 6195, 4096, 4096),
    ],
    # seed 276436: committed before the fifth tuning and the run that measured it
    "held-out-4": [
        ("NN", 112, 8192, 8192),
        ("NT", 2, 16384, 2048),
        ("TN", 8192, 8192, 118),
        ("NN", 1686, 768, 3072),
        ("NT", 10832, 14336, 4096),
        ("TN", 4096, 14336, 135),
        ("NN", 8, 4096, 128256),
        ("NN", 16, 14336, 4096),
        ("NT", 21, 1024, 1024),
        ("NT", 4, 32000, 5120),
        ("TN", 18944, 3584, 105),
        ("TN", 3072, 4096, 29),
        ("NT", 28, 4608, 3584),
        ("NT", 127, 768, 3072),
        ("NT", 9, 4096, 4096),
        ("TN", 32000, 4096, 300),
        ("NN", 61, 768, 30522),
        ("NN", 5, 3072, 24576),
        ("TN", 4096, 14336, 9),
        ("NT", 21, 4096, 14336),
        ("NN", 86, 4096, 32000),
        ("TN", 15360, 5120, 3),
        ("TN", 3072, 24576, 14658),
        ("TN", 5120, 5120, 6),
        ("NT", 17, 768, 768),
        ("NN", 13012, 4096, 6144),
        ("TN", 1024, 1024, 373),
        ("TN", 32000, 5120, 22),
        ("NN", 7972, 24576, 3072),
        ("TN", 1024, 4096, 43),
        ("NT", 674, 896, 4864),
        ("TN", 3072, 1024, 6),
    ],
    # seed 599625: committed after step 11's rules and before the run that measured it
    "held-out-5": [
        ("NT", 74, 28672, 8192),
        ("TN", 128256, 8192, 21),
        ("TN", 896, 4864, 7503),
        ("NN", 1970, 5120, 32000),
        ("NT", 593, 3584, 3584),
        ("NT", 18, 32000, 4096),
        ("TN", 1024, 4096, 879),
        ("NN", 1, 3072, 12288),
        ("NN", 40, 4096, 6144),
        ("TN", 3072, 4096, 7),
        ("NT", 20, 768, 3072),
        ("NN", 2868, 4096, 14336),
        ("NN", 3903, 768, 3072),
        ("TN", 3072, 768, 15),
        ("NT", 163, 12288, 3072),
        ("TN", 3072, 1024, 5),
        ("NT", 90, 4096, 14336),
        ("NN", 18, 5120, 13824),
        ("TN", 10240, 8192, 2),
        ("NN", 11, 4096, 11008),
        ("TN", 1024, 4096, 13),
        ("NT", 2, 152064, 3584),
        ("NN", 43, 8192, 28672),
        ("TN", 1152, 896, 677),
        ("NT", 821, 3584, 18944),
        ("TN", 4096, 11008, 2),
        ("NT", 256, 128256, 4096),
        ("NT", 1170, 4096, 14336),
        ("NT", 21, 4096, 4096),
        ("NT", 7087, 3072, 24576),
        ("NT", 67, 768, 3072),
        ("NN", 1, 4096, 14336),
    ],
    # seed 342000: committed after step 15's rule and before the run that measured it
    "held-out-6": [
        ("TN", 2304, 768, 64),
        ("NT", 126, 768, 768),
        ("NT", 2, 4096, 1024),
        ("NN", 13, 3584, 3584),
        ("TN", 14336, 4096, 13465),
        ("NN", 297, 14336, 4096),
        ("NN", 1, 768, 2304),
        ("NT", 1314, 1024, 4096),
        ("NT", 2, 256000, 2048),
        ("NT", 1, 5120, 5120),
        ("NT", 277, 6144, 4096),
        ("NN", 3920, 2048, 2560),
        ("NT", 3, 896, 4864),
        ("NN", 1, 8192, 28672),
        ("NT", 263, 3072, 24576),
        ("NT", 793, 30522, 768),
        ("NT", 50, 2048, 2048),
        ("TN", 768, 3072, 2710),
        ("NN", 1, 14336, 4096),
        ("NT", 8, 4096, 1024),
        ("NN", 1, 3072, 768),
        ("NT", 1354, 4864, 896),
        ("NT", 8, 4096, 4096),
        ("NT", 185, 4096, 4096),
        ("NT", 2604, 50257, 768),
        ("NN", 1497, 3072, 12288),
        ("NT", 2, 4096, 1024),
        ("TN", 128256, 4096, 2),
        ("NN", 70, 768, 50257),
        ("NT", 156, 6144, 4096),
        ("NN", 3, 3072, 256000),
        ("NN", 90, 1024, 3072),
    ],
    # seed 718203: committed before step 16's run and before the run that measured it
    "held-out-7": [
        ("NT", 3451, 128256, 8192),
        ("NN", 5539, 4096, 14336),
        ("NN", 174, 8192, 10240),
        ("NN", 55, 28672, 8192),
        ("TN", 2304, 768, 2),
        ("TN", 6144, 4096, 4284),
        ("NT", 7, 768, 3072),
        ("NT", 10753, 8192, 28672),
        ("TN", 28672, 8192, 184),
        ("NT", 3, 128256, 8192),
        ("NT", 2965, 32000, 4096),
        ("TN", 4096, 14336, 917),
        ("NT", 339, 768, 768),
        ("NT", 4245, 32000, 4096),
        ("NT", 3547, 5120, 5120),
        ("NN", 1439, 8192, 8192),
        ("TN", 152064, 3584, 9918),
        ("NT", 2, 18944, 3584),
        ("NT", 2, 3072, 24576),
        ("NT", 16, 30522, 768),
        ("TN", 768, 3072, 10),
        ("NT", 10, 896, 4864),
        ("NT", 7872, 256000, 2048),
        ("NN", 53, 1024, 50257),
        ("NT", 322, 13824, 5120),
        ("TN", 4096, 14336, 6),
        ("NT", 6749, 6144, 4096),
        ("NN", 16, 1024, 3072),
        ("NN", 9914, 4096, 4096),
        ("NN", 9, 896, 896),
        ("NT", 9281, 32000, 4096),
        ("NT", 1035, 14336, 4096),
    ],
    # seed 620941: committed before step 17's run and before the run that measured it
    "held-out-8": [
        ("NT", 698, 256000, 2048),
        ("TN", 5120, 5120, 545),
        ("NN", 9, 14336, 4096),
        ("TN", 4096, 4096, 912),
        ("NN", 4474, 1024, 1024),
        ("NT", 1, 2048, 2048),
        ("NT", 687, 2560, 2048),
        ("NT", 152, 6144, 4096),
        ("NN", 15, 2048, 2048),
        ("TN", 3584, 3584, 834),
        ("NT", 10, 15360, 5120),
        ("TN", 3584, 3584, 2687),
        ("NT", 1, 2048, 2048),
        ("TN", 18944, 3584, 73),
        ("NT", 21, 256000, 3072),
        ("NT", 15403, 4864, 896),
        ("NT", 264, 4096, 1024),
        ("NN", 8019, 5120, 32000),
        ("NT", 498, 4096, 4096),
        ("TN", 2048, 16384, 557),
        ("NT", 15, 3072, 4096),
        ("TN", 768, 3072, 4268),
        ("NT", 26, 3072, 768),
        ("TN", 32000, 5120, 16),
        ("TN", 896, 896, 2),
        ("NT", 2, 4096, 4096),
        ("TN", 4096, 11008, 5),
        ("NT", 1019, 4096, 1024),
        ("NN", 5, 14336, 4096),
        ("TN", 2048, 16384, 1726),
        ("NN", 396, 16384, 2048),
        ("NT", 6120, 768, 768),
    ],
    # seed 228843: committed after step 20's rule and before the run that measured it
    "held-out-9": [
        ("NN", 396, 28672, 8192),
        ("NN", 13, 4096, 6144),
        ("NT", 2, 50257, 1024),
        ("TN", 5120, 5120, 6270),
        ("NT", 113, 3072, 768),
        ("NT", 6837, 2304, 768),
        ("NT", 36, 10240, 8192),
        ("NT", 103, 768, 3072),
        ("TN", 1024, 1024, 50),
        ("NN", 1, 3072, 256000),
        ("NT", 75, 3072, 768),
        ("NT", 1, 3072, 24576),
        ("TN", 8192, 8192, 7),
        ("NN", 2, 4096, 12288),
        ("NN", 3817, 3584, 18944),
        ("TN", 4096, 1024, 8998),
        ("TN", 15360, 5120, 16),
        ("NT", 242, 3072, 24576),
        ("NN", 11, 4096, 12288),
        ("NN", 4, 768, 768),
        ("NN", 12573, 3072, 768),
        ("NN", 48, 768, 3072),
        ("TN", 768, 768, 8),
        ("NN", 15684, 4096, 11008),
        ("NT", 154, 151936, 896),
        ("TN", 30522, 768, 5349),
        ("NT", 12, 4096, 14336),
        ("NT", 42, 152064, 3584),
        ("NN", 124, 2048, 256000),
        ("TN", 28672, 8192, 1469),
        ("NT", 1, 11008, 4096),
        ("NT", 80, 6144, 4096),
    ],
}


#: The held-out draws measured before steps 19 and 20 ran (the tenth was drawn after step 20's rule).
SEEN_BEFORE_STEP_20 = [name for name in HELD_OUT if name != "held-out-9"]


def _tuned_and_swept() -> tuple[set, set]:
    from gpukb.gemm.triton.sweep import FILL_TUNING, GAP_TUNING, ISSUE_SHAPES, ISSUE_TUNING, LOSER_TUNING, random_shapes

    tuned = {(layout, *shape) for layout, shape in (*ISSUE_TUNING, *LOSER_TUNING, *GAP_TUNING, *FILL_TUNING)}
    tuned |= {(layout, s[2], s[3], s[4]) for layout, s in ISSUE_SHAPES}
    swept = {(layout, s[2], s[3], s[4]) for layout, s in (*random_shapes(), *ISSUE_SHAPES)}
    return tuned, swept


@pytest.mark.parametrize("name", list(HELD_OUT))
def test_each_held_out_draw_is_pinned_and_shares_nothing_with_the_tuned_sets(name: str) -> None:
    from gpukb.gemm.triton.sweep import FILL_TUNING, GAP_TUNING, held_out

    pinned = HELD_OUT[name]
    seed, count = ms.HELD_OUT_DRAWS[name]
    assert [(s.layout, s.m, s.n, s.k) for s in ms.draw(seed, count)] == pinned
    shapes = held_out(name)
    assert [(layout, s[2], s[3], s[4]) for layout, s in shapes] == pinned
    assert {s[0] for _, s in shapes} == {name}
    tuned, swept = _tuned_and_swept()
    assert not tuned & set(pinned)
    # the designed tuning shapes (fourth and fifth tuning) are none of any sweep's products either
    assert not {(layout, *shape) for layout, shape in (*GAP_TUNING, *FILL_TUNING)} & (swept | set(pinned))


def test_step_16s_products_are_seen_ones_and_none_of_the_draw_that_judges_it() -> None:
    """Step 16 timed products of a few hundred tokens already measured in earlier draws (seen), none of the eighth
    draw, committed before its run; every one in a class of its own (the run times one product a class)."""
    from gpukb.gemm.triton.sweep import TOKEN_TUNING, held_out
    from gpukb.gemm.triton.tuning import ShapeClass

    products = {(layout, *shape) for layout, shape in TOKEN_TUNING}
    earlier = {(layout, s[2], s[3], s[4]) for name in list(HELD_OUT)[:6] for layout, s in held_out(name)}
    assert products <= earlier
    assert not {p[1:] for p in products} & {p[1:] for p in HELD_OUT["held-out-7"]}
    assert all(64 < m <= 320 for _, m, _, _ in products)
    classes = {ShapeClass.of("bfloat16", layout, *shape) for layout, shape in TOKEN_TUNING}
    assert len(classes) == len(TOKEN_TUNING)


#: Step 16's draw of products of 65 to 320 rows (seed 553071), committed after its rule and before the run that
#: measured it.
TOKEN_DRAW = [
    ("NN", 102, 896, 1152),
    ("NT", 115, 32000, 4096),
    ("NT", 90, 4096, 4096),
    ("NN", 318, 5120, 13824),
    ("NT", 310, 12288, 3072),
    ("NT", 146, 6144, 4096),
    ("NT", 212, 4864, 896),
    ("NT", 71, 2304, 768),
    ("NT", 228, 11008, 4096),
    ("NT", 132, 1024, 4096),
    ("NT", 122, 5120, 13824),
    ("NT", 123, 24576, 3072),
    ("NT", 127, 5120, 13824),
    ("NT", 127, 256000, 2048),
    ("NT", 105, 1024, 4096),
    ("NN", 108, 5120, 5120),
    ("NN", 195, 3072, 12288),
    ("NT", 99, 1024, 4096),
    ("NN", 67, 1024, 30522),
    ("NT", 99, 3072, 768),
    ("NT", 238, 30522, 1024),
    ("NN", 87, 4096, 6144),
    ("NT", 153, 152064, 3584),
    ("NT", 69, 11008, 4096),
]


#: Step 18's draw of products of 65 to 320 rows (seed 471190), committed after its rule and before the run that
#: measured it.
TOKEN_DRAW_2 = [
    ("NT", 260, 50257, 768),
    ("NN", 84, 1024, 1024),
    ("NN", 267, 4096, 128256),
    ("NN", 95, 18944, 3584),
    ("NT", 193, 18944, 3584),
    ("NN", 204, 768, 3072),
    ("NT", 223, 1024, 1024),
    ("NT", 208, 1024, 4096),
    ("NT", 89, 2304, 768),
    ("NN", 113, 1024, 4096),
    ("NT", 182, 5120, 13824),
    ("NT", 89, 12288, 4096),
    ("NT", 143, 2048, 2048),
    ("NT", 86, 1024, 1024),
    ("NT", 122, 32000, 4096),
    ("NT", 305, 4096, 11008),
    ("NT", 117, 151936, 896),
    ("NT", 221, 32000, 4096),
    ("NT", 165, 15360, 5120),
    ("NN", 247, 4096, 1024),
    ("NT", 154, 3584, 3584),
    ("NT", 94, 5120, 13824),
    ("NN", 74, 1024, 3072),
    ("NT", 96, 1024, 1024),
]


#: Step 19's draw of products of 65 to 320 rows (seed 815263), committed before the run that tuned the swapped tiles.
TOKEN_DRAW_3 = [
    ("NT", 251, 2048, 16384),
    ("NN", 101, 8192, 8192),
    ("NN", 187, 4096, 6144),
    ("NT", 205, 3072, 24576),
    ("NN", 127, 8192, 128256),
    ("NT", 83, 896, 896),
    ("NN", 116, 1024, 4096),
    ("NN", 66, 28672, 8192),
    ("NT", 82, 3072, 768),
    ("NT", 69, 8192, 28672),
    ("NT", 133, 8192, 28672),
    ("NT", 92, 768, 3072),
    ("NT", 180, 768, 3072),
    ("NT", 87, 3072, 4096),
    ("NT", 102, 8192, 28672),
    ("NT", 236, 3072, 4096),
    ("NN", 161, 8192, 28672),
    ("NT", 310, 3584, 18944),
    ("NT", 86, 12288, 3072),
    ("NT", 261, 18944, 3584),
    ("NN", 180, 768, 3072),
    ("NT", 276, 151936, 896),
    ("NN", 166, 4864, 896),
    ("NN", 207, 1024, 30522),
]

#: Step 20's draw (321 to 2048 rows), committed before its tuning run.
MID_ROWS_DRAW = [
    ("TN", 768, 768, 75),
    ("NT", 325, 30522, 1024),
    ("TN", 896, 4864, 154),
    ("TN", 768, 3072, 2370),
    ("NN", 353, 4096, 4096),
    ("NT", 960, 1024, 1024),
    ("NT", 1271, 3072, 4096),
    ("NN", 1176, 4096, 14336),
    ("NT", 1681, 1024, 4096),
    ("TN", 1024, 4096, 195),
    ("NN", 1408, 16384, 2048),
    ("NT", 1721, 151936, 896),
    ("NT", 816, 2304, 768),
    ("TN", 896, 4864, 7154),
    ("NT", 380, 3072, 768),
    ("NT", 564, 12288, 4096),
    ("NT", 850, 12288, 3072),
    ("TN", 2048, 2048, 1358),
    ("NT", 1428, 18944, 3584),
    ("NT", 693, 30522, 1024),
    ("TN", 768, 768, 25),
    ("TN", 768, 768, 433),
    ("TN", 896, 896, 67),
    ("NT", 866, 3072, 768),
]

#: Step 21's draw (65 to 320 rows), committed before its tuning run.
TOKEN_DRAW_4 = [
    ("NT", 76, 8192, 8192),
    ("NT", 292, 768, 768),
    ("NN", 96, 3072, 256000),
    ("NT", 101, 50257, 768),
    ("NN", 260, 8192, 8192),
    ("NT", 108, 6144, 4096),
    ("NN", 69, 3584, 18944),
    ("NT", 192, 24576, 3072),
    ("NN", 138, 3072, 12288),
    ("NN", 202, 8192, 28672),
    ("NN", 98, 1024, 30522),
    ("NT", 297, 3072, 768),
    ("NT", 141, 768, 768),
    ("NT", 188, 32000, 4096),
    ("NN", 202, 14336, 4096),
    ("NT", 79, 28672, 8192),
    ("NT", 143, 151936, 896),
    ("NN", 238, 4096, 1024),
    ("NT", 105, 3072, 768),
    ("NN", 69, 4096, 6144),
    ("NT", 65, 16384, 2048),
    ("NN", 288, 4096, 1024),
    ("NT", 226, 152064, 3584),
    ("NN", 115, 768, 768),
]

#: Each later class draw, its pinned list, and the tuning lists of the steps that ran before it was drawn.
TIMED_BEFORE = ("TOKEN_TUNING", "DEFAULT_TUNING", "TWO_BLOCK_TUNING", "STREAMK_TUNING", "FILL_TUNING", "GAP_TUNING",
                "LOSER_TUNING", "ISSUE_TUNING")  # fmt: skip
LATER_DRAWS = {
    "tokens-2": (TOKEN_DRAW_2, (*TIMED_BEFORE, "TOKEN_SPLIT_TUNING"), ("tokens",)),
    "tokens-3": (TOKEN_DRAW_3, (*TIMED_BEFORE, "TOKEN_SPLIT_TUNING", "SWAP_TUNING"), ("tokens", "tokens-2")),
    "mid-rows": (
        MID_ROWS_DRAW,
        (*TIMED_BEFORE, "TOKEN_SPLIT_TUNING", "SWAP_TUNING"),
        ("tokens", "tokens-2", "tokens-3"),
    ),
    "tokens-4": (
        TOKEN_DRAW_4,
        (*TIMED_BEFORE, "TOKEN_SPLIT_TUNING", "SWAP_TUNING", "MID_TUNING"),
        ("tokens", "tokens-2", "tokens-3", "mid-rows"),
    ),
}


@pytest.mark.parametrize("name", list(LATER_DRAWS))
def test_later_class_draws_are_pinned_and_share_nothing_with_what_was_timed_or_swept_before(name) -> None:
    from gpukb.gemm.triton import sweep

    pinned, timed_names, earlier_draws = LATER_DRAWS[name]
    seed, count, rows = ms.TOKEN_DRAWS[name]
    assert [(s.layout, s.m, s.n, s.k) for s in ms.draw_rows(seed, count, rows)] == pinned
    assert [(layout, *s[2:]) for layout, s in sweep.token_draw(name)] == pinned
    assert {s[0] for _, s in sweep.token_draw(name)} == {name}
    timed = {shape for timed_name in timed_names for _, shape in getattr(sweep, timed_name)}
    swept = {tuple(s[2:]) for held in HELD_OUT for _, s in sweep.held_out(held)}
    swept |= {tuple(s[2:]) for _, s in (*sweep.random_shapes(), *sweep.ISSUE_SHAPES)}
    swept |= {tuple(s[2:]) for draw in earlier_draws for _, s in sweep.token_draw(draw)}
    assert not {p[1:] for p in pinned} & (timed | swept)


def test_only_the_named_class_draws_exist() -> None:
    from gpukb.gemm.triton import sweep

    assert list(ms.TOKEN_DRAWS) == ["tokens", *LATER_DRAWS]
    names = r"\['tokens', 'tokens-2', 'tokens-3', 'mid-rows', 'tokens-4'\]"
    with pytest.raises(ValueError, match=rf"^name must be one of {names}; got 'tokens-5'$"):
        sweep.token_draw("tokens-5")


def test_step_16s_draw_is_pinned_and_shares_nothing_with_what_step_16_timed() -> None:
    from gpukb.gemm.triton.sweep import TOKEN_TUNING, token_draw

    seed, count, rows = ms.TOKEN_DRAWS["tokens"]
    drawn = ms.draw_rows(seed, count, rows)
    assert [(s.layout, s.m, s.n, s.k) for s in drawn] == TOKEN_DRAW
    # the first products of the seed's sequence in the class, in its order
    sequence = [s for s in ms.draw(seed, 1000) if rows[0] <= s.m <= rows[1]]
    assert drawn == sequence[:count]
    assert [(layout, *s[2:]) for layout, s in token_draw()] == TOKEN_DRAW
    assert {s[0] for _, s in token_draw()} == {"tokens"}
    assert not {p[1:] for p in TOKEN_DRAW} & {shape for _, shape in TOKEN_TUNING}
    tuned, _ = _tuned_and_swept()
    assert not tuned & set(TOKEN_DRAW)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((1, 4, (65,)), ValueError, "rows must be two ints (low, high) with 1 ≤ low ≤ high; got (65,)"),
        ((1, 4, (320, 65)), ValueError, "rows must be two ints (low, high) with 1 ≤ low ≤ high; got (320, 65)"),
        ((1, 4, (0, 65)), ValueError, "rows must be two ints (low, high) with 1 ≤ low ≤ high; got (0, 65)"),
        ((1, 4, (65.0, 320)), ValueError, "rows must be two ints (low, high) with 1 ≤ low ≤ high; got (65.0, 320)"),
        ((1, 4, [65, 320]), ValueError, "rows must be two ints (low, high) with 1 ≤ low ≤ high; got [65, 320]"),
        ((1, 0, (65, 320)), ValueError, "count must be"),
        ((1, 1, (10**9, 10**9)), ValueError, "rows must include M of a product the draw can make (at most "),  # at once
        ((-1, 4, (65, 320)), ValueError, "seed must be ≥ 0"),
    ],
)  # fmt: skip
def test_draw_rows_refuses_what_it_cannot_draw(args, error, message) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        ms.draw_rows(*args)


def test_draw_rows_takes_both_ends_of_its_rows() -> None:
    first = ms.draw(1, 1)[0]
    assert ms.draw_rows(1, 1, (first.m, first.m)) == [first]


def test_draw_rows_stops_at_the_most_products_a_call_draws(monkeypatch) -> None:
    monkeypatch.setattr(ms, "MAX_COUNT", 600)  # (a million takes seconds)
    held = len([s for s in ms.draw(1, 600) if 65 <= s.m <= 320])
    message = f"600 products of seed 1 hold {held} with M in (65, 320); asked for 599"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        ms.draw_rows(1, 599, (65, 320))


def test_step_17s_products_are_seen_large_ones_and_none_of_the_draw_that_judges_it() -> None:
    """Step 17 timed seen products (the random sweep, the held-out draws to the eighth) of more than 320 rows and at
    least 2^30 multiply-adds, each once, none of the ninth draw, committed before its run."""
    from gpukb.gemm.triton.sweep import DEFAULT_TUNING, held_out, random_shapes

    products = [(layout, *shape) for layout, shape in DEFAULT_TUNING]
    assert len(products) == len(set(products)) == 47
    earlier = {(layout, s[2], s[3], s[4]) for name in list(HELD_OUT)[:7] for layout, s in held_out(name)}
    earlier |= {(layout, s[2], s[3], s[4]) for layout, s in random_shapes()}
    assert set(products) <= earlier
    assert all(m > 320 and m * n * k >= 2**30 for _, m, n, k in products)
    assert not {p[1:] for p in products} & {p[1:] for p in HELD_OUT["held-out-8"]}


def test_step_18s_products_are_seen_ones_of_65_to_320_rows() -> None:
    from gpukb.gemm.triton.sweep import TOKEN_SPLIT_TUNING, held_out, random_shapes, token_draw

    products = [(layout, *shape) for layout, shape in TOKEN_SPLIT_TUNING]
    assert len(products) == len(set(products)) == 25
    seen = {(layout, s[2], s[3], s[4]) for name in SEEN_BEFORE_STEP_20 for layout, s in held_out(name)}
    seen |= {(layout, s[2], s[3], s[4]) for layout, s in (*random_shapes(), *token_draw())}
    assert set(products) <= seen
    assert all(64 < m <= 320 for _, m, _, _ in products)


def test_every_draw_has_its_own_seed_and_a_pinned_list() -> None:
    seeds = [ms.RANDOM_SEED, *(seed for seed, _ in ms.HELD_OUT_DRAWS.values())]
    assert len(set(seeds)) == len(seeds)
    assert list(HELD_OUT) == list(ms.HELD_OUT_DRAWS)


@pytest.mark.parametrize("name", ["held-out-0", "random", None, 5])
def test_held_out_refuses_a_name_that_is_not_a_draw(name: object) -> None:
    from gpukb.gemm.triton.sweep import held_out

    with pytest.raises(ValueError, match=r"name must be one of \['held-out', 'held-out-2'.*; got"):
        held_out(name)  # type: ignore[arg-type]


@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
def test_bench_operands_have_the_shapes_and_strides_of_their_layout(layout: str) -> None:
    """The bench scripts' one operand maker: A is m×k and B k×n; a T operand is a transposed view of row-major
    storage (stride 1 along its first dimension), FP8 is drawn in bf16 and cast."""
    import torch

    from gpukb.gemm.triton.sweep import operands

    for dtype in (torch.bfloat16, torch.float8_e4m3fn):
        a, b = operands(torch, dtype, 3, 5, 7, layout, device="cpu")
        assert (a.shape, b.shape, a.dtype, b.dtype) == ((3, 7), (7, 5), dtype, dtype)
        assert a.stride() == ((7, 1) if layout[0] == "N" else (1, 3))
        assert b.stride() == ((5, 1) if layout[1] == "N" else (1, 7))


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((3, 5, 7, "NX"), ValueError, r"layout must be one of \('NN', 'NT', 'TN', 'TT'\); got 'NX'"),
        ((0, 5, 7, "NN"), ValueError, "m"),
        ((3, -5, 7, "NN"), ValueError, "n"),
        ((3, 5, True, "NN"), TypeError, "k"),
        ((3, 5, 7.0, "NN"), TypeError, "k"),
    ],
)
def test_bench_operands_refuse_what_they_do_not_make(args: tuple, error: type, match: str) -> None:
    import torch

    from gpukb.gemm.triton.sweep import operands

    with pytest.raises(error, match=match):
        operands(torch, torch.bfloat16, *args, device="cpu")


def test_step_19s_products_are_every_seen_one_of_65_to_320_rows() -> None:
    from gpukb.gemm.triton.sweep import SWAP_TUNING, held_out, random_shapes, token_draw

    products = [(layout, *shape) for layout, shape in SWAP_TUNING]
    assert len(products) == len(set(products)) == 75
    seen = {(layout, s[2], s[3], s[4]) for name in SEEN_BEFORE_STEP_20 for layout, s in held_out(name)}
    seen |= {(layout, s[2], s[3], s[4]) for layout, s in (*random_shapes(), *token_draw(), *token_draw("tokens-2"))}
    assert set(products) == {p for p in seen if 64 < p[1] <= 320}


def test_step_20s_products_are_every_seen_one_of_321_to_2048_rows() -> None:
    from gpukb.gemm.triton.sweep import MID_TUNING, held_out, random_shapes, token_draw

    products = [(layout, *shape) for layout, shape in MID_TUNING]
    assert len(products) == len(set(products)) == 58
    seen = {(layout, s[2], s[3], s[4]) for name in SEEN_BEFORE_STEP_20 for layout, s in held_out(name)}
    class_draws = (*token_draw(), *token_draw("tokens-2"), *token_draw("tokens-3"))
    seen |= {(layout, s[2], s[3], s[4]) for layout, s in (*random_shapes(), *class_draws)}
    assert set(products) == {p for p in seen if 320 < p[1] <= 2048}
    assert not set(products) & set(MID_ROWS_DRAW)


def test_step_21s_products_are_every_seen_one_of_65_to_320_rows() -> None:
    from gpukb.gemm.triton.sweep import DEPTH_TUNING, held_out, random_shapes, token_draw

    products = [(layout, *shape) for layout, shape in DEPTH_TUNING]
    assert len(products) == len(set(products)) == 106
    seen = {(layout, s[2], s[3], s[4]) for name in HELD_OUT for layout, s in held_out(name)}
    class_draws = [p for name in ("tokens", "tokens-2", "tokens-3", "mid-rows") for p in token_draw(name)]
    seen |= {(layout, s[2], s[3], s[4]) for layout, s in (*random_shapes(), *class_draws)}
    assert set(products) == {p for p in seen if 64 < p[1] <= 320}
    assert not set(products) & set(TOKEN_DRAW_4)


def test_the_tenth_draw_shares_nothing_with_any_product_timed_or_swept_before_it() -> None:
    from gpukb.gemm.triton import sweep

    pinned = {p[1:] for p in HELD_OUT["held-out-9"]}
    # every tuning list but step 21's, which took the tenth draw's products of 65 to 320 rows after it was measured
    before = [name for name in dir(sweep) if name.endswith("_TUNING") and name != "DEPTH_TUNING"]
    timed = {shape for name in before for _, shape in getattr(sweep, name)}
    swept = {tuple(s[2:]) for name in ms.HELD_OUT_DRAWS if name != "held-out-9" for _, s in sweep.held_out(name)}
    swept |= {tuple(s[2:]) for name in ms.TOKEN_DRAWS for _, s in sweep.token_draw(name)}
    swept |= {tuple(s[2:]) for _, s in (*sweep.random_shapes(), *sweep.ISSUE_SHAPES)}
    assert len(timed) > 200  # every tuning list of sweep.py (none is empty)
    assert not pinned & (timed | swept)
