"""The attention chapter's schematic figure: FlashAttention's tiling of the score matrix under a causal mask, with
the running softmax state one program keeps.

The tile counts come from :func:`flash_tiles` (checked by the tests) for the Triton kernel's default tiling at head
dimension 128 (:data:`gpukb.attention.kernel.DEFAULT_CONFIGS`). :mod:`gpukb.attention.pages` alone turns the figure
into inline SVG.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure

from gpukb.arguments import flag, positive_int
from gpukb.attention.kernel import DEFAULT_CONFIGS
from gpukb.figures import COLOURS, box, schematic


@dataclass(frozen=True)
class FlashTiles:
    """How many tiles of the score matrix a tiled kernel computes.

    Attributes:
        rows: Query blocks (one program each).
        cols: Key blocks.
        full: Tiles computed without a mask.
        masked: Tiles on the causal diagonal, computed with the mask applied.
        skipped: Tiles wholly after every query of their block: never computed.
    """

    rows: int
    cols: int
    full: int
    masked: int
    skipped: int


def flash_tiles(seq: int, block_m: int, block_n: int, causal: bool) -> FlashTiles:
    """Tiles of a ``seq × seq`` score matrix in ``block_m × block_n`` tiles, with the causal mask aligned top left.

    Raises:
        ValueError: For sizes below 1, or a ``block_n`` that does not divide ``block_m`` or ``seq``.
    """
    seq, block_m, block_n = (positive_int(n, v) for n, v in (("seq", seq), ("block_m", block_m), ("block_n", block_n)))
    if block_m % block_n or seq % block_m:
        raise ValueError(f"block_n ({block_n}) must divide block_m ({block_m}), and block_m the length ({seq})")
    rows, cols = seq // block_m, seq // block_n
    if not flag("causal", causal):
        return FlashTiles(rows, cols, rows * cols, 0, 0)
    full = masked = 0
    for i in range(rows):
        first, last = i * block_m, (i + 1) * block_m - 1  # the block's query rows
        for j in range(cols):
            lo, hi = j * block_n, (j + 1) * block_n - 1  # the tile's keys
            if hi <= first:
                full += 1  # every query of the block sees every key of the tile
            elif lo <= last:
                masked += 1
    return FlashTiles(rows, cols, full, masked, rows * cols - full - masked)


def flash_figure(seq: int = 512, head_dim: int = 128) -> Figure:
    """The score matrix of one head cut into the kernel's tiles: computed, masked on the diagonal, skipped; one
    program's row of tiles, walked left to right, and what it keeps between tiles."""
    dims = sorted({d for d, _ in DEFAULT_CONFIGS})
    if isinstance(head_dim, bool) or head_dim not in dims:
        raise ValueError(f"head_dim must be one the kernel has a tiling for, {dims}; got {head_dim!r}")
    config = DEFAULT_CONFIGS[(head_dim, True)]
    t = flash_tiles(seq, config.block_m, config.block_n, True)
    fig, ax = schematic(6.4, 3.9)
    side = 3.2
    x0, y0 = 0.25, 0.25
    h, w = side / t.rows, side / t.cols
    program = t.rows - 3  # the query block drawn as one program's walk
    for i in range(t.rows):
        for j in range(t.cols):
            x, y = x0 + j * w, y0 + side - (i + 1) * h
            lo, first, last = j * config.block_n, i * config.block_m, (i + 1) * config.block_m - 1
            if lo > last:
                box(ax, x, y, w, h, "", None)
                continue
            masked = (j + 1) * config.block_n - 1 > first
            colour = COLOURS[3] if masked else (COLOURS[0] if i != program else COLOURS[2])
            box(ax, x, y, w, h, "mask" if masked and w > 0.3 else "", colour, fontsize=6.5)
    y = y0 + side - (program + 0.5) * h
    ax.annotate("", xy=(x0 + program * w - 0.05, y), xytext=(x0 + 0.05, y),
                arrowprops={"arrowstyle": "->", "color": "black", "lw": 1.2})  # fmt: skip
    ax.text(x0 + side / 2, y0 + side + 0.08, f"scores S = Q Kᵀ of one head, L = {seq}: keys →", ha="center",
            fontsize=9)  # fmt: skip
    ax.text(x0 - 0.08, y0 + side / 2, "queries ↓", rotation=90, ha="right", va="center", fontsize=9)
    right = x0 + side + 0.25
    lines = [
        (f"tiles of {config.block_m} queries × {config.block_n} keys", "bold"),
        (f"(the kernel's tiling for d = {head_dim}, causal)", "normal"),
        (f"{t.full} computed whole (blue, green)", "normal"),
        (f"{t.masked} on the diagonal, masked (red)", "normal"),
        (f"{t.skipped} after the diagonal, skipped (empty)", "normal"),
        (f"{t.full + t.masked} of {t.rows * t.cols} computed", "bold"),
        ("", "normal"),
        ("one program (green row) walks its keys,", "normal"),
        ("keeping per query row only m, ℓ and a:", "normal"),
        ("  m′ = max(m, rowmax S)", "normal"),
        ("  P = exp(S − m′)", "normal"),
        ("  ℓ′ = e^(m − m′) ℓ + rowsum P", "normal"),
        ("  a′ = e^(m − m′) a + P V", "normal"),
        ("and writes O = a / ℓ once, at the end", "normal"),
    ]
    for k, (text, weight) in enumerate(lines):
        ax.text(right, y0 + side - k * 0.245, text, fontsize=9, va="top", weight=weight)
    return fig
