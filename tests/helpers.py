"""Helpers the tests share: where the repository is, and the skip-or-fail rule for missing tools."""

from __future__ import annotations

import os
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
