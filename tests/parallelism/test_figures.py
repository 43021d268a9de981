"""The chapter's diagrams draw what the library computes, and refuse sizes they cannot draw."""

from __future__ import annotations

import pytest
from matplotlib.patches import Rectangle

from gpukb.parallelism import figures
from gpukb.parallelism.pipeline import bubble_fraction


def test_ring_figure_fills_the_causal_half() -> None:
    ax = figures.ring_figure(4).axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("skipped") == 4 * 3 // 2  # the blocks in each rank's future
    assert sum("causal" in t for t in texts) == 4  # the diagonal, computed at step 0


def test_pipeline_figure_titles_carry_the_bubble() -> None:
    gpipe, one_f = figures.pipeline_figure(4, 8).axes
    assert gpipe.get_title().startswith(f"GPipe: bubble {float(bubble_fraction(4, 8)):.1%}, at most 8 micro-batches")
    assert one_f.get_title().startswith(f"1F1B: bubble {float(bubble_fraction(4, 8)):.1%}, at most 4 micro-batches")
    slots = [p for p in gpipe.patches if isinstance(p, Rectangle)]
    assert len(slots) == 4 * 8 * 2  # a forward and a backward per stage and micro-batch


def test_tensor_and_mesh_figures_label_every_rank() -> None:
    texts = [t.get_text() for t in figures.tensor_parallel_figure(3, sequence=True).axes[0].texts]
    assert {"all-gather", "reduce-scatter"} <= set(texts)
    assert sum(t.startswith("y[seq") for t in texts) == 3
    mesh = [t.get_text() for t in figures.mesh_figure(2, 2).axes[0].texts]
    assert [t for t in mesh if t.startswith("rank")] == ["rank 0", "rank 1", "rank 2", "rank 3"]


BAD = [
    lambda: figures.ring_figure(0),
    lambda: figures.pipeline_figure(4, 0),
    lambda: figures.tensor_parallel_figure(-1),
    lambda: figures.mesh_figure(0, 2),
]


@pytest.mark.parametrize("call", BAD)
def test_bad_sizes(call) -> None:
    with pytest.raises(ValueError, match="must be an int ≥ 1"):
        call()
