"""The chapter's figures: where each element of an N=1, C=64, H=5, W=4 tensor lies in memory, NCHW against NHWC,
and the four families of convolution algorithms with one ResNet-50 layer's numbers (:func:`algorithm_counts`).

The functions return matplotlib ``Figure``s; :mod:`gpukb.cudnn.pages` alone turns them into inline SVG.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from gpukb.cudnn import convolution, layers
from gpukb.cudnn.descriptors import layout_grid
from gpukb.figures import COLOURS, arrow, box, schematic


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


@dataclass(frozen=True)
class AlgorithmCounts:
    """The numbers the convolution-algorithm figure shows for one layer.

    Attributes:
        layer: The layer's name.
        macs_per_output: Multiply-adds of one output element, C·R·S (direct).
        weight_shape: The GEMM's A, K × C·R·S.
        columns_shape: The im2col matrix, C·R·S × N·Ho·Wo.
        columns_bytes: Bytes of the im2col matrix in fp16 (an explicit GEMM stores it; an implicit one does not).
        input_bytes: Bytes of the input in fp16.
        winograd_mults: Multiplications of one F(2×2, 3×3) tile (:func:`gpukb.cudnn.convolution.winograd_tile`).
        direct_mults: The direct sum's multiplications for the same 2×2 outputs.
    """

    layer: str
    macs_per_output: int
    weight_shape: tuple[int, int]
    columns_shape: tuple[int, int]
    columns_bytes: int
    input_bytes: int
    winograd_mults: int
    direct_mults: int


def algorithm_counts(layer_name: str = "res2-3x3") -> AlgorithmCounts:
    """The counts of the figure for a ResNet-50 layer of ``cudnn/resnet50_layers.toml`` at its batch.

    Raises:
        ValueError: For a layer the file does not list, or one whose filter is not 3 × 3 (Winograd's F(2×2, 3×3)).
    """
    table = layers.load()
    found = [x for x in table.layers if x.name == layer_name]
    if not found:
        raise ValueError(f"no layer {layer_name!r}; layers: {[x.name for x in table.layers]}")
    layer = found[0]
    if layer.kernel != 3:
        raise ValueError(f"layer {layer_name!r} has a {layer.kernel}×{layer.kernel} filter; the figure needs 3×3")
    conv = convolution.conv_descriptor(pad=layer.pad, stride=layer.stride)
    x_dims = (table.batch, layer.c, layer.hw, layer.hw)
    n, k, ho, wo = convolution.output_dims(x_dims, (layer.k, layer.c, 3, 3), conv)
    taps = layer.c * 9
    tile, mults = convolution.winograd_tile(np.zeros((4, 4)), np.zeros((3, 3)))
    return AlgorithmCounts(
        layer=layer.name,
        macs_per_output=taps,
        weight_shape=(k, taps),
        columns_shape=(taps, n * ho * wo),
        columns_bytes=taps * n * ho * wo * 2,
        input_bytes=int(np.prod(x_dims)) * 2,
        winograd_mults=mults,
        direct_mults=tile.size * 9,
    )


def algorithms_figure(layer_name: str = "res2-3x3") -> Figure:
    """Four ways to compute a convolution, with one ResNet-50 layer's numbers: direct, GEMM on unrolled columns,
    Winograd's transformed tiles, and the FFT's pointwise product."""
    c = algorithm_counts(layer_name)
    fig, ax = schematic(6.4, 4.6)
    ax.text(0.05, 4.55, f"ResNet-50 {c.layer}: one layer, four algorithm families", va="top", fontsize=10,
            weight="bold")  # fmt: skip

    def title(x: float, y: float, text: str) -> None:
        ax.text(x, y, text, va="top", fontsize=9.5, weight="bold")

    def note(x: float, y: float, text: str) -> None:
        ax.text(x, y, text, va="top", fontsize=8.5)

    # direct
    title(0.05, 4.15, "DIRECT")
    for d in range(3):
        box(ax, 0.15 + d * 0.12, 3.05 + d * 0.12, 0.75, 0.75, "", COLOURS[0])
    box(ax, 0.4, 3.3, 0.36, 0.36, "", COLOURS[3])
    arrow(ax, (1.3, 3.6), (1.65, 3.6))
    box(ax, 1.7, 3.5, 0.2, 0.2, "", COLOURS[2])
    note(2.0, 3.75, f"each output sums\nC·R·S = {c.macs_per_output}\nproducts")
    # GEMM
    title(3.3, 4.15, "GEMM / IMPLICIT_GEMM")
    box(ax, 3.35, 3.15, 0.5, 0.7, f"{c.weight_shape[0]}×\n{c.weight_shape[1]}", COLOURS[0], fontsize=7.5)
    ax.text(3.95, 3.5, "×", fontsize=11, va="center")
    box(ax, 4.15, 3.15, 2.1, 0.7, f"im2col: {c.columns_shape[0]} × {c.columns_shape[1]:,}", COLOURS[1], fontsize=8)
    note(3.3, 3.05, f"unrolled: {c.columns_bytes / 2**20:,.0f} MiB in fp16, {c.columns_bytes / c.input_bytes:.0f}× "
         f"the input;\nIMPLICIT_GEMM forms its columns on the fly")  # fmt: skip
    # Winograd
    title(0.05, 2.1, "WINOGRAD, F(2×2, 3×3)")
    box(ax, 0.15, 0.75, 0.8, 0.8, "4×4\ninput tile", COLOURS[0], fontsize=7.5)
    arrow(ax, (1.0, 1.15), (1.3, 1.15))
    box(ax, 1.35, 0.75, 0.8, 0.8, f"{c.winograd_mults}\nproducts", COLOURS[3], fontsize=7.5)
    arrow(ax, (2.2, 1.15), (2.5, 1.15))
    box(ax, 2.55, 0.95, 0.4, 0.4, "2×2", COLOURS[2], fontsize=7.5)
    note(0.05, 0.6, f"{c.winograd_mults} multiplications for 4 outputs,\nagainst {c.direct_mults} direct "
         f"({c.direct_mults / c.winograd_mults:.2f}× fewer)")  # fmt: skip
    # FFT
    title(3.3, 2.1, "FFT")
    box(ax, 3.35, 1.0, 0.6, 0.6, "x", COLOURS[0], fontsize=8)
    box(ax, 3.35, 0.3, 0.6, 0.6, "w", COLOURS[1], fontsize=8)
    arrow(ax, (4.0, 1.3), (4.35, 1.0))
    arrow(ax, (4.0, 0.6), (4.35, 0.9))
    box(ax, 4.4, 0.65, 0.7, 0.6, "F(x)·F(w)", COLOURS[3], fontsize=7.5)
    arrow(ax, (5.15, 0.95), (5.45, 0.95))
    box(ax, 5.5, 0.75, 0.4, 0.4, "y", COLOURS[2], fontsize=8)
    note(3.3, 1.95, "transform, multiply pointwise,\ntransform back")
    return fig
