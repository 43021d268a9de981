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

from tests.helpers import ROOT, markdown_tables
from tests.site.test_page_tables import page_calls, rendered

DATA = ROOT / "src" / "gpukb" / "data"


def _tuple(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.strip("`()").split(","))


def _packed(dims: tuple[int, ...], fmt: str) -> tuple[int, ...]:
    logical = "NCHW" if len(dims) == 4 else "NCDHW"
    size = dict(zip(logical, dims, strict=True))
    return tuple(math.prod(size[x] for x in fmt[fmt.index(letter) + 1 :]) for letter in logical)


def check_format_strides(markdown: str, kwargs: dict[str, Any]) -> None:
    (dims,) = kwargs["args"] or [(1, 64, 5, 4)]
    (table,) = markdown_tables(markdown)
    expected = ("NCHW", "NHWC", "CHWN") if len(dims) == 4 else ("NCDHW", "NDHWC", "CDHWN")
    assert [row["format"].strip("`") for row in table] == list(expected)
    for row in table:
        strides = _packed(tuple(dims), row["format"].strip("`"))
        cells = list(row.values())
        assert _tuple(cells[1]) == strides
        assert int(cells[2]) == strides[1]  # the next channel
        assert int(cells[3]) == strides[-1]  # the next element along W
        assert int(cells[4].replace(",", "")) == math.prod(dims) - 1  # packed: the last element is the last offset


def check_fact_table(markdown: str, kwargs: dict[str, Any]) -> None:
    (topic,) = kwargs["args"]
    raw = tomllib.loads((DATA / "cudnn" / "facts.toml").read_text(encoding="utf-8"))
    facts = [f for f in raw["fact"] if f["topic"] == topic]
    (table,) = markdown_tables(markdown)
    assert [row["fact"] for row in table] == [f["text"] for f in facts]
    for row, f in zip(table, facts, strict=True):
        assert row["test"] == f"`{f['test']}`"
        assert row["status, checked"] == f"{f['status']}, {f['checked'].isoformat()}"
        assert row["source"] == "; ".join(raw["sources"][s] for s in f["sources"])


def check_descriptor_errors(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    rules = [re.search(r"\[rule ([\w-]+)\]$", row["error"])[1] for row in table]
    assert rules == ["dims-3-to-8", "dims-3-to-8", "dims-positive", "no-negative-strides", "strides-match-dims",
                     "no-overlapping-outputs"]  # fmt: skip
    for row in table:
        dims, strides = _tuple(row["dims"]), _tuple(row["strides"])
        if "dims-3-to-8" in row["error"]:
            assert f"got {len(dims)}" in row["error"]
            assert not 3 <= len(dims) <= 8
        if "negative" in row["error"]:
            assert f"= {min(strides)}" in row["error"]
            assert min(strides) < 0
        if "dims-positive" in row["error"]:
            assert f"= {min(dims)}" in row["error"]
            assert min(dims) < 1
        if "overlap" in row["error"]:  # two indices reach one element
            offsets = [sum(i * s for i, s in zip(idx, strides, strict=True)) for idx in np.ndindex(*dims)]
            assert len(set(offsets)) < len(offsets)


def check_output_sizes(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert len(table) == 6
    for row in table:
        x, w = _tuple(row["input N, C, H, W"]), _tuple(row["filter K, C/G, R, S"])
        pad, stride, dil, groups = (int(row[k]) for k in ("pad", "stride", "dilation", "groups"))
        args = {"stride": stride, "padding": pad, "dilation": dil, "groups": groups}
        try:
            want = F.conv2d(torch.empty(x, device="meta"), torch.empty(w, device="meta"), **args).shape
        except RuntimeError:
            assert "[rule output-at-least-1]" in row["output N, K, H, W"]
            continue
        assert _tuple(row["output N, K, H, W"]) == tuple(want)


def check_mode_example(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    x = torch.tensor([[1.0, 0, 2, 1], [3, 1, 0, 2], [0, 2, 1, 3], [2, 1, 3, 0]]).reshape(1, 1, 4, 4)
    w = torch.tensor([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]).reshape(1, 1, 3, 3)
    cc, cv = F.conv2d(x, w)[0, 0], F.conv2d(x, w.flip(-1, -2))[0, 0]
    assert len(table) == cc.numel() == 4
    for row in table:
        i, j = _tuple(row["output (h, w)"])
        assert float(row["CUDNN_CROSS_CORRELATION"]) == cc[i, j]
        assert float(row["CUDNN_CONVOLUTION"]) == cv[i, j]
        assert float(row["difference"]) == cv[i, j] - cc[i, j]
    assert any(float(row["difference"]) != 0 for row in table)


def _ceilings() -> tuple[dict[str, float], float]:
    sweep = json.loads((DATA / "results" / "performance" / "h100-sweep.json").read_text(encoding="utf-8"))
    best: dict[str, float] = {}
    for r in sweep["gemm"]:
        if r["tflops"] is not None:
            best[r["dtype"]] = max(best.get(r["dtype"], 0.0), r["tflops"])
    return best, max(r["gbps"] for r in sweep["copy"] if r["bytes"] >= 2**28)


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


def check_small_cnn(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    model = [torch.nn.Conv2d(3, 2, 3, stride=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2, 1), torch.nn.Flatten(),
             torch.nn.Linear(8, 2), torch.nn.Softmax(dim=1)]  # fmt: skip
    x = torch.zeros(1, 3, 7, 7)
    shapes = [(1, 7, 7, 3)]
    for layer in model:
        x = layer(x)
        shapes.append((x.shape[0], x.shape[2], x.shape[3], x.shape[1]) if x.dim() == 4 else tuple(x.shape))
    assert [_tuple(row["shape (N, H, W, C)"]) for row in table[:-1]] == shapes
    params = [0] + [sum(p.numel() for p in layer.parameters()) for layer in model]
    assert [int(row["parameters"]) for row in table[:-1]] == params
    assert table[-1]["parameters"] == f"**{sum(params)}**"


def check_small_cnn_example(markdown: str, kwargs: dict[str, Any]) -> None:
    raw = tomllib.loads((DATA / "cudnn" / "small_cnn.toml").read_text(encoding="utf-8"))["example"][0]
    (table,) = markdown_tables(markdown)
    values = {row["stage"]: row["values"] for row in table}
    qa = torch.tensor(raw["conv_output"]).permute(2, 0, 1)[None]  # NHWC as written -> NCHW
    pooled = F.max_pool2d(F.relu(qa), 2, stride=1)
    flat = pooled.flatten(1)[0]
    assert values["flattened channel by channel (N, C, H, W)"] == str([int(v) for v in flat])
    in_memory = [int(v) for v in pooled.permute(0, 2, 3, 1).flatten()]
    assert values["flattened in memory order (N, H, W, C)"] == str(in_memory)
    softmax = torch.softmax(flat.double(), 0)
    assert values["softmax of the channel-by-channel vector"] == ", ".join(f"{v:.4g}" for v in softmax.tolist())
    assert values["the example's softmax"] == ", ".join(f"{v:.4g}" for v in raw["claimed_softmax"])
    assert values["after 2×2 max pooling, stride 1"] == "; ".join(
        f"c={c}: {pooled[0, c].int().tolist()}" for c in range(2)
    )
    assert values["parameters with 2 dense units / with 10"] == f"{56 + 8 * 2 + 2} / {56 + 8 * 10 + 10}"


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
    cells = [row["largest absolute difference"] for row in table]
    assert cells == [f"{t['cross_correlation_max_abs']:.2e}", f"{t['convolution_max_abs']:.2e}",
                     f"{t['convolution_vs_unflipped_max_abs']:.2f}"]  # fmt: skip


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
    for row, t in zip(table, rows, strict=True):
        assert (row["layer"], row["layout"]) == (t["layer"], t["layout"].upper())
        assert row["algorithm (Find, first)"] == f"`{t['algo']}`"
        assert row["program, per call (µs)"] == f"{t['cudnn_ms'] * 1e3:.1f}"
        flops, nbytes, _ = _work(layers[t["layer"]])
        bound_us = max(flops / (best[dtype] * 1e12), nbytes / (bandwidth * 1e9)) * 1e6
        gpu = t.get("graph_ms") or t["cudnn_ms"]
        assert row["TFLOP/s (graph)"] == f"{flops / (gpu * 1e-3) / 1e12:.0f}"
        assert row["of bound#7"] == f"{bound_us / (gpu * 1e3):.0%}"
        assert row["torch, per call (µs)"] == f"{t['torch_ms']['median'] * 1e3:.1f}"


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
    counts: dict[str, int] = {}
    for t in _layer_rows():
        counts[t["algo"]] = counts.get(t["algo"], 0) + 1
    assert {row["algorithm"].strip("`"): int(row["runs where it came first"]) for row in table} == counts


def check_math_layers(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    rows = [t for t in _raw()["layers"] if t["layer"] == "res3-3x3" and t["layout"] == "nhwc" and t["dtype"] != "bf16"]
    assert len(table) == len(rows)
    by = {(t["dtype"], f"`CUDNN_{t.get('math', 'TENSOR_OP_MATH')}`"): t for t in rows}
    for row in table:
        t = by[(row["type"], row["math type"])]
        assert row["algorithm (Find, first)"] == f"`{t['algo']}`"
        assert row["largest error / sum of |terms|"] == f"{t['error']:.1e}"


def check_host_overhead(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = [t for t in _layer_rows() if t["dtype"] == "fp16" and t["layout"] == "nhwc" and t.get("host_us")]
    if not rows:
        assert markdown == "This run did not measure the host's time per call."
        return
    (table,) = markdown_tables(markdown)
    assert [row["layer"] for row in table] == [t["layer"] for t in rows]
    for row, t in zip(table, rows, strict=True):
        assert row["host time per call (µs)"] == f"{t['host_us']:.1f}"


def check_header_functions(markdown: str, kwargs: dict[str, Any]) -> None:
    declared = _raw().get("header_declares")
    if not declared:
        assert markdown == "This run did not read the header."
        return
    (table,) = markdown_tables(markdown)
    assert {row[next(iter(row))].strip("`"): row["yes or no"] == "yes" for row in table} == declared


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

CALLS = [c for c in page_calls() if c.module == "gpukb.cudnn.pages" and c.function in CHECKS]


@pytest.mark.parametrize("call", CALLS, ids=lambda c: f"{c.page}:{c.line}:{c.function}")
def test_page_table_cells(call: Any) -> None:
    CHECKS[call.function](rendered(call), {**call.kwargs, "args": call.args})


def test_a_wrong_stride_fails_the_check() -> None:
    from gpukb.cudnn.pages import format_strides

    good = format_strides((1, 64, 5, 4))
    with pytest.raises(AssertionError):
        check_format_strides(good.replace("`(1280, 1, 256, 64)`", "`(1280, 1, 64, 256)`"), {"args": ((1, 64, 5, 4),)})
