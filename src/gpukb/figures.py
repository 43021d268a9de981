"""Figures drawn when the site is built, returned as inline SVG: no image files to go stale, no requests."""

from __future__ import annotations

import io
import re

import matplotlib

matplotlib.use("Agg")  # no display: the build and the tests run headless

import matplotlib.pyplot as plt
from matplotlib.figure import Figure


def to_svg(fig: Figure) -> str:
    """Render a figure as an ``<svg>`` element for inline use in a page, and close it.

    The output is deterministic (fixed element ids, no date), so rebuilding the site changes nothing. It follows the
    page's colour scheme: the figure and axes have no background, black (text, axes, ticks) becomes the page's text
    colour (``currentColor``) and white (a legend's box) the page's background colour, so a figure reads the same
    in the light and the dark scheme; the coloured lines keep their colours.
    """
    with matplotlib.rc_context({"svg.hashsalt": "gpukb", "svg.fonttype": "path"}):
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None}, transparent=True)
    plt.close(fig)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML prolog and doctype: the SVG sits inside HTML
    svg = re.sub(
        r'<svg ([^>]*?)width="[^"]*" height="[^"]*"',
        r'<svg \1fill="currentColor" style="max-width: 100%; height: auto"',
        svg,
    )  # text glyphs carry no fill of their own: they take the root's, the page's text colour
    svg = re.sub(r"(fill|stroke): ?#000000", r"\1: currentColor", svg)
    svg = re.sub(r"fill: ?#ffffff", "fill: var(--md-default-bg-color, #ffffff)", svg)
    svg = " ".join(svg.split())  # one line: Markdown would end a raw HTML block at a blank line
    return f'<div class="gpukb-figure">{svg}</div>'


def new_figure(width: float = 7.0, height: float = 4.0) -> tuple[Figure, plt.Axes]:
    """A figure and axes in the site's size and style."""
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax


#: Fill colours of schematic figures: mid-tone hues drawn at :data:`FILL_ALPHA`, so that text in the page's text
#: colour (black in the light scheme, near-white in the dark one) reads on them in both schemes.
COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive")
FILL_ALPHA = 0.35


def schematic(width: float = 7.0, height: float = 4.0) -> tuple[Figure, plt.Axes]:
    """A figure for a drawn diagram: no axes, no grid, data coordinates in the figure's inches (x right, y up).

    Text and lines drawn in black become the page's text colour (:func:`to_svg`), so use black for them and the
    translucent :data:`COLOURS` for fills.
    """
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))  # no layout engine: one data unit is one inch, whatever the text around it
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def box(ax: plt.Axes, x: float, y: float, w: float, h: float, text: str = "", colour: str | None = None,
        fontsize: float = 9, **text_options: object) -> None:  # fmt: skip
    """A rectangle with its lower-left corner at ``(x, y)``, outlined in the text colour, filled with ``colour``
    (translucent; ``None`` leaves it empty), with ``text`` centred in it."""
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((x, y), w, h, facecolor="none", edgecolor="black", linewidth=0.8))
    if colour is not None:
        ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, alpha=FILL_ALPHA, edgecolor="none"))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize, color="black", **text_options)


def arrow(ax: plt.Axes, start: tuple[float, float], end: tuple[float, float], text: str = "", fontsize: float = 8,
          **text_options: object) -> None:  # fmt: skip
    """An arrow in the text colour from ``start`` to ``end``, with ``text`` beside its middle."""
    ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "->", "color": "black", "lw": 0.9})
    if text:
        mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
        ax.text(*mid, text, fontsize=fontsize, color="black", **text_options)
