"""The cell checks of docs/cudnn/convolution.md (``gpukb.cudnn.page.convolution``)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from torch.nn import functional as F  # noqa: N812 - the name every PyTorch reader knows

from tests.cudnn.pages import DATA, _ceilings, _layers, _tuple, _work
from tests.helpers import markdown_tables


def _check_case_label(label: str, x: tuple[int, ...], w: tuple[int, ...], conv: tuple[int, int, int, int],
                      spatial: list[int]) -> None:  # fmt: skip
    """What a case's label says about its convolution holds of the row's input, filter and parameters."""
    (n, c, h, width), (k, cg, r, s), (pad, stride, dilation, groups) = x, w, conv
    if label == "ResNet-50 stem":  # the network's conv1, as resnet50_layers.toml gives it
        stem = _layers()["conv1"]
        assert (n, c, h, width, k, r, s) == (stem["n"], stem["c"], stem["hw"], stem["hw"], stem["k"], stem["kernel"],
                                             stem["kernel"])  # fmt: skip
        assert (pad, stride, dilation, groups) == (stem["pad"], stem["stride"], 1, 1)
        return
    squares = [(int(a), int(b)) for a, b in re.findall(r"(\d+)×(\d+)", label)]
    assert squares[0] == (r, s)  # the filter
    assert squares[1:] in ([], [(h, width)])  # "on H×W": the input
    said = {name: int(m[1]) for name in ("stride", "dilation", "groups") if (m := re.search(rf"{name} (\d+)", label))}
    assert stride == said.get("stride", stride)  # the labels leave some strides unsaid
    assert dilation == said.get("dilation", 1)  # a dilation or grouping the label does not name is 1
    if label.startswith("depthwise"):
        assert groups == c == k
        assert cg == 1
    else:
        assert groups == said.get("groups", 1)
    if "same padding" in label:
        assert spatial == [h, width]
    if "no padding" in label:
        assert pad == 0


def check_output_sizes(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert len(table) == 6
    for row in table:
        x, w = _tuple(row["input N, C, H, W"]), _tuple(row["filter K, C/G, R, S"])
        pad, stride, dil, groups = (int(row[k]) for k in ("pad", "stride", "dilation", "groups"))
        assert x[1] == groups * w[1]  # the filter holds C/G channels, and K splits into the groups
        assert w[0] % groups == 0
        # cuDNN's formula, per spatial dimension: (size + 2 pad - ((filter - 1) dilation + 1)) / stride + 1
        spans = [(f - 1) * dil + 1 for f in w[2:]]
        spatial = [(size + 2 * pad - span) // stride + 1 for size, span in zip(x[2:], spans, strict=True)]
        _check_case_label(row["case"], x, w, (pad, stride, dil, groups), spatial)
        if min(spatial) < 1:
            i = next(i for i, size in enumerate(spatial) if size < 1)
            assert row["output N, K, H, W"] == (
                f"spatial dimension {i}: a filter spanning {spans[i]} does not fit an input of {x[2 + i]} padded by "
                f"{pad} on each side (output size {spatial[i]}) [rule output-at-least-1]")  # fmt: skip
            with pytest.raises(RuntimeError):
                F.conv2d(torch.empty(x, device="meta"), torch.empty(w, device="meta"), stride=stride, padding=pad,
                         dilation=dil, groups=groups)  # fmt: skip
            continue
        args = {"stride": stride, "padding": pad, "dilation": dil, "groups": groups}
        want = F.conv2d(torch.empty(x, device="meta"), torch.empty(w, device="meta"), **args).shape
        assert _tuple(row["output N, K, H, W"]) == tuple(want) == (x[0], w[0], *spatial)


def check_mode_example(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    x = torch.tensor([[1.0, 0, 2, 1], [3, 1, 0, 2], [0, 2, 1, 3], [2, 1, 3, 0]]).reshape(1, 1, 4, 4)
    w = torch.tensor([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]).reshape(1, 1, 3, 3)
    cc, cv = F.conv2d(x, w)[0, 0], F.conv2d(x, w.flip(-1, -2))[0, 0]
    assert len(table) == cc.numel() == 4
    # every output position, row by row (h, then w)
    assert [_tuple(row["output (h, w)"]) for row in table] == list(np.ndindex(*cc.shape))
    for row in table:
        i, j = _tuple(row["output (h, w)"])
        assert row["CUDNN_CROSS_CORRELATION"] == f"{cc[i, j].item():g}"
        assert row["CUDNN_CONVOLUTION"] == f"{cv[i, j].item():g}"
        assert row["difference"] == f"{(cv[i, j] - cc[i, j]).item():g}"
    assert any(float(row["difference"]) != 0 for row in table)


def check_layer_bounds(markdown: str, kwargs: dict[str, Any]) -> None:
    dtype = (kwargs["args"] or ["fp16"])[0]
    (table,) = markdown_tables(markdown)
    layers = _layers()
    best, bandwidth = _ceilings()
    assert [row["layer"] for row in table] == list(layers)
    for row in table:
        flops, nbytes, out = _work(layers[row["layer"]])
        assert _tuple(row["output"]) == out
        assert row["GFLOP"] == f"{flops / 1e9:.2f}"
        assert row[f"MiB moved ({dtype})"] == f"{nbytes / 2**20:.1f}"
        assert row["FLOP/byte"] == f"{flops / nbytes:.0f}"
        compute, memory = flops / (best[dtype] * 1e12), nbytes / (bandwidth * 1e9)
        assert row["bound (µs)"] == f"{max(compute, memory) * 1e6:.1f}"
        assert row["limited by"] == ("compute" if compute >= memory else "memory")
        layer = layers[row["layer"]]
        assert row["C→K, filter/stride, input"] == (f"{layer['c']}→{layer['k']}, {layer['kernel']}×{layer['kernel']}/"
                                                    f"{layer['stride']}, {layer['hw']}²")  # fmt: skip


def test_the_bounds_default_to_fp16() -> None:
    from gpukb.cudnn.pages.convolution import layer_bounds

    check_layer_bounds(layer_bounds(), {"args": ()})
    assert layer_bounds() == layer_bounds("fp16")


def _cnn_example() -> dict[str, Any]:
    return tomllib.loads((DATA / "cudnn" / "small_cnn.toml").read_text(encoding="utf-8"))["example"][0]


def check_small_cnn(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    net = _cnn_example()
    n, h, w, c = net["input_nhwc"]
    k, pool = net["kernel"], net["pool"]
    x = torch.zeros(n, c, h, w)
    stages: list[tuple[str, torch.nn.Module | None]] = [("input", None)]
    for label, layer in (
        (f"conv {k}×{k}, {net['filters']} filters, stride {net['conv_stride']}",
         torch.nn.Conv2d(c, net["filters"], k, stride=net["conv_stride"], padding=net["conv_pad"])),
        ("ReLU", torch.nn.ReLU()),
        (f"max pool {pool}×{pool}, stride {net['pool_stride']}", torch.nn.MaxPool2d(pool, net["pool_stride"])),
        ("flatten", torch.nn.Flatten()),
    ):  # fmt: skip
        stages.append((label, layer))
        x = layer(x)
    stages += [(f"dense, {net['dense_units']} units", torch.nn.Linear(x.shape[1], net["dense_units"])),
               ("softmax", torch.nn.Softmax(dim=1))]  # fmt: skip
    assert len(table) == len(stages) + 1
    x = torch.zeros(n, c, h, w)
    total = 0
    for row, (label, layer) in zip(table, stages, strict=False):
        x = layer(x) if layer is not None else x
        params = sum(p.numel() for p in layer.parameters()) if layer is not None else 0
        total += params
        assert row["stage"] == label
        shape = (x.shape[0], x.shape[2], x.shape[3], x.shape[1]) if x.dim() == 4 else tuple(x.shape)
        assert _tuple(row["shape (N, H, W, C)"]) == shape
        assert row["parameters"] == str(params)
    assert _tuple(table[0]["shape (N, H, W, C)"]) == tuple(net["input_nhwc"])
    assert table[-1] == {"stage": "**total**", "shape (N, H, W, C)": "", "parameters": f"**{total}**"}


def check_small_cnn_example(markdown: str, kwargs: dict[str, Any]) -> None:
    raw = _cnn_example()
    (table,) = markdown_tables(markdown)
    qa = torch.tensor(raw["conv_output"]).permute(2, 0, 1)[None]  # NHWC as written -> NCHW
    relu = F.relu(qa)
    pooled = F.max_pool2d(relu, raw["pool"], stride=raw["pool_stride"])
    flat = pooled.flatten(1)[0]

    def by_channel(a: torch.Tensor) -> str:  # NCHW
        return "; ".join(f"c={ch}: {a[0, ch].int().tolist()}" for ch in range(a.shape[1]))

    softmax = torch.softmax(flat.double(), 0)
    expected = {
        "convolution output (given)": by_channel(qa),
        "after ReLU": by_channel(relu),
        f"after {raw['pool']}×{raw['pool']} max pooling, stride {raw['pool_stride']}": by_channel(pooled),
        "flattened in memory order (N, H, W, C)": str([int(v) for v in pooled.permute(0, 2, 3, 1).flatten()]),
        "flattened channel by channel (N, C, H, W)": str([int(v) for v in flat]),
        "softmax of the channel-by-channel vector": ", ".join(f"{v:.4g}" for v in softmax.tolist()),
        "the example's softmax": ", ".join(f"{v:.4g}" for v in raw["claimed_softmax"]),
    }
    assert [row["stage"] for row in table[: len(expected)]] == list(expected)
    for row in table[: len(expected)]:
        assert row["values"] == expected[row["stage"]]
    # the last row: the parameter count for the example's dense units and for the count the example claims
    (last,) = table[len(expected) :]
    units = [int(v) for v in re.fullmatch(r"parameters with (\d+) dense units / with (\d+)", last["stage"]).groups()]
    conv = raw["filters"] * (raw["kernel"] ** 2 * raw["input_nhwc"][3] + 1)  # weights and a bias per filter
    counts = [conv + flat.numel() * u + u for u in units]
    assert units[0] == raw["dense_units"]
    assert counts[1] == raw["claimed_params"]
    assert last["values"] == f"{counts[0]} / {counts[1]}"


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "output_sizes": check_output_sizes,
    "mode_example": check_mode_example,
    "layer_bounds": check_layer_bounds,
    "small_cnn": check_small_cnn,
    "small_cnn_example": check_small_cnn_example,
}
