"""The page “Expert parallelism” (docs/parallelism/experts.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.arguments import MAX_TORCH_SEED, array_size, integer, non_negative_int, positive_int
from gpukb.figures import to_svg
from gpukb.parallelism import figures
from gpukb.tables import markdown_table


def router_load(tokens: int = 4096, hidden: int = 64, experts: int = 8, top_k: int = 2, seed: int = 0) -> list[int]:
    """Rows a freshly initialized router (:func:`gpukb.parallelism.experts.moe`) sends to each expert, for
    ``tokens`` random tokens (drawn from ``seed + 1``), computed on the CPU.

    Raises:
        TypeError: For a size or seed that is not an int.
        ValueError: For ``tokens`` below 0, a size below 1, a seed outside ``[0, 2^64 - 2]``, or tokens or
            weights of more than :data:`gpukb.arguments.MAX_ARRAY_ELEMENTS` elements (a million experts drew
            8·10^9 weights for minutes; a huge ``tokens`` raised torch's own overflow error).
    """
    import torch

    from gpukb.parallelism.experts import load, moe

    tokens, hidden = non_negative_int("tokens", tokens), positive_int("hidden", hidden)
    seed = integer("seed", seed, minimum=0, maximum=MAX_TORCH_SEED - 1)  # the tokens are drawn from seed + 1
    array_size("the tokens (tokens × hidden)", (tokens, hidden))
    array_size("the experts' weights (experts × hidden × 2·hidden)", (positive_int("experts", experts), hidden,
                                                                       2 * hidden))  # fmt: skip
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
