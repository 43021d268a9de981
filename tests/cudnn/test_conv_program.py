"""The descriptor-API program ``snippets/cudnn/conv_forward.cu``: its call sequence, a syntax check against real
headers, and what it prints on a GPU (the default run is this snippet's check in ``test_snippets.py``).

cuDNN's headers are not part of the test extra (they come with cuDNN, or the ``nvidia-cudnn-cu13`` wheel of several
hundred MB): the compile test looks in ``GPUKB_CUDNN_INCLUDE``, ``/usr/include/x86_64-linux-gnu`` and installed
``nvidia/cudnn`` wheels, and skips with the reason when they are absent.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpukb.cudnn.program import FWD_ALGOS, Found, parse_example, parse_layers, parse_problem, parse_unsupported
from gpukb.site.snippets import nvcc_flags, run_snippet
from tests.helpers import ROOT

SNIPPET = ROOT / "snippets" / "cudnn" / "conv_forward.cu"
MATH_TYPES = ("DEFAULT_MATH", "TENSOR_OP_MATH", "TENSOR_OP_MATH_ALLOW_CONVERSION", "FMA_MATH")
#: Probes whose answer the cuDNN documentation decides: dims above CUDNN_DIM_MAX (8), a zero dimension, negative
#: padding, a zero stride or dilation, and channels that the groups do not divide are refused.
REFUSED = ("nbDims=9", "zero dimension", "negative padding", "zero stride", "zero dilation", "6 channels in 4 groups")
PROBES = (
    "nbDims=2",
    "nbDims=3",
    "nbDims=8",
    "nbDims=9",
    "negative stride",
    "zero dimension",
    "overlapping strides (set)",
    "negative padding",
    "zero stride",
    "zero dilation",
    "6 channels in 4 groups",
    "5x5 filter on 2x2 input",
    "overlapping output (forward)",
)


def _code() -> str:
    return re.sub(r"//[^\n]*", "", SNIPPET.read_text(encoding="utf-8"))


def test_the_runner_builds_with_the_line_the_reader_sees() -> None:
    header = SNIPPET.read_text(encoding="utf-8").split("// --8<-- [start:example]")[0]
    assert "//   nvcc -O2 -std=c++17 snippets/cudnn/conv_forward.cu -o conv_forward -lcudnn" in header
    assert nvcc_flags(SNIPPET) == ["-O2", "-std=c++17", "-lcudnn"]


def test_every_library_call_is_checked_or_probed() -> None:
    """Every cuDNN and CUDA call is wrapped in CHECK_CUDNN/CHECK_CUDA, except the probes, whose status is printed."""
    code = _code()
    unchecked = []
    exempt = ("cudnnGetErrorString", "cudnnGetLastErrorString", "cudaGetErrorString", "cudnnGetVersion",
              "cudnnGetCudartVersion")  # fmt: skip
    for match in re.finditer(r"\b((?:cudnn|cuda)[A-Z]\w+)\s*\(", code):
        name = match.group(1)
        if name in exempt:
            continue
        line = code[code.rfind("\n", 0, match.start()) + 1 : match.start()]
        before = code[max(0, match.start() - 200) : match.start()]
        if "CHECK_CUDNN(" in line or "CHECK_CUDA(" in line or "probe(" in line or "probe(" in before[-120:]:
            continue
        # a status that is read rather than fatal: assigned, compared, or explicitly discarded
        if re.search(r"(=|\(void\))$", before.rstrip()):
            continue
        unchecked.append(f"{name}: {line.strip()!r}")
    assert unchecked == []


def test_the_call_sequence_is_the_descriptor_api() -> None:
    code = _code()
    order = [
        "cudnnCreate",
        "cudnnSetTensor4dDescriptor",
        "cudnnSetFilter4dDescriptor",
        "cudnnSetConvolution2dDescriptor",
        "cudnnSetConvolutionGroupCount",
        "cudnnSetConvolutionMathType",
        "cudnnGetConvolution2dForwardOutputDim",
        "cudnnFindConvolutionForwardAlgorithm",
        "cudnnGetConvolutionForwardWorkspaceSize",
        "cudnnConvolutionForward",
    ]
    run_body = code[code.index("static Result run(") :]
    positions = [re.search(rf"\b{name}\s*\(", run_body).start() for name in order[1:]]
    assert positions == sorted(positions)
    assert re.search(r"\bcudnnCreate\s*\(&handle\)", code)
    assert "const cudnnDataType_t compute = CUDNN_DATA_FLOAT;" in code  # fp32 accumulation for every type
    names = re.search(r"ALGO_NAMES\[\] = \{([^}]*)\}", code).group(1)
    assert tuple(re.findall(r'"(\w+)"', names)) == FWD_ALGOS  # enum order of cudnnConvolutionFwdAlgo_t


def include_dirs() -> list[str] | None:
    """Directories with cudnn.h and cuda_runtime_api.h, or None."""
    candidates = [d for d in os.environ.get("GPUKB_CUDNN_INCLUDE", "").split(os.pathsep) if d]
    candidates += ["/usr/include/x86_64-linux-gnu", "/usr/local/cuda/include"]
    for entry in map(Path, sys.path):
        for sub in ("nvidia/cudnn/include", "nvidia/cu13/include", "nvidia/cuda_runtime/include"):
            if (entry / sub).is_dir():
                candidates.append(str(entry / sub))
    found = []
    for header in ("cudnn.h", "cuda_runtime_api.h", "cuda_fp16.h"):
        where = next((d for d in candidates if (Path(d) / header).is_file()), None)
        if where is None:
            return None
        if where not in found:
            found.append(where)
    return found


def test_the_program_compiles_as_host_cpp() -> None:
    dirs = include_dirs()
    if dirs is None:
        pytest.skip("no cudnn.h with the CUDA headers: set GPUKB_CUDNN_INCLUDE to cuDNN's and CUDA's include dirs")
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no g++ or c++ on PATH")
    cmd = [compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-x", "c++"]
    proc = subprocess.run([*cmd, *(f"-I{d}" for d in dirs), str(SNIPPET)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def check_conv_forward(out: str) -> None:
    """What the program's checked example prints: the formula's output size, both modes and every math type
    within bounds of a float64 host loop, the modes far apart, and cuDNN's answers to impossible descriptors."""
    ex = parse_example(out)
    assert ex.library >= 90000
    assert ex.header >= 90000
    p = parse_problem(out)
    assert (p.n, p.c, p.h, p.w, p.k, p.r, p.s) == (2, 6, 11, 9, 4, 3, 3)
    assert (p.pad, p.stride, p.dilation, p.groups, p.dtype, p.layout) == (1, 2, 2, 2, "fp32", "nchw")
    # output = (in + 2 pad - ((filter - 1) dilation + 1)) / stride + 1: (11 + 2 - 5) / 2 + 1 = 5 and
    # (9 + 2 - 5) / 2 + 1 = 4
    assert ex.dims_cudnn == ex.dims_formula == (2, 4, 5, 4) == (p.n, p.k, p.ho, p.wo)
    assert {f.name for f in ex.found} <= set(FWD_ALGOS)
    assert any(f.status == "CUDNN_STATUS_SUCCESS" for f in ex.found)
    outputs = 2 * 4 * 5 * 4
    assert set(ex.modes) == {"CROSS_CORRELATION", "CONVOLUTION"}
    for algo, error, checked in ex.modes.values():
        assert algo in FWD_ALGOS
        assert checked == outputs
        assert error < 1e-5
    assert ex.modes_apart > 0.1  # flipping the filter changes the result
    assert set(ex.math) == set(MATH_TYPES)
    assert all(error < 4e-3 for _, error in ex.math.values())
    assert ex.math["FMA_MATH"][1] < 1e-5  # FP32 fused multiply-adds: no TF32
    assert set(ex.probes) == set(PROBES)
    assert ex.probes["nbDims=8"][0] == "CUDNN_STATUS_SUCCESS"
    for name in REFUSED:
        assert ex.probes[name][0] != "CUDNN_STATUS_SUCCESS", name
    assert ex.passed


@pytest.mark.gpu
def test_the_program_runs_layers_nobody_tuned_for() -> None:
    """Odd shapes (3 and 5 channels, 13x11 images) in both layouts and both 16-bit types, through the runner."""
    args = [f"odd{i}:3,5,13,11,7,3,3,1,2,{dtype},{layout}"
            for i, (dtype, layout) in enumerate([("fp16", "nhwc"), ("bf16", "nchw"), ("fp32", "nhwc")])]  # fmt: skip
    out = run_snippet(SNIPPET, args=args)
    assert out.rstrip().endswith("PASS"), out
    layers = parse_layers(out)
    assert [(x.dtype, x.layout) for x in layers] == [("fp16", "nhwc"), ("bf16", "nchw"), ("fp32", "nhwc")]
    for layer in layers:
        assert layer.algo in FWD_ALGOS
        assert layer.ms > 0
        assert layer.checked == 3 * 7 * 7 * 6


def test_the_parsers_refuse_what_they_cannot_read() -> None:
    with pytest.raises(ValueError, match="no version line"):
        parse_example("PASS\n")
    with pytest.raises(ValueError, match="has 0 problem lines, not 1"):
        parse_problem("")
    from gpukb.cudnn.program import layer_argument

    assert layer_argument("res2-3x3", 32, 64, 56, 56, 64, 3, 3, 1, 1, "fp16", "nhwc") == (
        "res2-3x3:32,64,56,56,64,3,3,1,1,fp16,nhwc,TENSOR_OP_MATH"
    )
    with pytest.raises(ValueError, match="a layer name is 1 to 63 letters"):
        layer_argument("res 2", 1, 1, 1, 1, 1, 1, 1, 0, 1, "fp16", "nhwc")
    with pytest.raises(ValueError, match="math must be one of"):
        layer_argument("a", 1, 1, 1, 1, 1, 1, 1, 0, 1, "fp16", "nhwc", "TF32")


#: Lines as the program prints them (the record's formats), written by hand: a layer with its search results, a layer
#: the program could not run (its search results belong to no layer), one without a graph time and one whose graph
#: was not captured (0 ms).
HAND_LAYERS = """\
  algorithm IMPLICIT_GEMM         CUDNN_STATUS_SUCCESS   time   0.4013 ms workspace 0 bytes math DEFAULT_MATH
  algorithm FFT                   CUDNN_STATUS_NOT_SUPPORTED time   0.0000 ms workspace 8 bytes math TENSOR_OP_MATH
layer a fp16 nchw TENSOR_OP_MATH: algo IMPLICIT_GEMM workspace 0 median 0.4187 ms graph 0.3780 ms host 31.3 us \
20.0 TFLOP/s error 2.47e-04 over 4096 outputs
  algorithm GEMM                  CUDNN_STATUS_SUCCESS   time   3.0550 ms workspace 0 bytes math DEFAULT_MATH
layer b bf16 nhwc FMA_MATH: unsupported: no algorithm ran
  algorithm DIRECT                CUDNN_STATUS_SUCCESS   time   1.5000 ms workspace 16 bytes math FMA_MATH
layer c fp32 nhwc: algo DIRECT workspace 16 median 1.6 ms 3.5 TFLOP/s error 1e-06 over 5000 outputs
layer d fp16 nhwc DEFAULT_MATH: algo GEMM workspace 0 median 2.5 ms graph 0 ms host 12 us 1.0 TFLOP/s error 0.001 \
over 4096 outputs
PASS
"""


def test_the_layer_reader_on_lines_written_by_hand() -> None:
    a, c, d = parse_layers(HAND_LAYERS)
    assert (a.layer, a.dtype, a.layout, a.math, a.algo, a.workspace) == ("a", "fp16", "nchw", "TENSOR_OP_MATH",
                                                                         "IMPLICIT_GEMM", 0)  # fmt: skip
    assert (a.ms, a.graph_ms, a.host_us, a.tflops, a.error, a.checked) == (0.4187, 0.378, 31.3, 20.0, 2.47e-4, 4096)
    assert a.found == [Found("IMPLICIT_GEMM", "CUDNN_STATUS_SUCCESS", 0.4013, 0, "DEFAULT_MATH"),
                       Found("FFT", "CUDNN_STATUS_NOT_SUPPORTED", 0.0, 8, "TENSOR_OP_MATH")]  # fmt: skip
    # b's GEMM line went with b, which did not run; c has only its own search and the default math type
    assert c.found == [Found("DIRECT", "CUDNN_STATUS_SUCCESS", 1.5, 16, "FMA_MATH")]
    assert (c.math, c.graph_ms, c.host_us, c.workspace, c.checked) == ("TENSOR_OP_MATH", None, None, 16, 5000)
    assert (d.math, d.graph_ms, d.host_us, d.found) == ("DEFAULT_MATH", None, 12.0, [])  # 0 ms: not captured
    assert parse_unsupported(HAND_LAYERS) == [("b", "bf16", "nhwc", "no algorithm ran")]


def test_the_example_reader_names_the_line_it_misses() -> None:
    version = "cuDNN 91400 (header 91401), CUDA runtime 13000\n"
    dims = "output dims from cuDNN: 2 4 5 4, from the formula: 2 4 5 3\n"
    with pytest.raises(ValueError, match=r"^the program's output has no output dims line:"):
        parse_example(version + "PASS\n")
    with pytest.raises(ValueError, match=r"^the program's output has no modes apart line:"):
        parse_example(version + dims + "PASS\n")
    ex = parse_example(version + dims + "largest difference between the two modes: 5.5\nPASS \n")
    assert (ex.library, ex.header, ex.cudart) == (91400, 91401, 13000)
    assert (ex.dims_cudnn, ex.dims_formula, ex.modes_apart, ex.modes, ex.passed) == ((2, 4, 5, 4), (2, 4, 5, 3), 5.5,
                                                                                    {}, True)  # fmt: skip
    assert parse_example(version + dims + "largest difference between the two modes: 1\nFAIL\n").passed is False
    line = "res2-b.1: x 32x64x56x57 w 128x32x3x5 pad 1 stride 2 dilation 3 groups 2 bf16 nhwc -> y 32x128x26x24\n"
    p = parse_problem("PASS\n" + line, 0)
    assert (p.name, p.n, p.c, p.h, p.w, p.k, p.r, p.s) == ("res2-b.1", 32, 64, 56, 57, 128, 3, 5)
    # 56 + 2 - ((3 - 1)·3 + 1) = 51, // 2 + 1 = 26; 57 + 2 - ((5 - 1)·3 + 1) = 46, // 2 + 1 = 24
    assert (p.pad, p.stride, p.dilation, p.groups, p.dtype, p.layout) == (1, 2, 3, 2, "bf16", "nhwc")
    assert (p.ho, p.wo) == (26, 24)
