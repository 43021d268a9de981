"""The API reference is one page per module, committed, listed in the nav, without source, ranked below prose."""

from __future__ import annotations

import pytest
import yaml

from gpukb.site import reference
from tests.helpers import ROOT, mkdocs_config

FIX = "run `python -m gpukb.site.reference` from the repository root and paste the nav it prints into mkdocs.yml"


def _nav_entry() -> list:
    config = mkdocs_config()
    entries = [e["API reference"] for e in config["nav"] if isinstance(e, dict) and "API reference" in e]
    assert len(entries) == 1, "mkdocs.yml's nav has no single 'API reference' entry"
    return entries[0]


def test_every_module_has_its_page_and_no_page_is_stale() -> None:
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / reference.REFERENCE).rglob("*.md")}
    wanted = reference.pages()
    assert on_disk == set(wanted), FIX
    for path, text in wanted.items():
        assert (ROOT / "docs" / path).read_text(encoding="utf-8") == text, f"docs/{path} differs: {FIX}"


def test_the_nav_lists_every_page() -> None:
    assert _nav_entry() == reference.nav(), FIX


def test_pages_show_no_source_and_rank_below_prose() -> None:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "show_source: false" in text
    assert "show_submodules: false" in text
    for page in reference.pages().values():
        assert page.startswith(f"---\nsearch:\n  boost: {reference.SEARCH_BOOST}\n---\n")
    assert reference.SEARCH_BOOST < 1


def test_page_paths() -> None:
    assert reference.page_path("gpukb") == "reference/index.md"
    assert reference.page_path("gpukb.formats") == "reference/gpukb.formats.md"
    assert reference.page_path("gpukb.formats.codec") == "reference/gpukb.formats.codec.md"
    assert "gpukb.__main__" not in reference.modules()
    with pytest.raises(ValueError, match=r"gpukb\.formats\.codec"):
        reference.page_path("gpukb.nothing")
