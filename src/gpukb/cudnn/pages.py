"""The cuDNN chapter's page layer: the only code that turns its models, data and records into Markdown.

Pages call these functions with literal arguments (``from gpukb.cudnn.pages import format_strides``); each computes
or loads what it renders. Library modules (:mod:`gpukb.cudnn.descriptors`, :mod:`gpukb.cudnn.convolution`,
:mod:`gpukb.cudnn.cnn`, :mod:`gpukb.cudnn.program`) return values; labels a reader sees live here.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

import numpy as np

from gpukb.cudnn import cnn, descriptors, facts, layers
from gpukb.cudnn import figures as cudnn_figures
from gpukb.cudnn.convolution import conv2d_direct, conv_descriptor, output_dims
from gpukb.cudnn.figures import layout_figure
from gpukb.cudnn.problems import problems as chapter_problems
from gpukb.cudnn.program import parse_example, parse_unsupported
from gpukb.cudnn.results import CONV_H100, ConvForward, LayerTiming
from gpukb.figures import to_svg
from gpukb.performance.ceilings import H100_CEILING_QUANTITIES, h100_ceilings
from gpukb.performance.roofline import bound
from gpukb.problems import markdown as problems_markdown
from gpukb.records import load, measured_on
from gpukb.tables import markdown_table

# --- tensor descriptors (docs/cudnn/descriptors.md) -------------------------------------------------------------


def _tuple(values: Sequence[int]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


def format_strides(dims: Sequence[int] = (1, 64, 5, 4)) -> str:
    """Every named format of a 4-D or 5-D shape: its packed strides in logical order, and where a few elements land."""
    dims = tuple(dims)
    letters = descriptors.logical_letters(len(dims))
    last = tuple(d - 1 for d in dims)
    second_channel = (0, 1) + (0,) * (len(dims) - 2)
    next_w = (0,) * (len(dims) - 1) + (1,)
    rows = []
    for fmt in descriptors.FORMATS[len(dims)]:
        desc = descriptors.tensor(dims, fmt=fmt)
        rows.append([f"`{fmt}`", f"`{_tuple(desc.strides)}`", str(desc.offset(second_channel)),
                     str(desc.offset(next_w)), f"{desc.offset(last):,}"])  # fmt: skip
    headers = [
        "format",
        f"strides ({', '.join(letters)})",
        f"offset of {_tuple(second_channel)}",
        f"offset of {_tuple(next_w)}",
        f"offset of {_tuple(last)}",
    ]
    return markdown_table(headers, rows)


def memory_layout() -> str:
    """The layout figure: element offsets of N=1, C=64, H=5, W=4 in NCHW and NHWC, drawn at build time."""
    return to_svg(layout_figure())


def fact_table(topic: str) -> str:
    """The cited facts of one topic (tensor, convolution, math, algorithm)."""
    headers, rows = facts.facts_table(topic)
    table = markdown_table(headers, [[text, source, status, f"`{test}`"] for text, source, status, test in rows])
    cited = "\n".join(f"- **{key}**: {text}" for key, text in facts.sources_cited(topic))
    return table + "\n\nSources:\n\n" + cited + "\n"


#: Impossible descriptors the pages show, as (what is asked, dims, strides, dtype); the error is computed.
BAD_TENSORS = (
    ("two dimensions", (64, 20), (20, 1), "fp32"),
    ("nine dimensions", (2,) * 9, (256, 128, 64, 32, 16, 8, 4, 2, 1), "fp32"),
    ("a dimension of 0", (1, 0, 5, 4), (0, 20, 4, 1), "fp32"),
    ("a negative stride (W mirrored)", (1, 64, 5, 4), (1280, 20, 4, -1), "fp32"),
    ("fewer strides than dims", (1, 64, 5, 4), (1280, 20, 4), "fp16"),
)


def descriptor_errors() -> str:
    """What :func:`gpukb.cudnn.descriptors.tensor` says to impossible descriptors, and to an overlapping output."""
    rows = []
    for label, dims, strides, dtype in BAD_TENSORS:
        try:
            descriptors.tensor(dims, strides, dtype)
        except (ValueError, TypeError) as err:
            rows.append([label, f"`{_tuple(dims)}`", f"`{_tuple(strides)}`", str(err)])
        else:
            raise AssertionError(f"{label}: accepted")
    overlap = descriptors.tensor((1, 2, 3, 4), (12, 6, 2, 1))
    try:
        overlap.check_output()
    except ValueError as err:
        rows.append(["an output whose H and W overlap", f"`{_tuple(overlap.dims)}`", f"`{_tuple(overlap.strides)}`",
                     str(err)])  # fmt: skip
    return markdown_table(["asked for", "dims", "strides", "error"], rows)


# --- convolution (docs/cudnn/convolution.md) --------------------------------------------------------------------


#: Convolutions whose output size the page computes: (label, input NCHW, filter KCRS, pad, stride, dilation, groups).
OUTPUT_CASES = (
    ("ResNet-50 stem", (32, 3, 224, 224), (64, 3, 7, 7), 3, 2, 1, 1),
    ("3×3, same padding", (32, 64, 56, 56), (64, 64, 3, 3), 1, 1, 1, 1),
    ("3×3, stride 2", (32, 128, 56, 56), (128, 128, 3, 3), 1, 2, 1, 1),
    ("3×3, dilation 2, groups 2", (2, 6, 11, 9), (4, 3, 3, 3), 1, 2, 2, 2),
    ("depthwise 3×3", (8, 32, 28, 28), (32, 1, 3, 3), 1, 1, 1, 32),
    ("5×5 on 2×2, no padding", (1, 1, 2, 2), (1, 1, 5, 5), 0, 1, 1, 1),
)


def output_sizes() -> str:
    """Output dims of a few convolutions by the formula, and the error a filter that does not fit gets."""
    rows = []
    for label, x, w, pad, stride, dilation, groups in OUTPUT_CASES:
        conv = conv_descriptor(pad, stride, dilation, groups)
        try:
            out = f"`{_tuple(output_dims(x, w, conv))}`"
        except ValueError as err:
            out = str(err)
        rows.append([label, f"`{_tuple(x)}`", f"`{_tuple(w)}`", str(pad), str(stride), str(dilation), str(groups), out])
    return markdown_table(["case", "input N, C, H, W", "filter K, C/G, R, S", "pad", "stride", "dilation", "groups",
                           "output N, K, H, W"], rows)  # fmt: skip


#: The page's small example of the two modes: a 4×4 input and an asymmetric 3×3 filter.
MODE_INPUT = np.array([[1.0, 0, 2, 1], [3, 1, 0, 2], [0, 2, 1, 3], [2, 1, 3, 0]]).reshape(1, 1, 4, 4)
MODE_FILTER = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]).reshape(1, 1, 3, 3)


def mode_example() -> str:
    """Cross-correlation and convolution of the same input and filter, side by side."""
    out = {mode: conv2d_direct(MODE_INPUT, MODE_FILTER, conv_descriptor(mode=mode))[0, 0]
           for mode in ("cross_correlation", "convolution")}  # fmt: skip
    rows = []
    for i in range(out["convolution"].shape[0]):
        for j in range(out["convolution"].shape[1]):
            cc, cv = out["cross_correlation"][i, j], out["convolution"][i, j]
            rows.append([f"({i}, {j})", f"{cc:g}", f"{cv:g}", f"{cv - cc:g}"])
    return markdown_table(["output (h, w)", "CUDNN_CROSS_CORRELATION", "CUDNN_CONVOLUTION", "difference"], rows)


def _bound_us(layer: layers.Layer, dtype: str, ceilings: dict[str, float]) -> tuple[float, str, float, float]:
    c = layers.counts(layer)
    nbytes = c.bytes(2)
    b = bound(c.flops, nbytes, ceilings[dtype] * 1e12, ceilings["bandwidth"] * 1e9)
    return b.time_s * 1e6, b.limiter, c.flops, nbytes


def layer_bounds(dtype: str = "fp16") -> str:
    """The timed ResNet-50 layers: output, work, bytes, intensity and the bound on the measured H100 ceilings."""
    ceilings = h100_ceilings()
    rows = []
    table = layers.load()
    for layer in table.layers:
        c = layers.counts(layer)
        us, limiter, flops, nbytes = _bound_us(layer, dtype, ceilings)
        rows.append([layer.name, f"{layer.c}→{layer.k}, {layer.kernel}×{layer.kernel}/{layer.stride}, {layer.hw}²",
                     f"`{_tuple(c.output_shape)}`", f"{flops / 1e9:.2f}", f"{nbytes / 2**20:.1f}",
                     f"{flops / nbytes:.0f}", f"{us:.1f}", limiter])  # fmt: skip
    return markdown_table(["layer", "C→K, filter/stride, input", "output", "GFLOP", f"MiB moved ({dtype})",
                           "FLOP/byte", "bound (µs)", "limited by"], rows)  # fmt: skip


def layer_ceilings(dtype: str = "fp16") -> str:
    """The one sentence naming the ceilings the bounds use."""
    from gpukb.performance.pages import quantity

    ceilings = h100_ceilings()
    rate = quantity(H100_CEILING_QUANTITIES[dtype]) if dtype in H100_CEILING_QUANTITIES else f"{ceilings[dtype]:.0f}"
    return (f"Bounds use the H100's measured ceilings: {rate} TFLOP/s for {dtype} products and "
            f"{quantity(H100_CEILING_QUANTITIES['bandwidth'])} GB/s of copy bandwidth, each the median of rounds "
            "interleaved in one run "
            "([the H100's ceilings](../../performance/h100/#the-h100s-ceilings-one-figure-each)); "
            f"batch {layers.load().batch}, no bias.")  # fmt: skip


def small_cnn() -> str:
    """The small CNN's stages: shape after each and trainable parameters, with the total."""
    rows = [[name, f"`{_tuple(shape)}`", str(params)] for name, shape, params in cnn.stages()]
    rows.append(["**total**", "", f"**{cnn.parameters()}**"])
    return markdown_table(["stage", "shape (N, H, W, C)", "parameters"], rows)


def small_cnn_example() -> str:
    """The small CNN example's numbers recomputed from its convolution output."""
    s = cnn.example_stages()
    data = cnn.load()

    def nhwc(a: np.ndarray) -> str:
        return "; ".join(f"c={ch}: {a[0, :, :, ch].astype(int).tolist()}" for ch in range(a.shape[3]))

    rows = [
        ["convolution output (given)", nhwc(s["conv"])],
        ["after ReLU", nhwc(s["relu"])],
        ["after 2×2 max pooling, stride 1", nhwc(s["pool"])],
        ["flattened in memory order (N, H, W, C)", str(s["flat_nhwc"][0].astype(int).tolist())],
        ["flattened channel by channel (N, C, H, W)", str(s["flat_nchw"][0].astype(int).tolist())],
        ["softmax of the channel-by-channel vector", ", ".join(f"{v:.4g}" for v in s["softmax_of_flat"])],
        ["the example's softmax", ", ".join(f"{v:.4g}" for v in data.claimed_softmax)],
        ["parameters with 2 dense units / with 10", f"{cnn.parameters()} / {cnn.parameters(dense_units=10)}"],
    ]
    return markdown_table(["stage", "values"], rows)


# --- real cuDNN on the H100 (docs/cudnn/h100.md) ----------------------------------------------------------------


def _record(record_id: str) -> ConvForward:
    return load(record_id, ConvForward)


def _cudnn_version(number: int) -> str:
    """cuDNN 9's version number, ``major·10000 + minor·100 + patch``, as ``major.minor.patch``."""
    return f"{number // 10000}.{number % 10000 // 100}.{number % 100}"


def conv_measured_on(record_id: str = CONV_H100) -> str:
    """Where the run came from, and which cuDNN each part loaded: the program and torch may run different ones."""
    r = _record(record_id)
    parts = [measured_on(r.run)]
    program = re.search(r"cuDNN (\d+)", r.cudnn_library or "")
    frontend = re.search(r"backend (\d+)", r.frontend_version or "")
    if r.cudnn_library:
        parts.append(f"The C++ program reported `{r.cudnn_library}` and loaded `{r.linked or 'unknown'}`.")
    if r.frontend_version:
        parts.append(f"The graph API ran as {r.frontend_version}.")
    note = ""
    if program and r.run.versions.cudnn:
        mine, torchs = _cudnn_version(int(program.group(1))), r.run.versions.cudnn
        backend = f"; cudnn-frontend's backend is {_cudnn_version(int(frontend.group(1)))}" if frontend else ""
        if mine != torchs:
            note = (
                f"\n\n**Two cuDNN versions ran.** The C++ program used the machine's cuDNN {mine}; torch used "
                f"cuDNN {torchs} from its own wheel{backend}. The version in the line above is torch's. Where the "
                "program is compared with torch below, the library version differs as well as the API."
            )
    return " ".join(parts) + note


def conv_build(record_id: str = CONV_H100) -> str:
    """The nvcc command that built the program, and its exit status."""
    b = _record(record_id).build
    return "```text\n" + f"$ {b.command}\n(exit status {b.returncode})\n" + "```"


def conv_example(record_id: str = CONV_H100) -> str:
    """What the program printed for its checked example."""
    e = _record(record_id).example
    if e is None:
        return "The program did not run on the GPU machine."
    return "```text\n" + f"$ {e.command}\n" + e.stdout.rstrip() + f"\n(exit status {e.returncode})\n```"


def torch_check(record_id: str = CONV_H100) -> str:
    """The example's cuDNN outputs against ``F.conv2d`` in float64 on the same values."""
    t = _record(record_id).torch_check
    if t is None:
        return "The torch comparison did not run."
    rows = [
        ["CUDNN_CROSS_CORRELATION vs `F.conv2d(x, w)`", f"{t.cross_correlation_max_abs:.2e}"],
        ["CUDNN_CONVOLUTION vs `F.conv2d(x, w.flip(-1, -2))`", f"{t.convolution_max_abs:.2e}"],
        ["CUDNN_CONVOLUTION vs `F.conv2d(x, w)`", f"{t.convolution_vs_unflipped_max_abs:.2f}"],
    ]
    return markdown_table(["cuDNN output", "largest absolute difference"], rows)


def _example(record_id: str):
    e = _record(record_id).example
    if e is None or e.returncode != 0:
        raise ValueError(f"{record_id}: the example did not run")
    return parse_example(e.stdout)


def math_types(record_id: str = CONV_H100) -> str:
    """Per math type: the algorithm cuDNN's search put first for FP32 data, and the error against the host."""
    ex = _example(record_id)
    rows = [[f"`CUDNN_{name}`", f"`{algo}`", f"{error:.1e}"] for name, (algo, error) in ex.math.items()]
    return markdown_table(["math type", "algorithm found first", "largest error / sum of |terms|"], rows)


def probes(record_id: str = CONV_H100) -> str:
    """What cuDNN answered to each impossible (or borderline) descriptor."""
    ex = _example(record_id)
    rows = [[name, f"`{status}`", message or "–"] for name, (status, message) in ex.probes.items()]
    return markdown_table(["descriptor", "status", "cudnnGetLastErrorString"], rows)


def example_algorithms(record_id: str = CONV_H100) -> str:
    """The example's search (FP32 FMA math): every algorithm, its status, time and workspace."""
    ex = _example(record_id)
    rows = [[f"`{f.name}`", f"`{f.status}`", f"{f.ms:.4f}" if f.status == "CUDNN_STATUS_SUCCESS" else "–",
             f"{f.workspace:,}"] for f in ex.found]  # fmt: skip
    return markdown_table(["algorithm", "status", "time (ms)", "workspace (bytes)"], rows)


def frontend(record_id: str = CONV_H100) -> str:
    """The graph API's run per layout: plans, the plan that ran, workspace, error, time, or the error it raised."""
    rows = []
    for f in _record(record_id).frontend:
        n, c, h, w, k, r, s, _, _ = f.shape
        shape = f"{n}×{c}×{h}×{w} ⊛ {k}×{c}×{r}×{s}"
        if f.built:
            rows.append([f.layout.upper(), shape, str(f.plans), f"`{f.plan_name}`", f"{f.workspace:,}",
                         f"{f.max_abs_error:.1e}", f"{f.ms.median * 1e3:.1f}"])  # fmt: skip
        else:
            rows.append([f.layout.upper(), shape, "–", f.error or "failed", "–", "–", "–"])
    return markdown_table(["layout", "fp16 shape", "plans", "plan (or error)", "workspace (bytes)", "error / max |y|",
                           "time (µs)"], rows)  # fmt: skip


def _layer(name: str) -> layers.Layer:
    return next(layer for layer in layers.load().layers if layer.name == name)


def _us(ms: float | None) -> str:
    return f"{ms * 1e3:.1f}" if ms else "–"


def _share(bound_us: float, ms: float | None) -> str:
    return f"{bound_us / (ms * 1e3):.0%}" if ms else "–"


def _tensor_op(record: ConvForward) -> list[LayerTiming]:
    return [t for t in record.layers if t.math == "TENSOR_OP_MATH"]


def findings(record_id: str = CONV_H100) -> str:
    """The page's answers, computed from the run: which layout to use and which of its figures to quote, how close
    torch's convolutions came to their roofline bound, and where cuDNN's own search misled."""
    by = {(t.layer, t.dtype, t.layout): t for t in _tensor_op(_record(record_id))}
    names = [layer.name for layer in layers.load().layers]
    pairs = [
        (name, by[(name, d, "nchw")], by[(name, d, "nhwc")])
        for name in names
        for d in ("fp16", "bf16")
        if (name, d, "nchw") in by
        and (name, d, "nhwc") in by
        and by[(name, d, "nchw")].torch_graph_ms
        and by[(name, d, "nhwc")].torch_graph_ms
    ]
    ratios = sorted(nchw.torch_graph_ms / nhwc.torch_graph_ms for _, nchw, nhwc in pairs)
    losers = sorted({name for name, nchw, nhwc in pairs if nhwc.torch_graph_ms >= nchw.torch_graph_ms})
    ceilings = h100_ceilings()
    shares = sorted(
        _bound_us(_layer(t.layer), "fp16", ceilings)[0] / (t.torch_graph_ms * 1e3)
        for (_, dtype, layout), t in by.items()
        if dtype == "fp16" and layout == "nhwc" and t.torch_graph_ms
    )
    misled = sorted(
        {t.layer for t in by.values() if t.graph_ms and t.torch_graph_ms and t.graph_ms > 10 * t.torch_graph_ms}
    )
    but = f" (all but `{'`, `'.join(losers)}`)" if losers else ""
    lines = [
        f"- **NHWC or NCHW?** NHWC. On the GPU alone, torch's NHWC convolution beat its NCHW one in "
        f"{len(pairs) - sum(1 for _, nchw, nhwc in pairs if nhwc.torch_graph_ms >= nchw.torch_graph_ms)} of "
        f"{len(pairs)} layer-and-type cases{but}; NCHW took a median {statistics.median(ratios):.2f}× as long "
        f"({ratios[0]:.2f}–{ratios[-1]:.2f}×). Quote the torch columns of "
        "[the ratio table](../h100/#nchw-over-nhwc): the program's columns and every per-call time also hold the "
        "legacy API's host time.",
        f"- **How close to the roofline?** torch's fp16 NHWC convolutions reached {shares[0]:.0%} to {shares[-1]:.0%} "
        f"of their roofline bound on the GPU alone (median {statistics.median(shares):.0%}), bounded by the H100's "
        "measured ceilings.",
    ]
    if misled:
        lines.append(
            f"- **Can cuDNN's search be trusted?** Not blindly: for `{'`, `'.join(misled)}` the algorithm "
            "`cudnnFindConvolutionForwardAlgorithm` ranked first ran more than 10× slower on the GPU than torch's "
            "choice, because the search's times include the host's time inside each call."
        )
    return "\n".join(lines) + "\n"


def layer_timings(dtype: str = "fp16", record_id: str = CONV_H100) -> str:
    """Per layer and layout: cuDNN's chosen algorithm and workspace; the program's time per call (one call between
    two events, host included) and from a CUDA graph (the GPU alone); torch's two times alike; and the fraction of the
    roofline bound (bound time over measured time) the GPU-only times reach."""
    ceilings = h100_ceilings()
    rows = []
    for t in _tensor_op(_record(record_id)):
        if t.dtype != dtype:
            continue
        us, limiter, flops, _ = _bound_us(_layer(t.layer), dtype, ceilings)
        gpu = t.graph_ms or t.cudnn_ms
        torch_gpu = t.torch_graph_ms or (t.torch_ms.median if t.torch_ms else None)
        rows.append([
            t.layer, t.layout.upper(), f"`{t.algo}`", f"{t.workspace / 2**20:.1f}", _us(t.cudnn_ms), _us(t.graph_ms),
            f"{flops / (gpu * 1e-3) / 1e12:.0f}", _share(us, gpu), _us(t.torch_ms.median if t.torch_ms else None),
            _us(t.torch_graph_ms), _share(us, torch_gpu), limiter,
        ])  # fmt: skip
    return markdown_table(["layer", "layout", "algorithm (Find, first)", "workspace (MiB)", "program, per call (µs)",
                           "program, in a graph (µs)", "TFLOP/s (graph)", "of bound", "torch, per call (µs)",
                           "torch, in a graph (µs)", "of bound", "bound by"], rows)  # fmt: skip


def math_layers(record_id: str = CONV_H100) -> str:
    """One layer under each math type the run tried: algorithm, time and error against the host loop."""
    rows = []
    for t in _record(record_id).layers:
        if t.layer != "res3-3x3" or t.layout != "nhwc" or t.dtype == "bf16":
            continue
        rows.append([t.dtype, f"`CUDNN_{t.math}`", f"`{t.algo}`", _us(t.graph_ms or t.cudnn_ms), f"{t.error:.1e}"])
    rows.sort(key=lambda r: (r[0], r[1]))
    return markdown_table(["type", "math type", "algorithm (Find, first)", "time per call (µs)",
                           "largest error / sum of |terms|"], rows)  # fmt: skip


def host_overhead(record_id: str = CONV_H100) -> str:
    """The program's host time per call against its GPU time per call, per layer (fp16, NHWC)."""
    rows = []
    for t in _tensor_op(_record(record_id)):
        if t.dtype == "fp16" and t.layout == "nhwc" and t.host_us is not None:
            rows.append([t.layer, f"{t.host_us:.1f}", _us(t.graph_ms), _us(t.cudnn_ms)])
    if not rows:
        return "This run did not measure the host's time per call."
    return markdown_table(["layer", "host time per call (µs)", "GPU time per call (µs)",
                           "one call between two events (µs)"], rows)  # fmt: skip


def header_functions(record_id: str = CONV_H100) -> str:
    """Which algorithm-choosing functions the system's cudnn_cnn.h declares."""
    r = _record(record_id)
    if not r.header_declares:
        return "This run did not read the header."
    rows = [[f"`{name}`", "yes" if declared else "no"] for name, declared in r.header_declares.items()]
    return markdown_table([f"declared in `{r.header}`", "yes or no"], rows)


def layout_ratios(record_id: str = CONV_H100) -> str:
    """NCHW time over NHWC time, per layer and type, for the C++ program and for torch."""
    by = {(t.layer, t.dtype, t.layout): t for t in _tensor_op(_record(record_id))}
    rows = []
    for layer in layers.load().layers:
        cells = [layer.name]
        for dtype in ("fp16", "bf16"):
            nchw, nhwc = by.get((layer.name, dtype, "nchw")), by.get((layer.name, dtype, "nhwc"))
            program = nchw and nhwc and (nchw.graph_ms or nchw.cudnn_ms) / (nhwc.graph_ms or nhwc.cudnn_ms)
            cells.append(f"{program:.2f}" if program else "–")
            both = nchw and nhwc and nchw.torch_ms and nhwc.torch_ms
            torch_nchw = both and (nchw.torch_graph_ms or nchw.torch_ms.median)
            torch_nhwc = both and (nhwc.torch_graph_ms or nhwc.torch_ms.median)
            cells.append(f"{torch_nchw / torch_nhwc:.2f}" if both else "–")
        rows.append(cells)
    return markdown_table(["layer", "fp16, cuDNN program", "fp16, torch", "bf16, cuDNN program", "bf16, torch"], rows)


def unsupported(record_id: str = CONV_H100) -> str:
    """Layers for which no algorithm ran, or a sentence saying every one ran."""
    r = _record(record_id)
    missing = parse_unsupported(r.layers_run.stdout) if r.layers_run else []
    if not missing:
        tensor_op = len(_tensor_op(r))
        return (f"Every one of the {len(r.layers)} runs (layer, type, layout and math type) found an algorithm: "
                f"{tensor_op} under `CUDNN_TENSOR_OP_MATH` and {len(r.layers) - tensor_op} under the other math "
                "types.")  # fmt: skip
    rows = [[layer, dtype, layout.upper(), reason] for layer, dtype, layout, reason in missing]
    return markdown_table(["layer", "type", "layout", "why"], rows)


def algorithm_counts(record_id: str = CONV_H100) -> str:
    """How often each algorithm came first across the runs under tensor-op math, and the median workspace it asked
    for."""
    picks: dict[str, list[int]] = {}
    for t in _tensor_op(_record(record_id)):
        picks.setdefault(t.algo, []).append(t.workspace)
    rows = [[f"`{algo}`", str(len(ws)), f"{statistics.median(ws) / 2**20:.1f}"]
            for algo, ws in sorted(picks.items(), key=lambda kv: -len(kv[1]))]  # fmt: skip
    return markdown_table(["algorithm", "runs where it came first", "median workspace (MiB)"], rows)


def gpu_tests(record_id: str = CONV_H100) -> str:
    """The GPU-marked tests of the chapter as they ran on the same machine: the command and pytest's summary line."""
    t = _record(record_id).gpu_tests
    if t is None:
        return "The GPU tests did not run with this record."
    summary = next((line for line in reversed(t.stdout.splitlines()) if " in " in line), "no summary")
    return f"`{t.command}` on the same machine: {summary.strip()} (exit status {t.returncode})."


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.cudnn.problems`)."""
    return problems_markdown(chapter_problems())


def algorithms_figure() -> str:
    """Inline SVG: direct, GEMM, Winograd and FFT convolution, with a ResNet-50 layer's numbers."""
    return to_svg(cudnn_figures.algorithms_figure())
