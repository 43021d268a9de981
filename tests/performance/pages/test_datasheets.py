"""The datasheets page's table checked against the datasheet file read with ``tomllib``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpukb.performance.pages import datasheets as page
from tests.helpers import markdown_tables
from tests.performance.pages import DASH, MARK, PEAK_OF, _ceilings, _figures, _number, _raw_of, _record, _sheet


def check_spec(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw_of(kwargs)
    gpu = raw["run"]["gpu"]
    gpus = {g["name"]: g["id"] for g in _sheet()["gpu"]}
    names = list(table[0])[1:-1]
    assert list(table[0])[-1] == f"measured on this {gpu['name']}"
    assert [gpus[n] for n in names] == list(kwargs.get("gpu_ids", page.DATASHEET_GPUS))
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


def check_sources(markdown: str, gpu_ids: tuple[str, ...]) -> None:
    """The date the figures were checked, a link per source the GPUs' figures cite (by source id), then where each
    GPU's figures were read, as Markdown lists each after a blank line."""
    sheet = _sheet()
    used = sorted({f["source"] for g in gpu_ids for f in _figures(g).values()})
    entries = {g["id"]: g for g in sheet["gpu"]}
    assert markdown.split("\n") == [
        f"Checked {sheet['checked']}. Sources:",
        "",
        *(f"- [{sheet['sources'][s]['title']}]({sheet['sources'][s]['url']})" for s in used),
        "",
        "Where the figures were read:",
        "",
        *(f"- **{entries[g]['name']}**: {entries[g]['evidence']}" for g in gpu_ids),
    ]


def test_sources_and_a_table_of_fewer_gpus() -> None:
    """The page's sources, and the table for two GPUs that both lack some figures (rows after those stay)."""
    check_sources(page.spec_sources(), page.DATASHEET_GPUS)
    gpu_ids = ("v100-sxm2", "h200-sxm")
    check_sources(page.spec_sources(gpu_ids), gpu_ids)
    check_spec(page.spec_table(gpu_ids=gpu_ids), {"gpu_ids": gpu_ids})


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "spec_table": check_spec,
}
