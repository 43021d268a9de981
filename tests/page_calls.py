"""The render-block calls of the site's pages and what each prints: what every chapter's cell checks read.

A module of its own (not a test module) so that the check modules and the one runner of their checks
(``tests/site/test_page_tables.py``) can all import it without importing each other.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpukb.site.fences import LintError, classify, iter_fences, page_files, render_calls
from tests.helpers import ROOT


@dataclass(frozen=True)
class PageCall:
    """One call of a render block: where, which page-layer function, with which literal arguments."""

    page: str
    line: int
    module: str
    function: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def __hash__(self) -> int:
        return hash((self.page, self.line, self.function, repr(self.args), repr(self.kwargs)))


@cache
def page_calls() -> tuple[PageCall, ...]:
    """Every page-layer call of every render block under docs/, in page order.

    A fence the lint refuses is left out here (tests/site/test_fences.py fails on it, naming file and line), so one
    bad page does not stop every chapter's cell checks from being collected.
    """
    found = []
    for page in page_files(ROOT / "docs"):
        if page.suffix != ".md":
            continue
        for fence in iter_fences(page):
            try:
                if classify(fence) != "render":
                    continue
                calls = render_calls(fence)
            except LintError:
                continue
            rel = page.relative_to(ROOT).as_posix()
            found += [PageCall(rel, fence.line, c.module, c.function, c.args, c.kwargs) for c in calls]
    return tuple(found)


def rendered(call: PageCall) -> str:
    """What a render block's call prints, rendered once per test session (the check modules share it).

    mutmut runs each mutant in a fork of a process that has already rendered the pages: the mutant's name is part
    of the cache key, so a mutant's pages are rendered by the mutated code, not read from the clean run's cache.
    """
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    if mutant == "stats":  # mutmut's stats run maps each test to the functions it calls: render for every test,
        return _render(call)  # or only the first test reading a page would be run against that page's mutants
    return _rendered(call, mutant)


@cache
def _rendered(call: PageCall, mutant: str) -> str:
    return _render(call)


def _render(call: PageCall) -> str:
    module = importlib.import_module(call.module)
    return getattr(module, call.function)(*call.args, **call.kwargs)
