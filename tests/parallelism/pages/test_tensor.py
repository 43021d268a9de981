"""The cell checks of docs/parallelism/tensor.md (``gpukb.parallelism.pages.tensor``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.helpers import size_text
from tests.parallelism.pages import _table


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


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "tp_traffic_markdown": check_tp_traffic,
    "activation_markdown": check_activations,
}
