"""The chapter's process groups, each started once per test run: two gloo ranks for the one-dimensional schemes,
four for FSDP + TP and the four-stage pipeline. Under pytest-xdist the first worker to ask runs the group and the
others read its result (the pattern of the site build in ``tests/conftest.py``), so each group is spawned once."""

from __future__ import annotations

import os
import pickle
import sys

import pytest
from filelock import FileLock

from gpukb.distributed.launch import run_spawned
from gpukb.parallelism.demos import run_four, run_two

GROUPS = {"two": (run_two, 2), "four": (run_four, 4)}


def _ranks(tmp_path_factory: pytest.TempPathFactory, name: str) -> list[dict]:
    import torch

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    outcome = shared / f"parallelism-{name}.pickle"
    with FileLock(shared / f"parallelism-{name}.lock"):
        if not outcome.exists():
            fn, world = GROUPS[name]
            fork = sys.platform == "linux" and not torch.cuda.is_initialized()
            if fork:  # imported once here, inherited by every forked rank instead of imported by each
                import torch.distributed.fsdp
                import torch.distributed.pipelining
                import torch.distributed.tensor.debug
                import torch.distributed.tensor.experimental
                import torch.distributed.tensor.parallel
            try:
                result = ("ok", run_spawned(fn, world, "gloo", timeout=120, start_method="fork" if fork else "spawn"))
            except (RuntimeError, TimeoutError) as e:
                result = ("error", f"{type(e).__name__}: {e}")
            outcome.write_bytes(pickle.dumps(result))
    status, value = pickle.loads(outcome.read_bytes())
    if status != "ok":
        pytest.fail(value)
    return value


@pytest.fixture(scope="session")
def two_ranks(tmp_path_factory) -> list[dict]:
    """Each of two ranks' results of :func:`gpukb.parallelism.demos.run_two`."""
    return _ranks(tmp_path_factory, "two")


@pytest.fixture(scope="session")
def four_ranks(tmp_path_factory) -> list[dict]:
    """Each of four ranks' results of :func:`gpukb.parallelism.demos.run_four`."""
    return _ranks(tmp_path_factory, "four")
