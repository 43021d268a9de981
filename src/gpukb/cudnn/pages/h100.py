"""The page “cuDNN on the H100” (docs/cudnn/h100.md): its tables, figures and text."""

from __future__ import annotations

import re
import statistics

from gpukb.cudnn import layers
from gpukb.cudnn.pages import _bound_us
from gpukb.cudnn.program import parse_example, parse_unsupported
from gpukb.cudnn.results import CONV_H100, ConvForward, LayerTiming
from gpukb.performance.ceilings import h100_ceilings
from gpukb.records import load, measured_on
from gpukb.tables import markdown_table


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
