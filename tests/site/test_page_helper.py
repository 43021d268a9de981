"""The page helper and the build share out the pages with code blocks: each is rendered once, the build renders every
page itself, and MkDocs' order of the files comes back before the pages are written."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from mkdocs.structure.files import File, Files

from gpukb.site import page_helper
from gpukb.site.page_helper import PageHelper

needs_fork = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the helper forks only on Linux")


def test_a_page_runs_code_when_markdown_exec_runs_one_of_its_fences() -> None:
    assert page_helper.runs_code('Text.\n\n```python exec="on"\nprint(1)\n```\n')
    assert page_helper.runs_code("```console exec='1' result=\"text\"\n$ gpukb info\n```")
    assert not page_helper.runs_code('```python exec="off"\nprint(1)\n```\n')
    assert not page_helper.runs_code("```python\nprint(1)\n```\n")
    with pytest.raises(TypeError, match=r"got b.exec. \(bytes\)"):
        page_helper.runs_code(b"exec")


def test_the_environment_or_a_threaded_process_keeps_the_build_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    assert page_helper.wanted({page_helper.HELPER_ENV: "off"}) is False
    monkeypatch.setattr(page_helper.threading, "active_count", lambda: 2)  # mkdocs serve watching files
    assert page_helper.wanted({}) is False


@needs_fork
def test_each_page_is_rendered_once_by_the_helper_or_the_build(tmp_path: Path) -> None:
    """The helper takes pages from the last; the build takes the rest from the first and waits for the helper's."""
    names = [f"p{i}" for i in range(6)]

    def render(name: str) -> None:
        (tmp_path / f"{name}.{os.getpid()}").write_text("rendered", encoding="utf-8")

    def report() -> dict:
        return {"ran": 1, "hits": 0, "durations": [[0.5, "python: block"]]}

    helper = PageHelper.start(names, names, render, report)
    states = []
    for name in names:
        state = helper.before_page(name)
        states.append(state)
        if state == "mine":
            render(name)
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
    assert not helper.folder.exists()
    assert helper.before_page("not shared") == "other"


@needs_fork
def test_a_helper_that_dies_leaves_its_pages_to_the_build(tmp_path: Path) -> None:
    def render(name: str) -> None:
        os._exit(3)  # the helper dies on its first page

    helper = PageHelper.start(["a", "b"], ["a", "b"], render, dict)
    deadline = time.monotonic() + 30
    while not (helper.folder / "claim-1").exists() and time.monotonic() < deadline:  # the helper has taken b
        time.sleep(0.01)
    assert helper.before_page("a") == "mine"
    assert helper.before_page("b") == "lost", "the helper claimed b and died before it was done"
    helper.stop()
    helper.stop()  # twice is harmless


def test_start_refuses_names_that_do_not_match_the_pages() -> None:
    with pytest.raises(ValueError, match="2 pages, 1 distinct names"):
        PageHelper.start(["a", "b"], ["x", "x"], print, dict)


def _files(tmp_path: Path, names: list[str]) -> Files:
    return Files([File(name, str(tmp_path), str(tmp_path / "site"), use_directory_urls=True) for name in names])


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
