"""The committed record of the cuDNN run on the H100 (``cudnn/conv-forward-h100``): what it shows, asserted.

These tests read the record, so they run without a GPU; they hold the pages' statements about real cuDNN to what
the run printed.
"""

from __future__ import annotations

import re

import pytest

from gpukb.cudnn.convolution import output_size
from gpukb.cudnn.pages.h100 import conv_measured_on
from gpukb.cudnn.program import FWD_ALGOS, parse_example, parse_layers
from gpukb.cudnn.results import CONV_H100, ConvForward
from gpukb.records import load
from tests.cudnn.test_conv_program import check_conv_forward
from tests.helpers import ROOT

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
    # the page says so in words, and names the program's version where it speaks of its host time
    said = conv_measured_on()
    assert "machine's cuDNN 9.14.0; torch used cuDNN 9.19.0" in said
    page = (ROOT / "docs" / "cudnn" / "h100.md").read_text(encoding="utf-8")
    assert "cuDNN 9.14's descriptor API" in page
    assert "torch ran cuDNN 9.19" in page


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


def test_the_listing_comment_states_what_the_formula_gives_and_cudnn_refuses() -> None:
    """The probe's comment in the listing: a 5x5 filter on a 2x2 input gives -2 by the output-size formula (not 0),
    and the real cuDNN refused the descriptor."""
    text = (ROOT / "snippets" / "cudnn" / "conv_forward.cu").read_text(encoding="utf-8")
    found = re.search(
        r"A (\d+)x\d+ filter on a (\d+)x\d+ input without padding: the formula gives "
        r"\((\d+) \+ 0 - (\d+)\) / 1 \+ 1 = (-?\d+)",
        text,
    )
    assert found, "the probe's comment no longer states the formula"
    filt, size, size_again, filt_again, said = (int(g) for g in found.groups())
    assert (size, filt) == (size_again, filt_again) == (2, 5)
    assert said == (size + 2 * 0 - filt) // 1 + 1 == -2  # the formula, as cuDNN's documentation writes it
    with pytest.raises(ValueError, match=r"output size -2"):  # which the library refuses, naming the -2
        output_size(size, filt)
    assert parse_example(record().example.stdout).probes["5x5 filter on 2x2 input"][0] == "CUDNN_STATUS_BAD_PARAM"


def test_find_returns_algorithms_fastest_first() -> None:
    r = record()
    layers = parse_layers(r.layers_run.stdout)
    assert len(layers) == len(r.layers) >= 33
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


def _tensor_op() -> dict[tuple[str, str, str], object]:
    return {
        (t.layer, t.dtype, t.layout): t for t in record().layers if t.math == "TENSOR_OP_MATH" and t.dtype != "fp32"
    }


def test_nhwc_is_faster_for_torch_except_the_first_1x1_layer() -> None:
    """On the GPU alone (CUDA graphs), torch's NHWC convolution beats its NCHW one on every layer but res2-1x1."""
    by = _tensor_op()
    for (name, dtype, layout), t in by.items():
        if layout == "nhwc":
            nchw = by[(name, dtype, "nchw")]
            assert (t.torch_graph_ms < nchw.torch_graph_ms) == (name != "res2-1x1"), (name, dtype)


def test_where_the_program_runs_the_same_family_its_gpu_time_is_torchs() -> None:
    """NHWC 3×3 layers where the program's search picked IMPLICIT_PRECOMP_GEMM: its kernels take the GPU time torch's
    take (within 15%), while its time per call is several times longer: the legacy API's host time."""
    compared = 0
    for (name, _, layout), t in _tensor_op().items():
        if layout == "nhwc" and name.endswith("3x3") and t.algo == "IMPLICIT_PRECOMP_GEMM":
            assert abs(t.graph_ms / t.torch_graph_ms - 1) < 0.15, name
            assert t.cudnn_ms > 3 * t.graph_ms
            assert t.host_us > 2 * t.graph_ms * 1e3
            compared += 1
    assert compared >= 6


def test_find_can_rank_a_slow_kernel_first() -> None:
    """For the NHWC 1×1 layer of stage 5, the search put IMPLICIT_GEMM first; on the GPU alone it is many times
    slower than what torch runs, and than the IMPLICIT_PRECOMP_GEMM the program picks for NCHW."""
    by = _tensor_op()
    for dtype in ("fp16", "bf16"):
        nhwc, nchw = by[("res5-1x1", dtype, "nhwc")], by[("res5-1x1", dtype, "nchw")]
        assert nhwc.algo == "IMPLICIT_GEMM"
        assert nhwc.graph_ms > 10 * nhwc.torch_graph_ms
        assert nhwc.graph_ms > 10 * nchw.graph_ms
        assert "IMPLICIT_PRECOMP_GEMM" in [name for name, *_ in nhwc.found]  # offered, measured slower per call


def test_the_graph_api_ran_both_layouts() -> None:
    runs = {f.layout: f for f in record().frontend}
    assert runs["nhwc"].built
    assert runs["nchw"].built
    assert runs["nhwc"].max_abs_error < 1e-3
    assert runs["nchw"].max_abs_error < 1e-3
    assert runs["nchw"].workspace > 1000 * runs["nhwc"].workspace
    assert runs["nchw"].plan_name == runs["nhwc"].plan_name  # the same engine for both layouts
    # NCHW's workspace is, to within 1 KiB, the size of a copy of the fp16 input and filter.
    n, c, h, w, k, r, s, _, _ = runs["nchw"].shape
    assert abs(runs["nchw"].workspace - 2 * (n * c * h * w + k * c * r * s)) < 1024
    assert runs["nchw"].ms.median > runs["nhwc"].ms.median


def test_math_types_on_the_h100() -> None:
    """FP32 data: DEFAULT_MATH runs as fast as TENSOR_OP_MATH and with its TF32-sized error, many times faster and
    less exact than FMA_MATH. FP16 data: DEFAULT_MATH is as slow as FMA_MATH, TENSOR_OP_MATH many times faster."""
    math = parse_example(record().example.stdout).math
    assert math["FMA_MATH"][1] < 1e-6  # the small example: exact to FP32 rounding
    assert len({algo for algo, _ in math.values()}) == 1  # ... and the same algorithm under every math type
    by = {(t.dtype, t.math): t for t in record().layers if t.layer == "res3-3x3" and t.layout == "nhwc"}
    fp32 = {m: by[("fp32", m)] for m in ("DEFAULT_MATH", "TENSOR_OP_MATH", "FMA_MATH")}
    assert fp32["DEFAULT_MATH"].error > 20 * fp32["FMA_MATH"].error
    assert fp32["TENSOR_OP_MATH"].error > 20 * fp32["FMA_MATH"].error
    assert fp32["FMA_MATH"].error < 1e-6
    assert abs(fp32["DEFAULT_MATH"].graph_ms / fp32["TENSOR_OP_MATH"].graph_ms - 1) < 0.1
    assert fp32["FMA_MATH"].graph_ms > 5 * fp32["DEFAULT_MATH"].graph_ms
    fp16 = {m: by[("fp16", m)] for m in ("DEFAULT_MATH", "TENSOR_OP_MATH", "FMA_MATH")}
    assert abs(fp16["DEFAULT_MATH"].graph_ms / fp16["FMA_MATH"].graph_ms - 1) < 0.1
    assert fp16["DEFAULT_MATH"].graph_ms > 10 * fp16["TENSOR_OP_MATH"].graph_ms


def test_claim_default_math_avoids_tensor_cores() -> None:
    """Decides the erratum on the lecture's math-mode slide: true for FP16 data, not for FP32 data."""
    by = {(t.dtype, t.math): t for t in record().layers if t.layer == "res3-3x3" and t.layout == "nhwc"}
    assert by[("fp16", "DEFAULT_MATH")].graph_ms > 10 * by[("fp16", "TENSOR_OP_MATH")].graph_ms  # no tensor cores
    assert by[("fp32", "DEFAULT_MATH")].graph_ms < by[("fp32", "FMA_MATH")].graph_ms / 5  # TF32 tensor cores
    assert by[("fp32", "DEFAULT_MATH")].error > 20 * by[("fp32", "FMA_MATH")].error  # with TF32's rounding


def test_claim_the_lecture_algorithm_query_is_gone() -> None:
    """Decides the erratum on the lecture's cudnnGetConvolutionForwardAlgorithm call: cuDNN 9 has no such function."""
    declared = record().header_declares
    assert declared == {
        "cudnnGetConvolutionForwardAlgorithm": False,
        "cudnnGetConvolutionForwardAlgorithm_v7": True,
        "cudnnFindConvolutionForwardAlgorithm": True,
        "cudnnConvolutionForward": True,
    }
    code = (ROOT / "snippets" / "cudnn" / "conv_forward.cu").read_text(encoding="utf-8")
    assert "cudnnFindConvolutionForwardAlgorithm(" in code
    assert "cudnnGetConvolutionForwardAlgorithm(" not in code


def test_a_repeated_algorithm_name_is_one_algorithm_under_two_math_types() -> None:
    """Find may list one algorithm name twice, with different workspaces. In this run each repeated name came back
    once with TENSOR_OP_MATH and once with DEFAULT_MATH (the mathType of each result, which the program prints), and
    only in runs whose descriptor asked for TENSOR_OP_MATH."""
    runs = parse_layers(record().layers_run.stdout)
    repeated_in = []
    for run in runs:
        names = [f.name for f in run.found]
        for name in {n for n in names if names.count(n) > 1}:
            assert sorted(f.math for f in run.found if f.name == name) == ["DEFAULT_MATH", "TENSOR_OP_MATH"], run
            repeated_in.append(run.math)
    assert repeated_in  # the page's statement is about something the run showed
    assert set(repeated_in) == {"TENSOR_OP_MATH"}


def test_the_search_times_include_the_hosts_time() -> None:
    """Where a call costs the host much more than the GPU, the time Find reports for the algorithm it put first is
    several times the GPU-only time and, in most cases, closer to the per-call time (host included)."""
    slow = [t for t in record().layers if t.cudnn_ms > 2 * t.graph_ms]
    assert len(slow) >= 10
    for t in slow:
        assert t.found[0][2] > 2 * t.graph_ms, t.layer
    closer = [abs(t.found[0][2] - t.cudnn_ms) < abs(t.found[0][2] - t.graph_ms) for t in slow]
    assert sum(closer) > 0.8 * len(closer)


def test_the_findings_are_the_runs() -> None:
    """The page's opening answers, recomputed from the record: NHWC wins, the median NCHW/NHWC ratio for torch on
    the GPU alone and its range, the share of the roofline bound, and the layer the search misled on."""
    import statistics

    from gpukb.cudnn import layers
    from gpukb.cudnn.pages.h100 import findings
    from gpukb.performance.roofline import bound
    from tests.helpers import h100_ceilings_json

    by = _tensor_op()
    cases = [(n, d) for (n, d, lay) in by if lay == "nhwc"]
    ratios = sorted(by[(n, d, "nchw")].torch_graph_ms / by[(n, d, "nhwc")].torch_graph_ms for n, d in cases)
    text = findings()
    wins = sum(1 for r in ratios if r > 1)
    assert f"in {wins} of {len(cases)} layer-and-type cases (all but `res2-1x1`)" in text
    assert f"a median {statistics.median(ratios):.2f}× as long ({ratios[0]:.2f}–{ratios[-1]:.2f}×)" in text
    quoted = h100_ceilings_json()
    shares = []
    for layer in layers.load().layers:
        t = by[(layer.name, "fp16", "nhwc")]
        c = layers.counts(layer)
        b = bound(c.flops, c.bytes(2), quoted["fp16"] * 1e12, quoted["bandwidth"] * 1e9)
        shares.append(b.time_s / (t.torch_graph_ms * 1e-3))
    shares.sort()
    assert f"reached {shares[0]:.0%} to {shares[-1]:.0%} of their roofline bound" in text
    assert f"(median {statistics.median(shares):.0%})" in text
    assert "for `res5-1x1` the algorithm" in text
