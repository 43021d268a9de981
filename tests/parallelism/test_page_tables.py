"""Every table the parallelism pages render, read back by header and checked against arithmetic done here (the
papers' formulas written out again), the sources file (read with tomllib) and the committed record (read with
json), not by calling the chapter's formulas."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from typing import Any

from tests.helpers import ROOT, markdown_tables, size_text

MIB, GIB = 2**20, 2**30


def _table(markdown: str) -> list[dict[str, str]]:
    tables = markdown_tables(markdown)
    assert tables, "no table rendered"
    return tables[0]


def _record() -> dict[str, Any]:
    return json.loads((ROOT / "src/gpukb/data/results/parallelism/schemes-4gpu.json").read_text(encoding="utf-8"))


def check_comparison(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = {r["scheme"]: r for r in _table(markdown)}
    n, h, s, b, g = 32, 4096, 4096, 32, 8
    split, repl = 12 * h * h * n, 4 * h * n
    p = split + repl
    act = b * s * h * 2
    want_sent = {
        "FSDP (8)": 3 * (g - 1) * p * 2 / g,  # gather, gather, reduce-scatter of the bf16 parameters
        "TP (8)": 4 * n * 2 * (g - 1) * act / g,  # four all-reduces per layer
        "TP + SP (8)": 4 * n * 2 * (g - 1) * act / g + 4 * n * 2 * (g - 1) * h * 2 / g,
        "CP (8)": 2 * n * (g - 1) * 2 * b * (s // g) * h * 2 + 2 * (g - 1) * 2 * p / g,
        "PP (8), 1F1B, 32 micro-batches": 2 * 32 * s * h * 2,  # a middle stage: activations on, gradients back
        "FSDP (4) + TP (2)": 3 * 3 * (split // 2 + repl) * 2 / 4 + 4 * n * 2 * 1 * (b // 4) * s * h * 2 / 2,
    }
    tokens_k = b * s // g * 2
    want_sent["EP (8), 64 experts, top-2 (per MoE layer)"] = 4 * tokens_k * (g - 1) / g * h * 2 + 7 * 64 * 8 / 8
    assert set(rows) == set(want_sent)
    for name, want in want_sent.items():
        assert rows[name]["sent per GPU per step"] == f"{want / GIB:.2f} GiB", name
    assert rows["TP (8)"]["collectives per step"] == "128 all-reduce"
    assert rows["FSDP (8)"]["collectives per step"] == "2 all-gather, 1 reduce-scatter"
    assert rows["FSDP (8)"]["model state per GPU"] == f"{16 * p / g / GIB:.2f} GiB"
    assert rows["PP (8), 1F1B, 32 micro-batches"]["model state per GPU"] == f"{16 * p / g / GIB:.2f} GiB"
    assert rows["CP (8)"]["model state per GPU"] == f"{16 * p / GIB:.2f} GiB"
    assert rows["TP (8)"]["model state per GPU"] == f"{(16 * split / g + 16 * repl) / GIB:.2f} GiB"
    assert rows["TP + SP (8)"]["model state per GPU"] == rows["TP (8)"]["model state per GPU"]
    assert rows["FSDP (4) + TP (2)"]["model state per GPU"] == f"{16 * (split / 2 + repl) / 4 / GIB:.2f} GiB"
    assert rows["EP (8), 64 experts, top-2 (per MoE layer)"]["model state per GPU"] == "experts / 8"
    assert "7/39" not in rows["PP (8), 1F1B, 32 micro-batches"]["reach for it when"]
    assert f"{7 / 39:.0%}" in rows["PP (8), 1F1B, 32 micro-batches"]["reach for it when"]


def check_tp_traffic(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    b, s, h, t = 1, 2048, 12288, 8
    whole = b * s * h * 2
    assert [(r["scheme"], r["collective"], r["per step"]) for r in rows] == [
        ("TP", "all-reduce", "4"),
        ("TP + SP", "all-gather", "4"),
        ("TP + SP", "reduce-scatter", "4"),
        ("TP + SP", "all-reduce", "4"),
    ]
    assert rows[0]["size of each"] == size_text(whole)
    assert rows[0]["sent per GPU"] == size_text(4 * 2 * (t - 1) * whole / t)
    assert rows[1]["sent per GPU"] == rows[2]["sent per GPU"] == size_text(4 * (t - 1) * whole / t)
    assert rows[3]["size of each"] == size_text(h * 2)
    assert rows[3]["sent per GPU"] == size_text(4 * 2 * (t - 1) * h * 2 / t)


def check_activations(markdown: str, kwargs: dict[str, Any]) -> None:
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    sbh = s * b * h
    want = [  # Korthikanti et al. 2022, table 2
        ("none", "1", "none", sbh * (34 + 5 * a * s / h)),
        ("TP", "8", "none", sbh * (10 + 24 / t + 5 * a * s / (h * t))),
        ("TP + SP", "8", "none", sbh / t * (34 + 5 * a * s / h)),
        ("TP", "8", "selective", sbh * (10 + 24 / t)),
        ("TP + SP", "8", "selective", sbh * 34 / t),
        ("TP", "8", "full", 2 * sbh),
    ]
    rows = _table(markdown)
    assert [(r["parallelism"], r["t"], r["recomputation"]) for r in rows] == [w[:3] for w in want]
    for row, w in zip(rows, want, strict=True):
        assert row["activations per layer per GPU"] == size_text(w[3])


def check_bubble(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    assert len(rows) == 12
    for r in rows:
        p, m = int(r["stages p"]), int(r["micro-batches m"])
        assert r["bubble"] == f"{(p - 1) / (m + p - 1):.1%}"
        assert r["interleaved, v = 2"] == f"{(p - 1) / (2 * m + p - 1):.1%}"
        assert r["held by stage 0: GPipe"] == str(m)
        assert r["1F1B"] == str(min(p, m))


def check_cp_traffic(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    b, s, kv = 1, 131072, 1024
    assert [r["ring size"] for r in rows] == ["2", "4", "8"]
    for r in rows:
        cp = int(r["ring size"])
        pair = 2 * b * s // cp * kv * 2
        assert r["K and V shard"] == size_text(pair)
        assert r["sent: reference"] == size_text(2 * (cp - 1) * pair)
        assert r["sent: PyTorch, all-to-all rotation"] == size_text((2 * (cp - 1) + cp) * pair)


def check_sources(markdown: str, kwargs: dict[str, Any]) -> None:
    raw = tomllib.loads((ROOT / "src/gpukb/data/parallelism/sources.toml").read_text(encoding="utf-8"))["source"]
    rows = _table(markdown)
    assert len(rows) == len(raw)
    for row, src in zip(rows, raw, strict=True):
        assert row["source"] == f"[{src['title']}]({src['url']})"
        assert (row["authors"], row["version"], row["checked"]) == (src["authors"], src["version"], src["checked"])
        assert row["what the chapter takes from it"] == src["supports"]


def check_experts_load(markdown: str, kwargs: dict[str, Any]) -> None:
    import torch

    torch.manual_seed(0)  # the layer's router is its first parameter drawn from seed 0
    router = torch.nn.Linear(64, 8, bias=False)
    x = torch.randn(4096, 64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        load = torch.bincount(router(x).topk(2, dim=-1).indices.flatten(), minlength=8).tolist()
    rows = _table(markdown)
    assert [r["expert"] for r in rows] == [f"expert {e}" for e in range(8)] + ["busiest / mean"]
    assert [int(r["rows routed (4096 tokens, top-2)"]) for r in rows[:-1]] == load
    assert rows[-1]["rows routed (4096 tokens, top-2)"] == f"{max(load) / (sum(load) / 8):.3f}"


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
    for name in ("FSDP (4)", "TP (4)", "TP + SP (4)", "FSDP (2) + TP (2)", "PP (4) GPipe", "PP (4) 1F1B"):
        assert record[name]["sent_bytes"] == record[name]["formula_bytes"]
    ep = record["EP (4)"]
    assert abs(ep["sent_bytes"] / ep["formula_bytes"] - 1) < 0.003  # "to 0.2%"


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
    "comparison_markdown": check_comparison,
    "tp_traffic_markdown": check_tp_traffic,
    "activation_markdown": check_activations,
    "bubble_markdown": check_bubble,
    "cp_traffic_markdown": check_cp_traffic,
    "sources_markdown": check_sources,
    "experts_load_markdown": check_experts_load,
    "topology_markdown": check_topology,
    "measured_markdown": check_measured,
    "pipeline_measured_markdown": check_pipeline_measured,
}
