"""The cell checks of docs/parallelism/measured.md (``gpukb.parallelism.pages.measured``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tests.helpers import ROOT
from tests.parallelism.pages import _table

MIB = 2**20


def _record() -> dict[str, Any]:
    return json.loads((ROOT / "src/gpukb/data/results/parallelism/schemes-4gpu.json").read_text(encoding="utf-8"))


def check_topology(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    text = re.sub(r"\x1b\[[0-9;]*m", "", _record()["topology"])
    gpu_lines = [line.split("\t") for line in text.splitlines()[1:] if line.startswith("GPU")]  # after the header
    assert [r[""] for r in rows] == [line[0] for line in gpu_lines] == ["GPU0", "GPU1", "GPU2", "GPU3"]
    for i, (r, line) in enumerate(zip(rows, gpu_lines, strict=True)):
        for j in range(4):
            assert r[f"GPU{j}"] == ("X" if i == j else "NV18")
        assert [r["CPU Affinity"], r["NUMA Affinity"]] == [line[5].strip(), line[6].strip()] == ["0-63", "0"]


def check_measured(markdown: str, kwargs: dict[str, Any]) -> None:
    record = {r["name"]: r for r in _record()["rows"]}
    rows = {r["scheme"]: r for r in _table(markdown)}
    assert list(rows) == list(record)
    for name, r in rows.items():
        got = record[name]
        if got["step_ms"] is None:
            assert r["ms per step (IQR/median)"].startswith("failed: ")
            continue
        median = got["step_ms"]["median"]
        spread = (got["step_ms"]["q3"] - got["step_ms"]["q1"]) / median
        assert r["ms per step (IQR/median)"] == f"{median:.1f} ({spread:.0%})"
        assert r["tokens/s"] == f"{got['tokens_per_step'] / (median / 1e3):,.0f}"
        measured, predicted = r["state MiB per rank: measured / predicted"].split(" / ")
        assert measured == ", ".join(f"{m / MIB:.0f}" for m in got["state_bytes"])
        assert predicted == ", ".join(sorted({f"{m / MIB:.0f}" for m in got["predicted_state_bytes"]}))
        assert r["MiB sent by rank 0: measured / formula"] == f"{got['sent_bytes'] / MIB:.1f} / " + (
            f"{got['formula_bytes'] / MIB:.1f}"
        )
    # the schemes whose bytes the page says matched exactly
    for name in ("FSDP (4)", "TP (4)", "TP + SP (4)", "FSDP (2) + TP (2)", "PP (4) GPipe", "PP (4) 1F1B", "EP (4)"):
        assert record[name]["sent_bytes"] == record[name]["formula_bytes"]
        # "in the collectives the formulas name"; the pipelines' log adds the receive of each send
        seen = dict(record[name]["collectives"])
        if name.startswith("PP"):
            assert seen.pop("recv") == seen["send"]
        assert seen == record[name]["formula_collectives"]
    # the page's answer: these took longer per step than the whole model on one GPU, the pipelines less
    one = record["one GPU"]["step_ms"]["median"]
    slower = {"FSDP (4)", "TP (4)", "TP + SP (4)", "FSDP (2) + TP (2)", "CP (4)"}
    assert {n for n in slower | {"PP (4) GPipe", "PP (4) 1F1B"} if record[n]["step_ms"]["median"] > one} == slower


def check_pipeline_measured(markdown: str, kwargs: dict[str, Any]) -> None:
    record = _record()
    rows = _table(markdown)
    pp = [r for r in record["rows"] if r["name"].startswith("PP")]
    assert [r["schedule"] for r in rows] == [r["name"] for r in pp]
    for row, got in zip(rows, pp, strict=True):
        step = got["step_ms"]["median"]
        stage = got["extra"]["stage_ms"]
        assert row["ms per step"] == f"{step:.2f}"
        assert row["bubble measured"] == f"{1 - 8 * stage / step:.1%}"
        assert row["predicted"] == f"{3 / 11:.1%}"
    # the page: "on either side of the prediction, by six to seven points each way"; "the two timings of the same
    # work differ by a tenth, which moves the measured bubble by about seven points"
    gaps = sorted((1 - 8 * r["extra"]["stage_ms"] / r["step_ms"]["median"]) - 3 / 11 for r in pp)
    assert -0.075 <= gaps[0] <= -0.055
    assert 0.055 <= gaps[1] <= 0.075
    stages = sorted(r["extra"]["stage_ms"] for r in pp)
    assert 0.08 <= stages[1] / stages[0] - 1 <= 0.12
    moved = 8 * (stages[1] - stages[0]) / min(r["step_ms"]["median"] for r in pp)
    assert 0.06 <= moved <= 0.08


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "topology_markdown": check_topology,
    "measured_markdown": check_measured,
    "pipeline_measured_markdown": check_pipeline_measured,
}
