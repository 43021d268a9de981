"""The site builds with the docs extra alone: the test suite's site build hides every other package (``built_site``
in ``tests/conftest.py``); these tests check that the hiding works and hides the right packages."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import ROOT
from tests.site import docs_extra


def _python(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **docs_extra.build_environment()}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_test_only_packages_are_hidden_and_what_pages_run_is_not() -> None:
    hidden = set(docs_extra.hidden_modules())
    assert {"pytest", "pytest_codeblocks", "hypothesis", "playwright", "ruff"} <= hidden
    assert not {"mkdocs", "material", "markdown_exec", "mkdocstrings", "torch", "triton", "sacrebleu"} & hidden


def test_a_hidden_package_cannot_be_imported_in_the_build_environment() -> None:
    proc = _python("import pytest_codeblocks")
    assert proc.returncode != 0
    assert "No module named 'pytest_codeblocks'" in proc.stderr


def test_the_page_machinery_imports_without_test_packages() -> None:
    """The About page layer renders the fence lint's rules: loading the lint must not load pytest-codeblocks."""
    proc = _python("import gpukb.site.pages, gpukb.site.fences, gpukb.site.mkdocs_hooks, mkdocs_api_autonav")
    assert proc.returncode == 0, proc.stderr
