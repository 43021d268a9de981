"""Turn the TeX that pymdownx.arithmatex marks up into MathML when the site is built.

Browsers render MathML natively (Chromium since version 109, Firefox and Safari long before), so formulas need
no JavaScript and no CDN: they show on a plane, and on machines with no internet. arithmatex runs in
``generic`` mode and leaves ``<span class="arithmatex">\\(x\\)</span>`` (inline) and
``<div class="arithmatex">\\[x\\]</div>`` (display); this module replaces both with ``<math>`` elements.
"""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert

_MATH = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*(?:\\\((?P<inline>.*?)\\\)|\\\[(?P<display>.*?)\\\])\s*</(?P=tag)>',
    re.DOTALL,
)


def tex_to_mathml(tex: str, display: bool = False) -> str:
    """Convert one TeX formula to a ``<math>`` element.

    Args:
        tex: The formula, without ``$`` or ``\\(`` delimiters.
        display: Render as a block (``display="block"``) rather than inline.

    Raises:
        ValueError: If the TeX cannot be converted, quoting the formula.
    """
    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except Exception as err:  # latex2mathml raises many types; the build must stop with the formula named
        raise ValueError(f"cannot render TeX {tex!r} as MathML: {err}") from err


def render_math(page_html: str) -> str:
    """Replace every arithmatex span/div in a page's HTML by MathML."""

    def replace(match: re.Match[str]) -> str:
        display = match.group("display") is not None
        tex = html.unescape(match.group("display") if display else match.group("inline"))
        mathml = tex_to_mathml(tex, display=display)
        return f'<div class="math-display">{mathml}</div>' if display else mathml

    return _MATH.sub(replace, page_html)
