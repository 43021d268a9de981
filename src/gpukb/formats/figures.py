"""The formats chapter's figures: where each format has precision.

Figure functions return a matplotlib ``Figure``; ``gpukb.formats.pages`` alone turns one into inline SVG for a page
(``gpukb.figures.to_svg``), and a reader's notebook can show it as it is.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from matplotlib.figure import Figure

from gpukb.figures import new_figure
from gpukb.formats.spec import get_format


def ulp_curve(name: str, points_per_binade: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Magnitudes from the smallest subnormal to the largest value, and the gap (ulp) between neighbours there.

    The gap is ``2**(max(e, min_exponent) - mantissa_bits)`` for a value with exponent ``e``: constant across
    the subnormals, then doubling every binade.
    """
    fmt = get_format(name)
    low = float(fmt.min_subnormal)
    high = float(fmt.max_value)
    binades = int(np.log2(high / low)) + 1
    x = np.geomspace(low, high, binades * points_per_binade)
    exponent = np.floor(np.log2(x)).astype(int)
    ulp = np.ldexp(1.0, np.maximum(exponent, fmt.min_exponent) - fmt.mantissa_bits)
    return x, ulp


def ulp_figure(names: Iterable[str], title: str) -> Figure:
    """Log-log plot of the gap between neighbouring values against magnitude, one line per format."""
    fig, ax = new_figure()
    for name in names:
        x, ulp = ulp_curve(name)
        ax.step(x, ulp, where="post", label=f"{name} (max {float(get_format(name).max_value):.3g})")
    ax.set_xscale("log", base=10)
    ax.set_yscale("log", base=10)
    ax.set_xlabel("magnitude of the value")
    ax.set_ylabel("gap to the next value (ulp)")
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize="small")
    return fig
