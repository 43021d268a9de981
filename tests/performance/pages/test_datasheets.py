"""The datasheets page's table checked against the datasheet file read with ``tomllib``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpukb.performance.pages import datasheets as page
from tests.helpers import markdown_tables
from tests.performance.pages import DASH, MARK, PEAK_OF, _ceilings, _figures, _number, _raw, _record, _sheet


def check_spec(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw(_record(kwargs))
    gpu = raw["run"]["gpu"]
    gpus = {g["name"]: g["id"] for g in _sheet()["gpu"]}
    names = list(table[0])[1:-1]
    assert list(table[0])[-1] == f"measured on this {gpu['name']}"
    assert [gpus[n] for n in names] == list(page.DATASHEET_GPUS)
    labels = {"SMs (AMD: compute units)": "sm_count", "boost clock (MHz)": "boost_clock", "memory (GB)": "memory",
              "memory bandwidth (GB/s)": "memory_bandwidth", "L2 cache (MB)": "l2_cache",
              "FP64 (vector) (TFLOP/s)": "fp64", "FP64 tensor core (TFLOP/s)": "fp64_tensor",
              "FP32 (vector) (TFLOP/s)": "fp32", "TF32 tensor core, dense (TFLOP/s)": "tf32_tensor",
              "FP16 tensor core, dense (TFLOP/s)": "fp16_tensor", "BF16 tensor core, dense (TFLOP/s)": "bf16_tensor",
              "FP8 tensor core, dense (TFLOP/s)": "fp8_tensor",
              "INT8 tensor core, dense (TOPS)": "int8_tensor"}  # fmt: skip
    shown = [labels[row["figure"]] for row in table]
    present = [q for q in labels.values() if any(q in _figures(gpus[n]) for n in names)]
    assert shown == present
    rates, bw = _ceilings(_record(kwargs), raw)
    measured = {"sm_count": str(gpu["sm_count"]), "memory": f"{gpu['memory_bytes'] / 2**30:.1f} GiB",
                "l2_cache": f"{gpu['l2_bytes'] >> 20} MiB", "memory_bandwidth": f"{bw:,.0f}",
                **{PEAK_OF[d]: f"{rates[d]:,.1f}" for d in rates}}  # fmt: skip
    for row, quantity in zip(table, shown, strict=True):
        for name in names:
            figure = _figures(gpus[name]).get(quantity)
            if figure is None:
                assert row[name] == DASH
                continue
            value = figure["value"] / (2 if figure.get("sparsity") else 1)
            mark = MARK[figure["status"]]
            assert row[name].endswith(mark), (name, row)
            assert _number(row[name].removesuffix(mark)) == value, (name, row)
        assert row[f"measured on this {gpu['name']}"] == measured.get(quantity, DASH), row


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "spec_table": check_spec,
}
