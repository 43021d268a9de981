"""The bounding page (docs/performance/bounding.md): arithmetic intensity, the ceilings a layer meets and the
bound calculator.
"""

from __future__ import annotations

from gpukb.calculators import Field, calculator_html
from gpukb.measuring.counting import ELEMENT_BYTES, intensity_examples
from gpukb.performance import layer_bound, specs
from gpukb.performance.ceilings import measured_ridge, quoted_ceilings
from gpukb.performance.pages import Sweep
from gpukb.performance.results import H100_SWEEP
from gpukb.tables import markdown_table as table


def intensity_table(record: Sweep = H100_SWEEP) -> str:
    """The example operations' intensities and what limits each: on a V100 (datasheet FP16 tensor-core rate
    and bandwidth) and on the GPU of a run (its measured bf16 ceiling and copy bandwidth)."""
    v100_ridge = specs.datasheet_ridge(specs.load().gpu("v100-sxm2"), "fp16")
    h100_ridge = measured_ridge(quoted_ceilings(record), "bf16")
    rows = []
    for name, flops, nbytes in intensity_examples():
        intensity = flops / nbytes
        rows.append(
            (
                name,
                f"{flops:,}",
                f"{nbytes:,}",
                f"{intensity:,.2f}",
                "compute" if intensity > v100_ridge else "memory",
                "compute" if intensity > h100_ridge else "memory",
            )
        )
    headers = [
        "operation",
        "FLOPs",
        "bytes",
        "FLOP/B",
        f"limit on V100 (ridge {v100_ridge:.0f})",
        f"limit on this H100 (ridge {h100_ridge:.0f})",
    ]
    return table(headers, rows)


def _ceiling_figure(gpu: specs.Gpu, quantity: str) -> float:
    """A datasheet figure as :func:`~gpukb.performance.layer_bound.layer_bound` uses it: the dense rate, the
    bandwidth as published."""
    figure = gpu.figures[quantity]
    return figure.value if quantity == "memory_bandwidth" else figure.dense


def bound_calculator(gpu: str = "h100-sxm5", record: str = H100_SWEEP) -> str:
    """The bound of a layer: :func:`gpukb.performance.layer_bound.layer_bound` computed in the browser, with the
    datasheet figures exported from ``gpu_specs.toml`` and the measured ceilings from the committed sweep."""
    sheet = specs.load()
    quantities = [*specs.GEMM_QUANTITY.values(), "memory_bandwidth"]
    gpus = {
        g.id: {"name": g.name, "figures": {q: _ceiling_figure(g, q) for q in quantities if q in g.figures}}
        for g in sheet.gpus.values()
    }
    data = {
        "layers": {name: list(sizes) for name, sizes in layer_bound.LAYERS.items()},
        "dtypes": list(specs.GEMM_QUANTITY),
        "element_bytes": dict(ELEMENT_BYTES),
        "gemm_quantity": dict(specs.GEMM_QUANTITY),
        "quantity_labels": {q: specs.QUANTITIES[q][1] for q in quantities},
        "file": specs.FILE,
        "gpus": gpus,
        "measured": {"record": record, "ceilings": quoted_ceilings(record)},
    }
    gemm, conv, attention = ("gemm",), ("conv2d",), ("attention",)
    fields = [
        Field(
            "layer",
            "layer",
            "select",
            "gemm",
            [("gemm", "matrix product (GEMM)"), ("conv2d", "2-D convolution"), ("attention", "attention forward pass")],
        ),
        Field("dtype", "dtype", "select", "bf16", [(d, d) for d in specs.GEMM_QUANTITY]),
        Field("gpu", "GPU (datasheet)", "select", gpu, [(g.id, g.name) for g in sheet.gpus.values()]),
        Field("m", "m", default="4096", hint="rows of A and C", only=gemm),
        Field("n", "n", default="4096", hint="columns of B and C", only=gemm),
        Field("k", "k", default="4096", hint="the shared dimension", only=gemm),
        Field("conv_n", "n (batch)", default="1", only=conv),
        Field("c_in", "c_in", default="3", only=conv),
        Field("h", "h", default="416", only=conv),
        Field("w", "w", default="480", only=conv),
        Field("out_channels", "out_channels", default="16", only=conv),
        Field("kh", "kh", default="3", only=conv),
        Field("kw", "kw", default="3", only=conv),
        Field("stride", "stride", default="2", only=conv),
        Field("padding", "padding", default="1", only=conv),
        Field("bias", "bias", "checkbox", "on", only=conv),
        Field("batch", "batch", default="4", only=attention),
        Field("heads", "heads", default="32", only=attention),
        Field("kv_heads", "kv_heads", default="8", hint="empty: as many as heads", only=attention),
        Field("q_len", "q_len", default="4096", only=attention),
        Field("kv_len", "kv_len", default="4096", only=attention),
        Field("head_dim", "head_dim", default="128", only=attention),
        Field("causal", "causal", "checkbox", "on", only=attention),
    ]
    return calculator_html("bound", "The bound of one layer on one GPU", fields, data)
