"""Every table a page renders has a test that checks its cells: the inventory.

The render blocks of docs/ are read with the fence lint (``gpukb.site.fences.render_calls``: page-layer functions
called by name with literal arguments), each call is rendered, and every call that prints a Markdown table must
have a cell check in its chapter's ``tests/<topic>/test_page_tables.py`` (``CHECKS``), or be listed in
:data:`NOT_CHECKED_YET` with the reason. The list may only shrink: an entry that is now checked, or that renders
no table, fails here. A chapter whose render blocks print a table and that has no check module in
:data:`CHECK_MODULES` fails here too. Each call is rendered once per session (:func:`rendered`), and the check
modules read the same rendering.
"""

from __future__ import annotations

import importlib
import re

import pytest

from gpukb import chapters
from tests.helpers import ROOT, markdown_tables
from tests.page_calls import PageCall, page_calls, rendered

#: Each page layer and the test module that checks its cells, from the chapters' declarations.
CHECK_MODULES = chapters.check_modules()

# --8<-- [start:not-checked]
#: Page functions whose tables have no cell check yet, and why. The list may only shrink.
NOT_CHECKED_YET: dict[str, dict[str, str]] = {}
# --8<-- [end:not-checked]


def _renders_a_table(call: PageCall) -> bool:
    return bool(markdown_tables(rendered(call)))


def _checked(module: str) -> set[str]:
    name = CHECK_MODULES.get(module)
    return set(importlib.import_module(name).CHECKS) if name else set()


# --8<-- [start:collector]
def checked_calls() -> list[PageCall]:
    """Every render-block call whose page layer's check module has a check for it, in page order."""
    return [c for c in page_calls() if c.function in _checked(c.module)]


@pytest.mark.parametrize("call", checked_calls(), ids=lambda c: f"{c.page}:{c.line}:{c.function}")
def test_page_table_cells(call: PageCall) -> None:
    """The one runner of every chapter's cell checks: ``CHECKS[function](markdown, {**kwargs, "args": args})``."""
    check = importlib.import_module(CHECK_MODULES[call.module]).CHECKS[call.function]
    check(rendered(call), {**call.kwargs, "args": call.args})
    # --8<-- [end:collector]


def test_render_blocks_are_found() -> None:
    calls = page_calls()
    assert len(calls) > 100
    assert {"properties_table", "type_architectures", "type_comparison"} <= {c.function for c in calls}


@pytest.mark.parametrize("module", sorted(CHECK_MODULES))
def test_every_table_of_a_checked_chapter_has_a_cell_check(module: str) -> None:
    functions = {c.function for c in page_calls() if c.module == module and _renders_a_table(c)}
    waived = set(NOT_CHECKED_YET.get(module, {}))
    checked = _checked(module)
    assert sorted(functions - checked - waived) == [], "tables without a cell check"
    assert sorted(waived & checked) == [], "checked now: remove them from NOT_CHECKED_YET"
    assert sorted(waived - functions) == [], "render no table on any page: remove them from NOT_CHECKED_YET"


def test_every_chapter_that_prints_a_table_has_a_check_module() -> None:
    """No chapter is outside this inventory: a page layer whose render blocks print a table is in CHECK_MODULES."""
    unregistered = sorted({c.module for c in page_calls() if c.module not in CHECK_MODULES and _renders_a_table(c)})
    assert unregistered == [], "page layers printing tables with no check module in CHECK_MODULES"


def _module_file(module: str) -> str:
    """``tests.gemm.pages.test_triton`` → its file; a package (``tests.gemm.pages``) → its ``__init__.py``."""
    path = module.replace(".", "/")
    return f"{path}/__init__.py" if (ROOT / path).is_dir() else f"{path}.py"


def test_checked_chapters_cover_what_they_claim() -> None:
    """The "How we try to break this site" page names only check modules that exist and are registered here, each
    for a page layer the site renders, and names the list of tables still waiting while it holds any."""
    page = (ROOT / "docs" / "contributing" / "breaking.md").read_text(encoding="utf-8")
    section = page.split("## Numbers computed but not checked", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`(tests/\w+/test_\w+\.py)`", section)) - {"tests/site/test_page_tables.py"}
    registered = {_module_file(module): layer for layer, module in CHECK_MODULES.items()}
    for folder in re.findall(r"`(tests/\w+/pages/)`", section):  # a chapter checked page by page
        in_folder = {path for path in registered if path.startswith(folder)}
        assert in_folder, f"{folder} holds no registered check module"
        named |= in_folder
    assert named, "the page names no check module"
    assert sorted(named - set(registered)) == [], "named on the page but not registered in CHECK_MODULES"
    assert all((ROOT / path).is_file() for path in named)
    layers = {c.module for c in page_calls()}
    assert {registered[path] for path in named} <= layers
    assert set(CHECK_MODULES) <= layers
    if any(NOT_CHECKED_YET.values()):
        assert "`NOT_CHECKED_YET`" in section
