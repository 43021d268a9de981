"""The formats chapter's committed results files validate as their kinds, and the pages render what they hold."""

from __future__ import annotations

import json
import re

import pytest

from gpukb.formats.pages import anatomy as anatomy_page
from gpukb.formats.pages import fp8 as fp8_page
from gpukb.formats.pages import opening as index_page
from gpukb.formats.results import CODEC_SPEED_ID, GPU_CHECKS_ID, CodecSpeed, GpuChecks
from gpukb.records import load, measured_on, read


@pytest.fixture(scope="module")
def gpu() -> GpuChecks:
    return load(GPU_CHECKS_ID, expect=GpuChecks)


@pytest.fixture(scope="module")
def speed() -> CodecSpeed:
    return load(CODEC_SPEED_ID, expect=CodecSpeed)


def test_gpu_results_show_nearest_even_tf32(gpu: GpuChecks) -> None:
    assert gpu.run.gpu is not None
    assert gpu.run.gpu.name.startswith("NVIDIA H100")
    assert gpu.tf32.tf32_vs_nearest_even_inputs < 1e-5 < gpu.tf32.tf32_vs_exact
    assert gpu.tf32.tf32_vs_truncated_inputs > 10 * gpu.tf32.tf32_vs_nearest_even_inputs
    text = anatomy_page.tf32_check()
    assert f"| {gpu.tf32.tf32_vs_truncated_inputs:.2e} |" in text
    assert text.endswith(f"{gpu.tf32.n}×{gpu.tf32.n} matrices, standard normal float32 inputs. "
                         f"{measured_on(gpu.run, command=False)}")  # fmt: skip
    assert "Measured on an NVIDIA H100 80GB HBM3 (132 SMs, driver 580.159.04), torch 2.11.0+cu130" in text


def test_gpu_results_show_every_cast_matching(gpu: GpuChecks) -> None:
    assert {c.format for c in gpu.casts} >= {"e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "bf16", "fp16"}
    for cast in gpu.casts:
        assert cast.cuda_matches_cpu == cast.inputs == cast.cuda_matches_rules, cast
    assert gpu.e4m3_overflow.cuda == gpu.e4m3_overflow.cpu == {"448": 448.0, "464": 448.0, "465": "NaN",
                                                               "1e+06": "NaN", "inf": "NaN"}  # fmt: skip
    text = fp8_page.cuda_casts()
    assert "| e4m3 | 34311 | 34311 | 19046 | 34311 |" in text
    assert "| 465 | NaN | NaN |" in text


def test_speed_results_render_every_row(speed: CodecSpeed) -> None:
    text = index_page.codec_speed()
    for row in speed.rows:
        assert f"| {row.format} | {row.gpukb_encode_s * 1e3:.1f} |" in text
        assert f"{row.round_trip_ratio:.1f}× |" in text
        assert row.round_trip_ratio < 5  # the goal the index page states: within 5x of ml_dtypes
    assert f"medians of {speed.repeats} runs" in text
    assert f"one CPU core ({speed.run.cpu_count} present)" in text
    assert text.endswith(measured_on(speed.run))


def _corrupt(tmp_path, record_id: str, change) -> str:
    data = json.loads(load(record_id).model_dump_json())
    change(data)
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize(
    ("record_id", "change", "message"),
    [
        (GPU_CHECKS_ID, lambda d: d["tf32"].pop("tf32_vs_exact"), r"tf32\.tf32_vs_exact: Field required"),
        (GPU_CHECKS_ID, lambda d: d["casts"][2].update(inputs="34311"), r"casts\[2\]\.inputs: Input should be a valid"),
        (GPU_CHECKS_ID, lambda d: d["casts"][0].update(colour=1), r"casts\[0\]\.colour: Extra inputs are not"),
        (CODEC_SPEED_ID, lambda d: d["rows"][1].update(n=-1), r"rows\[1\]\.n: Input should be greater than 0"),
        (CODEC_SPEED_ID, lambda d: d.update(schema_version=2), r"schema_version is 2"),
        (CODEC_SPEED_ID, lambda d: d.update(kind="formats.gpu-checks"), r"tf32: Field required"),
    ],
)  # fmt: skip
def test_malformed_files_are_refused_naming_the_file_and_field(tmp_path, record_id, change, message) -> None:
    path = _corrupt(tmp_path, record_id, change)
    with pytest.raises(ValueError, match=re.escape(path) + ".*" + message):
        read(path)


def test_a_file_of_another_kind_is_refused() -> None:
    with pytest.raises(ValueError, match=r"holds a 'formats\.codec-speed' record; expected 'formats\.gpu-checks'"):
        load(CODEC_SPEED_ID, expect=GpuChecks)


def test_the_codec_speed_script_writes_a_record_the_page_renders(tmp_path) -> None:
    """The bench script the contributing page shows runs (on a small input) and writes a valid record."""
    import subprocess
    import sys

    from gpukb.formats.results import CodecSpeed
    from gpukb.records import read
    from tests.helpers import ROOT

    out = tmp_path / "codec-speed.json"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "formats_codec_speed.py"),
            str(out),
            "--n",
            "2000",
            "--formats",
            "e4m3,bf16",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    record = read(out, CodecSpeed)
    assert [r.format for r in record.rows] == ["e4m3", "bf16"]
    assert all(r.n == 2000 for r in record.rows)
    assert record.run.command.startswith("python ")
    assert record.run.gpu is None or record.run.gpu.name
