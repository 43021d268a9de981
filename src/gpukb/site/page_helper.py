"""A second process renders the pages that run code blocks while MkDocs renders the rest, so that a build with an
empty or outdated render cache keeps two cores busy (when a core is free: :func:`wanted`).

MkDocs renders one page after another in one process. A build whose render cache (``gpukb.site.render_cache``) is
empty runs every code block of the site, most of the build's time, on one core. :class:`PageHelper` starts a second
Python process (``python -m gpukb.site.page_helper``) once the build knows its files: it loads the same
configuration, renders the pages that hold code blocks from the last to the first, and throws the pages away; what
it keeps is what its blocks stored in the render cache. The build itself renders the pages without code blocks first
(the API reference), then the others from the first: a page the helper has not taken yet it renders itself, a page
the helper is rendering it waits for, and a page the helper has rendered finds its blocks in the cache. The two meet
in the middle and every block runs once. The shared pages are put in order of what their blocks cost in earlier
builds (:func:`cheapest_first`; the render cache keeps the costs), so the helper starts on the costliest.

The helper does only what running the blocks needs (:func:`render_for_the_cache_only`, :func:`plugins_for_the_helper`):
no HTML of the blocks' output, no glossary abbreviations, no notebook or API-reference plugin, no published schemas,
and it takes the build's scan of the package rather than parsing it again.

Nothing the reader sees depends on it: the helper only fills the cache, and the build renders every page itself,
in MkDocs' order for everything a page's neighbours or the search index see (:func:`restore_order`). A block that
fails in the helper is not stored (the cache keeps no failure), so the build runs it again and reports it. A helper
that stops is noticed and its pages are rendered by the build.

The helper is a new interpreter, not a fork: the build has loaded numerical libraries whose threads a forked copy
would wait for forever. A page is claimed by creating a file with ``O_EXCL`` in a folder of the build's own; the
helper marks a page done with a second file, which holds how many of its blocks ran and how long each took.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpukb.arguments import given, real, regular_file, text

#: ``GPUKB_PAGE_HELPER=off`` (or ``0``, ``no``, ``false``) keeps the build in one process; the helper itself runs
#: with it set to :data:`IN_HELPER`, which starts no helper either.
HELPER_ENV = "GPUKB_PAGE_HELPER"
IN_HELPER = "helper"
#: A fence that markdown-exec runs (``exec="on"``; it also takes ``1``, ``true`` and ``yes``).
_EXEC_FENCE = re.compile(r"""\bexec\s*=\s*["']?(?:on|1|true|yes)\b""", re.IGNORECASE)
#: The file of the helper's folder that holds the build's scan of the package (:meth:`PageHelper.start`).
_SOURCE_INDEX = "source-index.pickle"
#: How often the build looks whether the page it waits for is done (seconds).
_POLL = 0.02

log = logging.getLogger("mkdocs.hooks.gpukb")


def runs_code(markdown: str) -> bool:
    """Whether a page's Markdown holds a code block that markdown-exec runs (``exec="on"``).

    Raises:
        TypeError: If ``markdown`` is not a string.
    """
    if not isinstance(markdown, str):
        raise TypeError(f"markdown must be the text of a page (str), got {given(markdown)}")
    return _EXEC_FENCE.search(markdown) is not None


def is_helper(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process is a helper (:func:`main`, started by :meth:`PageHelper.start`): the MkDocs hooks
    leave out what only the written site needs (the published schemas)."""
    env = os.environ if environ is None else environ
    return env.get(HELPER_ENV, "") == IN_HELPER


def wanted(environ: Mapping[str, str] | None = None, *, cores: int | None = None, load: float | None = None) -> bool:
    """Whether a helper may start: :data:`HELPER_ENV` is not off, this process may use two or more cores, and the
    machine has one to spare (the load average of the last minute, this build included, is below the cores).

    A helper costs CPU time of its own (starting Python, loading the configuration, importing what both processes'
    blocks import): on a machine whose cores are all busy it would take that time from other work and not end the
    build sooner.

    Args:
        environ: The environment (``os.environ`` when None).
        cores: The cores this process may use (looked up when None).
        load: The one-minute load average (looked up when None; where there is none, taken as 0).
    """
    env = os.environ if environ is None else environ
    if env.get(HELPER_ENV, "").strip().lower() in ("off", "0", "no", "false", IN_HELPER):
        return False
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if load is None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return cores >= 2 and load < cores


@dataclass
class PageHelper:
    """The helper process of one build and the folder through which it and the build share out the pages.

    Args:
        pages: The pages to share, named in the order the build renders them (MkDocs' ``src_uri``).
        folder: The folder of claim and done files (the helper's own, removed by :meth:`stop`).
    """

    pages: Sequence[str]
    folder: Path
    process: subprocess.Popen | None = None
    _index: dict[str, int] = field(default_factory=dict)
    #: (seconds, label) of each block the helper ran, and how many it ran and found in the cache.
    durations: list[tuple[float, str]] = field(default_factory=list)
    #: Per page the helper rendered: [seconds its blocks ran, blocks the cache answered] (``RenderCache.mark_built``).
    page_runs: dict[str, list[float]] = field(default_factory=dict)
    ran: int = 0
    hits: int = 0
    #: Seconds the build waited for the helper to finish a page; the helper's exit status once it has ended.
    waited: float = 0.0
    returncode: int | None = None

    def __post_init__(self) -> None:
        self._index = {name: i for i, name in enumerate(self.pages)}

    @classmethod
    def start(cls, names: Sequence[str], command: Sequence[str], source_index: Any = None) -> PageHelper:
        """Start ``command FOLDER NAME...``: a process that calls :func:`serve` on the pages ``names`` (in the
        build's order) with the folder it is given. It runs with :data:`HELPER_ENV` set to :data:`IN_HELPER` (it
        starts no helper of its own), and its output is discarded.

        ``source_index`` (the build's ``render_cache.SourceIndex``) is left in the folder for the helper: its scan of
        the package then re-reads the files but parses only those that changed since (see :func:`main`).

        Raises:
            ValueError: If a name repeats or ``command`` is empty.
        """
        names = list(names)
        if len(set(names)) != len(names):
            raise ValueError(f"give each page once: {len(names)} names, {len(set(names))} distinct")
        if not command:
            raise ValueError("command must name the helper's program, got an empty command")
        helper = cls(names, Path(tempfile.mkdtemp(prefix="gpukb-page-helper-")))
        if source_index is not None:
            (helper.folder / _SOURCE_INDEX).write_bytes(pickle.dumps(source_index))
        helper.process = subprocess.Popen(
            [*command, str(helper.folder), *names],
            env={**os.environ, HELPER_ENV: IN_HELPER},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return helper

    def _alive(self) -> bool:
        if self.process is None:
            return False
        self.returncode = self.process.poll()
        return self.returncode is None

    def before_page(self, name: str) -> str:
        """In the build, before it renders page ``name``: claim it, or wait until the helper has rendered it.

        Returns:
            ``"mine"`` (the build renders it and runs its blocks), ``"helper"`` (the helper rendered it: its blocks
            are in the cache unless they failed), ``"lost"`` (the helper stopped on it) or ``"other"`` (not a page
            the helper shares).
        """
        i = self._index.get(name)
        if i is None:
            return "other"
        if _claim(self.folder, i):
            return "mine"
        done = self.folder / f"done-{i}"
        start = time.perf_counter()
        try:
            while not done.exists():
                if not self._alive() and not done.exists():
                    return "lost"
                time.sleep(_POLL)
        finally:
            self.waited += time.perf_counter() - start
        return "helper"

    def stop(self) -> None:
        """End the helper (it has nothing left once the build has passed every page), collect its report and
        remove the folder. Safe to call twice."""
        if self.process is not None:
            try:
                self.returncode = self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.returncode = self.process.wait()
            self.process = None
        if self.folder.is_dir():
            for done in sorted(self.folder.glob("done-*")):
                try:
                    part = json.loads(done.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                self.ran += int(part.get("ran", 0))
                self.hits += int(part.get("hits", 0))
                self.durations.extend((float(s), str(label)) for s, label in part.get("durations", []))
                for page, (seconds, hits) in part.get("pages", {}).items():
                    self.page_runs[str(page)] = [float(seconds), int(hits)]
            shutil.rmtree(self.folder, ignore_errors=True)


def _claim(folder: Path, i: int) -> bool:
    try:
        os.close(os.open(folder / f"claim-{i}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def serve(folder: Path, pages: Sequence[Any], render: Callable[[Any], Any], report: Callable[[], dict]) -> int:
    """In the helper: render each page that can be claimed, from the last, until the build has claimed one (and so
    every page before it); mark each done with ``report()`` (what its blocks did: ``ran``, ``hits``, ``durations``).
    A page that fails to render is marked done: the build renders it again and reports the error.

    Returns:
        How many pages the helper rendered.
    """
    rendered = 0
    for i in reversed(range(len(pages))):
        if not _claim(Path(folder), i):
            break
        with contextlib.suppress(Exception):
            render(pages[i])
        rendered += 1
        done = Path(folder) / f"done-{i}"
        done.with_suffix(".tmp").write_text(json.dumps(report()), encoding="utf-8")
        os.replace(done.with_suffix(".tmp"), done)
    return rendered


def cheapest_first(names: Sequence[str], costs: Mapping[str, float]) -> list[str]:
    """The pages ``names`` from the cheapest to the costliest by ``costs`` (seconds their blocks took in an earlier
    build: ``RenderCache.page_costs``; a page without one counts as free), ties in the order given.

    The build renders the shared pages from the first and the helper from the last: the helper starts on the
    costliest pages, the build on the cheapest, and where they meet the pages are short, so neither waits long for
    the other (and the heavy libraries that the costly pages import are loaded by the helper alone more often).

    Raises:
        TypeError: If a name is not a string, ``costs`` not a mapping, or a cost not a real number.
        ValueError: If a cost is negative or not finite.
    """
    if not isinstance(costs, Mapping):
        raise TypeError(f"costs must map page names to seconds; got {given(costs)}")
    order = [text("a page name", name) for name in names]
    seconds = {name: real(f"the cost of {name}", costs[name], minimum=0.0) for name in order if name in costs}
    return sorted(order, key=lambda name: seconds.get(name, 0.0))


def move_last(files: Any, names: Iterable[str]) -> None:
    """Move the files ``names`` (MkDocs' ``src_uri``) to the end of MkDocs' ``Files``, in the order given: the
    build renders the pages without code blocks (the API reference) first, while the helper starts on the blocks.

    Raises:
        ValueError: If a name is not one of ``files``.
    """
    for name in names:
        file = files.get_file_from_path(name)
        if file is None:
            raise ValueError(f"{name!r} is not one of the site's files")
        files.remove(file)
        files.append(file)


def restore_order(files: Any, order: Sequence[str]) -> None:
    """Put MkDocs' ``Files`` back in ``order`` (``src_uri`` of each file; files not named go after them, in their
    order) before the pages are written, so that the search index lists the pages in MkDocs' own order."""
    rank = {name: i for i, name in enumerate(order)}
    ranked = sorted(files, key=lambda f: rank.get(f.src_uri, len(rank)))  # stable: unnamed files keep their order
    for file in ranked:
        files.remove(file)
    for file in ranked:
        files.append(file)


#: Markdown extensions whose work only the page's HTML shows, left out in the helper (the glossary's hover texts).
_HTML_ONLY_EXTENSIONS = ("gpukb.site.abbreviations",)
#: Plugins of mkdocs.yml that run no page's code blocks, left out in the helper: the notebook pages (``.ipynb``
#: only; importing the plugin alone takes about a second) and the generated API reference.
_NO_BLOCK_PLUGINS = ("mkdocs-jupyter", "api-autonav")


def plugins_for_the_helper(config_file: str | os.PathLike) -> list[Any]:
    """The ``plugins`` entries of ``config_file`` without those of :data:`_NO_BLOCK_PLUGINS`, as given there (a
    name, or a one-key mapping of a name to its options).

    Raises:
        ValueError: If ``config_file`` is not a regular file (``FileNotFoundError`` if it does not exist).
    """
    from mkdocs.utils.yaml import yaml_load

    with open(regular_file("config_file", config_file), "rb") as f:
        entries = yaml_load(f).get("plugins") or []
    if isinstance(entries, dict):  # the mapping form of ``plugins:``
        entries = [{name: options} for name, options in entries.items()]
    return [e for e in entries if (e if isinstance(e, str) else next(iter(e), None)) not in _NO_BLOCK_PLUGINS]


def render_for_the_cache_only(config: Any) -> None:
    """In the helper, whose pages are thrown away: leave out the work that only shapes their HTML. The blocks'
    output is not converted to HTML (markdown-exec's converter returns nothing), and the extensions of
    :data:`_HTML_ONLY_EXTENSIONS` are not loaded. (Pygments stays: without it SuperFences finds fewer of the fences
    that markdown-exec runs.)

    What reaches a block's ``run`` is unchanged (its code, its options, the environment), and so are the cache's keys:
    those come from the fences that Python-Markdown and SuperFences find, and none of this changes how they are
    found. Were a key to differ all the same, the build would miss that entry and run the block itself.
    """
    from markdown_exec._internal.rendering import MarkdownConverter
    from markupsafe import Markup

    MarkdownConverter.convert = lambda self, text, stash=None, id_prefix=None: Markup()
    config["markdown_extensions"] = [e for e in config["markdown_extensions"] if e not in _HTML_ONLY_EXTENSIONS]


def command(config_file: str | os.PathLike) -> list[str]:
    """The helper's command for the site of ``config_file`` (:func:`main` adds the folder and the pages)."""
    return [sys.executable, "-m", "gpukb.site.page_helper", str(config_file)]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gpukb.site.page_helper CONFIG FOLDER PAGE...``: load the site's configuration as ``mkdocs build``
    does, up to its navigation, and :func:`serve` the pages through MkDocs' own steps up to the Markdown's
    conversion (which runs the code blocks)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3:
        print("usage: python -m gpukb.site.page_helper CONFIG FOLDER PAGE...", file=sys.stderr)
        return 2
    try:  # a named pipe would block load_config for ever, a folder would end in a traceback
        config_file = str(regular_file("CONFIG", args[0]))
    except (ValueError, FileNotFoundError) as err:
        print(f"python -m gpukb.site.page_helper: error: {err}", file=sys.stderr)
        return 2
    folder, names = Path(args[1]), args[2:]
    from mkdocs.config import load_config
    from mkdocs.structure.files import get_files
    from mkdocs.structure.nav import get_navigation

    from gpukb.site import render_cache

    with tempfile.TemporaryDirectory(prefix="gpukb-page-helper-site-") as site:
        config = load_config(config_file, site_dir=site, plugins=plugins_for_the_helper(config_file))
        config.plugins.on_startup(command="build", dirty=False)
        config = config.plugins.on_config(config)
        render_for_the_cache_only(config)
        shared = folder / _SOURCE_INDEX
        if shared.is_file():  # the build's scan: on_pre_build's scan parses only what changed since
            root = Path(config["config_file_path"]).parent
            cache = render_cache.install(root, root / "src")
            if cache is not None:
                with contextlib.suppress(Exception):  # an unreadable file: the helper scans on its own
                    cache.index = pickle.loads(shared.read_bytes())
        config.plugins.on_pre_build(config=config)
        files = get_files(config)
        files.add_files_from_theme(config.theme.get_env(), config)
        files = config.plugins.on_files(files, config=config)
        nav = config.plugins.on_nav(get_navigation(files, config), config=config, files=files)
        del nav
        unknown = [name for name in names if getattr(files.get_file_from_path(name), "page", None) is None]
        if unknown:
            print(f"python -m gpukb.site.page_helper: error: no page of the site is {unknown}", file=sys.stderr)
            return 2
        pages = [files.get_file_from_path(name).page for name in names]

        def render(page: Any) -> None:  # mkdocs.commands.build's steps for a page, up to the conversion
            config._current_page = page
            page = config.plugins.on_pre_page(page, config=config, files=files)
            page.read_source(config)
            page.markdown = config.plugins.on_page_markdown(page.markdown, page=page, config=config, files=files)
            page.render(config, files)

        def report() -> dict:
            cache = render_cache.ACTIVE
            if cache is None:
                return {}
            part = {"ran": cache.misses, "hits": cache.hits, "durations": cache.durations}
            part["pages"] = cache.take_page_runs()
            cache.misses = cache.hits = 0
            cache.durations = []
            return part

        serve(folder, pages, render, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
