"""Fuzz: every argument of every public function, replaced by a value of the wrong type or out of range, gets a
result or a ValueError/TypeError with a message, within a time bound; never an AttributeError, a KeyError, a
ZeroDivisionError, a hang, or a bool taken for a number or a truthy string taken for a bool."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpukb import calculators, chapters, glossary, problems, tables
from gpukb.data import data_text
from gpukb.datasets import catalog
from gpukb.datasets import tables as dataset_tables
from gpukb.formats import arrays, codec, explain, library_casts, mixed_precision, mx, properties, spec
from gpukb.formats import tables as format_tables
from gpukb.gemm import blas, blocking, emulator, types
from gpukb.measuring import counting, stats
from gpukb.performance import roofline, specs
from tests.fuzz.common import attempt, fuzz_settings, junk

SETTINGS = fuzz_settings("test_api_types.py")

_EEG = catalog.load("eeg")
_MX = mx.quantize(np.linspace(-1, 1, 32), "e4m3")
_SCALED = mx.per_tensor_quantize(np.linspace(-1, 1, 8), "e4m3")
_ROWS = types.check("cublaslt", a="e4m3", b="e4m3", d="bf16")
_H100 = specs.load().gpu("h100-sxm5")
_A, _B = np.arange(6.0).reshape(2, 3) / 7, np.arange(12.0).reshape(3, 4) / 5

#: (function, valid keyword arguments, names of the bool flags among them). Each call works as given; the test
#: replaces one argument at a time.
CALLS: list[tuple[Callable[..., Any], dict[str, Any], set[str]]] = [
    # gpukb.formats
    (spec.get_format, {"name": "e4m3"}, set()),
    (codec.encode, {"value": "1.5", "fmt": "e4m3", "rounding": "nearest-even", "saturate": False, "rng": None},
     {"saturate"}),
    (codec.decode, {"bits": 0x63, "fmt": "e4m3"}, set()),
    (codec.to_fraction, {"value": "0.1"}, set()),
    (explain.explain, {"value": "42.5", "fmt": "e4m3", "rounding": "stochastic", "saturate": True, "rng": 7},
     {"saturate"}),
    (properties.properties, {"fmt": "e5m2"}, set()),
    (arrays.encode_array, {"x": np.ones(3), "fmt": "e4m3", "rounding": "stochastic", "saturate": False, "rng": 1},
     {"saturate"}),
    (arrays.decode_array, {"bits": np.arange(4, dtype=np.uint8), "fmt": "e4m3"}, set()),
    (format_tables.value_table, {"value": "1.5", "names": ["e4m3", "bf16"]}, set()),
    (format_tables.pattern_table, {"bits": 3, "name": "e2m1"}, set()),
    (format_tables.properties_table, {"names": ["e4m3"], "int8": True}, {"int8"}),
    (format_tables.names_table, {"names": ["e4m3"]}, set()),
    (format_tables.reinterpretation_table, {"patterns": [1, 0x80], "names": ["e4m3", "e4m3fnuz"]}, set()),
    (mx.element_format, {"name": "e2m1"}, set()),
    (mx.bits_per_element, {"name": "e2m1", "block_size": 32}, set()),
    (mx.shared_exponents, {"amax": np.ones(2), "fmt": "e4m3", "scale_rounding": "ceil"}, set()),
    (mx.quantize, {"x": np.ones(40), "fmt": "e2m1", "pad": True, "scale_rounding": "floor"}, {"pad"}),
    (mx.dequantize, {"q": _MX}, set()),
    (mx.per_tensor_quantize, {"x": np.ones(4), "fmt": "e4m3"}, set()),
    (mx.per_tensor_dequantize, {"t": _SCALED}, set()),
    (mx.OutlierModel, {"rows": 2, "cols": 32, "std": 0.02, "row_spread": 0.5, "outlier_channels": 1,
                       "outlier_scale": 100.0, "seed": 0}, set()),
    (mixed_precision.stored, {"value": "0.1", "fmt": "bf16"}, set()),
    (mixed_precision.ulp, {"value": 3.0, "fmt": "fp16"}, set()),
    (mixed_precision.update_threshold, {"weight": 1.0, "fmt": "bf16", "decrease": True}, {"decrease"}),
    (mixed_precision.stagnation_point, {"addend": "0.01", "fmt": "fp16"}, set()),
    (mixed_precision.accumulate, {"addend": "0.01", "count": 100, "fmt": "bf16"}, set()),
    (mixed_precision.underflow_threshold, {"fmt": "fp16"}, set()),
    (mixed_precision.overflow_threshold, {"fmt": "fp16"}, set()),
    (mixed_precision.rescue_scale, {"gradient": 1e-9, "fmt": "fp16"}, set()),
    (mixed_precision.lognormal_fractions, {"median": 1e-6, "sigma_log2": 3.0, "scale": 1024.0, "fmt": "fp16"},
     set()),
    (mixed_precision.quantize, {"x": np.ones(3), "fmt": "tf32", "rounding": "toward-zero"}, set()),
    (mixed_precision.fractions_table, {"median": 1e-6, "sigma_log2": 3.0, "scales": [1.0, 1024.0], "fmt": "fp16",
                                       "count": 1000}, set()),
    (library_casts.probe_inputs, {"fmt": "e4m3", "seed": 0}, set()),
    (library_casts.compare_casts, {"values": [1.0, 1e6], "fmt": "e4m3"}, set()),
    # gpukb.gemm
    (types.table, {"library": "hipblaslt"}, set()),
    (types.canonical_type, {"name": "bf16"}, set()),
    (types.describe_type, {"name": "e4m3fnuz"}, set()),
    (types.check, {"library": "cublaslt", "a": "e4m3", "b": "e4m3", "d": "bf16", "arch": "H100"}, set()),
    (types.nearest, {"library": "hipblaslt", "limit": 3, "a": "fp8"}, set()),
    (types.rows_table, {"rows": _ROWS, "arch": "sm_90"}, set()),
    (types.sources_of, {"rows": _ROWS}, set()),
    (emulator.find_combination, {"a_type": "e4m3", "b_type": "e4m3", "d_type": "bf16", "c_type": None,
                                 "compute": "fp32", "bias_type": None}, set()),
    (emulator.unit_roundoff, {"type_name": "bf16"}, set()),
    (emulator.round_to, {"x": np.ones(3), "type_name": "e4m3", "saturate": True}, {"saturate"}),
    (emulator.amax_scale, {"x": np.ones(3), "type_name": "e4m3", "margin": 1}, set()),
    (emulator.emulate, {"a": _A, "b": _B, "a_type": "bf16", "b_type": "bf16", "d_type": "fp32", "alpha": 2.0,
                        "beta": 0.0, "saturate_d": False, "int32_overflow": "error"}, {"saturate_d"}),
    (emulator.fp32_accumulation_bound, {"a": _A, "b": _B, "d_type": "bf16", "scale": 1.0, "scale_d": 1.0}, set()),
    (emulator.relative_errors, {"d": _A, "reference": _A + 1}, set()),
    (emulator.error_rows, {"m": 4, "n": 4, "k": 8, "seed": 0}, set()),
    (blocking.normalize_tiles, {"m": 4, "n": 4, "k": 4, "tiles": [2, 1]}, set()),
    (blocking.blocked_matmul, {"a": np.ones((4, 4)), "b": np.ones((4, 4)), "c": None, "tiles": 2}, set()),
    (blocking.reuse_analysis, {"m": 8, "n": 8, "k": 8, "tiles": (4, 4, 2)}, set()),
    (blocking.slides_moves, {"n": 8, "blocks": 2}, set()),
    (blocking.intensity, {"flops": 100, "moves": 10}, set()),
    (blocking.largest_block, {"fast_memory": 300}, set()),
    (blocking.lru_traffic, {"m": 4, "n": 4, "k": 4, "tiles": 2, "capacity": 12}, set()),
    (blocking.lru_capacity_needed, {"block": 2, "n": 4}, set()),
    (blocking.traffic_rows, {"n": 4, "block_sizes": (1, 2)}, set()),
    (blocking.level_comparison, {"m": 4, "n": 4, "k": 4, "tiles": [2], "seed": 1}, set()),
    (blocking.capacity_rows, {"block_sizes": (2,)}, set()),
    (blas.axpy, {"n": 8, "dtype": "fp32"}, set()),
    (blas.gemv, {"m": 8, "n": 4, "dtype": "fp16"}, set()),
    (blas.gemm, {"m": 8, "n": 4, "k": 2, "dtype": "fp64"}, set()),
    (blas.trsm, {"n": 8, "m": 4, "dtype": "fp32"}, set()),
    (blas.growth, {"name": "gemm", "n": 8, "dtype": "fp32"}, set()),
    (blas.floors, {"sizes": (8, 16), "dtype": "fp32", "peak_flops": 1e12, "bandwidth": 1e11}, set()),
    # gpukb.performance
    (counting.element_bytes, {"dtype": "bf16"}, set()),
    (counting.gemm_flops, {"m": 2, "n": 3, "k": 4}, set()),
    (counting.gemm_bytes, {"m": 2, "n": 3, "k": 4, "a_bytes": 2, "b_bytes": 2, "c_bytes": 4}, set()),
    (counting.causal_pairs, {"q_len": 4, "kv_len": 6}, set()),
    (counting.attention_flops, {"batch": 1, "heads": 2, "q_len": 4, "kv_len": 4, "head_dim": 8, "causal": True},
     {"causal"}),
    (counting.attention_bytes, {"batch": 1, "heads": 2, "q_len": 4, "kv_len": 4, "head_dim": 8, "elem_bytes": 2},
     set()),
    (counting.copy_bytes, {"nbytes": 1024}, set()),
    (counting.arithmetic_intensity, {"flops": 10.0, "nbytes": 4.0}, set()),
    (counting.conv2d_counts, {"input_shape": (1, 3, 8, 8), "out_channels": 4, "kernel": (3, 3), "stride": 1,
                              "padding": 1, "bias": True}, {"bias"}),
    (roofline.attainable, {"intensity": 4.0, "peak_flops": 1e12, "bandwidth": 1e11}, set()),
    (roofline.ridge_point, {"peak_flops": 1e12, "bandwidth": 1e11}, set()),
    (roofline.bound, {"flops": 1e9, "nbytes": 1e6, "peak_flops": 1e12, "bandwidth": 1e11}, set()),
    (roofline.fraction, {"measured": 5.0, "ceiling": 10.0}, set()),
    (stats.summarize, {"samples": [1.0, 2.0, 3.0]}, set()),
    (specs.datasheet_for, {"device_name": "NVIDIA H100 80GB HBM3"}, set()),
    (specs.datasheet_peak, {"gpu": _H100, "dtype": "bf16"}, set()),
    (specs.datasheet_ridge, {"gpu": _H100, "dtype": "fp16"}, set()),
    # gpukb.datasets
    (catalog.load, {"domain": "eeg"}, set()),
    (dataset_tables.select, {"catalog": _EEG, "status": "verified", "text": "motor", "min_subjects": 10}, set()),
    (dataset_tables.dataset_table, {"domain": "eeg", "entries": _EEG.datasets[:2]}, set()),
    (dataset_tables.paper_table, {"domain": "eeg"}, set()),
    (dataset_tables.resource_table, {"domain": "eeg"}, set()),
    # the site's shared layer: chapter declarations, data files, glossary, worked problems, tables, calculators
    (chapters.chapter, {"name": "formats"}, set()),
    (chapters.resolve, {"target": "gpukb.tables:bytes_text"}, set()),
    (chapters.Chapter, {"name": "x", "title": "X", "summary": "s", "folders": ("x", "y"), "position": 3, "cli": False,
                        "page_layers": ("gpukb.x.pages",), "kinds": {"x.a": "gpukb.x.results:A"}}, {"cli"}),
    (chapters.DataFile, {"parser": "gpukb.glossary:parse", "table": "term", "schemas": (("term", "m:T"),)}, set()),
    (chapters.GpuRun, {"command": "python3 bench/x.py {out}", "record": "gemm/x-h100", "limit_s": 60}, set()),
    (data_text, {"path": "glossary.toml"}, set()),
    (glossary.parse, {"text": '[[term]]\nid = "a"\nterm = "A"\ndefinition = "d"\npage = "a/b.md"\nsource = "s"\n',
                      "file": "g.toml"}, set()),
    (glossary.hover_texts, {"terms": ()}, set()),
    (problems.Problem, {"id": "a-b", "title": "T", "question": "Q?", "answer": "A.", "working": ("w",),
                        "sources": (("spec", "https://example.org/spec"),)}, set()),
    (problems.markdown, {"problems": [problems.Problem("a", "T", "Q?", "A.", ("w",))], "intro": "Try them."}, set()),
    (tables.bytes_text, {"nbytes": 3 * 2**20}, set()),
    (tables.html_with_links, {"text": "spec: https://example.org/spec"}, set()),
    (calculators.field_value, {"text": " 12 "}, set()),
    (calculators.Field, {"name": "m", "label": "m", "kind": "select", "default": "a", "options": (("a", "A"),),
                         "hint": "h", "only": ("gemm",)}, set()),
    (calculators.calculator_html, {"calc": "bound", "title": "T", "fields": [calculators.Field("m", "m")],
                                   "data": {"x": 1}}, set()),
]  # fmt: skip


def _id(call) -> str:
    return f"{call[0].__module__.removeprefix('gpukb.')}.{call[0].__qualname__}"


@pytest.mark.parametrize("call", CALLS, ids=_id)
def test_every_call_works_as_given(call) -> None:
    function, kwargs, _ = call
    _, err = attempt(function, **kwargs)
    assert err is None, f"{_id(call)} refused its valid arguments: {err}"
    parameters = inspect.signature(function).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        assert set(kwargs) <= set(parameters)


@pytest.mark.parametrize("call", CALLS, ids=_id)
@SETTINGS
@given(data=st.data())
def test_any_argument_replaced_by_junk(call, data) -> None:
    function, kwargs, flags = call
    name = data.draw(st.sampled_from(sorted(kwargs)), label="argument")
    value = data.draw(junk, label="value")
    _, err = attempt(function, **{**kwargs, name: value})
    if err is not None:
        return
    original = kwargs[name]
    parameter = inspect.signature(function).parameters.get(name)
    if value is None and parameter is not None and parameter.default is None:
        return  # None is documented for this argument (a default chosen for the caller)
    if name in flags:
        assert isinstance(value, bool | np.bool_), f"{name}={value!r} was taken for a bool"
    elif isinstance(original, int) and not isinstance(original, bool):
        assert not isinstance(value, bool | np.bool_), f"{name}={value!r} (a bool) was taken for an int"
