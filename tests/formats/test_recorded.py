"""The committed formats results files are complete, and the pages render what they hold."""

from __future__ import annotations

import json

import pytest

from gpukb.formats import recorded
from tests.helpers import ROOT

GPU = ROOT / "bench" / "results" / "formats" / "h100-gpu-checks.json"
SPEED = ROOT / "bench" / "results" / "formats" / "codec-speed.json"


def test_gpu_results_show_nearest_even_tf32() -> None:
    data = recorded.load(GPU, "gpu")
    tf32 = data["tf32"]
    assert data["meta"]["gpu"].startswith("NVIDIA H100")
    assert tf32["tf32_vs_nearest_even_inputs"] < 1e-5 < tf32["tf32_vs_exact"]
    text = recorded.tf32_markdown(GPU)
    assert f"{tf32['tf32_vs_truncated_inputs']:.2e}" in text
    assert "Measured on NVIDIA H100" in text


def test_gpu_results_show_every_cast_matching() -> None:
    data = recorded.load(GPU, "gpu")
    assert {c["format"] for c in data["casts"]} >= {"e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "bf16", "fp16"}
    for cast in data["casts"]:
        assert cast["cuda_matches_cpu"] == cast["inputs"], cast
    text = recorded.cuda_casts_markdown(GPU)
    assert "| e4m3 |" in text


def test_speed_results_render_every_row() -> None:
    data = recorded.load(SPEED, "speed")
    text = recorded.speed_markdown(SPEED)
    for row in data["rows"]:
        assert f"| {row['format']} |" in text
        assert f"{row['round_trip_ratio']:.1f}×" in text


def test_malformed_files_are_refused(tmp_path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"meta": {}}))
    with pytest.raises(ValueError, match=r"not a gpu results file, missing \['casts', 'e4m3_overflow', 'tf32'\]"):
        recorded.load(path, "gpu")
    with pytest.raises(ValueError, match="unknown results kind 'cpu'; choose 'gpu' or 'speed'"):
        recorded.load(path, "cpu")
