"""Python-Markdown's ``abbr`` extension, with the pattern of the glossary's terms compiled once per build.

Every page and every docstring of the API reference is converted with the glossary's ~280 terms as abbreviations
(``gpukb.glossary.hover_texts``, given by the MkDocs hook). The stock extension escapes and joins all of them into
a new pattern for each conversion, about 4,000 times a build. This one keeps the pattern of each list of
abbreviations and does the rest exactly as the stock extension does: the same matches, the same ``<abbr>``
elements. A page's own ``*[TERM]: text`` definitions make another list, and so another pattern.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown.extensions.abbr import AbbrExtension, AbbrTreeprocessor


@lru_cache(maxsize=64)
def pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    """The stock extension's pattern for ``terms`` (longest first; terms of one length keep their order)."""
    ordered = sorted(terms, key=len, reverse=True)
    return re.compile(f"\\b(?:{'|'.join(re.escape(term) for term in ordered)})\\b")


class _Treeprocessor(AbbrTreeprocessor):
    def run(self, root):  # the stock ``run`` with the pattern from :func:`pattern`
        if not self.abbrs:
            return
        self.RE = pattern(tuple(self.abbrs))
        self.iter_element(root)


class GlossaryAbbrExtension(AbbrExtension):
    """``abbr`` with the pattern built once per list of abbreviations; configured as the stock extension is."""

    def extendMarkdown(self, md):  # noqa: N802 - Python-Markdown's name
        super().extendMarkdown(md)
        md.treeprocessors.register(_Treeprocessor(md, self.abbrs), "abbr", 7)


def makeExtension(**kwargs) -> GlossaryAbbrExtension:  # noqa: N802 - the name Python-Markdown looks up
    """The extension, as Python-Markdown loads it by module name (``gpukb.site.abbreviations`` in mkdocs.yml)."""
    return GlossaryAbbrExtension(**kwargs)
