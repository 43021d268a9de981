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

#: amsmath's ``aligned`` block, with its optional vertical position (``[t]``, ``[c]``, ``[b]``).
_ALIGNED = re.compile(r"\\(?:begin\{aligned\}(?:\[[tcb]\])?|end\{aligned\})")
#: A column separator latex2mathml left as an identifier: an ``&`` outside any alignment environment.
_STRAY_AMPERSAND = re.compile(r"<mi>&(?:amp;)?</mi>")


def _aligned_as_align_star(tex: str) -> str:
    """Spell ``aligned`` as ``align*``, which latex2mathml knows and ``aligned`` it does not.

    Both lay out rows split by ``\\\\`` and columns split by ``&``, aligned right, left, right, left, ..., and number
    no equations. ``aligned`` is the one meant to sit inside a larger formula; the ``<mtable>`` latex2mathml makes of
    ``align*`` sits wherever the environment stood, so it serves both.
    """
    return _ALIGNED.sub(lambda m: r"\begin{align*}" if m.group(0).startswith(r"\begin") else r"\end{align*}", tex)


def tex_to_mathml(tex: str, display: bool = False) -> str:
    """Convert one TeX formula to a ``<math>`` element.

    Args:
        tex: The formula, without ``$`` or ``\\(`` delimiters.
        display: Render as a block (``display="block"``) rather than inline.

    Raises:
        ValueError: If the TeX cannot be converted, quoting the formula.
    """
    try:
        mathml = convert(_aligned_as_align_star(tex.strip()), display="block" if display else "inline")
    except Exception as err:  # latex2mathml raises many types; the build must stop with the formula named
        raise ValueError(f"cannot render TeX {tex!r} as MathML: {err}") from err
    if _STRAY_AMPERSAND.search(mathml):  # it would show a literal '&' (and a raw one is not even valid markup)
        raise ValueError(f"cannot render TeX {tex!r} as MathML: '&' outside an alignment environment such as aligned")
    return mathml


def render_math(page_html: str) -> str:
    """Replace every arithmatex span/div in a page's HTML by MathML."""

    def replace(match: re.Match[str]) -> str:
        display = match.group("display") is not None
        tex = html.unescape(match.group("display") if display else match.group("inline"))
        mathml = tex_to_mathml(tex, display=display)
        return f'<div class="math-display">{mathml}</div>' if display else mathml

    return _MATH.sub(replace, page_html)
