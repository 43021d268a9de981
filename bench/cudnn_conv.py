"""The cuDNN chapter's GPU run: the descriptor-API program, cudnn-frontend's graph API, and ResNet-50 layer shapes.

Usage: PYTHONPATH=src python bench/cudnn_conv.py OUTPUT.json [--tests]

Writes a ``cudnn.conv-forward`` record (:class:`gpukb.cudnn.results.ConvForward`); the committed one is
``cudnn/conv-forward-h100``.

1. Builds ``snippets/cudnn/conv_forward.cu`` with nvcc against the machine's default cuDNN (``-lcudnn``) and runs
   its checked example, which also writes its inputs and outputs; they are compared with
   ``torch.nn.functional.conv2d`` in float64 on the same stored values.
2. Runs the program over ResNet-50 layer shapes (``gpukb/data/cudnn/resnet50_layers.toml``) in fp16 and bf16,
   NCHW and NHWC: ``cudnnFindConvolutionForwardAlgorithm`` ranks the algorithms, the first is timed (median of 50
   calls, CUDA events). ``F.conv2d`` is timed on the same shapes (``torch.backends.cudnn.benchmark = True``,
   ``gpukb.measuring.timing`` with CUDA events), on random inputs.
3. The same kind of convolution through cudnn-frontend's Python graph API, NHWC and NCHW strides.
4. With ``--tests``: ``pytest -m gpu tests/cudnn`` on the same machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from gpukb.cudnn.layers import load as load_layers
from gpukb.cudnn.program import layer_argument, parse_example, parse_layers, parse_problem
from gpukb.cudnn.results import ConvForward, FrontendRun, LayerTiming, Process, TorchCheck
from gpukb.dtypes import torch_dtype
from gpukb.measuring.stats import summarize
from gpukb.measuring.timing import Budget, EventTimer, benchmark
from gpukb.records.script import Script, main
from gpukb.site.snippets import find_nvcc

ROOT = Path(__file__).resolve().parents[1]
SNIPPET = ROOT / "snippets" / "cudnn" / "conv_forward.cu"
DTYPES = ("fp16", "bf16")
LAYOUTS = ("nchw", "nhwc")
#: One layer again under other math types, (layer, dtype, math): does FP32 data go through TF32, and FP16 through
#: tensor cores, when the math type is left at its default?
MATH_RUNS = (
    ("res3-3x3", "fp32", "TENSOR_OP_MATH"),
    ("res3-3x3", "fp32", "DEFAULT_MATH"),
    ("res3-3x3", "fp32", "FMA_MATH"),
    ("res3-3x3", "fp16", "DEFAULT_MATH"),
    ("res3-3x3", "fp16", "FMA_MATH"),
)
GRAPH_CALLS = 20
#: The header the program is compiled against (the system cuDNN), and the functions looked up in it.
HEADER = Path("/usr/include/x86_64-linux-gnu/cudnn_cnn.h")
LOOKED_UP = (
    "cudnnGetConvolutionForwardAlgorithm",
    "cudnnGetConvolutionForwardAlgorithm_v7",
    "cudnnFindConvolutionForwardAlgorithm",
    "cudnnConvolutionForward",
)
#: The layer the graph API runs (by name in the layer file).
FRONTEND_LAYER = "res2-3x3"
BUDGET = Budget(warmup_ms=10.0, rep_ms=40.0, min_reps=5, max_reps=100)


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run(cmd: list[str], timeout: float = 300, shown: str | None = None, env: dict | None = None) -> Process:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as err:
        return Process(command=shown or " ".join(cmd), returncode=-9, stdout=str(err.stdout or ""), stderr="timeout")
    return Process(command=shown or " ".join(cmd), returncode=proc.returncode, stdout=proc.stdout,
                   stderr=proc.stderr[-4000:])  # fmt: skip


def torch_check(torch, out_dir: Path, stdout: str) -> TorchCheck:
    """The example's stored inputs and cuDNN's outputs against ``F.conv2d`` in float64 on the CPU."""
    from torch.nn import functional as F  # noqa: N812 - the name every PyTorch reader knows

    p = parse_problem(stdout)
    x = torch.from_numpy(np.fromfile(out_dir / "x.f32", dtype=np.float32).astype(np.float64))
    w = torch.from_numpy(np.fromfile(out_dir / "w.f32", dtype=np.float32).astype(np.float64))
    x = x.reshape(p.n, p.c, p.h, p.w)
    w = w.reshape(p.k, p.c // p.groups, p.r, p.s)
    kw = {"stride": p.stride, "padding": p.pad, "dilation": p.dilation, "groups": p.groups}
    y_cc = torch.from_numpy(np.fromfile(out_dir / "y_cross_correlation.f32", dtype=np.float32).astype(np.float64))
    y_cv = torch.from_numpy(np.fromfile(out_dir / "y_convolution.f32", dtype=np.float32).astype(np.float64))
    ref = F.conv2d(x, w, **kw)
    flipped = F.conv2d(x, w.flip(-1, -2), **kw)
    y_cc, y_cv = y_cc.reshape(ref.shape), y_cv.reshape(ref.shape)
    return TorchCheck(
        cross_correlation_max_abs=float((y_cc - ref).abs().max()),
        convolution_max_abs=float((y_cv - flipped).abs().max()),
        convolution_vs_unflipped_max_abs=float((y_cv - ref).abs().max()),
    )


def graph_ms(torch, fn, calls: int = GRAPH_CALLS) -> float:
    """Per-call GPU time of ``fn`` from a CUDA graph of ``calls`` calls (warmed up on a side stream first)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    m = benchmark(graph.replay, EventTimer(torch), Budget(warmup_ms=5.0, rep_ms=20.0, min_reps=5, max_reps=30))
    return summarize(m.samples).median / calls


def torch_time(torch, n, c, h, w, k, r, s, pad, stride, dtype: str, layout: str):
    from torch.nn import functional as F  # noqa: N812 - the name every PyTorch reader knows

    tdt = torch_dtype(dtype)
    fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
    x = torch.randn(n, c, h, w, device="cuda", dtype=tdt).to(memory_format=fmt)
    wt = torch.randn(k, c, r, s, device="cuda", dtype=tdt).to(memory_format=fmt)
    y = F.conv2d(x, wt, stride=stride, padding=pad)
    assert y.is_contiguous(memory_format=fmt), "torch changed the layout"
    m = benchmark(lambda: F.conv2d(x, wt, stride=stride, padding=pad), EventTimer(torch), BUDGET)
    try:
        per_call = graph_ms(torch, lambda: F.conv2d(x, wt, stride=stride, padding=pad))
    except Exception as err:
        log(f"torch graph capture failed: {type(err).__name__}: {err}")
        per_call = None
    return summarize(m.samples), per_call


def frontend_runs(torch, layer, batch: int) -> tuple[str | None, list[FrontendRun]]:
    """The layer through ``cudnn.pygraph`` in fp16, with NHWC and then NCHW strides."""
    from torch.nn import functional as F  # noqa: N812 - the name every PyTorch reader knows

    try:
        import cudnn
    except Exception as err:
        return f"import failed: {type(err).__name__}: {err}", []
    version = f"cudnn-frontend {getattr(cudnn, '__version__', '?')}, backend {cudnn.backend_version()}"
    handle = cudnn.create_handle()
    runs = []
    n, c, hw, k, r, pad, stride = batch, layer.c, layer.hw, layer.k, layer.kernel, layer.pad, layer.stride
    shape = (n, c, hw, hw, k, r, r, pad, stride)
    for layout in ("nhwc", "nchw"):
        fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
        x = torch.randn(n, c, hw, hw, device="cuda", dtype=torch.float16).to(memory_format=fmt)
        wt = torch.randn(k, c, r, r, device="cuda", dtype=torch.float16).to(memory_format=fmt)
        fields = {"layout": layout, "dtype": "fp16", "shape": shape}
        step = "graph"
        try:
            graph = cudnn.pygraph(io_data_type=cudnn.data_type.HALF, intermediate_data_type=cudnn.data_type.FLOAT,
                                  compute_data_type=cudnn.data_type.FLOAT, handle=handle)  # fmt: skip
            gx = graph.tensor(name="X", dim=list(x.shape), stride=list(x.stride()), data_type=cudnn.data_type.HALF)
            gw = graph.tensor(name="W", dim=list(wt.shape), stride=list(wt.stride()), data_type=cudnn.data_type.HALF)
            gy = graph.conv_fprop(image=gx, weight=gw, padding=[pad, pad], stride=[stride, stride], dilation=[1, 1],
                                 compute_data_type=cudnn.data_type.FLOAT, name="conv")  # fmt: skip
            gy.set_output(True).set_data_type(cudnn.data_type.HALF)
            for step in ("validate", "build_operation_graph"):
                getattr(graph, step)()
            step = "create_execution_plans"
            graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
            plans = graph.get_execution_plan_count()
            for step in ("check_support", "build_plans"):
                getattr(graph, step)()
            step = "execute"
            y = torch.empty_strided(list(gy.get_dim()), list(gy.get_stride()), device="cuda", dtype=torch.float16)
            workspace = torch.empty(max(1, graph.get_workspace_size()), device="cuda", dtype=torch.uint8)
            graph.execute({gx: x, gw: wt, gy: y}, workspace, handle=handle)
            torch.cuda.synchronize()
            ref = F.conv2d(x.float(), wt.float(), stride=stride, padding=pad)
            error = float((y.float() - ref).abs().max() / ref.abs().max())
            pack = {gx: x, gw: wt, gy: y}
            m = benchmark(lambda g=graph, p=pack, ws=workspace: g.execute(p, ws, handle=handle), EventTimer(torch),
                          BUDGET)  # fmt: skip
            try:
                name = graph.get_plan_name_at_index(0)
            except Exception as err:
                name = f"(no name: {type(err).__name__})"
            runs.append(FrontendRun(**fields, built=True, plans=plans, plan_name=str(name),
                                    workspace=graph.get_workspace_size(), max_abs_error=error,
                                    ms=summarize(m.samples)))  # fmt: skip
            log(f"frontend {layout}: plans {plans}, {name}, error {error:.2e}, {runs[-1].ms.median:.4f} ms")
        except Exception as err:
            first = str(err).strip().splitlines()[0][:400] if str(err).strip() else ""
            runs.append(FrontendRun(**fields, built=False, error=f"{step}: {type(err).__name__}: {first}"))
            log(f"frontend {layout}: failed at {step}: {type(err).__name__}: {first}")
    return version, runs


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tests", action="store_true", help="also run pytest -m gpu tests/cudnn")


def conv_forward(script: Script) -> ConvForward:
    import torch

    args = script.args
    script.note(
        "The C++ program is built with nvcc -O2 -std=c++17 -arch=sm_90 ... -lcudnn against the machine's default "
        "cuDNN; torch and cudnn-frontend load the cuDNN of their own wheels.",
        "Layer times: the program's median of 50 cudnnConvolutionForward calls (CUDA events, after 5 warm-up calls) "
        "with the algorithm cudnnFindConvolutionForwardAlgorithm ranked first; torch: gpukb.measuring.timing with CUDA "
        "events, torch.backends.cudnn.benchmark = True. Random uniform or normal inputs, never zeros.",
    )
    nvcc = find_nvcc()
    record: dict = {"build": Process(command="nvcc not found", returncode=-1)}
    tmp = Path(tempfile.mkdtemp())
    exe = tmp / "conv_forward"
    if nvcc is not None:
        cmd = [nvcc, "-O2", "-std=c++17", "-arch=sm_90", str(SNIPPET.relative_to(ROOT)), "-o", str(exe), "-lcudnn"]
        shown = " ".join(cmd).replace(str(exe), "conv_forward").replace(nvcc, "nvcc")
        record["build"] = run(cmd, shown=shown)
        log(f"build rc={record['build'].returncode} {record['build'].stderr[-800:]}")
    if HEADER.is_file():
        import re

        text = HEADER.read_text(encoding="utf-8", errors="replace")
        record["header"] = str(HEADER)
        record["header_declares"] = {name: re.search(rf"\b{name}\s*\(", text) is not None for name in LOOKED_UP}
        log(f"header {HEADER}: {record['header_declares']}")
    if exe.is_file():
        ldd = run(["ldd", str(exe)])
        record["linked"] = " ".join(line.strip() for line in ldd.stdout.splitlines() if "cudnn" in line) or None
        log(f"linked: {record['linked']}")
        dump = tmp / "dump"
        dump.mkdir()
        example = run([str(exe)], env={**os.environ, "CONV_FORWARD_DUMP": str(dump)}, shown="./conv_forward")
        record["example"] = example
        log(f"example rc={example.returncode}\n{example.stdout}{example.stderr[-800:]}")
        if example.returncode == 0:
            record["cudnn_library"] = example.stdout.splitlines()[0]
            parse_example(example.stdout)  # the record holds only output the parser reads
            try:
                record["torch_check"] = torch_check(torch, dump, example.stdout)
                log(f"torch check: {record['torch_check']}")
            except Exception as err:
                log(f"torch check failed: {type(err).__name__}: {err}")

        script.write(ConvForward(run=script.finished(), **record))  # kept if a later step times out

        table = load_layers()
        specs = {}
        for layer in table.layers:
            shape = (table.batch, layer.c, layer.hw, layer.hw, layer.k, layer.kernel, layer.kernel, layer.pad,
                     layer.stride)  # fmt: skip
            for dtype in DTYPES:
                for layout in LAYOUTS:
                    specs[(layer.name, dtype, layout, "TENSOR_OP_MATH")] = shape
            for name, dtype, math in MATH_RUNS:
                if name == layer.name:
                    specs[(layer.name, dtype, "nhwc", math)] = shape
        argv = [
            layer_argument(name, *shape, dtype, layout, math) for (name, dtype, layout, math), shape in specs.items()
        ]
        layers_run = run([str(exe), *argv], timeout=400, shown="./conv_forward " + " ".join(argv))
        record["layers_run"] = layers_run
        log(f"layers rc={layers_run.returncode} {layers_run.stderr[-800:]}")
        torch.backends.cudnn.benchmark = True
        timings = []
        for got in parse_layers(layers_run.stdout):
            shape = specs[(got.layer, got.dtype, got.layout, got.math)]
            t, t_graph = None, None
            if got.math == "TENSOR_OP_MATH":  # torch's cuDNN convolutions allow tensor cores (and TF32) by default
                try:
                    t, t_graph = torch_time(torch, *shape, got.dtype, got.layout)
                except Exception as err:
                    log(f"torch {got.layer} {got.dtype} {got.layout} failed: {err}")
            n, c, h, w, k, r, s, pad, stride = shape
            timings.append(LayerTiming(
                layer=got.layer, n=n, c=c, h=h, w=w, k=k, r=r, s=s, pad=pad, stride=stride, dtype=got.dtype,
                layout=got.layout, algo=got.algo, workspace=got.workspace, cudnn_ms=got.ms, error=got.error,
                checked=got.checked, found=[(f.name, f.status, f.ms, f.workspace) for f in got.found], torch_ms=t,
                math=got.math, graph_ms=got.graph_ms, host_us=got.host_us, torch_graph_ms=t_graph,
            ))  # fmt: skip
            torch_median = t.median if t else float("nan")
            log(f"{got.layer} {got.dtype} {got.layout} {got.math}: {got.algo} {got.ms:.4f} ms (graph {got.graph_ms}, "
                f"host {got.host_us} us), torch {torch_median:.4f} ms (graph {t_graph})")  # fmt: skip
        record["layers"] = timings
        script.write(ConvForward(run=script.finished(), **record))

    layer = next(layer for layer in load_layers().layers if layer.name == FRONTEND_LAYER)
    try:
        record["frontend_version"], record["frontend"] = frontend_runs(torch, layer, load_layers().batch)
    except Exception as err:
        log(f"frontend failed: {type(err).__name__}: {err}")

    result = ConvForward(run=script.finished(), **record)
    if args.tests:
        script.write(result)
        # the GPU machine has no pytest-codeblocks, which the page-table tests import
        files = ["tests/cudnn/test_snippets.py", "tests/cudnn/test_conv_program.py"]
        shown = f"python -m pytest {' '.join(files)} -m gpu -q"
        tests = run([sys.executable, "-m", "pytest", *files, "-m", "gpu", "-q", "-o", "addopts=", "-p",
                     "no:cacheprovider"], timeout=120, shown=shown)  # fmt: skip
        log(f"gpu tests rc={tests.returncode}\n{tests.stdout[-3000:]}")
        result = ConvForward(run=script.finished(), **record, gpu_tests=tests)
    shutil.rmtree(tmp, ignore_errors=True)
    return result


if __name__ == "__main__":
    raise SystemExit(main(conv_forward, __doc__, arguments))
