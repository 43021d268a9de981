"""The chapter's diagrams, drawn from the library's own arithmetic: which tensor each scheme splits and where its
collectives run. Each function returns a matplotlib ``Figure``; :mod:`gpukb.parallelism.pages` alone turns it into
inline SVG (:func:`gpukb.figures.to_svg`), so the pages carry no image files.
"""

from __future__ import annotations

from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from gpukb.arguments import integer
from gpukb.parallelism.pipeline import SCHEDULES, replay, schedule_order

#: One colour per rank (matplotlib's tab10; readable on light and dark backgrounds).
RANK_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
FORWARD, BACKWARD = "#4c9be8", "#f0a35e"
#: The most ranks or stages a diagram draws, and the most micro-batches: past them the labels overlap, and the drawing
#: grows with the square of the count (a ring of a million ranks drew for minutes).
MAX_DRAWN_RANKS = 16
MAX_DRAWN_MICRO_BATCHES = 64


def _drawn(name: str, value: object, most: int = MAX_DRAWN_RANKS) -> int:
    return integer(name, value, minimum=1, maximum=most)


def _box(ax, x, y, w, h, text, colour="none", alpha=0.35, size=8) -> None:
    ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, edgecolor="black", alpha=alpha if colour != "none" else 1))
    ax.add_patch(Rectangle((x, y), w, h, facecolor="none", edgecolor="black", linewidth=0.8))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size)


def _arrow(ax, start, end, text="", size=7) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=8, color="black", linewidth=0.8))
    if text:
        ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.12, text, ha="center", fontsize=size)


def _canvas(width: float, height: float, xlim: float, ylim: float) -> tuple[Figure, object]:
    fig = Figure(figsize=(width, height), layout="constrained")
    ax = fig.subplots()
    ax.set_xlim(0, xlim)
    ax.set_ylim(0, ylim)
    ax.axis("off")
    return fig, ax


def tensor_parallel_figure(tp: int = 2, sequence: bool = False) -> Figure:
    """One MLP split over ``tp`` ranks: ``W1`` by columns, ``W2`` by rows, each rank's partial sum reduced.

    Without ``sequence`` the input is whole on every rank and the output all-reduced; with it the input arrives as
    sequence shards (after a LayerNorm computed on the shard), is all-gathered before ``W1``, and the output is
    reduce-scattered back into sequence shards.
    """
    t = _drawn("tp", tp)
    fig, ax = _canvas(7.6, 1.1 + 0.9 * t, 11.2, 1.0 + 1.1 * t)
    for r in range(t):
        y = 0.3 + 1.1 * (t - 1 - r)
        c = RANK_COLOURS[r % len(RANK_COLOURS)]
        if sequence:
            _box(ax, 0.0, y, 1.3, 0.7, f"x[seq {r + 1}/{t}]\nLayerNorm", c)
            _arrow(ax, (1.3, y + 0.35), (2.2, y + 0.35), "all-gather")
        else:
            _box(ax, 0.9, y, 1.3, 0.7, "x (whole)", "none")
        _box(ax, 2.4, y, 1.6, 0.7, f"x · W1[:, {r + 1}/{t}]\n(columns)", c)
        _arrow(ax, (4.0, y + 0.35), (4.6, y + 0.35))
        _box(ax, 4.6, y, 1.1, 0.7, "GeLU\n(local)", c)
        _arrow(ax, (5.7, y + 0.35), (6.3, y + 0.35))
        _box(ax, 6.3, y, 1.7, 0.7, f"· W2[{r + 1}/{t}, :]\n(rows): partial", c)
        _arrow(ax, (8.0, y + 0.35), (9.0, y + 0.35), "reduce-scatter" if sequence else "all-reduce")
        _box(ax, 9.1, y, 1.9, 0.7, f"y[seq {r + 1}/{t}]" if sequence else "y (whole)", c if sequence else "none")
    return fig


def ring_figure(cp: int = 4) -> Figure:
    """Causal ring attention over ``cp`` ranks: which (query block, key/value block) pair each rank computes at
    which step. Rank ``r`` holds key/value block ``(r − step) mod cp`` at a step and skips blocks in its future."""
    p = _drawn("cp", cp)
    fig = Figure(figsize=(3.2 + 0.35 * p, 2.6 + 0.35 * p), layout="constrained")
    ax = fig.subplots()
    for r in range(p):
        for step in range(p):
            source = (r - step) % p
            if source <= r:
                ax.add_patch(Rectangle((source, r), 1, 1, facecolor=RANK_COLOURS[step % 8], alpha=0.55))
                label = f"step {step}" + (" (causal)" if source == r else "")
                ax.text(source + 0.5, r + 0.5, label, ha="center", va="center", fontsize=7)
            else:
                ax.text(source + 0.5, r + 0.5, "skipped", ha="center", va="center", fontsize=6, alpha=0.6)
            ax.add_patch(Rectangle((source, r), 1, 1, facecolor="none", edgecolor="black", linewidth=0.6))
    ax.set_xlim(0, p)
    ax.set_ylim(p, 0)
    ax.set_xticks([i + 0.5 for i in range(p)], [f"K,V {i}" for i in range(p)], fontsize=7)
    ax.set_yticks([i + 0.5 for i in range(p)], [f"rank {i}: Q {i}" for i in range(p)], fontsize=7)
    ax.set_title(f"ring attention on {p} ranks: the pair computed at each step", fontsize=8)
    return fig


def pipeline_figure(stages: int = 4, micro_batches: int = 8) -> Figure:
    """GPipe and 1F1B timelines for ``stages`` stages and ``micro_batches`` micro-batches (forward 1 unit, backward
    2), from :func:`gpukb.parallelism.pipeline.replay` of :func:`~gpukb.parallelism.pipeline.schedule_order`."""
    p, m = _drawn("stages", stages), _drawn("micro_batches", micro_batches, MAX_DRAWN_MICRO_BATCHES)
    fig = Figure(figsize=(7.6, 1.0 + 0.55 * 2 * p), layout="constrained")
    axes = fig.subplots(len(SCHEDULES), 1, sharex=True)
    for ax, schedule in zip(axes, SCHEDULES, strict=True):
        played = replay(schedule_order(schedule, p, m))
        for r, slots in enumerate(played.slots):
            for start, end, kind, i in slots:
                colour = FORWARD if kind == "F" else BACKWARD
                # Translucent fills: the label is drawn in the page's text colour (near-white in the dark scheme),
                # which an opaque light fill would hide.
                ax.add_patch(Rectangle((float(start), r), float(end - start), 0.85, facecolor=to_rgba(colour, 0.6),
                                       edgecolor="black", linewidth=0.5))  # fmt: skip
                ax.text(float(start + end) / 2, r + 0.43, str(i), ha="center", va="center", fontsize=6)
        ax.set_xlim(0, float(played.makespan))
        ax.set_ylim(p, 0)
        ax.set_yticks([r + 0.43 for r in range(p)], [f"stage {r}" for r in range(p)], fontsize=7)
        ax.set_title(
            f"{schedule}: bubble {float(played.bubble):.1%}, at most {max(played.peak_in_flight)} micro-batches "
            "held by a stage",
            fontsize=8,
        )
        ax.tick_params(axis="x", labelsize=7)
    axes[-1].set_xlabel("time (forward = 1, backward = 2); numbers are micro-batches", fontsize=7)
    return fig


def experts_figure(load: list[int]) -> Figure:
    """Rows routed to each expert (``load``), with the mean an even router would give."""
    fig = Figure(figsize=(5.0, 2.4), layout="constrained")
    ax = fig.subplots()
    n = len(load)
    ax.bar(range(n), load, color=[RANK_COLOURS[i * 2 // max(n, 1) % 8] for i in range(n)], alpha=0.8)
    mean = sum(load) / n
    ax.axhline(mean, color="black", linewidth=0.8, linestyle="--")
    ax.text(n - 0.5, mean, " mean", va="bottom", ha="right", fontsize=7)
    ax.set_xticks(range(n), [f"expert {e}" for e in range(n)], fontsize=7)
    ax.set_ylabel("rows routed", fontsize=7)
    ax.tick_params(axis="y", labelsize=7)
    return fig


def mesh_figure(dp: int = 2, tp: int = 2) -> Figure:
    """A ``(dp, tp)`` device mesh: tensor parallelism within a row, FSDP down a column."""
    d, t = _drawn("dp", dp), _drawn("tp", tp)
    fig, ax = _canvas(2.2 + 1.5 * t, 0.8 + 1.0 * d, 1.4 + 1.5 * t, 0.6 + 1.0 * d)
    for i in range(d):
        for j in range(t):
            rank = i * t + j
            _box(ax, 1.2 + 1.5 * j, 0.2 + 1.0 * (d - 1 - i), 1.1, 0.6, f"rank {rank}", RANK_COLOURS[j % 8])
        ax.text(1.1, 0.5 + 1.0 * (d - 1 - i), f"replica {i}\n(TP group)", ha="right", va="center", fontsize=7)
    for j in range(t):
        ax.text(1.75 + 1.5 * j, 0.3 + 1.0 * d, f"FSDP group {j}", ha="center", fontsize=7)
    return fig
