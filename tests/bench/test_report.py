"""Tables and figures rendered from results files carry the file's numbers, and figures are self-contained SVG."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET

import pytest

from gpukb.bench import report, specs
from gpukb.bench.results import committed, load_results

NAME = "nvidia-h100-80gb-hbm3-2026-11-22.json"
RUN = load_results(committed(NAME))


def _rows(markdown: str) -> list[list[str]]:
    lines = [line for line in markdown.splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_data_accepts_a_name_a_path_or_loaded_results() -> None:
    assert report.data(NAME) == report.data(committed(NAME)) == report.data(RUN)
    with pytest.raises(FileNotFoundError, match=r"no results file 'missing\.json'"):
        report.data("missing.json")


def test_gemm_peaks_are_the_best_records_of_the_file() -> None:
    rows = {row[0]: row for row in _rows(report.gemm_peaks(NAME))}
    h100 = specs.load().gpu("h100-sxm5")
    for dtype in ("fp32", "tf32", "fp16", "bf16", "fp8"):
        records = [r for r in RUN["gemm"] if r["dtype"] == dtype and r["tflops"]]
        best = max(records, key=lambda r: r["tflops"])
        assert rows[dtype][1] == f"{best['tflops']:,.1f}"
        assert rows[dtype][2] == f"{best['m']}×{best['n']}×{best['k']}"
        peak = h100.figure(specs.GEMM_QUANTITY[dtype]).dense
        assert rows[dtype][5] == f"{100 * best['tflops'] / peak:.0f}%"


def test_square_table_has_one_row_per_size() -> None:
    sizes = sorted({r["m"] for r in RUN["gemm"] if r["sweep"] == "square"})
    assert [int(row[0]) for row in _rows(report.gemm_squares(NAME))] == sizes


def test_ceilings_are_the_best_gemm_and_the_best_large_copy() -> None:
    measured = report.ceilings(RUN)
    assert measured["bf16"] == max(r["tflops"] for r in RUN["gemm"] if r["dtype"] == "bf16" and r["tflops"])
    large = [r["gbps"] for r in RUN["copy"] if r["bytes"] >= report.CEILING_MIN_BYTES]
    assert measured["bandwidth"] == max(large)


def test_spec_table_puts_the_measurement_next_to_the_datasheets() -> None:
    rows = {row[0]: row for row in _rows(report.spec_table(NAME))}
    bf16 = rows["BF16 tensor core, dense (TFLOP/s)"]
    assert bf16[1] == "–"  # V100 has no bf16
    assert bf16[3] == "989.5 †"  # H100 SXM5: 1979 with sparsity, halved; † = read in copies of the datasheet
    assert bf16[4] == f"{report.ceilings(RUN)['bf16']:,.1f}"
    assert rows["FP16 tensor core, dense (TFLOP/s)"][1] == "125"  # confirmed in NVIDIA's own text: no mark


def test_spec_sources_list_every_source_used() -> None:
    text = report.spec_sources()
    for source in ("ampere-whitepaper", "a100-datasheet", "h100-datasheet", "volta-tensor-cores"):
        assert specs.load().sources[source].url in text


def test_alignment_rows() -> None:
    rows = _rows(report.alignment_table(NAME))
    assert [row[0] for row in rows] == [str(r["m"]) for r in RUN["gemm"] if r["sweep"] == "alignment"]
    assert report.row_alignment(8191, 2) == 2
    assert report.row_alignment(8188, 2) == 8
    assert report.row_alignment(8192, 2) == 16


def test_mistake_tables_show_each_variant() -> None:
    for mistake in ("sync", "cold_start", "zeros", "idle_gpu", "l2_cache"):
        variants = [r["variant"] for r in report.mistakes(RUN, mistake)]
        assert [row[0] for row in _rows(report.mistake_table(NAME, mistake))] == variants


def test_one_run_table_reads_the_samples() -> None:
    (row,) = _rows(report.one_run_table(NAME))
    (record,) = report.mistakes(RUN, "one_run")
    assert row[1] == str(len(record["samples"]))
    assert row[3] == f"{min(record['samples']) * 1e3:,.1f} – {max(record['samples']) * 1e3:,.1f}"


def test_copy_and_transfer_tables() -> None:
    widths = _rows(report.copy_widths(NAME))
    assert [row[0] for row in widths] == ["uint8", "int16", "int32", "int64"]
    transfers = _rows(report.host_device_table(NAME))
    assert len(transfers) == len({r["bytes"] for r in RUN["host_device"]})
    without = copy.deepcopy(RUN)
    without["copy"] = [r for r in RUN["copy"] if r["method"] == "memcpy"]
    assert report.copy_widths(without) == "This run has no element-width measurements."


def test_attention_table_marks_refused_and_skipped_cases() -> None:
    rows = {row[0]: row for row in _rows(report.attention_table(NAME, head_dim=128, causal=False))}
    assert rows["16384"][5] == "not run"  # the math backend is not run on the longest sequence
    assert report.attention_errors(NAME) == ""  # every other case ran


def test_intensity_table_recomputes_the_notes_examples() -> None:
    rows = _rows(report.intensity_table(NAME))
    assert [row[3] for row in rows] == ["315.08", "1.00", "2.25", "0.25"]
    assert rows[0][4:] == ["compute", "compute"]


def test_kernels_table_says_when_there_are_none() -> None:
    assert "No project kernel was registered" in report.kernels_table(NAME)


@pytest.mark.parametrize("figure", [report.gemm_figure, report.copy_figure, report.roofline_figure])
def test_figures_are_inline_svg_with_no_outside_references(figure) -> None:
    html = figure(NAME)
    assert html.startswith('<div class="gpukb-figure"><svg')
    svg = html.removeprefix('<div class="gpukb-figure">').removesuffix("</div>")
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert not re.search(r'(?:href|src)="https?://', svg)


def test_roofline_points_use_the_counts() -> None:
    points = report.roofline_points(RUN)
    labels = [label for label, _, _ in points]
    assert "bf16 GEMM 4096" in labels
    (intensity,) = [i for label, i, _ in points if label == "bf16 GEMM 4096"]
    assert intensity == pytest.approx(2 * 4096**3 / (3 * 4096**2 * 2))
