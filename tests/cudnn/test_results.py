"""The committed record of the cuDNN run on the H100 (``cudnn/conv-forward-h100``): what it shows, asserted.

These tests read the record, so they run without a GPU; they hold the pages' statements about real cuDNN to what
the run printed.
"""

from __future__ import annotations

from gpukb.cudnn.program import FWD_ALGOS, parse_example, parse_layers
from gpukb.cudnn.results import CONV_H100, ConvForward
from gpukb.records import load
from tests.cudnn.test_conv_program import check_conv_forward

BOUNDS = {"fp16": 1 / 1024, "bf16": 1 / 128, "fp32": 4e-3}


def record() -> ConvForward:
    return load(CONV_H100, ConvForward)


def test_the_run_is_an_h100_with_both_cudnns() -> None:
    r = record()
    assert "H100" in r.run.gpu.name
    assert r.build.returncode == 0
    assert "-lcudnn" in r.build.command
    assert r.cudnn_library.startswith("cuDNN 91400 (header 91400)")  # the system cuDNN the program linked
    assert "/libcudnn.so.9" in r.linked
    assert r.run.versions.cudnn == "9.19.0"  # torch's wheel
    assert "backend 91900" in r.frontend_version


def test_the_recorded_example_passes_the_snippets_check() -> None:
    """The program's output on the H100 passes the same check the GPU test applies to a fresh run."""
    r = record()
    assert r.example.returncode == 0
    check_conv_forward(r.example.stdout)


def test_the_example_equals_torch() -> None:
    t = record().torch_check
    assert t.cross_correlation_max_abs < 1e-5
    assert t.convolution_max_abs < 1e-5
    assert t.convolution_vs_unflipped_max_abs > 1  # the modes differ by far more than rounding


def test_cudnn_refuses_what_the_model_refuses() -> None:
    """The real library's answers to the probes: the rules the model enforces hold there too, at set time or when
    the descriptor is used."""
    probes = parse_example(record().example.stdout).probes
    assert probes["nbDims=9"][0] == "CUDNN_STATUS_NOT_SUPPORTED"  # above CUDNN_DIM_MAX
    assert probes["zero dimension"] == ("CUDNN_STATUS_BAD_PARAM", "dimA[i] <= 0")
    assert probes["overlapping output (forward)"] == ("CUDNN_STATUS_BAD_PARAM", "yDesc.hasOverlappingStrides()")
    assert probes["overlapping strides (set)"][0] == "CUDNN_STATUS_SUCCESS"  # overlap is legal for an input
    assert probes["6 channels in 4 groups"][0] == "CUDNN_STATUS_BAD_PARAM"
    assert "groupCount" in probes["6 channels in 4 groups"][1]
    assert probes["5x5 filter on 2x2 input"][0] == "CUDNN_STATUS_BAD_PARAM"
    for name in ("negative padding", "zero stride", "zero dilation"):
        assert probes[name][0] == "CUDNN_STATUS_BAD_PARAM", name
    # Setting a descriptor checks less than the documentation's rules: two dimensions and a negative stride are
    # accepted by cudnnSetTensorNdDescriptor itself.
    assert probes["nbDims=2"][0] == probes["negative stride"][0] == "CUDNN_STATUS_SUCCESS"


def test_find_returns_algorithms_fastest_first() -> None:
    r = record()
    layers = parse_layers(r.layers_run.stdout)
    assert len(layers) == len(r.layers) >= 28
    for layer in layers:
        ok = [f for f in layer.found if f.status == "CUDNN_STATUS_SUCCESS"]
        assert ok, layer.layer
        assert [f.ms for f in ok] == sorted(f.ms for f in ok)
        assert layer.algo == ok[0].name  # the program runs the first one
        assert {f.name for f in layer.found} <= set(FWD_ALGOS)
        assert layer.found[: len(ok)] == ok  # the failures come after every success


def test_every_layer_is_within_its_types_bound() -> None:
    for t in record().layers:
        assert t.error < BOUNDS[t.dtype], (t.layer, t.dtype, t.layout, t.error)
        assert t.checked >= 4096


def test_nhwc_is_faster_for_torch_on_most_layers() -> None:
    """torch's own choice in NHWC beats NCHW on most layer shapes, in both 16-bit types."""
    by = {(t.layer, t.dtype, t.layout): t for t in record().layers if t.math == "TENSOR_OP_MATH"}
    faster = [
        by[(name, dtype, "nhwc")].torch_ms.median < by[(name, dtype, "nchw")].torch_ms.median
        for (name, dtype, layout) in by
        if layout == "nhwc"
    ]
    assert sum(faster) > len(faster) / 2


def test_the_graph_api_ran_both_layouts() -> None:
    runs = {f.layout: f for f in record().frontend}
    assert runs["nhwc"].built
    assert runs["nchw"].built
    assert runs["nhwc"].max_abs_error < 1e-3
    assert runs["nchw"].max_abs_error < 1e-3
    assert runs["nchw"].workspace > 1000 * runs["nhwc"].workspace  # NCHW data is transposed through the workspace


def test_math_types_on_the_h100() -> None:
    """FP32 data under FMA math is exact to FP32 rounding in the example."""
    math = parse_example(record().example.stdout).math
    assert math["FMA_MATH"][1] < 1e-6
