"""The formats chapter's figures: where each format has precision, and how much; and the bit fields of each.

Figure functions return a matplotlib ``Figure``; ``gpukb.formats.pages`` alone turns one into inline SVG for a page
(``gpukb.figures.to_svg``), and a reader's notebook can show it as it is.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from matplotlib.figure import Figure

from gpukb.figures import COLOURS, box, new_figure, schematic
from gpukb.formats.spec import get_format


def relative_gap_curve(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Every power of two from the format's smallest subnormal to its top binade, and the gap from each to the next
    value above it relative to it (``ulp(x) / x``).

    Across the normal range that is ``2**-mantissa_bits`` at every power of two, the largest relative gap in its
    binade (it falls to about half that just below the next power of two); across the subnormals the gap stays
    ``2**(min_exponent - mantissa_bits)`` while the values shrink, so the relative gap doubles every binade, up to
    1 at the smallest subnormal.
    """
    fmt = get_format(name)
    exponents = np.arange(fmt.min_exponent - fmt.mantissa_bits, int(np.floor(np.log2(float(fmt.max_value)))) + 1)
    x = np.ldexp(1.0, exponents)
    gap = np.ldexp(1.0, np.maximum(exponents, fmt.min_exponent) - fmt.mantissa_bits)
    return x, gap / x


#: Line styles for the relative-gap figure, so that formats with the same precision (FP16 and TF32) stay visible.
_STYLES = ({"lw": 4, "alpha": 0.45}, {"lw": 2}, {"lw": 1.5, "ls": "--"}, {"lw": 1.5, "ls": ":"})


def relative_gap_figure(names: Iterable[str], title: str) -> Figure:
    """The gap between neighbouring values relative to the value, against the value, one line per format.

    Each line is a staircase over powers of two (:func:`relative_gap_curve`), held to the format's largest value:
    its height across the normal range is the format's precision, its extent the range, and its rise on the left
    the subnormals.
    """
    fig, ax = new_figure()
    for i, name in enumerate(names):
        fmt = get_format(name)
        x, rel = relative_gap_curve(name)
        x = np.append(x, float(fmt.max_value))
        rel = np.append(rel, rel[-1])
        label = f"{name}: $2^{{-{fmt.mantissa_bits}}}$ from {float(fmt.min_normal):.2g} to {float(fmt.max_value):.3g}"
        ax.step(x, rel, where="post", label=label, **_STYLES[i % len(_STYLES)])
    ax.set_xscale("log", base=10)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("value x")
    ax.set_ylabel("gap to the next value / x")
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize="small")
    return fig


#: The formats the bit-layout figure draws, widest first.
LAYOUT_FORMATS = ("fp32", "tf32", "bf16", "fp16", "e5m2", "e4m3", "e3m2", "e2m1", "e8m0")


def bit_fields(names: Iterable[str] = LAYOUT_FORMATS) -> list[tuple[str, int, int, int, int]]:
    """``(name, sign bits, exponent bits, mantissa bits, bias)`` of each format, from ``formats.toml``."""
    out = []
    for name in names:
        fmt = get_format(name)
        out.append((fmt.name, int(fmt.signed), fmt.exponent_bits, fmt.mantissa_bits, fmt.bias))
    return out


def bit_layout_figure(names: Iterable[str] = LAYOUT_FORMATS) -> Figure:
    """One row of bit cells per format: sign, exponent and mantissa fields, with the bias and largest value."""
    fields = bit_fields(names)
    cell, row = 0.125, 0.36
    fig, ax = schematic(6.4, row * len(fields) + 0.55)
    top = row * len(fields) + 0.2
    for k, (name, sign, exp, man, bias) in enumerate(fields):
        y = top - (k + 1) * row
        ax.text(0.62, y + cell / 2 + 0.02, name.upper(), ha="right", va="center", fontsize=8.5, weight="bold")
        x = 0.7
        for width, colour in ((sign, COLOURS[3]), (exp, COLOURS[0]), (man, COLOURS[2])):
            for _ in range(width):
                box(ax, x, y, cell, cell + 0.05, "", colour)
                x += cell
        top_value = float(get_format(name).max_value)
        shown = f"{top_value:,.0f}" if top_value < 1e6 else f"{top_value:.3g}"
        ax.text(0.7 + 32 * cell + 0.1, y + cell / 2 + 0.02, f"E{exp} M{man}, bias {bias}, max {shown}",
                va="center", fontsize=8)  # fmt: skip
    legend_y = top + 0.08
    for i, (label, colour) in enumerate((("sign", COLOURS[3]), ("exponent", COLOURS[0]), ("mantissa", COLOURS[2]))):
        box(ax, 0.7 + i * 1.2, legend_y, cell, cell, "", colour)
        ax.text(0.7 + i * 1.2 + cell + 0.06, legend_y + cell / 2, label, va="center", fontsize=8.5)
    return fig
