"""The page helper and the build share out the pages with code blocks: each is rendered once, the build renders every
page itself, and MkDocs' order of the files comes back before the pages are written."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from mkdocs.structure.files import File, Files

from gpukb.site import page_helper, render_cache
from gpukb.site.page_helper import PageHelper
from tests.helpers import ROOT


def test_a_page_runs_code_when_markdown_exec_runs_one_of_its_fences() -> None:
    assert page_helper.runs_code('Text.\n\n```python exec="on"\nprint(1)\n```\n')
    assert page_helper.runs_code("```console exec='1' result=\"text\"\n$ gpukb info\n```")
    assert not page_helper.runs_code('```python exec="off"\nprint(1)\n```\n')
    assert not page_helper.runs_code("```python\nprint(1)\n```\n")
    with pytest.raises(TypeError, match=r"got b.exec. \(bytes\)"):
        page_helper.runs_code(b"exec")


def test_a_helper_needs_a_spare_core_and_the_variable_that_turns_it_off_is_no_input() -> None:
    assert page_helper.wanted({page_helper.HELPER_ENV: "off"}, cores=8, load=0.0) is False
    assert page_helper.wanted({}, cores=2, load=1.0) is True, "the build itself, and a core to spare"
    assert page_helper.wanted({}, cores=2, load=5.0) is False, "every core busy: a helper would only add work"
    assert page_helper.wanted({}, cores=1, load=0.0) is False
    assert page_helper.HELPER_ENV in render_cache.BUILD_ONLY_VARIABLES
    assert render_cache.variables_digest({"PATH": "/bin", page_helper.HELPER_ENV: "off"}) == (
        render_cache.variables_digest({"PATH": "/bin"})
    )


#: A helper for the tests: renders a page by writing ``<page>.<its pid>`` into the folder given after the code.
HELPER = """
import os, sys
from pathlib import Path
from gpukb.site.page_helper import serve
out, folder, names = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
def render(name):
    if name == os.environ.get("DIE_ON"):
        os._exit(3)
    (out / f"{name}.{os.getpid()}").write_text("rendered", encoding="utf-8")
serve(folder, names, render, lambda: {"ran": 1, "hits": 0, "durations": [[0.5, "python: block"]]})
"""


def _start(names: list[str], out: Path) -> PageHelper:
    return PageHelper.start(names, [sys.executable, "-c", HELPER, str(out)])


def test_each_page_is_rendered_once_by_the_helper_or_the_build(tmp_path: Path) -> None:
    """The helper takes pages from the last; the build takes the rest from the first and waits for the helper's."""
    names = [f"p{i}" for i in range(6)]
    helper = _start(names, tmp_path)
    time.sleep(0.5)  # let the helper start, so that both render some pages
    states = []
    for name in names:
        state = helper.before_page(name)
        states.append(state)
        if state == "mine":
            (tmp_path / f"{name}.{os.getpid()}").write_text("rendered", encoding="utf-8")
    helper.stop()
    build = str(os.getpid())
    assert len({p.suffix[1:] for p in tmp_path.iterdir()} - {build}) <= 1, "one helper"
    for i, name in enumerate(names):
        by = [p.suffix[1:] for p in tmp_path.glob(f"{name}.*")]
        assert len(by) == 1, f"{name} rendered by {by}"
        assert (by[0] == build) == (states[i] == "mine")
    mine = [s == "mine" for s in states]
    assert mine == sorted(mine, reverse=True), f"the build takes the first pages, the helper the last: {states}"
    assert helper.ran == states.count("helper")
    assert len(helper.durations) == helper.ran
    assert helper.returncode == 0
    assert not helper.folder.exists()
    assert helper.before_page("not shared") == "other"


def test_a_helper_that_dies_leaves_its_pages_to_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIE_ON", "b")
    helper = _start(["a", "b"], tmp_path)
    deadline = time.monotonic() + 60
    while not (helper.folder / "claim-1").exists() and time.monotonic() < deadline:  # the helper has taken b
        time.sleep(0.01)
    assert helper.before_page("a") == "mine"
    assert helper.before_page("b") == "lost", "the helper claimed b and died before it was done"
    helper.stop()
    helper.stop()  # twice is harmless
    assert helper.returncode == 3


def test_start_refuses_a_repeated_page_or_no_command() -> None:
    with pytest.raises(ValueError, match="2 names, 1 distinct"):
        PageHelper.start(["x", "x"], ["true"])
    with pytest.raises(ValueError, match="empty command"):
        PageHelper.start(["x"], [])


def _files(tmp_path: Path, names: list[str]) -> Files:
    return Files([File(name, str(tmp_path), str(tmp_path / "site"), use_directory_urls=True) for name in names])


def test_the_build_starts_on_the_cheapest_pages_and_the_helper_on_the_costliest() -> None:
    names = ["a.md", "b.md", "c.md", "d.md"]
    assert page_helper.cheapest_first(names, {}) == names, "no costs known: MkDocs' order"
    assert page_helper.cheapest_first(names, {"a.md": 3.0, "c.md": 0.5, "d.md": 9.0}) == ["b.md", "c.md", "a.md",
                                                                                         "d.md"]  # fmt: skip
    with pytest.raises(TypeError, match="a page name must be a string"):
        page_helper.cheapest_first([Path("a.md")], {})
    with pytest.raises(TypeError, match="costs must map page names to seconds"):
        page_helper.cheapest_first(names, [("a.md", 1.0)])
    with pytest.raises(ValueError, match=r"the cost of a\.md must be ≥ 0\.0"):
        page_helper.cheapest_first(names, {"a.md": -1.0})


def test_code_pages_go_last_and_the_order_comes_back(tmp_path: Path) -> None:
    names = ["index.md", "a/code.md", "a/prose.md", "style.css", "b/code.md", "reference/x.md"]
    files = _files(tmp_path, names)
    page_helper.move_last(files, ["a/code.md", "b/code.md"])
    assert [f.src_uri for f in files] == ["index.md", "a/prose.md", "style.css", "reference/x.md", "a/code.md",
                                          "b/code.md"]  # fmt: skip
    files.append(File("schemas/new.json", str(tmp_path), str(tmp_path / "site"), use_directory_urls=True))
    page_helper.restore_order(files, names)
    assert [f.src_uri for f in files] == [*names, "schemas/new.json"]
    with pytest.raises(ValueError, match=r"'missing\.md' is not one of the site's files"):
        page_helper.move_last(files, ["missing.md"])


def test_main_refuses_a_configuration_that_is_not_a_file(tmp_path: Path, capsys) -> None:
    # a named pipe blocked load_config for ever; a folder ended in IsADirectoryError
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    for config, kind in ((pipe, "a named pipe"), (tmp_path, "a folder")):
        assert page_helper.main([str(config), str(tmp_path / "out"), "index.md"]) == 2
        assert f"error: {config}: not a regular file (it is {kind}); give a file" in capsys.readouterr().err


def test_the_helper_is_told_apart_and_starts_no_helper_of_its_own() -> None:
    inside = {page_helper.HELPER_ENV: page_helper.IN_HELPER}
    assert page_helper.is_helper(inside)
    assert not page_helper.is_helper({})
    assert not page_helper.is_helper({page_helper.HELPER_ENV: "off"})
    assert page_helper.wanted(inside, cores=8, load=0.0) is False


def test_the_helper_loads_every_plugin_but_those_that_run_no_block(tmp_path: Path) -> None:
    plugins = page_helper.plugins_for_the_helper(ROOT / "mkdocs.yml")
    names = [p if isinstance(p, str) else next(iter(p)) for p in plugins]
    assert names == ["search", "markdown-exec", "mkdocstrings"], names
    assert plugins[2]["mkdocstrings"]["handlers"]["python"]["paths"] == ["src"], "options as given"
    mapping = tmp_path / "mkdocs.yml"
    mapping.write_text("plugins:\n  search: {}\n  mkdocs-jupyter:\n    execute: false\n", encoding="utf-8")
    assert page_helper.plugins_for_the_helper(mapping) == [{"search": {}}]
    with pytest.raises(ValueError, match="not a regular file"):
        page_helper.plugins_for_the_helper(tmp_path)


#: Pages whose blocks sit in tabs, admonitions and lists (with Pygments off, SuperFences found fewer of them).
NESTED_PAGES = ("attention/flash.md", "attention/cost.md", "cuda/memory.md")


def _blocks_found(config, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, dict]]:
    """Convert :data:`NESTED_PAGES` with ``config``'s Markdown; the (language, code, options) that reach markdown-exec's
    run functions, which run nothing here."""
    import markdown
    from markdown_exec._internal.formatters import python, sh

    found: list[tuple[str, str, dict]] = []
    for module, name, language in ((python, "_run_python", "python"), (sh, "_run_sh", "console")):
        monkeypatch.setattr(module, name, lambda code, _l=language, **options: found.append((_l, code, options)) or "")
    render_cache.install(ROOT, ROOT / "src")  # the cache is off: the formatters call the run functions
    for page in NESTED_PAGES:
        md = markdown.Markdown(extensions=config["markdown_extensions"], extension_configs=config["mdx_configs"])
        md.convert((ROOT / "docs" / page).read_text(encoding="utf-8"))
    return found


def test_the_helper_finds_the_blocks_the_build_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the helper leaves out changes no block it runs: the same code and options (the cache's key) reach
    markdown-exec's run functions as in the build."""
    from markdown_exec._internal.rendering import MarkdownConverter
    from mkdocs.config import load_config

    monkeypatch.setenv(render_cache.CACHE_ENV, "off")
    monkeypatch.setattr(MarkdownConverter, "convert", MarkdownConverter.convert)  # put back after the test
    monkeypatch.chdir(ROOT)  # includes name their root
    build = load_config(str(ROOT / "mkdocs.yml"))
    build = build.plugins.on_config(build)
    expected = _blocks_found(build, monkeypatch)
    helper = load_config(str(ROOT / "mkdocs.yml"), plugins=page_helper.plugins_for_the_helper(ROOT / "mkdocs.yml"))
    helper = helper.plugins.on_config(helper)
    page_helper.render_for_the_cache_only(helper)
    assert "gpukb.site.abbreviations" not in helper["markdown_extensions"]
    assert len(expected) >= 20
    assert _blocks_found(helper, monkeypatch) == expected


def test_the_build_leaves_its_scan_of_the_package_to_the_helper(tmp_path: Path) -> None:
    import pickle

    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from pkg import a\n", encoding="utf-8")
    (package / "a.py").write_text("import torch\n", encoding="utf-8")
    index = render_cache.SourceIndex.scan(tmp_path / "src", "pkg")
    helper = PageHelper.start(["a"], [sys.executable, "-c", "pass"], source_index=index)
    try:
        shared = pickle.loads((helper.folder / page_helper._SOURCE_INDEX).read_bytes())
        assert shared.digest == index.digest
        assert shared.modules["pkg.a"].imports == {"torch"}
        again = render_cache.SourceIndex.scan(tmp_path / "src", "pkg", previous=shared)
        assert all(again.modules[name] is shared.modules[name] for name in index.modules), "nothing parsed again"
    finally:
        helper.stop()
