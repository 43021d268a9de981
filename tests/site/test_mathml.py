"""TeX becomes MathML at build time, so math renders without JavaScript or a CDN."""

from __future__ import annotations

import pytest

from gpukb.site.mathml import render_math, tex_to_mathml


def test_inline_and_display_math() -> None:
    html = (
        '<p>a <span class="arithmatex">\\(2^{e - 127}\\)</span> b</p>'
        '<div class="arithmatex">\\[\n\\frac{m}{2^{23}}\n\\]</div>'
    )
    out = render_math(html)
    assert "arithmatex" not in out and "\\(" not in out and "\\frac" not in out
    assert out.count("<math") == 2
    assert 'display="block"' in out
    assert "<msup>" in out and "<mfrac>" in out


def test_html_entities_are_unescaped_before_conversion() -> None:
    out = render_math('<span class="arithmatex">\\(a &lt; b\\)</span>')
    assert "<mo>&#x0003C;</mo>" in out  # the TeX '<' became a MathML operator, not the text '&lt;'
    assert "lt;" not in out.replace("&#x0003C;", "")


def test_text_without_math_is_unchanged() -> None:
    html = "<p>price: $5 and \\( not marked up</p>"
    assert render_math(html) == html


def test_bad_tex_names_the_formula() -> None:
    with pytest.raises(ValueError, match=r"cannot render TeX 'x\^'"):
        tex_to_mathml("x^")
