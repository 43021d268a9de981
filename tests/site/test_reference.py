"""The API reference is generated when the site is built: a page per module, none committed, one nav entry, ranked
below prose in the search, without source code."""

from __future__ import annotations

import json
import subprocess

import pytest

from gpukb.site import reference
from tests.helpers import ROOT, mkdocs_config

PACKAGE = ROOT / "src" / "gpukb"


def _documented_modules() -> list[str]:
    """Every module of gpukb a reader may import, found on disk (not from the generator): all but private ones
    (``__main__``, ``_name``) and the packages that only hold data files."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["gpukb", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        if "__pycache__" in path.parts or any(p.startswith("_") for p in parts) or parts[1:2] == ["data"]:
            continue
        names.append(".".join(parts))
    return names


def _config() -> dict:
    return mkdocs_config()


def test_no_reference_page_is_committed() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "--", "docs/reference"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert tracked == "", "the API reference is generated at build time; remove the committed pages:\n" + tracked
    assert not (ROOT / "docs" / "reference").exists(), "docs/reference/ would clash with the generated pages"


def test_the_nav_names_the_reference_once_and_lists_no_module() -> None:
    config = _config()
    entries = [e for e in config["nav"] if isinstance(e, dict) and "API reference" in e]
    assert entries == [{"API reference": reference.ROOT}], "one top-level 'API reference' entry, its folder only"
    assert "reference/" not in json.dumps([e for e in config["nav"] if e not in entries]), "module pages in the nav"
    (autonav,) = [p["api-autonav"] for p in config["plugins"] if isinstance(p, dict) and "api-autonav" in p]
    assert autonav["modules"] == ["src/gpukb"]
    assert autonav["nav_section_title"] == "API reference"


def test_every_module_has_its_page_without_source(built_site) -> None:
    site, _ = built_site
    modules = _documented_modules()
    assert {"gpukb", "gpukb.formats.codec", "gpukb.site.reference"} <= set(modules)
    missing, with_source = [], []
    for module in modules:
        page = site / reference.ROOT / module.replace(".", "/") / "index.html"
        if not page.is_file() or f'id="{module}"' not in page.read_text(encoding="utf-8"):
            missing.append(module)
        elif "Source code in" in page.read_text(encoding="utf-8"):
            with_source.append(module)
    assert missing == [], f"modules without their API page: {missing}"
    assert with_source == [], f"API pages showing source code: {with_source}"
    generated = {
        p.parent.relative_to(site / reference.ROOT).as_posix().replace("/", ".")
        for p in (site / reference.ROOT).rglob("index.html")
    }
    assert generated == set(modules), f"pages of no module: {sorted(generated - set(modules))}"


def test_reference_pages_rank_below_prose_in_the_search(built_site) -> None:
    site, _ = built_site
    docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    api = [d for d in docs if d["location"].startswith(reference.ROOT)]
    prose = [d for d in docs if not d["location"].startswith(reference.ROOT)]
    assert len(api) >= len(_documented_modules())
    assert prose
    assert {d.get("boost") for d in api} == {reference.SEARCH_BOOST}
    assert {d.get("boost") for d in prose} == {None}  # Material's default weight, 1
    assert reference.SEARCH_BOOST < 1


def test_rank_below_prose_sets_only_reference_pages() -> None:
    meta: dict = {}
    reference.rank_below_prose("reference/gpukb/formats/codec.md", meta)
    assert meta == {"search": {"boost": reference.SEARCH_BOOST}}
    kept = {"search": {"boost": 2}}
    reference.rank_below_prose("reference/gpukb/index.md", kept)
    assert kept == {"search": {"boost": 2}}, "a page's own front matter wins"
    prose: dict = {}
    reference.rank_below_prose("formats/fp8.md", prose)
    assert prose == {}
    with pytest.raises(TypeError, match=r"src_uri must be a page path as a str, got PosixPath"):
        reference.is_reference(ROOT / "docs")
