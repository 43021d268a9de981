"""The render cache hands back a block's output only while nothing it depends on changed (no stale output)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import markdown
import markdown_exec
import pytest
from markdown_exec._internal.formatters.python import _run_python

from gpukb.site import render_cache
from gpukb.site.render_cache import RenderCache, SourceIndex

BLOCK = "from pkgx.a import f\nprint(f())"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with a small package ``pkgx``: ``a`` imports ``b`` (inside a function, relatively), ``c`` is
    imported by nobody, ``data/`` holds a data file."""
    _write(tmp_path / "src/pkgx/__init__.py", "")
    _write(tmp_path / "src/pkgx/a.py", "def f():\n    from .b import VALUE\n\n    return VALUE\n")
    _write(tmp_path / "src/pkgx/b.py", "VALUE = 1\n")
    _write(tmp_path / "src/pkgx/c.py", "OTHER = 1\n")
    _write(tmp_path / "src/pkgx/data/table.toml", "x = 1\n")
    _write(tmp_path / "notes.txt", "first\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    render_cache.forget_modules("pkgx")


class _Counting:
    """markdown-exec's python runner, counting how often a block really runs."""

    def __init__(self) -> None:
        self.runs = 0

    def __call__(self, code: str, **kwargs) -> str:
        self.runs += 1
        return _run_python(code, **kwargs)


def _build(cache: RenderCache, runner: _Counting, code: str = BLOCK, **options) -> str:
    """One build of a page with one block: what the block printed."""
    cache.begin_build()
    return cache.wrap("python", runner)(code, **options)


def _cache(repo: Path) -> RenderCache:
    return RenderCache(folder=repo / ".cache", root=repo, src=repo / "src", package="pkgx")


def test_an_edit_of_imported_code_runs_the_block_again_with_the_new_code(repo: Path) -> None:
    cache, runner = _cache(repo), _Counting()
    assert _build(cache, runner) == "1\n"
    assert runner.runs == 1
    assert _build(cache, runner) == "1\n"
    assert runner.runs == 1, "nothing changed: served from the cache"
    # b is imported by a, inside a function: an edit of b changes the key, and the module is imported afresh
    # (in the same process, as in `mkdocs serve`), so the new output is not the old one stored under a new key.
    _write(repo / "src/pkgx/b.py", "VALUE = 2\n")
    assert _build(cache, runner) == "2\n"
    assert runner.runs == 2
    assert _build(cache, runner) == "2\n"
    assert runner.runs == 2
    _write(repo / "src/pkgx/c.py", "OTHER = 2\n")  # imported by nobody
    assert _build(cache, runner) == "2\n"
    assert runner.runs == 2
    _write(repo / "src/pkgx/data/table.toml", "x = 2\n")  # any data file of the package counts
    assert _build(cache, runner) == "2\n"
    assert runner.runs == 3
    assert (cache.hits, cache.misses) == (0, 1)


def test_a_new_process_sees_the_stored_output_and_its_changes(repo: Path) -> None:
    runner = _Counting()
    assert _build(_cache(repo), runner) == "1\n"
    assert _build(_cache(repo), runner) == "1\n"
    assert runner.runs == 1
    _write(repo / "src/pkgx/a.py", "def f():\n    return 3\n")
    assert _build(_cache(repo), runner) == "3\n"
    assert runner.runs == 2


def test_files_a_block_reads_and_folders_it_lists_are_checked(repo: Path) -> None:
    cache, runner = _cache(repo), _Counting()
    code = "from pathlib import Path\nprint(Path('notes.txt').read_text().strip(), len(list(Path('src').iterdir())))"
    assert _build(cache, runner, code) == "first 1\n"
    assert _build(cache, runner, code) == "first 1\n"
    assert runner.runs == 1
    _write(repo / "notes.txt", "second\n")
    assert _build(cache, runner, code) == "second 1\n"
    assert runner.runs == 2
    _write(repo / "src/other.txt", "")  # a new entry in a folder the block listed
    assert _build(cache, runner, code) == "second 2\n"
    assert runner.runs == 3


def test_what_a_block_does_to_the_environment_is_done_again_on_a_hit(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GPUKB_TEST_FLAG", raising=False)
    cache, runner = _cache(repo), _Counting()
    code = "import os\nos.environ['GPUKB_TEST_FLAG'] = '1'\nprint('set')"
    _build(cache, runner, code)
    monkeypatch.delenv("GPUKB_TEST_FLAG")
    cache.begin_build()  # the key holds GPUKB_ variables: unset again, as when the block first ran
    assert cache.wrap("python", runner)(code) == "set\n"
    assert runner.runs == 1
    assert os.environ["GPUKB_TEST_FLAG"] == "1"


def test_sessions_failures_and_options(repo: Path) -> None:
    cache, runner = _cache(repo), _Counting()
    _build(cache, runner, "print(1)", session="s")
    _build(cache, runner, "print(1)", session="s")
    assert runner.runs == 2, "a block in a session shares state: never cached"
    assert cache.uncached == 1
    with pytest.raises(markdown_exec.ExecutionError):
        _build(cache, runner, "raise SystemError('boom')")
    with pytest.raises(markdown_exec.ExecutionError):
        _build(cache, runner, "raise SystemError('boom')")
    assert runner.runs == 4, "a failure is not stored"
    _build(cache, runner, "print(1)", title="one")
    _build(cache, runner, "print(1)", title="two")
    assert runner.runs == 6, "the options are part of the key"


def test_the_import_closure_follows_every_kind_of_import(repo: Path) -> None:
    _write(repo / "src/pkgx/sub/__init__.py", "from . import deep\n")
    _write(repo / "src/pkgx/sub/deep.py", "from ..c import OTHER\n")
    _write(repo / "src/pkgx/named.py", "import importlib\nMOD = importlib.import_module('pkgx.sub')\n")
    index = SourceIndex.scan(repo / "src", "pkgx")
    assert index.code_imports("import pkgx.named") == {"pkgx", "pkgx.named", "pkgx.sub", "pkgx.sub.deep", "pkgx.c"}
    assert index.code_imports("from pkgx.a import f") == {"pkgx", "pkgx.a", "pkgx.b"}
    assert index.code_imports("import os") == frozenset()
    assert index.code_imports("$ pkgx --help") is None, "not Python: the caller depends on the whole package"
    with pytest.raises(ValueError, match=r"is not a package folder"):
        SourceIndex.scan(repo, "pkgx")


def test_a_rendered_heading_reaches_the_table_of_contents_from_the_cache(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through Markdown and markdown-exec as MkDocs runs them: the cached output is converted like a fresh one."""
    for language in ("python", "console"):
        monkeypatch.setitem(markdown_exec.formatters, language, markdown_exec.formatters[language])
    monkeypatch.setattr(render_cache, "ACTIVE", None)
    monkeypatch.setenv(render_cache.CACHE_ENV, str(repo / "cache"))
    cache = render_cache.install(repo, repo / "src", "pkgx")
    fence = {
        "name": "python",
        "class": "python",
        "validator": markdown_exec.validator,
        "format": markdown_exec.formatter,
    }
    page = '```python exec="on"\nfrom pkgx.a import f\nprint(f"## Value {f()}")\n```\n'
    rendered = []
    for _ in range(2):
        markdown_exec.MarkdownConverter.counter = 0  # as the plugin does after each build
        cache.begin_build()
        md = markdown.Markdown(
            extensions=["toc", "pymdownx.superfences"],
            extension_configs={"pymdownx.superfences": {"custom_fences": [fence]}},
        )
        rendered.append((md.convert(page), [t["name"] for t in md.toc_tokens]))
    assert (cache.misses, cache.hits) == (0, 1)
    assert rendered[0] == rendered[1]
    assert "Value 1" in rendered[1][0]
    assert rendered[1][1] == ["Value 1"]


def test_a_build_with_unchanged_inputs_is_told_so(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint that decides whether a helper process runs blocks ahead: the package, the libraries and the
    variables as at the end of the last build (a build-only variable does not count)."""
    cache = _cache(repo)
    cache.begin_build()
    assert cache.inputs_unchanged() is False, "no build recorded yet"
    cache.mark_built()
    cache.begin_build()
    assert cache.inputs_unchanged() is True
    monkeypatch.setenv("GPUKB_PAGE_HELPER", "off")
    assert cache.inputs_unchanged() is True
    monkeypatch.setenv("GPUKB_TEST_INPUT", "1")  # a variable blocks may read
    assert cache.inputs_unchanged() is False
    monkeypatch.delenv("GPUKB_TEST_INPUT")
    _write(repo / "src/pkgx/c.py", "OTHER = 2\n")
    cache.begin_build()
    assert cache.inputs_unchanged() is False, "an edit of the package"


def test_a_page_costs_what_its_blocks_took_when_all_of_them_ran(repo: Path) -> None:
    """The cost the page helper shares pages out by: per page, the seconds of its blocks in the last build that ran
    them all; a page partly answered from the cache keeps its earlier cost, and another process's pages count."""
    cache, runner = _cache(repo), _Counting()
    cache.begin_build()
    assert cache.page_costs() == {}, "a new folder knows no costs"
    run = cache.wrap("python", runner)
    cache.page = "slow.md"
    run("import time\ntime.sleep(0.05)\nprint(1)")
    cache.page = "fast.md"
    run("print(2)")
    cache.page = "helper.md"  # another process ran this page's block: this one finds it in the cache
    run("print(2)")
    cache.mark_built({"helper.md": [0.5, 0], "partial.md": [0.2, 1]})
    costs = cache.page_costs()
    assert costs.keys() == {"slow.md", "fast.md", "helper.md"}, "partial.md had a block from the cache"
    assert costs["slow.md"] >= 0.05 > costs["fast.md"]
    assert costs["helper.md"] == 0.5
    cache.begin_build()
    cache.page = "slow.md"
    run("import time\ntime.sleep(0.05)\nprint(1)")  # answered from the cache: the cost stays
    cache.mark_built()
    assert cache.page_costs() == costs
    (repo / ".cache" / render_cache.PAGE_COSTS).write_text("[1, 2]", encoding="utf-8")
    assert cache.page_costs() == {}, "a damaged file is no cost"
    (repo / ".cache" / render_cache.PAGE_COSTS).write_text('{"a": -1, "b": "2", "c": true, "d": 1e999, "e": 2}')
    assert cache.page_costs() == {"e": 2.0}, "nor is a damaged entry"


def test_the_cache_folder_and_turning_it_off(tmp_path: Path) -> None:
    assert render_cache.folder_for(tmp_path, {}) == tmp_path / ".cache" / "render"
    assert render_cache.folder_for(tmp_path, {render_cache.CACHE_ENV: "off"}) is None
    assert render_cache.folder_for(tmp_path, {render_cache.CACHE_ENV: str(tmp_path / "x")}) == tmp_path / "x"
    cache = RenderCache(folder=tmp_path, root=tmp_path, src=tmp_path)
    with pytest.raises(RuntimeError, match=r"begin_build\(\) was not called"):
        cache.key("python", "print(1)", {})
    assert "pkgx" not in sys.modules


def test_restore_environ_undoes_what_a_page_did(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUKB_TEST_KEPT", "1")
    monkeypatch.setenv("GPUKB_TEST_REMOVED", "old")
    monkeypatch.delenv("GPUKB_TEST_ADDED", raising=False)
    snapshot = dict(os.environ)
    os.environ["GPUKB_TEST_ADDED"] = "new"
    os.environ["GPUKB_TEST_KEPT"] = "2"
    del os.environ["GPUKB_TEST_REMOVED"]
    changed = render_cache.restore_environ(snapshot)
    assert changed == {"GPUKB_TEST_ADDED": "new", "GPUKB_TEST_KEPT": "2", "GPUKB_TEST_REMOVED": None}
    assert dict(os.environ) == snapshot
    assert render_cache.restore_environ(snapshot) == {}
