"""Helpers the tests share: where the repository is, the skip-or-fail rule for missing tools, a bare PATH."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def require(condition: bool, reason: str) -> None:
    """Skip when a tool the test needs is missing; fail instead where CI demands every test run.

    ``.ci/run`` sets ``GPUKB_REQUIRE_ALL=1`` so the browser and workflow tests cannot quietly skip in CI.
    """
    if condition:
        return
    if os.environ.get("GPUKB_REQUIRE_ALL") == "1":
        pytest.fail(f"GPUKB_REQUIRE_ALL=1 but {reason}")
    pytest.skip(reason)


def path_without_scripts() -> str:
    """``PATH`` without this Python's scripts directory: what a shell that never activated the venv has."""
    scripts = str(Path(sys.executable).parent)
    return os.pathsep.join(e for e in os.environ.get("PATH", "").split(os.pathsep) if e and e != scripts)
