"""A second process renders the pages that run code blocks while MkDocs renders the rest, so that a build with an
empty or outdated render cache keeps two cores busy.

MkDocs renders one page after another in one process. A build whose render cache (``gpukb.site.render_cache``) is
empty runs every code block of the site, most of the build's time, on one core. :class:`PageHelper` forks the build
process once the pages are known (the ``on_nav`` hook): the copy renders the pages that hold code blocks, from the
last to the first, and throws the pages away; what it keeps is what its blocks stored in the render cache. The build
itself renders the pages without code blocks first (the API reference), then the others from the first: a page the
helper has not taken yet it renders itself, a page the helper is rendering it waits for, and a page the helper has
rendered finds its blocks in the cache. The two meet in the middle and every block runs once.

Nothing the reader sees depends on it: the helper only fills the cache, and the build renders every page itself,
in MkDocs' order for everything a page's neighbours or the search index see (:func:`restore_order`). A block that
fails in the helper is not stored (the cache keeps no failure), so the build runs it again and reports it. A helper
that dies is noticed and its pages are rendered by the build.

A page is claimed by creating a file with ``O_EXCL`` in a folder of the build's own; the helper marks a page done
with a second file, which holds how many of its blocks ran and how long each took (for the build's report).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpukb.arguments import given

#: ``GPUKB_PAGE_HELPER=off`` (or ``0``, ``no``, ``false``) keeps the build in one process.
HELPER_ENV = "GPUKB_PAGE_HELPER"
#: A fence that markdown-exec runs (``exec="on"``; it also takes ``1``, ``true`` and ``yes``).
_EXEC_FENCE = re.compile(r"""\bexec\s*=\s*["']?(?:on|1|true|yes)\b""", re.IGNORECASE)
#: How often the build looks whether the page it waits for is done (seconds).
_POLL = 0.02


def runs_code(markdown: str) -> bool:
    """Whether a page's Markdown holds a code block that markdown-exec runs (``exec="on"``).

    Raises:
        TypeError: If ``markdown`` is not a string.
    """
    if not isinstance(markdown, str):
        raise TypeError(f"markdown must be the text of a page (str), got {given(markdown)}")
    return _EXEC_FENCE.search(markdown) is not None


def wanted(environ: dict[str, str] | None = None) -> bool:
    """Whether this machine and the environment allow a helper: ``os.fork`` (Linux; macOS forks unsafely), two or
    more cores for this process, one thread (forking a threaded process, as ``mkdocs serve`` is while it watches
    files, can deadlock the copy), and :data:`HELPER_ENV` not off."""
    env = os.environ if environ is None else environ
    if env.get(HELPER_ENV, "").strip().lower() in ("off", "0", "no", "false"):
        return False
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores >= 2 and threading.active_count() == 1


@dataclass
class PageHelper:
    """The helper process of one build and the folder through which it and the build share out the pages.

    Args:
        pages: The pages to share, named in the order the build renders them (MkDocs' ``src_uri``).
        folder: The folder of claim and done files (the helper's own, removed by :meth:`stop`).
    """

    pages: Sequence[str]
    folder: Path
    pid: int | None = None
    _index: dict[str, int] = field(default_factory=dict)
    #: (seconds, label) of each block the helper ran, and how many it ran and found in the cache.
    durations: list[tuple[float, str]] = field(default_factory=list)
    ran: int = 0
    hits: int = 0
    #: Seconds the build waited for the helper to finish a page.
    waited: float = 0.0

    def __post_init__(self) -> None:
        self._index = {name: i for i, name in enumerate(self.pages)}

    @classmethod
    def start(cls, pages: Sequence[Any], names: Sequence[str], render: Callable[[Any], Any],
              report: Callable[[], dict]) -> PageHelper:  # fmt: skip
        """Fork a helper that renders ``pages`` (named ``names``, in the build's order) from the last, each that it
        can claim, and returns at the first one the build has claimed.

        Args:
            pages: What ``render`` takes (MkDocs pages).
            names: One name per page.
            render: Renders one page in the helper (its blocks fill the render cache).
            report: In the helper, after each page: what its blocks did since the previous call (``ran``,
                ``hits``, ``durations``), for the build's report.

        Raises:
            ValueError: If ``pages`` and ``names`` differ in length or a name repeats.
        """
        if len(pages) != len(names) or len(set(names)) != len(names):
            raise ValueError(f"give one distinct name per page: {len(pages)} pages, {len(set(names))} distinct names")
        helper = cls(list(names), Path(tempfile.mkdtemp(prefix="gpukb-page-helper-")))
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the helper: never returns into MkDocs
            status = 0
            try:
                helper._serve(pages, render, report)
            except BaseException:  # the build renders whatever the helper did not finish
                status = 1
            finally:
                os._exit(status)
        helper.pid = pid
        return helper

    def _serve(self, pages: Sequence[Any], render: Callable[[Any], Any], report: Callable[[], dict]) -> None:
        logging.disable(logging.CRITICAL)  # the build reports; a failing block is run and reported there again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        report()  # what the build did before the fork is the build's
        for i in reversed(range(len(pages))):
            if not self._claim(i):
                return  # the build took this page, so every page before it too
            with contextlib.suppress(Exception):  # the build renders this page again and reports the error
                render(pages[i])
            done = self.folder / f"done-{i}"
            done.with_suffix(".tmp").write_text(json.dumps(report()), encoding="utf-8")
            os.replace(done.with_suffix(".tmp"), done)

    def _claim(self, i: int) -> bool:
        try:
            os.close(os.open(self.folder / f"claim-{i}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    def _alive(self) -> bool:
        if self.pid is None:
            return False
        try:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid = self.pid
        if pid == self.pid:
            self.pid = None  # reaped
            return False
        return True

    def before_page(self, name: str) -> str:
        """In the build, before it renders page ``name``: claim it, or wait until the helper has rendered it.

        Returns:
            ``"mine"`` (the build renders it and runs its blocks), ``"helper"`` (the helper rendered it: its blocks
            are in the cache unless they failed), ``"lost"`` (the helper died on it) or ``"other"`` (not a page the
            helper shares).
        """
        i = self._index.get(name)
        if i is None:
            return "other"
        if self._claim(i):
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
        if self.pid is not None:
            deadline = time.monotonic() + 5
            while self._alive() and time.monotonic() < deadline:
                time.sleep(_POLL)
            if self.pid is not None:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                self.pid = None
        if self.folder.is_dir():
            for done in sorted(self.folder.glob("done-*")):
                try:
                    part = json.loads(done.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                self.ran += int(part.get("ran", 0))
                self.hits += int(part.get("hits", 0))
                self.durations.extend((float(s), str(label)) for s, label in part.get("durations", []))
            shutil.rmtree(self.folder, ignore_errors=True)


def move_last(files: Any, names: Iterable[str]) -> None:
    """Move the files ``names`` (MkDocs' ``src_uri``) to the end of MkDocs' ``Files``, in the order given: the
    build renders the pages without code blocks (the API reference) first, while the helper starts on the blocks."""
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
