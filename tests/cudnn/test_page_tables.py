"""Every table the cuDNN pages render, read back by header and checked against independent computations (torch,
closed forms) or the raw data and record files read with ``tomllib`` and ``json``."""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from torch.nn import functional as F  # noqa: N812 - the name every PyTorch reader knows

from tests.helpers import ROOT, h100_ceilings_json, markdown_tables

DATA = ROOT / "src" / "gpukb" / "data"


def _tuple(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.strip("`()").split(","))


def _tuple_text(values: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


def _packed(dims: tuple[int, ...], fmt: str) -> tuple[int, ...]:
    logical = "NCHW" if len(dims) == 4 else "NCDHW"
    size = dict(zip(logical, dims, strict=True))
    return tuple(math.prod(size[x] for x in fmt[fmt.index(letter) + 1 :]) for letter in logical)


def check_format_strides(markdown: str, kwargs: dict[str, Any]) -> None:
    (dims,) = kwargs["args"] or [(1, 64, 5, 4)]
    (table,) = markdown_tables(markdown)
    expected = ("NCHW", "NHWC", "CHWN") if len(dims) == 4 else ("NCDHW", "NDHWC", "CDHWN")
    assert [row["format"].strip("`") for row in table] == list(expected)
    logical = expected[0]
    second_channel = (0, 1) + (0,) * (len(dims) - 2)
    next_w = (0,) * (len(dims) - 1) + (1,)
    last = tuple(d - 1 for d in dims)
    assert list(table[0]) == ["format", f"strides ({', '.join(logical)})", f"offset of {_tuple_text(second_channel)}",
                              f"offset of {_tuple_text(next_w)}", f"offset of {_tuple_text(last)}"]  # fmt: skip
    for row in table:
        strides = _packed(tuple(dims), row["format"].strip("`"))
        assert _tuple(row[f"strides ({', '.join(logical)})"]) == strides
        assert int(row[f"offset of {_tuple_text(second_channel)}"]) == strides[1]  # the next channel
        assert int(row[f"offset of {_tuple_text(next_w)}"]) == strides[-1]  # the next element along W
        # packed: the last element is the last offset
        assert row[f"offset of {_tuple_text(last)}"] == f"{math.prod(dims) - 1:,}"


def check_fact_table(markdown: str, kwargs: dict[str, Any]) -> None:
    (topic,) = kwargs["args"]
    raw = tomllib.loads((DATA / "cudnn" / "facts.toml").read_text(encoding="utf-8"))
    facts = [f for f in raw["fact"] if f["topic"] == topic]
    (table,) = markdown_tables(markdown)
    assert [row["fact"] for row in table] == [f["text"] for f in facts]
    for row, f in zip(table, facts, strict=True):
        assert row["test"] == f"`{f['test']}`"
        assert row["status, checked"] == f"{f['status']}, {f['checked'].isoformat()}"
        assert row["source"] == ", ".join(f["sources"])
    # every key cited is spelled out once below the table, and nothing else
    used = {s for f in facts for s in f["sources"]}
    listed = re.findall(r"^- \*\*([\w-]+)\*\*: (.+)$", markdown, re.M)
    assert [k for k, _ in listed] == [k for k in raw["sources"] if k in used]
    assert all(text == raw["sources"][k] for k, text in listed)


#: Numbers the descriptor table's "asked for" labels spell out.
_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def _overlaps(dims: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether two indices of ``dims`` reach one offset."""
    offsets = [sum(i * s for i, s in zip(idx, strides, strict=True)) for idx in np.ndindex(*dims)]
    return len(set(offsets)) < len(offsets)


def _broken_rules(dims: tuple[int, ...], strides: tuple[int, ...], output: bool) -> list[str]:
    """The descriptor rules ``dims`` and ``strides`` break, found here from the values themselves."""
    broken = []
    if not 3 <= len(dims) <= 8:
        broken.append("dims-3-to-8")
    if min(dims) < 1:
        broken.append("dims-positive")
    if len(strides) != len(dims):
        broken.append("strides-match-dims")
    if min(strides) < 0:
        broken.append("no-negative-strides")
    if output and len(strides) == len(dims) and _overlaps(dims, strides):
        broken.append("no-overlapping-outputs")
    return broken


def check_descriptor_errors(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert len(table) == 6
    for row in table:
        dims, strides, label, error = _tuple(row["dims"]), _tuple(row["strides"]), row["asked for"], row["error"]
        # what the row says it asks for is what its dims and strides are
        if m := re.fullmatch(r"(\w+) dimensions", label):
            assert len(dims) == _WORDS[m[1]]
        elif m := re.fullmatch(r"a dimension of (\d+)", label):
            assert int(m[1]) in dims
        elif label == "a negative stride (W mirrored)":  # W is last in logical order
            assert strides[-1] < 0
            assert min(strides[:-1]) > 0
        elif label == "fewer strides than dims":
            assert len(strides) < len(dims)
        elif label == "an output whose H and W overlap":
            assert _overlaps(dims[-2:], strides[-2:])
        else:
            raise AssertionError(f"unknown case {label!r}")
        # the error names the one rule the values break, and the values that break it
        (rule,) = _broken_rules(dims, strides, output=label.startswith("an output"))
        assert error.endswith(f" [rule {rule}]")
        if rule == "dims-3-to-8":
            assert f"; got {len(dims)}: {_tuple_text(dims)} [" in error
        elif rule == "dims-positive":
            i = next(i for i, d in enumerate(dims) if d < 1)
            assert f"; got dims[{i}] = {dims[i]} [" in error
        elif rule == "no-negative-strides":
            i = next(i for i, s in enumerate(strides) if s < 0)
            assert f"; got strides[{i}] = {strides[i]} [" in error
        elif rule == "strides-match-dims":
            assert f": {len(dims)} dims {_tuple_text(dims)}, {len(strides)} strides [" in error
        else:
            assert f"; dims {_tuple_text(dims)} with strides {_tuple_text(strides)} reach some element twice [" in error


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


def _ceilings() -> tuple[dict[str, float], float]:
    """The H100's product ceilings per type and its copy ceiling as the pages quote them: fp16, bf16 and the copy
    from the interleaved ceilings run, the other types the performance sweep's best."""
    sweep = json.loads((DATA / "results" / "performance" / "h100-sweep.json").read_text(encoding="utf-8"))
    best: dict[str, float] = {}
    for r in sweep["gemm"]:
        if r["tflops"] is not None:
            best[r["dtype"]] = max(best.get(r["dtype"], 0.0), r["tflops"])
    quoted = h100_ceilings_json()
    best.update(fp16=quoted["fp16"], bf16=quoted["bf16"])
    return best, quoted["bandwidth"]


def _layers() -> dict[str, dict[str, Any]]:
    raw = tomllib.loads((DATA / "cudnn" / "resnet50_layers.toml").read_text(encoding="utf-8"))
    return {layer["name"]: {**layer, "n": raw["batch"]} for layer in raw["layer"]}


def _work(layer: dict[str, Any]) -> tuple[int, int, tuple[int, int, int, int]]:
    """FLOPs (2 per multiply-add, no bias), fp16 bytes (input, filter, output once) and output shape."""
    n, c, hw, k, r = layer["n"], layer["c"], layer["hw"], layer["k"], layer["kernel"]
    out = (hw + 2 * layer["pad"] - r) // layer["stride"] + 1
    flops = 2 * n * k * out * out * c * r * r
    return flops, 2 * (n * c * hw * hw + k * c * r * r + n * k * out * out), (n, k, out, out)


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
    "format_strides": check_format_strides,
    "fact_table": check_fact_table,
    "descriptor_errors": check_descriptor_errors,
    "output_sizes": check_output_sizes,
    "mode_example": check_mode_example,
    "layer_bounds": check_layer_bounds,
    "small_cnn": check_small_cnn,
    "small_cnn_example": check_small_cnn_example,
}


# --- the H100 page: cells against the raw record (json) and the program's own output lines ----------------------

RECORD = DATA / "results" / "cudnn" / "conv-forward-h100.json"


def _raw() -> dict[str, Any]:
    return json.loads(RECORD.read_text(encoding="utf-8"))


def _example_lines(prefix: str) -> list[str]:
    return [line for line in _raw()["example"]["stdout"].splitlines() if line.startswith(prefix)]


def check_torch_check(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    t = _raw()["torch_check"]
    # which record field a row reads follows from its label: the cuDNN mode, and whether torch's filter is flipped
    field = {("CROSS_CORRELATION", "w"): "cross_correlation_max_abs", ("CONVOLUTION", "w.flip(-1, -2)"):
             "convolution_max_abs", ("CONVOLUTION", "w"): "convolution_vs_unflipped_max_abs"}  # fmt: skip
    rows = [re.fullmatch(r"CUDNN_(\w+) vs `F\.conv2d\(x, (.+)\)`", row["cuDNN output"]).groups() for row in table]
    assert sorted(rows) == sorted(field)
    for row, (mode, filt) in zip(table, rows, strict=True):
        value = t[field[(mode, filt)]]
        matched = (mode == "CONVOLUTION") == (filt != "w")  # convolution flips the filter, cross-correlation does not
        assert (value < 1e-4) == matched  # the matching pairs agree to float rounding, the other does not
        assert row["largest absolute difference"] == (f"{value:.2e}" if matched else f"{value:.2f}")


def check_math_types(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    lines = _example_lines("math ")
    assert len(table) == len(lines) == 4
    for row, line in zip(table, lines, strict=True):
        name, algo, error = re.match(r"math (\S+) algo (\S+): error vs host (\S+)", line).groups()
        assert row["math type"] == f"`CUDNN_{name}`"
        assert row["algorithm found first"] == f"`{algo}`"
        assert float(row["largest error / sum of |terms|"]) == pytest.approx(float(error), rel=0.06)


def check_probes(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    lines = _example_lines("probe ")
    assert len(table) == len(lines) == 13
    for row, line in zip(table, lines, strict=True):
        assert line.startswith(f"probe {row['descriptor']}: {row['status'].strip('`')}")
        message = line.split(" | ", 1)[1] if " | " in line else "–"
        assert row["cudnnGetLastErrorString"] == message


def check_example_algorithms(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    example = _raw()["example"]["stdout"].split("mode ")[0]
    lines = [line for line in example.splitlines() if line.startswith("  algorithm ")]
    assert len(table) == len(lines)
    for row, line in zip(table, lines, strict=True):
        words = line.split()
        assert row["algorithm"] == f"`{words[1]}`"
        assert row["status"] == f"`{words[2]}`"
        assert row["workspace (bytes)"].replace(",", "") == words[7]
        assert row["time (ms)"] == (words[4] if words[2] == "CUDNN_STATUS_SUCCESS" else "–")


def check_frontend(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    runs = _raw()["frontend"]
    assert [row["layout"] for row in table] == [r["layout"].upper() for r in runs]
    for row, r in zip(table, runs, strict=True):
        if r["built"]:
            assert row["plans"] == str(r["plans"])
            assert row["workspace (bytes)"].replace(",", "") == str(r["workspace"])
            assert row["time (µs)"] == f"{r['ms']['median'] * 1e3:.1f}"
            assert row["error / max |y|"] == f"{r['max_abs_error']:.1e}"


def _layer_rows() -> list[dict[str, Any]]:
    return [t for t in _raw()["layers"] if t.get("math", "TENSOR_OP_MATH") == "TENSOR_OP_MATH"]


def check_layer_timings(markdown: str, kwargs: dict[str, Any]) -> None:
    dtype = kwargs["args"][0]
    (table,) = markdown_tables(markdown)
    layers = _layers()
    best, bandwidth = _ceilings()
    rows = [t for t in _layer_rows() if t["dtype"] == dtype]
    assert len(table) == len(rows) == 2 * len(layers)
    assert [row["layer"] for row in table] == [name for name in layers for _ in range(2)]
    # two columns are headed "of bound": the program's follows its TFLOP/s, torch's follows torch's graph time
    headers = list(table[0])
    program_share, torch_share = (h for h in headers if h.split("#")[0] == "of bound")
    assert headers.index(program_share) == headers.index("TFLOP/s (graph)") + 1
    assert headers.index(torch_share) == headers.index("torch, in a graph (µs)") + 1

    def us(ms: float | None) -> str:
        return f"{ms * 1e3:.1f}" if ms else "–"

    def share(bound_us: float, ms: float | None) -> str:
        return f"{bound_us / (ms * 1e3):.0%}" if ms else "–"

    for row, t in zip(table, rows, strict=True):
        assert (row["layer"], row["layout"]) == (t["layer"], t["layout"].upper())
        assert row["algorithm (Find, first)"] == f"`{t['algo']}`"
        assert row["workspace (MiB)"] == f"{t['workspace'] / 2**20:.1f}"
        assert row["program, per call (µs)"] == us(t["cudnn_ms"])
        assert row["program, in a graph (µs)"] == us(t.get("graph_ms"))
        flops, nbytes, _ = _work(layers[t["layer"]])
        compute, memory = flops / (best[dtype] * 1e12), nbytes / (bandwidth * 1e9)
        bound_us = max(compute, memory) * 1e6
        gpu = t.get("graph_ms") or t["cudnn_ms"]
        assert row["TFLOP/s (graph)"] == f"{flops / (gpu * 1e-3) / 1e12:.0f}"
        assert row[program_share] == share(bound_us, gpu)
        torch_ms = t["torch_ms"]["median"] if t.get("torch_ms") else None
        assert row["torch, per call (µs)"] == us(torch_ms)
        assert row["torch, in a graph (µs)"] == us(t.get("torch_graph_ms"))
        assert row[torch_share] == share(bound_us, t.get("torch_graph_ms") or torch_ms)
        assert row["bound by"] == ("compute" if compute >= memory else "memory")


def check_layout_ratios(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    by = {(t["layer"], t["dtype"], t["layout"]): t for t in _layer_rows()}
    for row in table:
        for dtype in ("fp16", "bf16"):
            a, b = by[(row["layer"], dtype, "nchw")], by[(row["layer"], dtype, "nhwc")]
            program = (a.get("graph_ms") or a["cudnn_ms"]) / (b.get("graph_ms") or b["cudnn_ms"])
            torch_ = (a.get("torch_graph_ms") or a["torch_ms"]["median"]) / (
                b.get("torch_graph_ms") or b["torch_ms"]["median"])  # fmt: skip
            assert row[f"{dtype}, cuDNN program"] == f"{program:.2f}"
            assert row[f"{dtype}, torch"] == f"{torch_:.2f}"


def check_algorithm_counts(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    workspaces: dict[str, list[int]] = {}
    for t in _layer_rows():
        workspaces.setdefault(t["algo"], []).append(t["workspace"])
    # most runs first; algorithms with as many runs in the order the record first names them
    order = sorted(workspaces, key=lambda algo: -len(workspaces[algo]))
    assert [row["algorithm"] for row in table] == [f"`{algo}`" for algo in order]
    for row in table:
        ws = workspaces[row["algorithm"].strip("`")]
        assert row["runs where it came first"] == str(len(ws))
        assert row["median workspace (MiB)"] == f"{float(np.median(ws)) / 2**20:.1f}"


def check_math_layers(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    rows = [t for t in _raw()["layers"] if t["layer"] == "res3-3x3" and t["layout"] == "nhwc" and t["dtype"] != "bf16"]
    assert len(table) == len(rows)
    by = {(t["dtype"], f"`CUDNN_{t.get('math', 'TENSOR_OP_MATH')}`"): t for t in rows}
    assert [(row["type"], row["math type"]) for row in table] == sorted(by)
    for row in table:
        t = by[(row["type"], row["math type"])]
        assert row["algorithm (Find, first)"] == f"`{t['algo']}`"
        assert row["time per call (µs)"] == f"{(t.get('graph_ms') or t['cudnn_ms']) * 1e3:.1f}"
        assert row["largest error / sum of |terms|"] == f"{t['error']:.1e}"


def check_host_overhead(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = [t for t in _layer_rows() if t["dtype"] == "fp16" and t["layout"] == "nhwc" and t.get("host_us") is not None]
    if not rows:
        assert markdown == "This run did not measure the host's time per call."
        return
    (table,) = markdown_tables(markdown)
    assert [row["layer"] for row in table] == [t["layer"] for t in rows]
    for row, t in zip(table, rows, strict=True):
        assert row["host time per call (µs)"] == f"{t['host_us']:.1f}"
        assert row["GPU time per call (µs)"] == (f"{t['graph_ms'] * 1e3:.1f}" if t.get("graph_ms") else "–")
        assert row["one call between two events (µs)"] == f"{t['cudnn_ms'] * 1e3:.1f}"


def check_header_functions(markdown: str, kwargs: dict[str, Any]) -> None:
    declared = _raw().get("header_declares")
    if not declared:
        assert markdown == "This run did not read the header."
        return
    (table,) = markdown_tables(markdown)
    assert list(table[0]) == [f"declared in `{_raw()['header']}`", "yes or no"]
    names = [row[next(iter(row))] for row in table]
    assert names == [f"`{name}`" for name in declared]  # in the record's order
    assert [row["yes or no"] for row in table] == ["yes" if declared[name] else "no" for name in declared]


CHECKS.update({
    "torch_check": check_torch_check,
    "math_types": check_math_types,
    "probes": check_probes,
    "example_algorithms": check_example_algorithms,
    "frontend": check_frontend,
    "layer_timings": check_layer_timings,
    "layout_ratios": check_layout_ratios,
    "algorithm_counts": check_algorithm_counts,
    "math_layers": check_math_layers,
    "host_overhead": check_host_overhead,
    "header_functions": check_header_functions,
})  # fmt: skip


def test_a_wrong_stride_fails_the_check() -> None:
    from gpukb.cudnn.pages import format_strides

    good = format_strides((1, 64, 5, 4))
    with pytest.raises(AssertionError):
        check_format_strides(good.replace("`(1280, 1, 256, 64)`", "`(1280, 1, 64, 256)`"), {"args": ((1, 64, 5, 4),)})
