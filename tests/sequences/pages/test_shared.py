"""The sequences pages' checks, together: every checked function is on a page."""

from __future__ import annotations

import importlib

from gpukb import chapters
from tests.page_calls import page_calls


def test_every_checked_function_is_on_a_page() -> None:
    checks = {
        layer: module for layer, module in chapters.check_modules().items() if layer.startswith("gpukb.sequences.")
    }
    assert checks
    for layer, module in checks.items():
        on_pages = {c.function for c in page_calls() if c.module == layer}
        assert on_pages >= set(importlib.import_module(module).CHECKS), layer
