"""The Triton GEMM page's sweep figure read back from the matplotlib figure it draws, and its tables and notes for
runs unlike the committed ones: a copy of a record's JSON changed as the committed runs never are (a comparison row
that measured a tiling the code no longer picks, a failed case, a run without clocks), validated by the project's
model and rendered, then checked by the page's own cell checks (``tests/gemm/pages/test_triton.py``) against the
changed JSON."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import matplotlib.colors
import numpy as np
import pytest
from matplotlib.markers import MarkerStyle

from gpukb.gemm.pages import triton as page
from gpukb.gemm.triton import configs
from gpukb.gemm.triton.results import TritonGemm
from tests.gemm.pages import test_triton as checks
from tests.gemm.pages.test_triton import _SHORT, _sweep_raw, _triton_raw
from tests.helpers import drawn


def _marker_path(marker: str) -> np.ndarray:
    style = MarkerStyle(marker)
    return style.get_path().transformed(style.get_transform()).vertices


def test_the_sweep_figure_plots_every_measured_ratio_by_type_against_the_targets() -> None:
    _check_sweep_figure(drawn(page.triton_sweep_figure), _sweep_raw()["rows"])


def _check_sweep_figure(fig: Any, rows: list[dict[str, Any]]) -> None:
    (ax,) = fig.axes
    places: dict[tuple[str, str], int] = {}
    for r in rows:  # one place along x per shape and layout, in the record's order
        places.setdefault((r["label"], r["layout"]), len(places))
    markers = {"bfloat16": "o", "float16": "s", "float8_e4m3fn": "^"}
    expected = {
        dtype: [(places[(r["label"], r["layout"])], r["ratio"]) for r in rows if r["dtype"] == dtype and r["ratio"]]
        for dtype in markers
    }
    assert [c.get_label() for c in ax.collections] == [_SHORT[d] for d, points in expected.items() if points]
    for points, dtype in zip(ax.collections, markers, strict=True):
        assert np.array_equal(np.asarray(points.get_offsets(), float), np.asarray(expected[dtype], float)), dtype
        assert np.allclose(points.get_paths()[0].vertices, _marker_path(markers[dtype])), dtype
        assert list(points.get_sizes()) == [18]
    # the parity line and the two targets of the sweep: a geometric mean of 0.95, no large 16-bit product under 0.80
    lines = [(line.get_label(), list(line.get_ydata()), line.get_linestyle(), line.get_linewidth(),
              matplotlib.colors.to_rgba(line.get_color())) for line in ax.get_lines()]  # fmt: skip
    grey = matplotlib.colors.to_rgba("grey")
    assert lines[0][1:] == ([1.0, 1.0], ":", 1.5, grey)
    assert lines[1:] == [
        ("0.95: geometric-mean target", [0.95, 0.95], "--", 0.8, grey),
        ("0.80: target for 16-bit M·N·K ≥ 2^30", [0.8, 0.8], "-.", 0.8, grey),
    ]
    legend = ax.get_legend().get_texts()
    assert [t.get_text() for t in legend] == [_SHORT[d] for d in markers] + [label for label, *_ in lines[1:]]
    assert {t.get_fontsize() for t in legend} == {8}
    assert list(ax.get_xticks()) == []
    assert ax.get_xlim() == (-1, len(places))
    assert ax.get_xlabel() == f"{len(places)} shapes and layouts (the tables below name them)"
    assert (ax.get_yscale(), ax.get_ylabel()) == ("log", "peer time / Triton time")
    assert ax.get_title() == "The Triton GEMM against cuBLAS (bf16, fp16) and _scaled_mm (FP8), H100"
    assert ax.yaxis.get_major_formatter()(0.5, 0) == "0.5"
    ticks = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 2, 3, 4)
    assert [ax.yaxis.get_minor_formatter()(v, 0) for v in ticks] == ["0.2", "0.3", "", "0.5", "", "0.7", "", "2",
                                                                     "3", ""]  # fmt: skip
    assert list(fig.get_size_inches()) == [9.0, 4.2]


def _variant(change: Callable[[dict[str, Any]], None]) -> tuple[TritonGemm, dict[str, Any]]:
    """The committed Triton GEMM run with ``change`` made to a copy of its JSON: the record the page functions take
    (validated by the project's model) and the changed JSON the checks read (``{"raw": ...}``)."""
    raw = copy.deepcopy(_triton_raw())
    change(raw)
    return TritonGemm.model_validate_json(json.dumps(raw)), {"raw": raw}


def _config(config: Any) -> dict[str, Any]:
    return dict(config.as_dict())


def _rows_measured_elsewhere(raw: dict[str, Any]) -> None:
    """Comparison rows that measured tilings the code no longer picks (two of them, at four sizes, one not swept),
    the FP8 run choosing the code's default, a 16-bit choice and small tiling unlike the code's, and a compiler
    refusal that named no limit."""
    large, small = _config(configs.DEFAULT_CONFIGS["bfloat16"]), _config(configs.SMALL_CONFIGS["bfloat16"])
    blocked = raw["sweep"]["configs"][0]["config"]
    assert blocked["kernel"] == "blocked"
    for r in raw["compare"]["records"]:
        r["config"] = {512: blocked, 4096: small, 6144: small, 8192: blocked}.get(r["m"], r["config"])
    assert all(_config(configs.current_choice(m, 132)) == large for m in (2048, 3072, 12288))  # rows kept as they were
    (refused,) = [e for e in raw["sweep"]["configs"] if e["error"]]
    refused["error"] = "OutOfResources: out of resource: shared memory"
    raw["chosen"]["fp8"]["config"] = _config(configs.DEFAULT_CONFIGS["float8_e4m3fn"])
    raw["chosen"]["large"]["config"] = blocked
    raw["chosen"]["small"]["config"] = large
    raw["chosen"]["small_rate"] = configs.SMALL_RATE


def _failed_cases(raw: dict[str, Any]) -> None:
    """Failed and partial cases in every phase, a large product under the goal, a run with fewer readings."""
    records = raw["compare"]["records"]
    records[1]["error"] = "OutOfResources: shared memory"  # an error on a row that kept its configuration
    records[2]["config"] = None  # no configuration, no error
    records[3].update(identical_to_cublas=False, diff_vs_cublas=0.25)
    records[4].update(graph_ratio=None, graph_rounds=[], graph_error="graph capture failed")
    raw["compare"].update(host_overhead=None, host_overhead_error="no host timer")
    compiled = raw["compare"]["compiled"]
    compiled[0]["error"] = "compile failed"
    compiled[1]["ptx"] = None
    compiled[2]["config"] = None
    compiled[3].update(warp_specialized=True, shared_bytes=230_000)  # 224.6 KiB: 225, where 230,000 / 1025 is 224.4
    raw["fp8"]["configs"][0]["error"] = "OutOfResources: shared memory"
    raw["chosen"]["fp8"] = None
    raw["chosen"]["small"] = None
    raw["chosen"]["small_rate"] = configs.SMALL_RATE + 0.004  # within the half-percent the note ignores
    large = raw["chosen"]["large"]["config"]
    (entry,) = [e for e in raw["sweep"]["configs"] if checks._same_config(e["config"], large)]
    for case in entry["results"]:
        if case["m"] == 4096:
            case["clocks"] = None
        if case["m"] == 8192:  # slower by half: outside cuBLAS's drift, under the goal
            case["clocks"]["power_w_median"] = None
            case["kernel_ms"] = {key: v * 1.5 if key != "n" else v for key, v in case["kernel_ms"].items()}
            case["ratio"] = case["cublas_ms"]["median"] / case["kernel_ms"]["median"]
            case["tflops"] /= 1.5
    blocked = raw["sweep"]["configs"][0]
    blocked["results"] = [c for c in blocked["results"] if c["m"] != 1024]  # a size it has no result for
    blocked["check"] = None
    raw["run"]["gpu"]["driver"] = None
    raw["run"]["started"] = None
    del raw["run"]["clocks"]["compare_end"]


def _fp8_default_untimed(raw: dict[str, Any]) -> None:
    """An FP8 run that timed none of the code's default configuration (and chose another)."""
    default = _config(configs.DEFAULT_CONFIGS["float8_e4m3fn"])
    raw["fp8"]["configs"] = [e for e in raw["fp8"]["configs"] if not checks._same_config(e["config"], default)]
    raw["compare"] = None


def _fp8_choice_far_from_the_default(raw: dict[str, Any]) -> None:
    """An FP8 choice half again faster than the code's default (the note gives how far apart, in percent)."""
    raw["chosen"]["fp8"]["geomean_ratio"] = 1.5


VARIANTS = {"rows measured elsewhere": _rows_measured_elsewhere, "failed cases": _failed_cases,
            "FP8 default untimed": _fp8_default_untimed,
            "FP8 choice far from the default": _fp8_choice_far_from_the_default}  # fmt: skip
_PAGES = ("triton_drift", "triton_defaults_note", "triton_mismatch_note", "triton_goal", "triton_sweep",
          "triton_compare", "triton_fp8", "triton_compiled", "triton_run", "triton_overhead",
          "triton_shared_memory")  # fmt: skip


@pytest.mark.parametrize("name", VARIANTS)
def test_the_triton_run_tables_and_notes_of_runs_unlike_the_committed_one(name: str) -> None:
    record, kwargs = _variant(VARIANTS[name])
    for function in _PAGES:
        if kwargs["raw"]["compare"] is None and function in ("triton_mismatch_note", "triton_compare",
                                                               "triton_compiled", "triton_overhead"):  # fmt: skip
            with pytest.raises(ValueError, match="has no comparison phase"):
                getattr(page, function)(record)
            continue
        checks.CHECKS[function](getattr(page, function)(record), kwargs)


def test_what_the_run_lacks_is_refused_by_name() -> None:
    record, _ = _variant(lambda raw: raw.update(fp8=None))
    with pytest.raises(ValueError, match=r"^the Triton GEMM run of 2026-11-23 has no FP8 phase$"):
        page.triton_fp8(record)
    with pytest.raises(
        ValueError, match=r"^record_id must be one of \['gemm/triton-gemm-tuning-h100-fill', .*; got 'x'$"
    ):
        page.triton_tuning_table("x")


def test_the_run_table_of_a_run_on_no_named_gpu() -> None:
    record, kwargs = _variant(lambda raw: raw["run"].update(gpu=None))
    checks.CHECKS["triton_run"](page.triton_run(record), kwargs)


def _unlike_the_committed_sweep(raw: dict[str, Any]) -> None:
    """A sweep with a failed and a partial layout check and one of a type the page has no short name for, profiled
    rows missing a side's kernels or a ratio, a row whose error is over twice its peer's and one at exactly twice,
    bf16/fp16 twins of different tilings far apart and of one tiling exactly 0.2 apart, no host measurement and
    no held-out draw."""
    failed, unwritten, other = raw["checks"][:3]
    failed.update(config=None, all_written=None, rel_error=None, peer_rel_error=None, error="refused: not modelled")
    unwritten["all_written"] = False
    other["dtype"] = "float32"
    profiled = [r for r in raw["rows"] if r.get("kernels") is not None or r.get("peer_kernels") is not None]
    profiled[0]["kernels"] = None
    profiled[1].update(
        ratio=None, kernel_tflops=None, peer_tflops=None, rel_error=None, peer_rel_error=None, peer_error="peer refused"
    )
    profiled[2]["peer_kernels"] = ["Memset (Device)"]  # only a memset: no cuBLAS kernel to name
    raw["rows"][0]["rel_error"] = 3 * raw["rows"][0]["peer_rel_error"]
    raw["rows"][1]["rel_error"] = 2 * raw["rows"][1]["peer_rel_error"]  # at the goal, not over it
    plain = [r for r in raw["rows"] if r["ratio"] and r.get("kernels") is None and r.get("peer_kernels") is None]
    bf16 = {(r["m"], r["n"], r["k"], r["layout"]): r for r in plain if r["dtype"] == "bfloat16"}
    twins = [(bf16[key], r) for r in plain if r["dtype"] == "float16"
             for key in [(r["m"], r["n"], r["k"], r["layout"])] if key in bf16]  # fmt: skip
    (near, near_twin), (far, far_twin) = twins[-2:]
    near_twin["config"] = dict(near["config"])
    near["ratio"], near_twin["ratio"] = 0.25, 0.45  # 0.45 - 0.25 is 0.2 exactly: not over it
    far_twin["config"] = {**far["config"], "num_stages": far["config"]["num_stages"] + 1}
    far_twin["ratio"] = far["ratio"] + 0.5
    raw["host"] = raw["tiny_host"] = raw["held_out"] = None


def test_the_sweep_tables_and_notes_of_a_sweep_unlike_the_committed_one() -> None:
    from gpukb.gemm.triton.results import TritonGemmSweep

    raw = copy.deepcopy(_sweep_raw())
    _unlike_the_committed_sweep(raw)
    record, kwargs = TritonGemmSweep.model_validate_json(json.dumps(raw)), {"raw": raw}
    for function in ("triton_layout_checks", "triton_sweep_kernels", "triton_host_path", "triton_sweep_notes",
                     "triton_sweep_run"):  # fmt: skip
        checks.CHECKS[function](getattr(page, function)(record=record), kwargs)
    checks.CHECKS["triton_host_path"](page.triton_host_path(True, record), {**kwargs, "tiny": True})
    _check_sweep_figure(drawn(page.triton_sweep_figure, record), raw["rows"])
    checks.CHECKS["triton_sweep_goal"](page.triton_sweep_goal(record), kwargs)  # an error over twice the peer's
    (unmeasured,) = [r for r in raw["rows"] if r.get("peer_error")]
    dtype, sweep = unmeasured["dtype"], unmeasured["sweep"]
    markdown = page.triton_sweep_table(dtype, sweep, record)
    checks.CHECKS["triton_sweep_table"](markdown, {**kwargs, "args": (dtype, sweep)})
    assert "| peer refused |" in markdown
    assert page.triton_sweep_notes(record).startswith(f"- bf16 {raw['rows'][0]['label']} (")


def test_the_sweep_table_by_default_and_what_it_refuses() -> None:
    checks.CHECKS["triton_sweep_table"](page.triton_sweep_table(), {})  # bf16, the first sweep
    with pytest.raises(ValueError, match=r"^sweep must be one of \['first', 'issue', .*\]; got 'second'$"):
        page.triton_sweep_table("bfloat16", "second")


def test_the_sweep_notes_of_a_sweep_with_nothing_to_note() -> None:
    from gpukb.gemm.triton.results import TritonGemmSweep

    raw = copy.deepcopy(_sweep_raw())
    raw["rows"] = [
        r
        for r in raw["rows"]
        if r["dtype"] == "bfloat16"
        and (r["rel_error"] is None or not r["peer_rel_error"] or r["rel_error"] <= 2 * r["peer_rel_error"])
    ]
    record = TritonGemmSweep.model_validate_json(json.dumps(raw))
    checks.CHECKS["triton_sweep_notes"](page.triton_sweep_notes(record), {"raw": raw})


def test_the_diagnostic_run_of_delays_and_flushes_unlike_the_committed_one() -> None:
    """A diagnostic run that timed one delay with do_bench only and another with the held timer only, and read the
    clock sampler's time not at all."""
    from gpukb.gemm.triton import results
    from gpukb.gemm.triton.results import TritonRounds

    raw = copy.deepcopy(checks._rounds_raw())
    delays = sorted({d["delay_us"] for d in raw["delays"]})
    raw["delays"] = [d for d in raw["delays"] if (d["delay_us"], d["method"]) not in
                     ((delays[1], "held"), (delays[2], "do_bench"))]  # fmt: skip
    raw["sampler_read_us"] = []
    record = TritonRounds.model_validate_json(json.dumps(raw))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(results, "rounds_committed", lambda record_id=None: record)
        for function in ("triton_rounds_delays", "triton_rounds_flush"):
            checks.CHECKS[function](getattr(page, function)(), {"raw": raw})
