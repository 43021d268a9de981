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
