"""The performance pages' tables and figures carry the sweep's numbers, and figures are self-contained SVG."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from gpukb.performance import specs
from gpukb.performance.ceilings import h100_ceilings, measured_ceilings
from gpukb.performance.pages import bounding as bounding_page
from gpukb.performance.pages import datasheets as datasheets_page
from gpukb.performance.pages import h100 as h100_page
from gpukb.performance.pages import measuring as measuring_page
from gpukb.performance.results import H100_SWEEP, H200_SWEEP, SweepRecord
from gpukb.records import clock_text, load

RUN = load(H100_SWEEP, SweepRecord)


def _rows(markdown: str) -> list[list[str]]:
    lines = [line for line in markdown.splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_page_functions_take_an_id_or_a_record_and_default_to_the_h100_sweep() -> None:
    assert h100_page.gemm_peaks() == h100_page.gemm_peaks(H100_SWEEP) == h100_page.gemm_peaks(RUN)
    with pytest.raises(FileNotFoundError, match=r"'performance/missing'.* does not exist"):
        h100_page.gemm_peaks("performance/missing")


def test_the_run_table_comes_from_the_run_description() -> None:
    rows = dict((row[0], row[1]) for row in _rows(h100_page.meta_table()))
    assert rows["GPU"] == "NVIDIA H100 80GB HBM3"
    assert rows["date (UTC)"] == RUN.run.started.isoformat()
    assert rows["duration"] == f"{RUN.run.duration_s:.0f} s"
    assert rows["clocks at start"] == clock_text(RUN.run.clocks["start"])
    assert rows["clocks after gemm"] == clock_text(RUN.run.clocks["after_gemm"])
    assert rows["command"] == f"`{RUN.run.command}`"


def test_a_sweep_says_its_mode_its_duration_and_where_it_was_measured() -> None:
    """The sweep's own facts, then the one provenance sentence (gpukb.records.measured_on), not a second one."""
    from gpukb.records import measured_on

    assert measuring_page.sweep_measured_on() == f"Full mode, {RUN.run.duration_s:.0f} s of measuring. " + measured_on(
        RUN.run
    )
    assert measuring_page.sweep_measured_on("performance/h100-sweep-quick").startswith("Quick mode, ")


def test_gemm_peaks_are_the_best_records_of_the_file() -> None:
    rows = {row[0]: row for row in _rows(h100_page.gemm_peaks())}
    h100 = specs.load().gpu("h100-sxm5")
    for dtype in ("fp32", "tf32", "fp16", "bf16", "fp8"):
        best = max((r for r in RUN.gemm if r.dtype == dtype and r.tflops), key=lambda r: r.tflops)
        assert rows[dtype][1] == f"{best.tflops:,.1f}"
        assert rows[dtype][2] == f"{best.m}×{best.n}×{best.k}"
        peak = h100.figure(specs.GEMM_QUANTITY[dtype]).dense
        assert rows[dtype][5] == f"{100 * best.tflops / peak:.0f}%"


def test_square_table_has_one_row_per_size() -> None:
    sizes = sorted({r.m for r in RUN.gemm if r.sweep == "square"})
    assert [int(row[0]) for row in _rows(h100_page.gemm_squares())] == sizes


def test_ceilings_table_and_ridges() -> None:
    rows = {row[0]: row for row in _rows(h100_page.ceilings_table())}
    measured = h100_ceilings()  # the H100's copy and fp16/bf16 ceilings are the interleaved run's
    assert rows["memory bandwidth (GB/s)"][1] == f"{measured['bandwidth']:,.0f}"
    assert rows["fp32 matrix product (TFLOP/s)"][1] == f"{measured_ceilings(RUN)['fp32']:,.1f}"  # the sweep's best
    sheet = specs.load().gpu("h100-sxm5").figure("bf16_tensor").dense
    ridge = measured["bf16"] * 1e3 / measured["bandwidth"]
    assert rows["bf16 matrix product (TFLOP/s)"][1:4] == [f"{measured['bf16']:,.1f}", f"{sheet:,.1f} †",
                                                          f"{100 * measured['bf16'] / sheet:.0f}%"]  # fmt: skip
    assert rows["bf16 matrix product (TFLOP/s)"][4] == f"{ridge:.0f}"
    h200 = {row[0]: row for row in _rows(h100_page.ceilings_table(H200_SWEEP))}
    h200_sheet = specs.load().gpu("h200-sxm")
    assert h200["bf16 matrix product (TFLOP/s)"][2] == f"{h200_sheet.figure('bf16_tensor').dense:,.1f} †"
    assert h200["fp32 matrix product (TFLOP/s)"][2:4] == ["–", "–"]  # no sourced H200 FP32 figure


def test_spec_table_puts_the_measurement_next_to_the_datasheets() -> None:
    rows = {row[0]: row for row in _rows(datasheets_page.spec_table())}
    bf16 = rows["BF16 tensor core, dense (TFLOP/s)"]
    assert bf16[1] == "–"  # V100 has no bf16
    assert bf16[3] == "989.5 †"  # H100 SXM5: 1979 with sparsity, halved; † = read in copies of the datasheet
    assert bf16[-1] == f"{h100_ceilings()['bf16']:,.1f}"  # the last column: the measured value
    assert rows["FP16 tensor core, dense (TFLOP/s)"][1] == "125"  # confirmed in NVIDIA's own text: no mark


def test_spec_sources_list_every_source_used() -> None:
    text = datasheets_page.spec_sources()
    for source in ("ampere-whitepaper", "a100-datasheet", "h100-datasheet", "volta-tensor-cores"):
        assert specs.load().sources[source].url in text


def test_alignment_rows() -> None:
    rows = _rows(h100_page.alignment_table())
    assert [row[0] for row in rows] == [str(r.m) for r in RUN.gemm if r.sweep == "alignment"]
    assert {row[0]: row[2] for row in rows}["8191"] == "2 B"


def test_mistake_tables_show_each_variant() -> None:
    for mistake in ("sync", "cold_start", "zeros", "idle_gpu", "l2_cache"):
        variants = [r.variant for r in RUN.mistake(mistake)]
        assert [row[0] for row in _rows(measuring_page.mistake_table(mistake))] == variants


def test_one_run_table_reads_the_samples() -> None:
    (row,) = _rows(measuring_page.one_run_table())
    (record,) = RUN.mistake("one_run")
    assert row[1] == str(len(record.samples))
    assert row[3] == f"{min(record.samples) * 1e3:,.1f} – {max(record.samples) * 1e3:,.1f}"


def test_copy_and_transfer_tables() -> None:
    widths = _rows(h100_page.copy_widths())
    assert [row[0] for row in widths] == ["uint8", "int16", "int32", "int64"]
    transfers = _rows(h100_page.host_device_table())
    assert len(transfers) == len({r.bytes for r in RUN.host_device})
    without = RUN.model_copy(update={"copies": [r for r in RUN.copies if r.method == "memcpy"]})
    assert h100_page.copy_widths(without) == "This run has no element-width measurements."


def test_attention_table_marks_refused_and_skipped_cases() -> None:
    rows = {row[0]: row for row in _rows(h100_page.attention_table(head_dim=128, causal=False))}
    assert rows["16384"][5] == "not run"  # the math backend is not run on the longest sequence
    assert h100_page.attention_errors() == ""  # every other case ran


def test_intensity_table_recomputes_the_notes_examples() -> None:
    table = bounding_page.intensity_table()
    rows = _rows(table)
    assert [row[3] for row in rows] == ["315.08", "1.00", "2.00", "0.25"]
    assert rows[0][4:] == ["compute", "compute"]
    assert "limit on V100 (ridge 139)" in table
    measured = h100_ceilings()
    assert f"limit on this H100 (ridge {measured['bf16'] * 1e3 / measured['bandwidth']:.0f})" in table


def test_kernels_table_says_when_there_are_none() -> None:
    empty = SweepRecord.model_validate(RUN.model_copy(update={"kernels": []}).model_dump(by_alias=False))
    assert "No project kernel was registered" in h100_page.kernels_table(empty)
    assert [row[0] for row in _rows(h100_page.kernels_table())] == [k.name for k in RUN.kernels]
    rows = _rows(h100_page.kernels_table(H200_SWEEP))
    assert [row[0] for row in rows] == [k.name for k in load(H200_SWEEP, SweepRecord).kernels]
    assert "No project kernel was registered" in h100_page.kernels_summary(empty)


def test_run_summary_holds_the_main_tables() -> None:
    text = h100_page.run_summary(RUN)
    for heading in ("## Run", "## Matrix products: best per type", "## Mistake: sync", "## Project kernels"):
        assert heading in text


@pytest.mark.parametrize("figure", [h100_page.gemm_figure, h100_page.copy_figure, h100_page.roofline_figure])
def test_figures_are_inline_svg_with_no_outside_references(figure) -> None:
    html = figure()
    assert html.startswith('<div class="gpukb-figure"><svg')
    svg = html.removeprefix('<div class="gpukb-figure">').removesuffix("</div>")
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert not re.search(r'(?:href|src)="https?://', svg)


def test_notes_list_holds_the_suites_notes() -> None:
    lines = h100_page.notes_list().splitlines()
    assert [line.split(":", 1)[0] for line in lines] == [f"- {note.split(':', 1)[0]}" for note in RUN.suite_notes()]
    assert {"- mistakes", "- gemm"} <= {line.split(":", 1)[0] for line in lines}


def test_the_answer_states_the_quoted_ceilings_against_the_datasheet() -> None:
    """The page's opening answer: the quoted ceilings (read from their record here) as shares of the datasheet."""
    from tests.helpers import h100_ceilings_json

    quoted = h100_ceilings_json()
    text = re.sub(r"<[^>]+>", "", h100_page.h100_answer())
    sheet = specs.load().gpu("h100-sxm5")
    bandwidth, peak = sheet.figure("memory_bandwidth").value, sheet.figure("bf16_tensor").dense
    assert f"{quoted['bandwidth']:.0f} GB/s ({100 * quoted['bandwidth'] / bandwidth:.0f}% of the datasheet's" in text
    assert f"bf16 matrices at {quoted['bf16']:.1f} TFLOP/s and fp16 at {quoted['fp16']:.1f} TFLOP/s" in text
    assert f"({100 * quoted['bf16'] / peak:.0f}% and {100 * quoted['fp16'] / peak:.0f}% of the dense peak" in text
    assert sheet.figure("fp16_tensor").dense == peak  # "the dense peak the datasheet gives both"
