"""The cell checks of docs/parallelism/index.md (``gpukb.parallelism.pages.opening``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.parallelism.pages import _table

GIB = 2**30


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


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "comparison_markdown": check_comparison,
}
