"""TeX becomes MathML at build time, so math renders without JavaScript or a CDN."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest

from gpukb.site.mathml import render_math, tex_to_mathml

MATHML = "{http://www.w3.org/1998/Math/MathML}"


def test_inline_and_display_math() -> None:
    html = (
        '<p>a <span class="arithmatex">\\(2^{e - 127}\\)</span> b</p>'
        '<div class="arithmatex">\\[\n\\frac{m}{2^{23}}\n\\]</div>'
    )
    out = render_math(html)
    assert "arithmatex" not in out
    assert "\\(" not in out
    assert "\\frac" not in out
    assert out.count("<math") == 2
    assert 'display="block"' in out
    assert "<msup>" in out
    assert "<mfrac>" in out


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


def _table(display_html: str) -> ElementTree.Element:
    """The one ``<mtable>`` of a rendered display formula (parsing it also proves the markup well formed)."""
    (table,) = ElementTree.fromstring(display_html).iter(f"{MATHML}mtable")
    return table


def test_aligned_becomes_rows_of_right_and_left_aligned_cells() -> None:
    out = render_math('<div class="arithmatex">\\[\n\\begin{aligned} a &= b + c \\\\ d &= e \\end{aligned}\n\\]</div>')
    assert "aligned" not in out
    assert "align*" not in out
    rows = _table(out).findall(f"{MATHML}mtr")
    assert len(rows) == 2
    for row, left in zip(rows, ("a", "d"), strict=True):
        cells = row.findall(f"{MATHML}mtd")
        assert [cell.get("columnalign") for cell in cells] == ["right", "left"]
        assert [mi.text for mi in cells[0].iter(f"{MATHML}mi")] == [left]  # what stands left of '&' ...
        assert "=" in [mo.text for mo in cells[1].iter(f"{MATHML}mo")]  # ... and the relation right of it
    assert "<mi>&amp;</mi>" not in out
    assert "<mi>&</mi>" not in out


def test_aligned_pairs_of_columns_alternate_right_and_left() -> None:
    out = render_math('<div class="arithmatex">\\[\\begin{aligned}[t] a &= b & c &= d \\\\ e &= f & g &= h'
                      "\\end{aligned}\\]</div>")  # fmt: skip
    rows = _table(out).findall(f"{MATHML}mtr")
    assert len(rows) == 2
    for row in rows:
        assert [cell.get("columnalign") for cell in row.findall(f"{MATHML}mtd")] == ["right", "left"] * 2
    assert "<mi>&amp;</mi>" not in out
    assert "<mi>&</mi>" not in out


def test_aligned_inside_a_larger_formula() -> None:
    out = render_math('<div class="arithmatex">\\[x = \\left\\{ \\begin{aligned} a &= 1 \\\\ b &= 2 '
                      "\\end{aligned} \\right.\\]</div>")  # fmt: skip
    table = _table(out)
    assert len(table.findall(f"{MATHML}mtr")) == 2
    assert "<mi>&amp;</mi>" not in out
    assert "<mi>&</mi>" not in out


def test_an_ampersand_outside_an_alignment_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'&' outside an alignment environment"):
        tex_to_mathml("a & b")
