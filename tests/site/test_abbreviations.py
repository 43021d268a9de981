"""The site's abbr extension marks exactly what Python-Markdown's own does, with the glossary and with a page's own
abbreviations, conversion after conversion."""

from __future__ import annotations

import markdown

from gpukb import glossary
from gpukb.site import abbreviations

PAGES = [
    "An SM runs warps; two SMs run more. FP8 and BF16 in a table:\n\n| SM | FP8 |\n|---|---|\n| 1 | 2 |\n",
    "A page that defines its own: XYZ here, and SM again.\n\n*[XYZ]: a term of this page\n",
    "A page that drops a glossary term: SM stays plain.\n\n*[SM]: ''\n",
    "No term at all.\n",
]


def _convert(extension: str, pages: list[str]) -> list[str]:
    md = markdown.Markdown(
        extensions=[extension, "tables"], extension_configs={extension: {"glossary": glossary.hover_texts()}}
    )
    out = []
    for page in pages:
        out.append(md.convert(page))
        md.reset()
    return out


def test_the_same_abbreviations_as_the_stock_extension() -> None:
    ours = _convert("gpukb.site.abbreviations", PAGES)
    assert ours == _convert("abbr", PAGES)
    assert '<abbr title="a term of this page">XYZ</abbr>' in ours[1]
    assert "<abbr" not in ours[2].split("SM stays")[0]
    assert "SM stays plain" in ours[2]
    assert ours[0].count("<abbr") >= 5, "SM, SMs, FP8, BF16 in prose and SM, FP8 in the table"


def test_one_pattern_per_list_of_terms() -> None:
    abbreviations.pattern.cache_clear()
    _convert("gpukb.site.abbreviations", PAGES * 3)
    info = abbreviations.pattern.cache_info()
    assert info.misses == 3, "the glossary, the glossary with XYZ, the glossary without SM"
    assert info.hits == len(PAGES) * 3 - 3
