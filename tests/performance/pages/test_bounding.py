"""The bounding page's tables checked: arithmetic intensities recomputed from operation and byte counts made here."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from html import unescape
from typing import Any

import pytest

from tests.helpers import ROOT, calculator_fields, markdown_tables
from tests.performance.pages import H100, _ceilings, _figures, _raw, _rounds, _sheet, _sheet_id


def check_intensity(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw(H100)
    v100 = _figures("v100-sxm2")
    v100_ridge = v100["fp16_tensor"]["value"] * 1e12 / (v100["memory_bandwidth"]["value"] * 1e9)
    rates, bw = _ceilings(H100, raw)
    h100_ridge = rates["bf16"] * 1e12 / (bw * 1e9)
    headers = list(table[0])
    assert headers[4] == f"limit on V100 (ridge {v100_ridge:.0f})"
    assert headers[5] == f"limit on this H100 (ridge {h100_ridge:.0f})"
    # FP16 (2 bytes): a linear layer x(m×1024)·W(1024×4096) reads x and W and writes y, 2·m·4096·1024 FLOPs;
    # a unit-stride 3×3 max pool makes 8 comparisons per output (the max of 9 values) and, per output, reads one
    # new input and writes one output; ReLU reads and writes one element
    expected = {
        "linear layer, 1024 → 4096, batch 512": (2 * 512 * 4096 * 1024, 2 * (512 * 1024 + 1024 * 4096 + 512 * 4096)),
        "linear layer, 1024 → 4096, batch 1": (2 * 1 * 4096 * 1024, 2 * (1 * 1024 + 1024 * 4096 + 1 * 4096)),
        "3×3 max pooling, unit stride (8 comparisons per output)": (8, 2 + 2),
        "ReLU (per element)": (1, 2 + 2),
    }
    assert [row["operation"] for row in table] == list(expected)
    for row in table:
        flops, nbytes = expected[row["operation"]]
        assert int(row["FLOPs"].replace(",", "")) == flops, row
        assert int(row["bytes"].replace(",", "")) == nbytes, row
        assert _rounds(row["FLOP/B"], flops / nbytes, 2)
        assert row[headers[4]] == ("compute" if flops / nbytes > v100_ridge else "memory")
        assert row[headers[5]] == ("compute" if flops / nbytes > h100_ridge else "memory")


#: the matrix-product type of each datasheet quantity, and each type's bytes per element, as the page's prose and
#: the datasheet table name them (written here, not read from the library)
DTYPE_QUANTITY = {
    "fp32": "fp32",
    "tf32": "tf32_tensor",
    "fp16": "fp16_tensor",
    "bf16": "bf16_tensor",
    "fp8": "fp8_tensor",
}
ELEMENT = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,
    "fp16": 2,
    "bf16": 2,
    "fp8": 1,
    "int64": 8,
    "int32": 4,
    "int16": 2,
    "uint8": 1,
}


def check_bound_calculator(html: str, kwargs: dict[str, Any]) -> None:
    """The form carries every field docs/javascripts/calculators/bound.js reads, of the kind it reads, each size
    field shown for the layers whose sizes name it; it opens on the page's worked convolution (1×3×416×480 to 16
    channels of 208×240, 3×3, with bias), a 4096-cube bf16 product and a grouped-query attention, on the GPU the
    sweep ran on; its labels are the names the library's messages give; its choices are the datasheet's GPUs (read
    with tomllib) and the matrix-product types; the data island holds the dense datasheet figures and the measured
    ceilings as the raw files give them."""
    from gpukb.performance.layer_bound import LAYERS, layer_bound
    from gpukb.performance.specs import QUANTITIES

    fields = calculator_fields(html)
    for name, field in fields.items():
        field["label"] = unescape(
            re.search(r"<label for=\"gpukb-bound-(\w+)\">([^<]*)</label>", field["body"]).group(2)
        )
        assert re.search(rf'<(?:input|select) id="gpukb-bound-{name}" name="{name}"', field["body"]), name
    assert html.count('class="gpukb-calc-field ') == len(fields)
    assert 'data-calc="bound"' in html
    # what the script reads: the three choices, a size field per name of each layer (the convolution's batch is
    # conv_n), the convolution's bias and the attention's causal mask
    script = (ROOT / "docs/javascripts/calculators/bound.js").read_text(encoding="utf-8")
    assert set(re.findall(r"raw\(boxes\.(\w+)\)", script)) == {"dtype", "gpu", "bias", "causal"}
    assert 'CONV_FIELDS = { n: "conv_n" }' in script
    assert 'querySelector("[name=layer]")' in script
    sizes = {"conv_n" if (layer, n) == ("conv2d", "n") else n: layer for layer, names in LAYERS.items() for n in names}
    assert set(fields) == {"layer", "dtype", "gpu", "bias", "causal", *sizes}
    assert {n: f["kind"] for n, f in fields.items()} == {
        "layer": "select", "dtype": "select", "gpu": "select", "bias": "checkbox", "causal": "checkbox",
    } | dict.fromkeys(sizes, "text")  # fmt: skip
    assert {n: f["only"] for n, f in fields.items()} == {
        "layer": [], "dtype": [], "gpu": [], "bias": ["conv2d"], "causal": ["attention"],
    } | {n: [layer] for n, layer in sizes.items()}  # fmt: skip
    defaults = {n: f["default"] for n, f in fields.items()}
    assert defaults == {
        "layer": "gemm", "dtype": "bf16", "gpu": kwargs.get("gpu", "h100-sxm5"),
        "m": "4096", "n": "4096", "k": "4096",
        "conv_n": "1", "c_in": "3", "h": "416", "w": "480", "out_channels": "16", "kh": "3", "kw": "3",
        "stride": "2", "padding": "1", "bias": "on",
        "batch": "4", "heads": "32", "kv_heads": "8", "q_len": "4096", "kv_len": "4096", "head_dim": "128",
        "causal": "on",
    }  # fmt: skip
    # the worked convolution: (416 + 2·1 − 3) // 2 + 1 = 208 rows, (480 + 2 − 3) // 2 + 1 = 240 columns
    h, w, kh, pad, stride = (int(defaults[f]) for f in ("h", "w", "kh", "padding", "stride"))
    assert ((h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kh) // stride + 1) == (208, 240)
    assert "1×3×416×480, output 1×16×208×240" in (ROOT / "docs/performance/bounding.md").read_text(encoding="utf-8")
    # the default GPU is the one the sweep ran on, and the sweep measured the default type: both columns show
    assert defaults["gpu"] == _sheet_id(_raw(H100)["run"]["gpu"]["name"]) == "h100-sxm5"
    # the labels are the names the library's messages give each argument (the convolution's batch is its n)
    for name, f in fields.items():
        if name in ("layer", "dtype", "gpu", "bias", "causal"):
            continue
        layer = sizes[name]
        arg = "n" if name == "conv_n" else name
        good = {n: 1 for n in LAYERS[layer]} | {"kh": 1, "kw": 1, "padding": 0, "heads": 2, "kv_heads": 1}
        with pytest.raises(ValueError, match=f"^{re.escape(f['label'].split(' (')[0])} must be an int"):
            layer_bound(layer, "bf16", good | {arg: -1}, "h100-sxm5")
    for name, call in {
        "layer": lambda: layer_bound("x", "bf16", {}, "h100-sxm5"),
        "dtype": lambda: layer_bound("gemm", "x", {"m": 1, "n": 1, "k": 1}, "h100-sxm5"),
        "gpu": lambda: layer_bound("gemm", "bf16", {"m": 1, "n": 1, "k": 1}, "x"),
    }.items():
        with pytest.raises(ValueError, match=f"^unknown {re.escape(fields[name]['label'].split(' (')[0])} 'x'"):
            call()
    for name, layer in (("bias", "conv2d"), ("causal", "attention")):
        with pytest.raises(TypeError, match=f"^{fields[name]['label']} must be True or False"):
            layer_bound(layer, "bf16", {}, "h100-sxm5", "x")
    assert fields["gpu"]["label"] == "GPU (datasheet)"
    assert fields["conv_n"]["label"] == "n (batch)"
    # the choices: the layers, the matrix-product types, every GPU of gpu_specs.toml in the file's order
    assert [v for v, _ in fields["layer"]["options"]] == list(LAYERS) == ["gemm", "conv2d", "attention"]
    assert [t for _, t in fields["layer"]["options"]] == [
        "matrix product (GEMM)", "2-D convolution", "attention forward pass"
    ]  # fmt: skip
    assert fields["dtype"]["options"] == [(d, d) for d in DTYPE_QUANTITY]
    raw_gpus = _sheet()["gpu"]
    assert fields["gpu"]["options"] == [(g["id"], g["name"]) for g in raw_gpus]
    for name in ("layer", "dtype", "gpu"):
        assert [v for v, _ in fields[name]["options"]].count(defaults[name]) == 1
    # the data island, against the raw files
    data = json.loads(re.search(r'<script type="application/json" class="gpukb-calc-data">(.*?)</script>', html)[1])
    assert list(data) == [
        "layers", "dtypes", "element_bytes", "gemm_quantity", "quantity_labels", "file", "gpus", "measured"
    ]  # fmt: skip
    assert data["layers"] == {layer: list(names) for layer, names in LAYERS.items()}
    assert data["dtypes"] == list(DTYPE_QUANTITY)
    assert data["element_bytes"] == ELEMENT
    assert data["gemm_quantity"] == DTYPE_QUANTITY
    quantities = [*DTYPE_QUANTITY.values(), "memory_bandwidth"]
    assert data["quantity_labels"] == {q: QUANTITIES[q][1] for q in quantities}
    assert data["quantity_labels"]["memory_bandwidth"] == "memory bandwidth"
    assert data["file"] == "gpu_specs.toml"
    assert (ROOT / "src/gpukb/data" / data["file"]).is_file()
    expected = {}
    for g in raw_gpus:
        figures = _figures(g["id"])
        expected[g["id"]] = {
            "name": g["name"],
            "figures": {
                q: figures[q]["value"] / (2 if figures[q].get("sparsity") and q != "memory_bandwidth" else 1)
                for q in quantities
                if q in figures
            },
        }
    assert data["gpus"] == expected
    assert list(data["gpus"]) == [g["id"] for g in raw_gpus]
    assert all(list(d["figures"]) == [q for q in quantities if q in d["figures"]] for d in data["gpus"].values())
    rates, bandwidth = _ceilings(H100, _raw(H100))
    assert data["measured"] == {"record": H100, "ceilings": {**rates, "bandwidth": bandwidth}}
    assert defaults["dtype"] in data["measured"]["ceilings"]


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "intensity_table": check_intensity,
    "bound_calculator": check_bound_calculator,
}
