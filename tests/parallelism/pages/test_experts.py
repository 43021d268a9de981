"""The cell checks of docs/parallelism/experts.md (``gpukb.parallelism.pages.experts``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.parallelism.pages import _table


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


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "experts_load_markdown": check_experts_load,
}
