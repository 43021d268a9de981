"""Reading what the C++ program ``snippets/cudnn/conv_forward.cu`` prints: one parser for its checks, the bench
script that records it, and the page that shows it.

The program prints plain lines (see the snippet); :func:`parse_example` reads its checked example (no arguments)
and :func:`parse_layers` its timed layers (``NAME:N,C,H,W,K,R,S,PAD,STRIDE,DTYPE,LAYOUT`` arguments).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: The forward algorithms of ``cudnnConvolutionFwdAlgo_t`` in enum order (cudnn_ops.h of cuDNN 9), without the
#: ``CUDNN_CONVOLUTION_FWD_ALGO_`` prefix the program drops.
FWD_ALGOS = (
    "IMPLICIT_GEMM",
    "IMPLICIT_PRECOMP_GEMM",
    "GEMM",
    "DIRECT",
    "FFT",
    "FFT_TILING",
    "WINOGRAD",
    "WINOGRAD_NONFUSED",
)

_VERSION = re.compile(r"^cuDNN (?P<library>\d+) \(header (?P<header>\d+)\), CUDA runtime (?P<cudart>\d+)$", re.M)
_DIMS = re.compile(
    r"^output dims from cuDNN: (?P<cudnn>\d+ \d+ \d+ \d+), from the formula: (?P<formula>\d+ \d+ \d+ \d+)$", re.M
)
_ALGO = re.compile(
    r"^  algorithm (?P<name>\S+)\s+(?P<status>\S+)\s+time\s+(?P<ms>\S+) ms "
    r"workspace (?P<ws>\d+) bytes math (?P<math>\S+)$"
)
_MODE = re.compile(
    r"^mode (?P<mode>CROSS_CORRELATION|CONVOLUTION) algo (?P<algo>\S+): error vs host(?: \(flipped filter\))? "
    r"(?P<error>\S+) over (?P<n>\d+) outputs$",
    re.M,
)
_APART = re.compile(r"^largest difference between the two modes: (?P<apart>\S+)$", re.M)
_MATH = re.compile(r"^math (?P<math>\S+) algo (?P<algo>\S+): error vs host (?P<error>\S+)$", re.M)
_PROBE = re.compile(r"^probe (?P<name>[^:]+): (?P<status>CUDNN_STATUS_\w+)(?: \| (?P<message>.*))?$", re.M)
_LAYER = re.compile(
    r"^layer (?P<layer>\S+) (?P<dtype>fp16|bf16|fp32) (?P<layout>nchw|nhwc)(?: (?P<math>[A-Z_]+))?: algo (?P<algo>\S+) "
    r"workspace (?P<ws>\d+) median (?P<ms>\S+) ms (?:graph (?P<graph>\S+) ms host (?P<host>\S+) us )?"
    r"(?P<tflops>\S+) TFLOP/s error (?P<error>\S+) over (?P<checked>\d+) outputs$"
)


@dataclass(frozen=True)
class Found:
    """One entry of ``cudnnFindConvolutionForwardAlgorithm``'s answer: the algorithm, its status, its time (0 when
    it failed), its workspace in bytes and its math type."""

    name: str
    status: str
    ms: float
    workspace: int
    math: str


@dataclass(frozen=True)
class Example:
    """The checked example: versions, output dims, both modes, each math type, and the descriptor probes."""

    library: int
    header: int
    cudart: int
    dims_cudnn: tuple[int, ...]
    dims_formula: tuple[int, ...]
    found: list[Found]
    modes: dict[str, tuple[str, float, int]]  # mode -> (algo, error, outputs checked)
    modes_apart: float
    math: dict[str, tuple[str, float]]  # math type -> (algo, error)
    probes: dict[str, tuple[str, str]]  # probe -> (status, message)
    passed: bool


@dataclass(frozen=True)
class Layer:
    """One timed layer as the program reports it."""

    layer: str
    dtype: str
    layout: str
    algo: str
    workspace: int
    ms: float
    tflops: float
    error: float
    checked: int
    found: list[Found] = field(default_factory=list)
    math: str = "TENSOR_OP_MATH"
    graph_ms: float | None = None  # per call, from a CUDA graph of calls (None: not measured or not captured)
    host_us: float | None = None  # the host's time per call, calls issued back to back


def _found(line: str) -> Found | None:
    match = _ALGO.match(line)
    if not match:
        return None
    g = match.groupdict()
    return Found(g["name"], g["status"], float(g["ms"]), int(g["ws"]), g["math"])


def parse_example(out: str) -> Example:
    """Read the checked example's output.

    Raises:
        ValueError: If a line the program always prints is missing (the message names it).
    """
    version, dims, apart = _VERSION.search(out), _DIMS.search(out), _APART.search(out)
    for name, match in (("version", version), ("output dims", dims), ("modes apart", apart)):
        if match is None:
            raise ValueError(f"the program's output has no {name} line:\n{out}")
    found = [f for f in map(_found, out.splitlines()) if f is not None]
    return Example(
        library=int(version["library"]),
        header=int(version["header"]),
        cudart=int(version["cudart"]),
        dims_cudnn=tuple(map(int, dims["cudnn"].split())),
        dims_formula=tuple(map(int, dims["formula"].split())),
        found=found,
        modes={m["mode"]: (m["algo"], float(m["error"]), int(m["n"])) for m in _MODE.finditer(out)},
        modes_apart=float(apart["apart"]),
        math={m["math"]: (m["algo"], float(m["error"])) for m in _MATH.finditer(out)},
        probes={p["name"]: (p["status"], (p["message"] or "").strip()) for p in _PROBE.finditer(out)},
        passed=out.rstrip().endswith("PASS"),
    )


def parse_layers(out: str) -> list[Layer]:
    """Read the timed layers: each ``layer ...`` line with the algorithm lines printed before it."""
    layers, pending = [], []
    for line in out.splitlines():
        found = _found(line)
        if found is not None:
            pending.append(found)
            continue
        if _UNSUPPORTED.match(line):
            pending = []
            continue
        match = _LAYER.match(line)
        if match:
            g = match.groupdict()
            graph = float(g["graph"]) if g["graph"] is not None else None
            layers.append(
                Layer(g["layer"], g["dtype"], g["layout"], g["algo"], int(g["ws"]), float(g["ms"]),
                      float(g["tflops"]), float(g["error"]), int(g["checked"]), pending, g["math"] or "TENSOR_OP_MATH",
                      graph if graph is not None and graph > 0 else None,
                      float(g["host"]) if g["host"] is not None else None)
            )  # fmt: skip
            pending = []
    return layers


_UNSUPPORTED = re.compile(
    r"^layer (?P<layer>\S+) (?P<dtype>fp16|bf16|fp32) (?P<layout>nchw|nhwc)(?: [A-Z_]+)?: unsupported: (?P<reason>.*)$",
    re.M,
)


def parse_unsupported(out: str) -> list[tuple[str, str, str, str]]:
    """Layers for which no algorithm ran, as ``(layer, dtype, layout, reason)``."""
    return [(m["layer"], m["dtype"], m["layout"], m["reason"]) for m in _UNSUPPORTED.finditer(out)]


#: Math types the program takes for a layer (``cudnnMathType_t`` without the ``CUDNN_`` prefix).
MATH_TYPES = ("DEFAULT_MATH", "TENSOR_OP_MATH", "TENSOR_OP_MATH_ALLOW_CONVERSION", "FMA_MATH")


def layer_argument(name: str, n: int, c: int, h: int, w: int, k: int, r: int, s: int, pad: int, stride: int,
                   dtype: str, layout: str, math: str = "TENSOR_OP_MATH") -> str:  # fmt: skip
    """The program's argument for one layer: ``NAME:N,C,H,W,K,R,S,PAD,STRIDE,DTYPE,LAYOUT,MATH``."""
    if not re.fullmatch(r"[\w.-]{1,63}", name):
        raise ValueError(f"a layer name is 1 to 63 letters, digits, '_', '.' or '-'; got {name!r}")
    if math not in MATH_TYPES:
        raise ValueError(f"math must be one of {MATH_TYPES}; got {math!r}")
    return f"{name}:{n},{c},{h},{w},{k},{r},{s},{pad},{stride},{dtype},{layout},{math}"


_PROBLEM = re.compile(
    r"^(?P<name>[\w.-]+): x (?P<n>\d+)x(?P<c>\d+)x(?P<h>\d+)x(?P<w>\d+) w (?P<k>\d+)x(?P<cg>\d+)x(?P<r>\d+)x(?P<s>\d+) "
    r"pad (?P<pad>\d+) stride (?P<stride>\d+) dilation (?P<dilation>\d+) groups (?P<groups>\d+) "
    r"(?P<dtype>fp16|bf16|fp32) (?P<layout>nchw|nhwc) -> y (?P<yn>\d+)x(?P<yk>\d+)x(?P<ho>\d+)x(?P<wo>\d+)$",
    re.M,
)


@dataclass(frozen=True)
class Problem:
    """A problem as the program states it: input ``n, c, h, w``; ``k`` filters of ``c / groups × r × s``;
    padding, stride and dilation the same in both directions; output ``ho × wo``."""

    name: str
    n: int
    c: int
    h: int
    w: int
    k: int
    r: int
    s: int
    pad: int
    stride: int
    dilation: int
    groups: int
    dtype: str
    layout: str
    ho: int
    wo: int


def parse_problem(out: str, index: int = 0) -> Problem:
    """The ``index``-th problem line of the program's output (the example is the first).

    Raises:
        ValueError: If there is no such line.
    """
    matches = list(_PROBLEM.finditer(out))
    if index >= len(matches):
        raise ValueError(f"the program's output has {len(matches)} problem lines, not {index + 1}")
    g = matches[index].groupdict()
    ints = {key: int(value) for key, value in g.items() if key not in ("name", "dtype", "layout", "cg", "yn", "yk")}
    return Problem(name=g["name"], dtype=g["dtype"], layout=g["layout"], **ints)
