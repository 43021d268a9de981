"""The cuDNN chapter's recorded GPU run: what ``bench/cudnn_conv.py`` writes, a ``cudnn.conv-forward`` record.

It holds the C++ program (``snippets/cudnn/conv_forward.cu``) built against the GPU machine's cuDNN and its
checked example, the example's output compared with torch, the same kind of convolution through cudnn-frontend's
Python graph API, and ResNet-50 layer shapes in fp16 and bf16, NCHW and NHWC: the algorithm cuDNN's own search
picked, its workspace and time, next to ``torch.nn.functional.conv2d`` timed on the same shapes. Committed as
``cudnn/conv-forward-h100``; :mod:`gpukb.cudnn.pages` renders it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpukb.measuring.stats import Summary
from gpukb.records import Record
from gpukb.schema import StrictModel

#: The committed record of this chapter.
CONV_H100 = "cudnn/conv-forward-h100"

Layout = Literal["nchw", "nhwc"]
DType = Literal["fp16", "bf16", "fp32"]


class Process(StrictModel):
    """A command run to completion: what it printed and how it ended."""

    command: str
    returncode: int
    stdout: str = ""
    stderr: str = ""


class TorchCheck(StrictModel):
    """The program's checked example against ``torch.nn.functional.conv2d`` in float64 on the same stored inputs.

    Attributes:
        cross_correlation_max_abs: Largest difference, cuDNN's cross-correlation mode against ``F.conv2d``.
        convolution_max_abs: Largest difference, cuDNN's convolution mode against ``F.conv2d`` of the filter
            flipped in both spatial dimensions.
        convolution_vs_unflipped_max_abs: Largest difference between cuDNN's convolution mode and ``F.conv2d`` of
            the filter as stored: how far apart the two modes are.
    """

    cross_correlation_max_abs: float = Field(ge=0)
    convolution_max_abs: float = Field(ge=0)
    convolution_vs_unflipped_max_abs: float = Field(ge=0)


class FrontendRun(StrictModel):
    """One convolution through cudnn-frontend's Python graph API (``cudnn.pygraph().conv_fprop``).

    Attributes:
        layout: How the input and filter are laid out (the strides given to the graph).
        dtype: Storage type of input, filter and output; the graph computes in fp32.
        shape: (N, C, H, W, K, R, S, pad, stride).
        built: Whether the graph validated, found an execution plan and built it.
        error: The exception, when it did not (type and first line of the message).
        plans: Execution plans the heuristics offered.
        plan_name: The plan that ran.
        workspace: Its workspace in bytes.
        max_abs_error: Largest difference from ``F.conv2d`` on the same inputs, relative to the largest output.
        ms: Time of one execution (CUDA events, after warm-up).
    """

    layout: Layout
    dtype: DType
    shape: tuple[int, int, int, int, int, int, int, int, int]
    built: bool
    error: str | None = None
    plans: int | None = None
    plan_name: str | None = None
    workspace: int | None = Field(default=None, ge=0)
    max_abs_error: float | None = Field(default=None, ge=0)
    ms: Summary | None = None


class LayerTiming(StrictModel):
    """One layer shape, type and layout: what the C++ program reported, and torch on the same shape.

    Attributes:
        layer: The layer's name in ResNet-50 (``res2 3x3``).
        n, c, h, w: Input, in logical NCHW order.
        k, r, s: Output channels and filter size.
        pad, stride: The same in both spatial dimensions.
        dtype: Storage type (fp32 accumulation).
        layout: ``nchw`` (torch's contiguous) or ``nhwc`` (``channels_last``).
        algo: The algorithm ``cudnnFindConvolutionForwardAlgorithm`` put first (``IMPLICIT_PRECOMP_GEMM``).
        workspace: Its workspace, bytes.
        cudnn_ms: The program's median time of ``cudnnConvolutionForward`` with that algorithm.
        error: The program's largest error against its host loop, relative to the sum of |terms|.
        checked: Outputs it checked.
        found: Every algorithm the search returned, as ``(name, status, ms, workspace)``.
        torch_ms: ``torch.nn.functional.conv2d`` on the same shape, type and layout
            (``torch.backends.cudnn.benchmark = True``).
        math: The math type the program set (``TENSOR_OP_MATH`` for the layer table).
        graph_ms: The program's time per call from a CUDA graph of 20 calls: the GPU's time alone.
        host_us: The program's host time per call, calls issued back to back.
        torch_graph_ms: ``F.conv2d`` per call from a CUDA graph of 20 calls.
    """

    layer: str
    n: int = Field(gt=0)
    c: int = Field(gt=0)
    h: int = Field(gt=0)
    w: int = Field(gt=0)
    k: int = Field(gt=0)
    r: int = Field(gt=0)
    s: int = Field(gt=0)
    pad: int = Field(ge=0)
    stride: int = Field(gt=0)
    dtype: DType
    layout: Layout
    algo: str
    workspace: int = Field(ge=0)
    cudnn_ms: float = Field(gt=0)
    error: float = Field(ge=0)
    checked: int = Field(gt=0)
    found: list[tuple[str, str, float, int]]
    torch_ms: Summary | None = None
    math: str = "TENSOR_OP_MATH"
    graph_ms: float | None = Field(default=None, gt=0)
    host_us: float | None = Field(default=None, ge=0)
    torch_graph_ms: float | None = Field(default=None, gt=0)


class ConvForward(Record):
    """The cuDNN chapter's run on a GPU.

    Attributes:
        cudnn_library: What the C++ program reported (``cuDNN 91400 (header 91400), CUDA runtime 13000``).
        linked: The cuDNN library file the program loaded (from ``ldd``).
        frontend_version: ``cudnn.__version__`` of cudnn-frontend, and the backend it loaded.
        build: The nvcc command and its outcome.
        example: The program's checked example (no arguments).
        torch_check: That example against torch.
        frontend: The convolution through cudnn-frontend, per layout.
        layers_run: The program run over the layer shapes (its full output).
        layers: Parsed per layer, with torch's time.
        gpu_tests: ``pytest -m gpu tests/cudnn`` on the same machine.
        header: The cuDNN header the program was compiled against (``cudnn_cnn.h`` beside ``cudnn.h``).
        header_declares: Whether that header declares each of a few functions, by name.
    """

    kind: Literal["cudnn.conv-forward"] = "cudnn.conv-forward"
    schema_version: Literal[1] = 1
    cudnn_library: str | None = None
    linked: str | None = None
    frontend_version: str | None = None
    build: Process
    example: Process | None = None
    torch_check: TorchCheck | None = None
    frontend: list[FrontendRun] = Field(default_factory=list)
    layers_run: Process | None = None
    layers: list[LayerTiming] = Field(default_factory=list)
    gpu_tests: Process | None = None
    header: str | None = None
    header_declares: dict[str, bool] = Field(default_factory=dict)
