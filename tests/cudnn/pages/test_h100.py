"""The cell checks of docs/cudnn/h100.md (``gpukb.cudnn.page.h100``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from gpukb.records import measured_on
from tests.cudnn.pages import DATA, _ceilings, _layers, _work
from tests.helpers import ROOT, markdown_tables

RECORD = DATA / "results" / "cudnn" / "conv-forward-h100.json"


def _raw() -> dict[str, Any]:
    return json.loads(RECORD.read_text(encoding="utf-8"))


def _example_lines(prefix: str) -> list[str]:
    return [line for line in _raw()["example"]["stdout"].splitlines() if line.startswith(prefix)]


def check_torch_check(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    t = _raw()["torch_check"]
    # which record field a row reads follows from its label: the cuDNN mode, and whether torch's filter is flipped
    field = {("CROSS_CORRELATION", "w"): "cross_correlation_max_abs", ("CONVOLUTION", "w.flip(-1, -2)"):
             "convolution_max_abs", ("CONVOLUTION", "w"): "convolution_vs_unflipped_max_abs"}  # fmt: skip
    rows = [re.fullmatch(r"CUDNN_(\w+) vs `F\.conv2d\(x, (.+)\)`", row["cuDNN output"]).groups() for row in table]
    assert sorted(rows) == sorted(field)
    for row, (mode, filt) in zip(table, rows, strict=True):
        value = t[field[(mode, filt)]]
        matched = (mode == "CONVOLUTION") == (filt != "w")  # convolution flips the filter, cross-correlation does not
        assert (value < 1e-4) == matched  # the matching pairs agree to float rounding, the other does not
        assert row["largest absolute difference"] == (f"{value:.2e}" if matched else f"{value:.2f}")


def check_math_types(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    lines = _example_lines("math ")
    assert len(table) == len(lines) == 4
    for row, line in zip(table, lines, strict=True):
        name, algo, error = re.match(r"math (\S+) algo (\S+): error vs host (\S+)", line).groups()
        assert row["math type"] == f"`CUDNN_{name}`"
        assert row["algorithm found first"] == f"`{algo}`"
        assert float(row["largest error / sum of |terms|"]) == pytest.approx(float(error), rel=0.06)


def check_probes(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    lines = _example_lines("probe ")
    assert len(table) == len(lines) == 13
    for row, line in zip(table, lines, strict=True):
        assert line.startswith(f"probe {row['descriptor']}: {row['status'].strip('`')}")
        message = line.split(" | ", 1)[1] if " | " in line else "–"
        assert row["cudnnGetLastErrorString"] == message


def check_example_algorithms(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    example = _raw()["example"]["stdout"].split("mode ")[0]
    lines = [line for line in example.splitlines() if line.startswith("  algorithm ")]
    assert len(table) == len(lines)
    for row, line in zip(table, lines, strict=True):
        words = line.split()
        assert row["algorithm"] == f"`{words[1]}`"
        assert row["status"] == f"`{words[2]}`"
        assert row["workspace (bytes)"].replace(",", "") == words[7]
        assert row["time (ms)"] == (words[4] if words[2] == "CUDNN_STATUS_SUCCESS" else "–")
    # the prose: "This problem has 160 outputs"; this search put IMPLICIT_GEMM first, the four math-type searches
    # each put GEMM first
    assert " over 160 outputs" in _raw()["example"]["stdout"]
    assert table[0]["algorithm"] == "`IMPLICIT_GEMM`"
    assert {re.match(r"math \S+ algo (\S+):", line).group(1) for line in _example_lines("math ")} == {"GEMM"}


def check_frontend(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    runs = _raw()["frontend"]
    assert [row["layout"] for row in table] == [r["layout"].upper() for r in runs]
    for row, r in zip(table, runs, strict=True):
        if r["built"]:
            assert row["plans"] == str(r["plans"])
            assert row["workspace (bytes)"].replace(",", "") == str(r["workspace"])
            assert row["time (µs)"] == f"{r['ms']['median'] * 1e3:.1f}"
            assert row["error / max |y|"] == f"{r['max_abs_error']:.1e}"
            assert row["plan (or error)"] == f"`{r['plan_name']}`"
        else:
            assert row["plan (or error)"] == (r["error"] or "failed")
            assert [row[key] for key in ("plans", "workspace (bytes)", "error / max |y|", "time (µs)")] == ["–"] * 4
        n, c, h, w, k, r_, s, _, _ = r["shape"]  # the filter has the input's channels (no groups)
        assert row["fp16 shape"] == f"{n}×{c}×{h}×{w} ⊛ {k}×{c}×{r_}×{s}"


def _layer_rows() -> list[dict[str, Any]]:
    return [t for t in _raw()["layers"] if t.get("math", "TENSOR_OP_MATH") == "TENSOR_OP_MATH"]


def check_layer_timings(markdown: str, kwargs: dict[str, Any]) -> None:
    dtype = kwargs["args"][0]
    (table,) = markdown_tables(markdown)
    layers = _layers()
    best, bandwidth = _ceilings()
    rows = [t for t in _layer_rows() if t["dtype"] == dtype]
    assert len(table) == len(rows) == 2 * len(layers)
    assert [row["layer"] for row in table] == [name for name in layers for _ in range(2)]
    # two columns are headed "of bound": the program's follows its TFLOP/s, torch's follows torch's graph time
    headers = list(table[0])
    program_share, torch_share = (h for h in headers if h.split("#")[0] == "of bound")
    assert headers.index(program_share) == headers.index("TFLOP/s (graph)") + 1
    assert headers.index(torch_share) == headers.index("torch, in a graph (µs)") + 1

    def us(ms: float | None) -> str:
        return f"{ms * 1e3:.1f}" if ms else "–"

    def share(bound_us: float, ms: float | None) -> str:
        return f"{bound_us / (ms * 1e3):.0%}" if ms else "–"

    for row, t in zip(table, rows, strict=True):
        assert (row["layer"], row["layout"]) == (t["layer"], t["layout"].upper())
        assert row["algorithm (Find, first)"] == f"`{t['algo']}`"
        assert row["workspace (MiB)"] == f"{t['workspace'] / 2**20:.1f}"
        assert row["program, per call (µs)"] == us(t["cudnn_ms"])
        assert row["program, in a graph (µs)"] == us(t.get("graph_ms"))
        flops, nbytes, _ = _work(layers[t["layer"]])
        compute, memory = flops / (best[dtype] * 1e12), nbytes / (bandwidth * 1e9)
        bound_us = max(compute, memory) * 1e6
        gpu = t.get("graph_ms") or t["cudnn_ms"]
        assert row["TFLOP/s (graph)"] == f"{flops / (gpu * 1e-3) / 1e12:.0f}"
        assert row[program_share] == share(bound_us, gpu)
        torch_ms = t["torch_ms"]["median"] if t.get("torch_ms") else None
        assert row["torch, per call (µs)"] == us(torch_ms)
        assert row["torch, in a graph (µs)"] == us(t.get("torch_graph_ms"))
        assert row[torch_share] == share(bound_us, t.get("torch_graph_ms") or torch_ms)
        assert row["bound by"] == ("compute" if compute >= memory else "memory")


def check_layout_ratios(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    by = {(t["layer"], t["dtype"], t["layout"]): t for t in _layer_rows()}
    for row in table:
        for dtype in ("fp16", "bf16"):
            a, b = by[(row["layer"], dtype, "nchw")], by[(row["layer"], dtype, "nhwc")]
            program = (a.get("graph_ms") or a["cudnn_ms"]) / (b.get("graph_ms") or b["cudnn_ms"])
            torch_ = (a.get("torch_graph_ms") or a["torch_ms"]["median"]) / (
                b.get("torch_graph_ms") or b["torch_ms"]["median"])  # fmt: skip
            assert row[f"{dtype}, cuDNN program"] == f"{program:.2f}"
            assert row[f"{dtype}, torch"] == f"{torch_:.2f}"


def check_algorithm_counts(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    workspaces: dict[str, list[int]] = {}
    for t in _layer_rows():
        workspaces.setdefault(t["algo"], []).append(t["workspace"])
    # most runs first; algorithms with as many runs in the order the record first names them
    order = sorted(workspaces, key=lambda algo: -len(workspaces[algo]))
    assert [row["algorithm"] for row in table] == [f"`{algo}`" for algo in order]
    for row in table:
        ws = workspaces[row["algorithm"].strip("`")]
        assert row["runs where it came first"] == str(len(ws))
        assert row["median workspace (MiB)"] == f"{float(np.median(ws)) / 2**20:.1f}"


def check_math_layers(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    rows = [t for t in _raw()["layers"] if t["layer"] == "res3-3x3" and t["layout"] == "nhwc" and t["dtype"] != "bf16"]
    assert len(table) == len(rows)
    by = {(t["dtype"], f"`CUDNN_{t.get('math', 'TENSOR_OP_MATH')}`"): t for t in rows}
    assert [(row["type"], row["math type"]) for row in table] == sorted(by)
    for row in table:
        t = by[(row["type"], row["math type"])]
        assert row["algorithm (Find, first)"] == f"`{t['algo']}`"
        assert row["time per call (µs)"] == f"{(t.get('graph_ms') or t['cudnn_ms']) * 1e3:.1f}"
        assert row["largest error / sum of |terms|"] == f"{t['error']:.1e}"


def check_host_overhead(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = [t for t in _layer_rows() if t["dtype"] == "fp16" and t["layout"] == "nhwc" and t.get("host_us") is not None]
    if not rows:
        assert markdown == "This run did not measure the host's time per call."
        return
    (table,) = markdown_tables(markdown)
    assert [row["layer"] for row in table] == [t["layer"] for t in rows]
    for row, t in zip(table, rows, strict=True):
        assert row["host time per call (µs)"] == f"{t['host_us']:.1f}"
        assert row["GPU time per call (µs)"] == (f"{t['graph_ms'] * 1e3:.1f}" if t.get("graph_ms") else "–")
        assert row["one call between two events (µs)"] == f"{t['cudnn_ms'] * 1e3:.1f}"


def check_header_functions(markdown: str, kwargs: dict[str, Any]) -> None:
    declared = _raw().get("header_declares")
    if not declared:
        assert markdown == "This run did not read the header."
        return
    (table,) = markdown_tables(markdown)
    assert list(table[0]) == [f"declared in `{_raw()['header']}`", "yes or no"]
    names = [row[next(iter(row))] for row in table]
    assert names == [f"`{name}`" for name in declared]  # in the record's order
    assert [row["yes or no"] for row in table] == ["yes" if declared[name] else "no" for name in declared]


def check_findings(markdown: str, kwargs: dict[str, Any]) -> None:
    """The answers' form (their numbers are recomputed in tests/cudnn/test_results.py): one bullet per question, each a
    whole sentence, and the link to the ratio table reaching a heading of this page."""
    assert markdown.endswith(".\n")
    assert not markdown.endswith("\n\n")
    lines = markdown.rstrip("\n").split("\n")
    assert [re.match(r"- \*\*(.+?)\*\* ", line)[1] for line in lines] == [
        "NHWC or NCHW?", "How close to the roofline?", "Can cuDNN's search be trusted?"]  # fmt: skip
    assert all(line.endswith(".") for line in lines)
    (anchor,) = re.findall(r"\[the ratio table\]\(\.\./h100/#([\w-]+)\)", markdown)
    page = (ROOT / "docs" / "cudnn" / "h100.md").read_text(encoding="utf-8")
    assert anchor in {
        re.sub(r"[^\w\s-]", "", h.lower()).strip().replace(" ", "-") for h in re.findall(r"^#+ (.+)$", page, re.M)
    }


def check_conv_build(markdown: str, kwargs: dict[str, Any]) -> None:
    build = _raw()["build"]
    assert markdown == f"```text\n$ {build['command']}\n(exit status {build['returncode']})\n```"


def check_conv_example(markdown: str, kwargs: dict[str, Any]) -> None:
    """The program's output as recorded, between its command and its exit status, in a text block."""
    example = _raw()["example"]
    lines = markdown.split("\n")
    assert (lines[0], lines[1], lines[-2], lines[-1]) == ("```text", f"$ {example['command']}",
                                                          f"(exit status {example['returncode']})", "```")  # fmt: skip
    assert lines[2:-2] == example["stdout"].rstrip("\n").split("\n")


def check_gpu_tests(markdown: str, kwargs: dict[str, Any]) -> None:
    """The command and pytest's last summary line (the one with the time, "N passed ... in S s") as recorded."""
    t = _raw()["gpu_tests"]
    summary = [line for line in t["stdout"].splitlines() if re.search(r"\d+ passed.* in [\d.]+s", line)][-1]
    assert markdown == f"`{t['command']}` on the same machine: {summary.strip()} (exit status {t['returncode']})."


def check_unsupported(markdown: str, kwargs: dict[str, Any]) -> None:
    """Every layer found an algorithm in this run (no "unsupported" line): the sentence counts runs per math type."""
    raw = _raw()
    assert "unsupported" not in raw["layers_run"]["stdout"]
    tensor_op = sum(1 for t in raw["layers"] if t.get("math", "TENSOR_OP_MATH") == "TENSOR_OP_MATH")
    assert markdown == (f"Every one of the {len(raw['layers'])} runs (layer, type, layout and math type) found an "
                        f"algorithm: {tensor_op} under `CUDNN_TENSOR_OP_MATH` and {len(raw['layers']) - tensor_op} "
                        "under the other math types.")  # fmt: skip


def _version(digits: str) -> str:
    """cuDNN 9's version number read from its digits: the last two the patch, the two before the minor."""
    return f"{digits[:-4]}.{int(digits[-4:-2])}.{int(digits[-2:])}"


def check_conv_measured_on(markdown: str, kwargs: dict[str, Any]) -> None:
    """What each part of the run loaded, as recorded: the program's cuDNN, the library it linked, the graph API's
    versions, and the note that two cuDNN versions ran (the program's from its line, torch's from its wheel)."""
    raw = _raw()
    first, _, note = markdown.partition("\n\n")
    assert first.endswith(f" The C++ program reported `{raw['cudnn_library']}` and loaded `{raw['linked']}`. "
                          f"The graph API ran as {raw['frontend_version']}.")  # fmt: skip
    program = _version(re.match(r"cuDNN (\d+) ", raw["cudnn_library"])[1])
    backend = _version(re.search(r"backend (\d+)", raw["frontend_version"])[1])
    torch_cudnn = raw["run"]["versions"]["cudnn"]
    assert (program, backend, torch_cudnn) == ("9.14.0", "9.19.0", "9.19.0")  # the versions the page's prose names
    assert note == (f"**Two cuDNN versions ran.** The C++ program used the machine's cuDNN {program}; torch used cuDNN "
                    f"{torch_cudnn} from its own wheel; cudnn-frontend's backend is {backend}. The version in the line "
                    "above is torch's. Where the program is compared with torch below, the library version differs as "
                    "well as the API.")  # fmt: skip


@pytest.mark.parametrize("digits", ["91400", "91900", "100203", "120010"])
def test_cudnn_version_numbers_read_as_major_minor_patch(digits: str) -> None:
    from gpukb.cudnn.pages.h100 import _cudnn_version

    assert _cudnn_version(int(digits)) == _version(digits)  # 10.2.3 for 100203: a major of two digits


def test_a_run_without_its_optional_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A record whose example, torch comparison, GPU tests, header and host times are missing, whose graph-API run
    failed, whose layers have no graph times (NHWC ones no torch times at all), and whose program and torch loaded
    one cuDNN: each page function says what is missing instead of a number, or falls back to the time it has."""
    from gpukb.cudnn.pages import h100

    record = h100._record(h100.CONV_H100)
    layers = [
        t.model_copy(
            update={"host_us": None, "graph_ms": None, "torch_graph_ms": None}
            | ({"torch_ms": None} if t.layout == "nhwc" else {})
        )
        for t in record.layers
    ]  # torch ran NCHW only, timed per call
    failed = record.frontend[0].model_copy(update={"built": False, "error": None})
    bare = record.model_copy(update={
        "example": None, "torch_check": None, "gpu_tests": None, "header_declares": {}, "layers": layers,
        "frontend": [failed], "linked": None, "frontend_version": None,
        "cudnn_library": record.cudnn_library.replace("91400", "91900"),
    })  # fmt: skip
    monkeypatch.setattr(h100, "_record", lambda record_id: bare)
    assert h100.conv_example() == "The program did not run on the GPU machine."
    assert h100.torch_check() == "The torch comparison did not run."
    assert h100.gpu_tests() == "The GPU tests did not run with this record."
    assert h100.header_functions() == "This run did not read the header."
    assert h100.host_overhead() == "This run did not measure the host's time per call."
    said = h100.conv_measured_on()
    assert said.endswith(f" The C++ program reported `{bare.cudnn_library}` and loaded `unknown`.")  # one version
    with pytest.raises(ValueError, match=r"^cudnn/conv-forward-h100: the example did not run$"):
        h100.math_types()
    (row,) = markdown_tables(h100.frontend())[0]
    assert row["layout"] == failed.layout.upper() == "NHWC"
    assert list(row.values())[2:] == ["–", "failed", "–", "–", "–"]
    for row in markdown_tables(h100.layer_timings("fp16"))[0]:
        assert row["program, in a graph (µs)"] == row["torch, in a graph (µs)"] == "–"
        for cell in (row["torch, per call (µs)"], row["of bound#10"]):  # NCHW's share is of its time per call
            assert (cell == "–") == (row["layout"] == "NHWC")
    for row in markdown_tables(h100.layout_ratios())[0]:
        assert row["fp16, torch"] == row["bf16, torch"] == "–"
        assert row["fp16, cuDNN program"] != "–"  # from the times per call
    ran = bare.model_copy(update={"example": record.example.model_copy(update={"returncode": 1})})
    monkeypatch.setattr(h100, "_record", lambda record_id: ran)
    with pytest.raises(ValueError, match=r"^cudnn/conv-forward-h100: the example did not run$"):
        h100.probes()
    # the program did not say which cuDNN it loaded; pytest stopped before its summary line
    stopped = record.gpu_tests.model_copy(update={"stdout": "collected 2 items\n", "returncode": 2})
    unnamed = bare.model_copy(update={"cudnn_library": None, "gpu_tests": stopped, "layers_run": None})
    monkeypatch.setattr(h100, "_record", lambda record_id: unnamed)
    assert h100.conv_measured_on() == measured_on(unnamed.run)
    assert h100.unsupported().startswith(f"Every one of the {len(layers)} runs ")  # no output to read
    assert h100.gpu_tests() == f"`{stopped.command}` on the same machine: no summary (exit status 2)."
    # one layer without its NHWC runs: no ratio for it; no graph-API version: no backend in the note
    partial = record.model_copy(
        update={"layers": [t for t in record.layers if (t.layer, t.layout) != ("res5-1x1", "nhwc")],
                "frontend_version": None}
    )  # fmt: skip
    monkeypatch.setattr(h100, "_record", lambda record_id: partial)
    (row,) = [row for row in markdown_tables(h100.layout_ratios())[0] if row["layer"] == "res5-1x1"]
    assert list(row.values()) == ["res5-1x1", "–", "–", "–", "–"]
    assert "cuDNN 9.19.0 from its own wheel. The version in the line above is torch's." in h100.conv_measured_on()
    monkeypatch.undo()
    assert h100.layer_timings() == h100.layer_timings("fp16")  # the default type


def _timed(record: Any, torch_ms: dict[tuple[str, str, str], float], graph_over_torch: dict[tuple, float]) -> Any:
    """The record with each tensor-op run's torch time replaced: NCHW 2 ms, NHWC 1 ms unless ``torch_ms`` says
    otherwise; the program's GPU time equal to torch's times the factor in ``graph_over_torch`` (1 by default)."""
    layers = []
    for t in record.layers:
        key = (t.layer, t.dtype, t.layout)
        ms = torch_ms.get(key, 2.0 if t.layout == "nchw" else 1.0)
        layers.append(t.model_copy(update={"torch_graph_ms": ms, "graph_ms": ms * graph_over_torch.get(key, 1.0)}))
    return record.model_copy(update={"layers": layers})


def test_the_findings_count_ties_several_losers_and_the_10x_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs timed by hand. res2-1x1 ties in both types (a tie is not a win), res5-1x1 fp16 is slower in NHWC, conv1
    fp16 NCHW takes 3 ms: 11 of 14 cases won, ratios 0.67 to 3.00. The program's GPU time is exactly 10× torch's for
    res5-1x1 fp16 NHWC (not more than 10×), 10.5× for conv1 fp16 NCHW and 20× for res4-3x3 bf16 NHWC."""
    from gpukb.cudnn.pages import h100

    record = h100._record(h100.CONV_H100)
    torch_ms = {("res2-1x1", d, lay): 1.0 for d in ("fp16", "bf16") for lay in ("nchw", "nhwc")}
    torch_ms |= {("res5-1x1", "fp16", "nhwc"): 3.0, ("conv1", "fp16", "nchw"): 3.0}
    slow = {("res5-1x1", "fp16", "nhwc"): 10.0, ("conv1", "fp16", "nchw"): 10.5, ("res4-3x3", "bf16", "nhwc"): 20.0}
    monkeypatch.setattr(h100, "_record", lambda record_id: _timed(record, torch_ms, slow))
    first, _, misled = h100.findings().split("\n")[:3]
    assert "in 11 of 14 layer-and-type cases (all but `res2-1x1`, `res5-1x1`); " in first
    assert "NCHW took a median 2.00× as long (0.67–3.00×)." in first  # 2/3, 1, 1, ten times 2, 3
    assert misled.startswith("- **Can cuDNN's search be trusted?** Not blindly: for `conv1`, `res4-3x3` the algorithm")
    # every case won, one case without its NHWC run, no run slower than torch's: no exceptions, no third answer
    kept = [t for t in record.layers if (t.layer, t.dtype, t.layout) != ("res2-1x1", "bf16", "nhwc")]
    monkeypatch.setattr(h100, "_record", lambda record_id: _timed(record.model_copy(update={"layers": kept}), {}, {}))
    text = h100.findings()
    assert "in 13 of 13 layer-and-type cases; NCHW took a median 2.00× as long (2.00–2.00×)." in text
    assert len(text.splitlines()) == 2


def test_a_record_of_another_kind_is_refused() -> None:
    from gpukb.cudnn.pages.h100 import conv_build

    with pytest.raises(ValueError, match=r"holds a 'cuda\.\S+' record; expected 'cudnn\.conv-forward'"):
        conv_build("cuda/device-h100")


def test_layers_without_an_algorithm_are_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table the page shows when a layer found no algorithm (this run had none): two such lines added to the
    record's output, each row as the line says, the layout in capitals."""
    from gpukb.cudnn.pages import h100

    record = h100._record(h100.CONV_H100)
    lines = "layer res9 fp16 nhwc: unsupported: no algorithm\nlayer res8 bf16 nchw FMA_MATH: unsupported: all failed\n"
    changed = record.model_copy(
        update={"layers_run": record.layers_run.model_copy(update={"stdout": record.layers_run.stdout + lines})}
    )
    monkeypatch.setattr(h100, "_record", lambda record_id: changed)
    assert markdown_tables(h100.unsupported()) == [
        [
            {"layer": "res9", "type": "fp16", "layout": "NHWC", "why": "no algorithm"},
            {"layer": "res8", "type": "bf16", "layout": "NCHW", "why": "all failed"},
        ]
    ]


def test_the_ceilings_sentence_for_each_type() -> None:
    """The default type is fp16 (what the pages pass); fp32 has no named quantity and takes the sweep's best."""
    from gpukb.cudnn.pages import layer_ceilings
    from tests.cudnn.pages import check_layer_ceilings

    assert layer_ceilings() == layer_ceilings("fp16")
    check_layer_ceilings(layer_ceilings(), {"args": ()})
    check_layer_ceilings(layer_ceilings("fp32"), {"args": ("fp32",)})


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "findings": check_findings,
    "conv_measured_on": check_conv_measured_on,
    "conv_build": check_conv_build,
    "conv_example": check_conv_example,
    "gpu_tests": check_gpu_tests,
    "unsupported": check_unsupported,
    "torch_check": check_torch_check,
    "math_types": check_math_types,
    "probes": check_probes,
    "example_algorithms": check_example_algorithms,
    "frontend": check_frontend,
    "layer_timings": check_layer_timings,
    "layout_ratios": check_layout_ratios,
    "algorithm_counts": check_algorithm_counts,
    "math_layers": check_math_layers,
    "host_overhead": check_host_overhead,
    "header_functions": check_header_functions,
}
