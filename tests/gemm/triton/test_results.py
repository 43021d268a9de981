"""The recorded H100 run of ``bench/triton_gemm.py``: the record validates, the code's defaults are its choices, the
goal holds, a malformed file is refused with its file and field named, and the bench script writes a record.

Torch-free except the last test, which runs the bench script's driver with its GPU phases replaced.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from gpukb.gemm.triton import configs
from gpukb.gemm.triton.configs import Config, current_choice, shared_memory_model
from gpukb.gemm.triton.results import (
    GOAL,
    GOAL_SIZES,
    RECORD_ID,
    TritonGemm,
    committed,
    goal_rows,
    measured_ceiling,
    shared_memory_rows,
)
from gpukb.records import RESULTS_DIR_VARIABLE, load, read, results_dir
from tests.helpers import ROOT


def _raw() -> dict:
    return json.loads(results_dir().joinpath(*f"{RECORD_ID}.json".split("/")).read_text(encoding="utf-8"))


def test_the_record_is_found_by_the_id_the_configs_name() -> None:
    assert configs.TUNED_ON == RECORD_ID == "gemm/triton-gemm-h100"
    record = load(RECORD_ID, expect=TritonGemm)
    assert record is committed()
    assert record.run.gpu is not None
    assert record.run.gpu.name == "NVIDIA H100 80GB HBM3"
    assert record.sm_count == 132
    phases = [f"{p}_{w}" for p in ("compare", "fp8", "sweep") for w in ("end", "start")]
    assert set(phases) <= set(record.run.clocks) <= {*phases, "start", "end"}


def test_recorded_run_meets_the_goal() -> None:
    ceiling = measured_ceiling()
    from gpukb.performance.quantities import reconcile

    assert ceiling == reconcile("h100-cublas-bf16-ceiling").value  # the one bf16 ceiling every page quotes
    rows = goal_rows(committed(), ceiling)
    assert [r.size for r in rows] == list(GOAL_SIZES)
    for row in rows:
        assert row.ratio == pytest.approx(row.kernel_tflops / row.cublas_tflops, rel=1e-9)
        assert row.ratio >= GOAL, row  # the Triton GEMM at ≥ 0.95 of cuBLAS, bf16, timed in alternation
        assert row.met
        assert row.timed == "graph replays"
        assert row.of_ceiling == pytest.approx(row.kernel_tflops / ceiling)


def test_the_recorded_sweep_covers_every_candidate() -> None:
    record = committed()
    assert [e.config for e in record.sweep.configs] == list(configs.CANDIDATES) == record.candidates
    assert record.fp8 is not None
    assert [e.config for e in record.fp8.configs] == list(configs.FP8_CANDIDATES) == record.fp8_candidates


def test_the_default_configs_are_the_ones_the_sweep_chose() -> None:
    chosen = committed().chosen
    assert chosen.large is not None
    assert chosen.small is not None
    assert chosen.fp8 is not None
    # fp16 shares the bf16 tilings (same element size, same MMA rate); the comparison measures it too.
    assert configs.DEFAULT_CONFIGS["bfloat16"] == configs.DEFAULT_CONFIGS["float16"] == chosen.large.config
    assert configs.SMALL_CONFIGS["bfloat16"] == configs.SMALL_CONFIGS["float16"] == chosen.small.config
    # FP8: the code's default and the run's choice may differ by less than the run-to-run drift of the ratios
    # (the Triton page says so, from the record: gpukb.gemm.pages.triton.triton_defaults_note)
    record = committed()
    code = configs.DEFAULT_CONFIGS["float8_e4m3fn"]
    if code != chosen.fp8.config:
        ratios = [c.ratio for e in record.fp8.configs if e.config == code for c in e.results]
        assert ratios
        assert math.exp(sum(map(math.log, ratios)) / len(ratios)) > chosen.fp8.geomean_ratio - 0.05


def test_the_small_rate_is_the_recorded_one() -> None:
    record = committed()
    small = record.sweep.case(configs.SMALL_CONFIGS["bfloat16"], 8192)
    large = record.sweep.case(configs.DEFAULT_CONFIGS["bfloat16"], 8192)
    assert small is not None
    assert large is not None
    assert abs(configs.SMALL_RATE - small.tflops / large.tflops) < 0.05  # the code's figure, from an earlier run
    assert record.chosen.small_rate == pytest.approx(small.tflops / large.tflops)


def test_recorded_ratios_follow_from_the_recorded_times() -> None:
    compare = committed().compare
    assert compare is not None
    assert compare.records
    assert len({r.case_id for r in compare.records}) == len(compare.records)
    for rec in compare.records:
        assert rec.error is None, rec.case_id
        middle = [sorted(getattr(r, key).median for r in rec.rounds)[1] for key in ("kernel_ms", "cublas_ms")]
        assert [rec.kernel_ms, rec.cublas_ms] == middle  # the middle of three rounds
        assert rec.ratio == pytest.approx(rec.cublas_ms / rec.kernel_ms)
        assert rec.all_written
        assert rec.diff_vs_cublas < 1e-2
        graph = [sorted(getattr(r, key).median for r in rec.graph_rounds)[1] for key in ("cublas_ms", "kernel_ms")]
        assert rec.graph_ratio == pytest.approx(graph[0] / graph[1])


def test_every_comparison_row_measured_todays_choice() -> None:
    record = committed()
    assert record.compare is not None
    assert record.compare.mismatched_sizes(record.sm_count) == []
    assert current_choice(1024, 132) == configs.SMALL_CONFIGS["bfloat16"]
    assert current_choice(4096, 132) == configs.DEFAULT_CONFIGS["bfloat16"]


def test_the_shared_memory_count_matches_the_compiler() -> None:
    record = committed()
    assert record.sweep.compiler_limit() == 232448
    rows = {r.config: r for r in shared_memory_rows(record)}
    refused = Config("tma", 128, 256, 64, num_stages=4, num_warps=8)
    assert rows[refused].by_count == shared_memory_model(refused) == 262144
    assert rows[refused].reported == 262176
    assert rows[refused].fits is False
    for row in rows.values():
        if row.reported is not None:  # the compiler's figure is the count plus a few barriers' bytes
            assert 0 <= row.reported - row.by_count <= 64, row


def test_pages_render_the_record() -> None:
    from gpukb.gemm.pages import triton as triton_page
    from gpukb.records import clock_text

    record = committed()
    ceiling = measured_ceiling()
    goal = triton_page.triton_goal()
    assert f"of the measured ceiling ({ceiling:.0f} TFLOP/s)" in goal
    row = goal_rows(record, ceiling)[0]
    assert (
        f"| {row.size}³ | `{row.config.label}` | {row.kernel_tflops:.0f} | {row.cublas_tflops:.0f} | {row.ratio:.3f} "
        f"| {100 * row.of_ceiling:.0f}% | yes |"
    ) in goal
    assert f"`{record.chosen.large.config.label}` (chosen: large)" in triton_page.triton_sweep()
    assert "OutOfResources: out of resource: shared memory, Required: 262176, Hardware limit: 232448" in (
        triton_page.triton_sweep()
    )
    assert triton_page.triton_mismatch_note() == (
        "Every row of the comparison measured the configuration the code picks today."
    )
    overhead = record.compare.host_overhead
    assert f"| checks and picking a configuration | {overhead.checks_and_config:.1f} |" in triton_page.triton_overhead()
    run = triton_page.triton_run()
    assert f"| date (UTC) | {record.run.started.isoformat()} |" in run
    assert f"| clocks, start of sweep | {clock_text(record.run.clocks['sweep_start'])} |" in run
    assert f"`{configs.DEFAULT_CONFIGS['float8_e4m3fn'].label}` (" in triton_page.triton_fp8()
    assert f"`{record.chosen.fp8.config.label}` (chosen by this run" in triton_page.triton_fp8()
    assert "| fits (232,448 bytes) |" in triton_page.triton_shared_memory()
    assert f"| bfloat16 | 8192³ | `{configs.DEFAULT_CONFIGS['bfloat16'].label}` |" in triton_page.triton_compiled()


def test_a_record_without_a_comparison_says_so() -> None:
    from gpukb.gemm.pages import triton as triton_page

    record = committed().model_copy(update={"compare": None})
    with pytest.raises(ValueError, match="has no comparison phase"):
        triton_page.triton_compare(record)


# --- malformed files ------------------------------------------------------------------------------------


def _corrupt(data: dict, how: str) -> str:
    """Break one field of a copy of the committed record; return the field's location as messages name it."""
    if how == "unknown key":
        data["sweep"]["configs"][4]["results"][0]["bogus"] = 1
        return r"sweep\.configs\[4\]\.results\[0\]\.bogus"
    if how == "wrong type":
        data["compare"]["records"][2]["kernel_tflops"] = "735"
        return r"compare\.records\[2\]\.kernel_tflops"
    if how == "missing field":
        del data["chosen"]["small_rate"]
        return r"chosen\.small_rate: Field required"
    if how == "bad config":
        data["candidates"][0]["block_k"] = 48
        return r"candidates\[0\]: Value error, block_k must be a power of two"
    if how == "unordered summary":
        data["fp8"]["configs"][0]["results"][1]["kernel_ms"]["q1"] = 1e9
        return r"fp8\.configs\[0\]\.results\[1\]\.kernel_ms"
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["unknown key", "wrong type", "missing field", "bad config", "unordered summary"])
def test_a_malformed_file_names_file_and_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    data = _raw()
    field = _corrupt(data, how)
    path = tmp_path / "gemm" / "triton-gemm-h100.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{path}: .*{field}"):
        read(path, TritonGemm)
    monkeypatch.setenv(RESULTS_DIR_VARIABLE, str(tmp_path))  # the same file found by id, as the pages find it
    with pytest.raises(ValueError, match=rf"results file 'gemm/triton-gemm-h100' .*: .*{field}"):
        load(RECORD_ID, expect=TritonGemm)


def test_the_committed_file_is_what_the_writer_writes(tmp_path: Path) -> None:
    from gpukb.records import write

    committed_text = results_dir().joinpath(*f"{RECORD_ID}.json".split("/")).read_text(encoding="utf-8")
    assert write(committed(), tmp_path / "again.json").read_text(encoding="utf-8") == committed_text


# --- the bench script -----------------------------------------------------------------------------------


def test_the_bench_script_writes_a_validated_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver of ``bench/triton_gemm.py`` with its three GPU phases replaced by their scratch output (rebuilt
    from the committed record): it chooses the same configurations and writes a record that reads back equal."""
    torch = pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location("triton_gemm_bench", ROOT / "bench" / "triton_gemm.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    record = committed()
    raw = json.loads(record.model_dump_json())
    smi = {"clocks.sm": 1980.0, "clocks.max.sm": 1980.0, "power.draw": 80.0, "power.limit": 700.0, "pstate": "P0"}

    def phase(name: str, work: Path, extra: list[str]) -> tuple[dict, dict]:
        if name == "compare":  # the sweep's choice is handed to the comparison
            assert json.loads(extra[1])["large"] == raw["chosen"]["large"]
        return {"name": name, "returncode": 0, "seconds": 1.0}, {**raw[name], "clocks_start": smi, "clocks_end": smi}

    answers = iter([True])  # the skeleton's check sees a GPU; describing the run then finds none
    monkeypatch.setattr(torch.cuda, "is_available", lambda: next(answers, False))
    monkeypatch.setattr("gpukb.measuring.device.clocks", lambda: smi)
    monkeypatch.setattr(bench, "_run_phase", phase)
    out = tmp_path / "triton-gemm.json"
    assert bench.main(bench.triton_gemm, bench.__doc__, bench.arguments, output="optional", argv=[str(out)]) == 0
    written = read(out, TritonGemm)
    assert (written.sweep, written.chosen, written.compare, written.fp8) == (
        record.sweep,
        record.chosen,
        record.compare,
        record.fp8,
    )
    # the mocked run sees no GPU, so it takes no "start" or "end" reading of its own: only the phases' readings
    assert set(written.run.clocks) == set(record.run.clocks) - {"start", "end"}
    assert written.run.duration_s is not None
    assert not math.isnan(written.run.duration_s)
    assert written.phases == [p.model_copy(update={"seconds": 1.0}) for p in record.phases]


def test_the_fill_summaries_refuse_what_they_do_not_read() -> None:
    from gpukb.gemm.pages.triton import triton_fill_alternatives
    from gpukb.gemm.triton import results, tuning

    with pytest.raises(TypeError, match="record_id must be"):
        results.fill_alternatives(7)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timed none of the fill candidates"):
        results.fill_alternatives("gemm/triton-gemm-tuning-h100-gaps")
    with pytest.raises(ValueError, match="timed none of the fill candidates"):
        results.fill_summary("gemm/triton-gemm-tuning-h100")
    with pytest.raises(TypeError, match="decode must be True or False; got 'yes'"):
        triton_fill_alternatives("yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="table must be a GemmTuning or None; got dict"):
        tuning.use_table({})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="merge must be True or False"):
        tuning.use_table(None, merge=1)  # type: ignore[arg-type]


def test_streamk_pairs_refuse_a_record_without_stream_k() -> None:
    from gpukb.gemm.triton import results

    with pytest.raises(ValueError, match="gemm/triton-gemm-tuning-h100-fill timed no stream_k candidate"):
        results.streamk_pairs("gemm/triton-gemm-tuning-h100-fill")
    with pytest.raises(TypeError, match="record_id"):
        results.streamk_choices(None)  # type: ignore[arg-type]
    # the committed run: each pair is one tiling with and without, the shared tiles its tiles left after whole rounds
    pairs = results.streamk_pairs()
    assert all(not p.config.stream_k and p.shared == p.tiles % 132 for p in pairs)
    assert results._streamk_contributors(1, 118, 132) == 118  # one K step each for 118 programs
    assert results._streamk_contributors(24, 47, 132) == 7  # 8 or 9 steps a program over a tile of 47
