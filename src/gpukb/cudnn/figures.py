"""The chapter's figure: where each element of an N=1, C=64, H=5, W=4 tensor lies in memory, NCHW against NHWC.

The function returns a matplotlib ``Figure``; :mod:`gpukb.cudnn.pages` alone turns it into inline SVG.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from gpukb.cudnn.descriptors import layout_grid


def layout_figure(dims: Sequence[int] = (1, 64, 5, 4), formats: Sequence[str] = ("NCHW", "NHWC"),
                  channels: Sequence[int] = (0, 1, 2, 63)) -> Figure:  # fmt: skip
    """One row per format, one panel per shown channel: each H × W grid holds its elements' offsets.

    In NCHW a channel is one contiguous block of H·W elements; in NHWC the channels of one pixel are adjacent,
    so neighbouring pixels of one channel lie C elements apart.
    """
    n, c, h, w = dims
    if any(not 0 <= ch < c for ch in channels):
        raise ValueError(f"channels must lie in 0..{c - 1}; got {tuple(channels)}")
    fig = Figure(figsize=(1.9 * len(channels) + 0.6, 2.2 * len(formats)), layout="constrained")
    axes = fig.subplots(len(formats), len(channels), squeeze=False)
    top = n * c * h * w - 1
    for row, fmt in zip(axes, formats, strict=True):
        grid = layout_grid(dims, fmt)[0]
        for ax, ch in zip(row, channels, strict=True):
            # Opaque cells with the text colour chosen from each cell's fill, so the numbers read the same in the
            # light and the dark scheme (near-black and near-white: pure ones are swapped for the theme's colours).
            ax.imshow(grid[ch], cmap="viridis", vmin=0, vmax=top)
            for i in range(h):
                for j in range(w):
                    light_fill = grid[ch, i, j] / top > 0.55  # viridis turns green-yellow, bright, above about here
                    colour = "#1a1a1a" if light_fill else "#f2f2f2"
                    ax.text(j, i, str(grid[ch, i, j]), ha="center", va="center", fontsize=7, color=colour)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(f"{fmt}, c = {ch}", fontsize=9)
    fig.suptitle(f"Element offsets of an N={n}, C={c}, H={h}, W={w} tensor (H down, W across)", fontsize=10)
    return fig
