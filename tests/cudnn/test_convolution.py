"""Convolution descriptors, the output-size formula, the numpy references against torch, the counter, the
algorithm families' arithmetic, the small CNN, and the chapter's data files."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from torch.nn import functional as F  # noqa: N812 - the name every PyTorch reader knows

from gpukb.cudnn import cnn, facts, layers
from gpukb.cudnn.convolution import (
    DescriptorError,
    conv2d_direct,
    conv2d_im2col,
    conv_descriptor,
    counts,
    cross_correlate_fft,
    output_dims,
    output_size,
    winograd_tile,
)
from gpukb.measuring.counting import conv2d_counts

# (input N, C, H, W), (filter K, C/groups, R, S), pad, stride, dilation, groups: paddings, strides, dilations and
# groups in turn, with sizes nobody tuned for.
CASES = [
    ((2, 6, 11, 9), (4, 3, 3, 3), 1, 2, 2, 2),
    ((1, 3, 7, 7), (2, 3, 3, 3), 0, 2, 1, 1),
    ((3, 5, 13, 11), (7, 5, 3, 3), 1, 2, 1, 1),
    ((2, 8, 10, 12), (8, 2, 3, 5), (1, 2), (2, 1), (1, 2), 4),
    ((1, 4, 5, 5), (4, 1, 5, 5), 2, 1, 1, 4),
    ((1, 2, 9, 9), (3, 2, 1, 1), 0, 3, 1, 1),
    ((2, 4, 8, 6), (6, 2, 2, 3), (0, 1), 1, (3, 2), 2),
    ((1, 2, 6, 7), (3, 2, 3, 3), (2, 0), 1, 1, 1),  # more padding along H than W: the last rows read H's bottom pad
]


@pytest.mark.parametrize("case", CASES)
def test_references_equal_torch(case) -> None:
    x_dims, w_dims, pad, stride, dilation, groups = case
    rng = np.random.default_rng(sum(x_dims))
    x, w = rng.standard_normal(x_dims), rng.standard_normal(w_dims)
    conv = conv_descriptor(pad, stride, dilation, groups)
    want = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), stride=conv.stride, padding=conv.pad,
                    dilation=conv.dilation, groups=groups).numpy()  # fmt: skip
    assert want.shape == output_dims(x_dims, w_dims, conv)
    np.testing.assert_allclose(conv2d_direct(x, w, conv), want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(conv2d_im2col(x, w, conv), want, rtol=0, atol=1e-12)


def test_output_size_matches_torch() -> None:
    """The formula against the shape torch computes, over a grid of sizes, filters, paddings, strides, dilations."""
    checked = 0
    for size in (1, 2, 5, 7, 12):
        for tap in (1, 2, 3, 5):
            for pad in (0, 1, 2):
                for stride in (1, 2, 3):
                    for dil in (1, 2):
                        if (tap - 1) * dil + 1 > size + 2 * pad:  # the filter does not fit: both refuse
                            with pytest.raises(ValueError, match="does not fit an input"):
                                output_size(size, tap, pad, stride, dil)
                            with pytest.raises(RuntimeError):
                                F.conv2d(torch.zeros(1, 1, size, 1), torch.zeros(1, 1, tap, 1), stride=(stride, 1),
                                         padding=(pad, 0), dilation=(dil, 1))  # fmt: skip
                            continue
                        want = output_size(size, tap, pad, stride, dil)
                        got = F.conv2d(torch.zeros(1, 1, size, 1), torch.zeros(1, 1, tap, 1), stride=(stride, 1),
                                       padding=(pad, 0), dilation=(dil, 1)).shape[2]  # fmt: skip
                        assert got == want, (size, tap, pad, stride, dil)
                        checked += 1
    assert checked > 200


def test_convolution_mode_is_cross_correlation_with_a_flipped_filter() -> None:
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 4, 9, 8)), rng.standard_normal((6, 2, 3, 2))
    kw = {"pad": 1, "stride": (2, 1), "dilation": (1, 2), "groups": 2}
    true_conv = conv2d_direct(x, w, conv_descriptor(**kw, mode="convolution"))
    flipped = F.conv2d(torch.from_numpy(x), torch.from_numpy(w).flip(-1, -2), stride=(2, 1), padding=1,
                       dilation=(1, 2), groups=2).numpy()  # fmt: skip
    np.testing.assert_allclose(true_conv, flipped, atol=1e-12)
    np.testing.assert_allclose(conv2d_im2col(x, w, conv_descriptor(**kw, mode="convolution")), flipped, atol=1e-12)
    assert np.abs(true_conv - conv2d_direct(x, w, conv_descriptor(**kw))).max() > 1  # the modes differ
    symmetric = w + w[:, :, ::-1, ::-1]  # a filter equal to its flip: the two modes agree
    np.testing.assert_allclose(conv2d_direct(x, symmetric, conv_descriptor(**kw, mode="convolution")),
                               conv2d_direct(x, symmetric, conv_descriptor(**kw)), atol=1e-12)  # fmt: skip


@pytest.mark.parametrize(
    ("x", "w", "kw", "rule", "value"),
    [
        ((1, 6, 8, 8), (4, 1, 3, 3), {"groups": 4, "pad": 1}, "groups-divide-channels",
         "C = 6 and output channels K = 4"),
        ((1, 6, 8, 8), (4, 2, 3, 3), {"groups": 2}, "groups-divide-channels",
         "2 channels per group; times groups = 2 that is 4, not the input's C = 6"),
        ((1, 1, 2, 2), (1, 1, 5, 5), {}, "output-at-least-1", "a filter spanning 5 does not fit an input of 2"),
        ((1, 1, 9, 9), (1, 1, 3, 3), {"dilation": 5}, "output-at-least-1", "spanning 11"),
        ((1, 1, 9, 9, 9), (1, 1, 3, 3), {}, "filter-rank", "input (1, 1, 9, 9, 9), filter (1, 1, 3, 3)"),
        ((1, 1, 9), (1, 1, 3), {}, "filter-rank", "input (1, 1, 9), filter (1, 1, 3), 2 spatial in the convolution"),
    ],
)  # fmt: skip
def test_bad_convolutions_name_the_rule_and_the_value(x, w, kw, rule, value) -> None:
    with pytest.raises(DescriptorError) as info:
        output_dims(x, w, conv_descriptor(**kw))
    assert info.value.rule == rule
    assert value in str(info.value)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"pad": -1}, r"pad must be at least 0 in every dimension; got pad = \(-1, -1\) \[rule conv-parameters\]"),
        ({"stride": 0}, r"stride must be at least 1 .* got stride = \(0, 0\)"),
        ({"dilation": (1, 0)}, r"dilation must be at least 1 .* got dilation = \(1, 0\)"),
        ({"groups": 0}, r"groups must be at least 1; got groups = 0"),
        ({"stride": (1, 2, 3)}, r"stride needs one value per spatial dimension \(2\); got \(1, 2, 3\)"),
        ({"mode": "correlation"}, r"mode must be one of \('cross_correlation', 'convolution'\); got 'correlation'"),
        ({"pad": "1"}, r"pad must be an int or one int per spatial dimension; got '1'"),
    ],
)  # fmt: skip
def test_bad_convolution_parameters_are_refused(kw, message) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        conv_descriptor(**kw)


def test_counts_reuse_the_performance_chapters_counter() -> None:
    """Without groups the counts are conv2d_counts' own; with groups they are its per-group counts summed."""
    plain = counts((1, 3, 416, 480), (16, 3, 3, 3), conv_descriptor(1, 2), bias=True)
    assert plain == conv2d_counts((1, 3, 416, 480), 16, (3, 3), 2, 1, bias=True)
    assert plain.params == 448
    assert plain.output_shape == (1, 16, 208, 240)
    grouped = counts((2, 8, 10, 10), (8, 2, 3, 3), conv_descriptor(1, 1, groups=4))
    assert grouped.macs == 2 * 8 * 10 * 10 * 2 * 9  # each output sums C/G · R · S products
    assert grouped.params == 8 * 2 * 9
    assert grouped.input_elems == 2 * 8 * 100
    assert grouped.output_elems == 1600
    with pytest.raises(ValueError, match="no dilation; got pad"):
        counts((1, 1, 9, 9), (1, 1, 3, 3), conv_descriptor(dilation=2))


def test_winograd_f2x2_3x3_uses_16_multiplications() -> None:
    rng = np.random.default_rng(5)
    for _ in range(20):
        d, g = rng.standard_normal((4, 4)), rng.standard_normal((3, 3))
        tile, multiplications = winograd_tile(d, g)
        np.testing.assert_allclose(tile, conv2d_direct(d[None, None], g[None, None], conv_descriptor())[0, 0],
                                   atol=1e-12)  # fmt: skip
        assert multiplications == 16 < 2 * 2 * 3 * 3
    with pytest.raises(ValueError, match=r"4x4 tile and a 3x3 filter; got \(3, 3\)"):
        winograd_tile(np.zeros((3, 3)), np.zeros((3, 3)))


def test_fft_convolution_equals_the_direct_sum() -> None:
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((12, 9)), rng.standard_normal((3, 5))
    direct = conv2d_direct(x[None, None], w[None, None], conv_descriptor())[0, 0]
    np.testing.assert_allclose(cross_correlate_fft(x, w), direct, atol=1e-12)


def test_small_cnn_shapes_and_parameters() -> None:
    stages = cnn.stages()
    assert [shape for _, shape, _ in stages] == [(1, 7, 7, 3), (1, 3, 3, 2), (1, 3, 3, 2), (1, 2, 2, 2), (1, 8),
                                                 (1, 2), (1, 2)]  # fmt: skip
    assert cnn.parameters() == (3 * 3 * 3 * 2 + 2) + (8 * 2 + 2) == 74
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 2, 3, stride=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2, 1),
                                torch.nn.Flatten(), torch.nn.Linear(8, 10))  # fmt: skip
    assert sum(p.numel() for p in model.parameters()) == cnn.parameters(dense_units=10) == 146
    with pytest.raises(ValueError, match="dense_units must be an int ≥ 1; got 0"):
        cnn.stages(dense_units=0)


def test_claim_small_cnn_example() -> None:
    """Decides the erratum on the lecture's small CNN: 146 parameters fit ten dense units, not two; the vector it
    calls row-major is flattened channel by channel; its softmax is of that vector, not of a dense layer's output."""
    data, s = cnn.load(), cnn.example_stages()
    assert data.claimed_params == 146 != cnn.parameters() == 74
    assert data.claimed_params == cnn.parameters(dense_units=10)
    assert s["flat_nhwc"][0].tolist() == [9, 7, 9, 1, 9, 6, 9, 0]  # row-major over the NHWC array as written
    assert s["flat_nchw"][0].tolist() == data.claimed_flat  # channel by channel
    assert s["flat_nhwc"][0].tolist() != data.claimed_flat
    np.testing.assert_allclose(s["softmax_of_flat"], data.claimed_softmax, rtol=1e-6)  # eight values, not two
    torch_flat = torch.from_numpy(s["pool"]).permute(0, 3, 1, 2).flatten(1)  # torch's flatten of NCHW
    assert torch_flat[0].tolist() == data.claimed_flat


def test_data_files_refuse_corrupted_copies() -> None:
    good = facts.load()
    text = (
        '[sources]\na = "x"\n[[fact]]\nid = "f"\ntopic = "tensor"\ntext = "ten letters at least"\n'
        'sources = ["a"]\nstatus = "confirmed"\nchecked = 2026-11-23\ntest = "tests/a.py::test_b"\n'
    )
    assert facts.parse(text).facts[0].id == "f"
    with pytest.raises(ValueError, match=r"fact f: unknown sources \['b'\]"):
        facts.parse(text.replace('sources = ["a"]', 'sources = ["b"]'))
    with pytest.raises(ValueError, match=r"topic: Input should be"):
        facts.parse(text.replace('"tensor"', '"physics"'))
    with pytest.raises(ValueError, match="colour: Extra inputs are not permitted"):
        facts.parse(text + 'colour = "red"\n')
    with pytest.raises(ValueError, match=r"id 'f' repeats"):
        facts.parse(text + text.split("\n", 2)[2])
    assert {f.topic for f in good.facts} == {"tensor", "convolution", "math", "algorithm"}
    table = layers.load()
    assert table.batch == 32
    assert [x.name for x in table.layers][:2] == ["conv1", "res2-3x3"]
    layer_text = 'source = "a source long enough"\nchecked = 2026-11-23\nbatch = 8\n[[layer]]\nname = "a"\nc = 3\n' \
                 'hw = 8\nk = 4\nkernel = 3\npad = 1\nstride = 1\n'  # fmt: skip
    assert layers.parse(layer_text).layers[0].k == 4
    with pytest.raises(ValueError, match=r"c: Input should be greater than 0"):
        layers.parse(layer_text.replace("c = 3", "c = 0"))
    with pytest.raises(ValueError, match=re.escape("missing top-level keys ['batch']")):
        layers.parse(layer_text.replace("batch = 8\n", ""))


def test_the_references_refuse_what_is_not_2d() -> None:
    """Input and filter must both be 4-D (N, C, H, W and K, C/groups, R, S): either one wrong is refused."""
    x, w = np.zeros((1, 1, 5, 5)), np.zeros((1, 1, 3, 3))
    said = r"^these references are 2-D: input \(N, C, H, W\), filter \(K, C/groups, R, S\); got "
    cases = ((x[0], w, r"\(1, 5, 5\), \(1, 1, 3, 3\)$"), (x, w[0], r"\(1, 1, 5, 5\), \(1, 3, 3\)$"))
    for bad_x, bad_w, shapes in cases:
        for reference in (conv2d_direct, conv2d_im2col):
            with pytest.raises(ValueError, match=said + shapes):
                reference(bad_x, bad_w, conv_descriptor())


def test_counts_refuse_a_padding_or_stride_that_differs_between_h_and_w() -> None:
    """The counter takes one padding and one stride: either differing between H and W alone is refused."""
    for conv in (conv_descriptor(pad=(1, 0)), conv_descriptor(stride=(2, 1))):
        with pytest.raises(ValueError, match=r"takes one padding and one stride and no dilation; got pad \("):
            counts((1, 1, 9, 9), (1, 1, 3, 3), conv)


def test_softmax_of_large_values_is_finite() -> None:
    """Shifted by the maximum: exp(1000) overflows, exp(0) and exp(-1) do not. e / (e + 1) = 0.7311 by hand."""
    np.testing.assert_allclose(cnn.softmax(np.array([1000.0, 999.0])), [np.e / (np.e + 1), 1 / (np.e + 1)])


def test_another_network_has_its_own_shapes_and_parameters() -> None:
    """A variant of the example worked by hand: 10×10×3 input, four 3×3 filters, stride 1, no padding -> 8×8×4;
    a 2×2 pool of stride 2 -> 4×4×4 = 64 features; 5 dense units: 3·3·3·4 + 4 = 112 and 64·5 + 5 = 325."""
    net = cnn.load().model_copy(update={"input_nhwc": [1, 10, 10, 3], "filters": 4, "conv_stride": 1,
                                        "conv_pad": 0, "pool": 2, "pool_stride": 2, "dense_units": 5})  # fmt: skip
    assert [shape for _, shape, _ in cnn.stages(net)] == [(1, 10, 10, 3), (1, 8, 8, 4), (1, 8, 8, 4), (1, 4, 4, 4),
                                                          (1, 64), (1, 5), (1, 5)]  # fmt: skip
    assert cnn.parameters(net) == 112 + 325


def test_data_file_errors_name_the_file_and_the_table() -> None:
    with pytest.raises(ValueError, match=r"^cudnn/small_cnn\.toml: example entry 1 .*filters"):
        cnn.parse(cnn.data_text(cnn.FILE).replace("filters = 2", "filters = 0"))
    with pytest.raises(ValueError, match=r"^cudnn/small_cnn\.toml: unknown top-level keys \['colour'\]"):
        cnn.parse("colour = 1\n" + cnn.data_text(cnn.FILE))
    text = facts.data_text(facts.FILE)
    with pytest.raises(ValueError, match=r"^cudnn/facts\.toml: unknown top-level keys \['colour'\]"):
        facts.parse("colour = 1\n" + text)
    with pytest.raises(ValueError, match=r"^cudnn/facts\.toml: fact entry 1 \(.*\): topic"):
        facts.parse(text.replace('topic = "tensor"', 'topic = "physics"', 1))
    entries = text[text.index("[[fact]]") :]
    for sources in ("[sources]\na = 1\n", "sources = 1\n"):  # a value that is not a string; not a table at all
        with pytest.raises(ValueError, match=r"^cudnn/facts\.toml: \[sources\] must map keys to strings$"):
            facts.parse(sources + entries)


def test_facts_are_found_by_id_and_topic() -> None:
    for f in facts.load().facts:
        assert facts.fact(f.id) is f
    with pytest.raises(ValueError, match=r"^no fact 'dims-9'; ids: \['"):
        facts.fact("dims-9")
    topics = "tensor, convolution, math, algorithm"
    with pytest.raises(ValueError, match=rf"^no facts of topic 'physics'; topics: {topics}$"):
        facts.facts_table("physics")


INT_MAX = 2**31 - 1


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("size", 0, f"≥ 1, ≤ {INT_MAX}"),
        ("filter_size", 2**31, f"≥ 1, ≤ {INT_MAX}"),
        ("pad", -1, f"≥ 0, ≤ {INT_MAX}"),
        ("stride", 0, f"≥ 1, ≤ {INT_MAX}"),
        ("dilation", 2**31, f"≥ 1, ≤ {INT_MAX}"),
    ],
)
def test_output_size_names_the_argument_and_its_range(name: str, value: int, allowed: str) -> None:
    """cuDNN takes each as a C int: every argument is bounded above by 2^31 - 1, and named when out of range."""
    with pytest.raises(ValueError, match=rf"^{name} must be an int {allowed}; got {value}$"):
        output_size(**{"size": 9, "filter_size": 3, name: value})


def test_convolution_descriptor_arguments_name_themselves_and_their_range() -> None:
    assert conv_descriptor(spatial=1).pad == (0,)  # 1 to 6 spatial dimensions (3 to 8 in the tensor)
    assert conv_descriptor(spatial=6).stride == (1,) * 6
    for spatial in (0, 7):
        with pytest.raises(ValueError, match=rf"^spatial must be an int ≥ 1, ≤ 6; got {spatial}$"):
            conv_descriptor(spatial=spatial)
    with pytest.raises(ValueError, match=rf"^groups must be an int ≤ {INT_MAX}; got {2**31}$"):
        conv_descriptor(groups=2**31)
    with pytest.raises(DescriptorError, match=r"^groups must be at least 1; got groups = 0") as info:
        conv_descriptor(groups=0)
    assert info.value.rule == "conv-parameters"
    with pytest.raises(TypeError, match=rf"^pad must be an int ≤ {INT_MAX}; got 2\.5 \(float\)$"):
        conv_descriptor(pad=(1, 2.5))
    for compute in ("fp32", "fp16", "fp64", "int32"):
        assert conv_descriptor(compute=compute).compute == compute
    with pytest.raises(ValueError, match=r"^compute must be 'fp32', 'fp16', 'fp64' or 'int32'; got 'bf16'$"):
        conv_descriptor(compute="bf16")


def test_output_dims_at_the_edge_of_fitting() -> None:
    """A filter exactly as wide as the padded input gives one output; one wider is refused with the formula's
    output size: (2 + 2·1 - 5) // 1 + 1 = 0 for a 5×5 filter on a 2×2 input padded by 1, and for output_size with
    stride 2, (2 + 2 - 5) // 2 + 1 = 0 as well."""
    assert output_dims((1, 1, 3, 3), (1, 1, 3, 3), conv_descriptor()) == (1, 1, 1, 1)
    assert output_dims((1, 1, 2, 2), (1, 1, 4, 4), conv_descriptor(pad=1)) == (1, 1, 1, 1)
    with pytest.raises(DescriptorError, match=r"spanning 5 does not fit an input of 2 padded by 1 .*\(output size 0\)"):
        output_dims((1, 1, 2, 2), (1, 1, 5, 5), conv_descriptor(pad=1))
    with pytest.raises(ValueError, match=r"padded by 1 on each side \(output size 0\)$"):
        output_size(2, 5, pad=1, stride=2)
    with pytest.raises(TypeError, match=r"^x_dims\[1\] must be an int"):
        output_dims((1, 1.5, 3, 3), (1, 1, 3, 3), conv_descriptor())
    with pytest.raises(TypeError, match=r"^w_dims\[1\] must be an int"):
        output_dims((1, 1, 3, 3), (1, 1.5, 3, 3), conv_descriptor())


def test_the_layers_file_errors_name_the_file_and_the_table() -> None:
    text = layers.data_text(layers.FILE)
    with pytest.raises(ValueError, match=r"^cudnn/resnet50_layers\.toml: unknown top-level keys \['colour'\]"):
        layers.parse("colour = 1\n" + text)
    with pytest.raises(ValueError, match=r"^cudnn/resnet50_layers\.toml: layer entry 1 \(conv1\): c"):
        layers.parse(text.replace("c = 3\n", "c = 0\n", 1))
