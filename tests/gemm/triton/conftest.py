"""Each test of the Triton GEMM starts with no cached plans: a test that reads the plan cache reads its own plans
only, in whatever order the tests run (mutmut's clean run orders them by duration)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_plans_from_other_tests() -> None:
    from gpukb.gemm.triton import matmul

    matmul.clear_plans()
