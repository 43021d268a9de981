"""Ranks that wait for each other fail the run after the timeout, never hang the suite."""

from __future__ import annotations

import sys
import time

import pytest

from gpukb.distributed.launch import run_spawned
from gpukb.parallelism.demos import hang


def test_a_hung_rank_times_out() -> None:
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"ranks \[0, 1\] did not finish within 2 s"):
        run_spawned(hang, 2, "gloo", timeout=2, start_method="fork" if sys.platform == "linux" else "spawn")
    assert time.monotonic() - start < 30  # killed, not waited for (gloo's own timeout is 30 minutes)
