"""The API reference: one page per module of ``gpukb``, generated when the site is built and never committed.

The pages and their nav come from mkdocs-api-autonav (``api-autonav`` in ``mkdocs.yml``): it walks ``src/gpukb``
and hands MkDocs a page per module (``reference/gpukb/formats/codec/``), each rendered from the docstrings by
mkdocstrings without source code (``show_source: false``). A new module gets its page with nothing to paste.

What the generator does not do is rank the pages: a search for a concept should find the page that explains it
before the function that computes it, so the MkDocs hooks give every reference page a low search weight
(:func:`rank_below_prose`, Material's ``search.boost``; prose pages have 1).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

#: Where the generated pages go, relative to ``docs/`` (api-autonav's ``api_root_uri``, its default).
ROOT = "reference/"
#: Search weight of an API page (Material's ``search.boost``; prose pages have 1): low enough that a function named
#: after a term (a title weighs 1,000 times its text in Material's index) still comes after the prose on the term.
SEARCH_BOOST = 0.001


def is_reference(src_uri: str) -> bool:
    """Whether a page (its path relative to ``docs/``, with ``/`` separators) is one of the generated API pages.

    Raises:
        TypeError: If ``src_uri`` is not a string.
    """
    if not isinstance(src_uri, str):
        raise TypeError(f"src_uri must be a page path as a str, got {type(src_uri).__name__}: {src_uri!r}")
    return src_uri.startswith(ROOT)


def rank_below_prose(src_uri: str, meta: MutableMapping[str, Any]) -> None:
    """Give a generated API page the search weight :data:`SEARCH_BOOST` in its metadata (as front matter
    ``search: {boost: 0.1}`` would); leave every other page as it is.

    Args:
        src_uri: The page's path relative to ``docs/``.
        meta: The page's metadata (``page.meta``), changed in place.
    """
    if is_reference(src_uri):
        search = meta.setdefault("search", {})
        search.setdefault("boost", SEARCH_BOOST)
