"""Docstring examples are code on the site (the API reference renders them): every one of them runs."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import gpukb

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(gpukb.__path__, prefix="gpukb.")
    if info.name not in ("gpukb.__main__", "gpukb.site.mkdocs_hooks")  # entry points, not library modules
)


def test_the_package_has_examples() -> None:
    finder = doctest.DocTestFinder()
    examples = sum(len(t.examples) for name in MODULES for t in finder.find(importlib.import_module(name)))
    assert examples >= 5


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
