"""The page “Expert parallelism” (docs/parallelism/experts.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.figures import to_svg
from gpukb.parallelism import figures
from gpukb.tables import markdown_table


def router_load(tokens: int = 4096, hidden: int = 64, experts: int = 8, top_k: int = 2, seed: int = 0) -> list[int]:
    """Rows a freshly initialized router (:func:`gpukb.parallelism.experts.moe`) sends to each expert, for
    ``tokens`` random tokens."""
    import torch

    from gpukb.parallelism.experts import load, moe

    layer = moe(hidden, experts, top_k, seed=seed)
    x = torch.randn(tokens, hidden, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        return load(layer.route(x)[1], experts)


def experts_svg() -> str:
    """The router's load per expert (:func:`router_load`), as SVG."""
    return to_svg(figures.experts_figure(router_load()))


def experts_load_markdown() -> str:
    """The router's load per expert and its imbalance."""
    from gpukb.parallelism.experts import imbalance

    load = router_load()
    rows = [[f"expert {e}", n] for e, n in enumerate(load)]
    rows.append(["busiest / mean", f"{imbalance(load):.3f}"])
    return markdown_table(["expert", "rows routed (4096 tokens, top-2)"], rows)
