"""Shared fixtures: the GPU marker, snippets this machine cannot run, the repository root, the built site and
``gpukb`` installed from its wheel."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from filelock import FileLock

from gpukb.site.snippets import NoGpuError, UnavailableError
from tests.helpers import ROOT, path_without_scripts, require


def pytest_configure(config: pytest.Config) -> None:
    # The inline bash blocks of the pages call the `gpukb` command: put this environment's scripts first on PATH,
    # whether pytest was started through `make test` or straight from the virtual environment.
    scripts = str(Path(sys.executable).parent)
    os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
    if "MUTANT_UNDER_TEST" in os.environ:  # under mutmut, which forks a test process per mutant
        _one_torch_thread()
        _clear_caches()


def _one_torch_thread() -> None:
    """A process forked after torch ran on its thread pool hangs at its next parallel torch call (the pool is not
    fork-safe): with one thread there is no pool to inherit."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


#: The project's functools caches, found once per set of loaded modules (a walk of every object takes seconds).
_CACHES: dict[str, object] = {"modules": 0, "caches": []}


def _clear_caches() -> None:
    """Empty every functools cache of the project and its tests.

    mutmut runs each mutant's tests in a process forked from one that has already run them: a result cached there
    (the formats, a record, a rendered page) would be served to the mutant's tests without the mutated code running.
    """
    import functools
    import gc

    if _CACHES["modules"] != len(sys.modules):  # new modules, new caches: look again
        _CACHES["caches"] = [obj for obj in gc.get_objects() if isinstance(obj, functools._lru_cache_wrapper)
                             and obj.__module__.split(".")[0] in ("gpukb", "tests")]  # fmt: skip
        _CACHES["modules"] = len(sys.modules)
    for cached in _CACHES["caches"]:
        cached.cache_clear()


@pytest.fixture(autouse=True)
def _uncached_for_mutmut_stats() -> None:
    """mutmut's stats run maps each test to the functions it calls, and runs a mutant against the tests mapped to
    its function only: a result an earlier test cached (a catalog, a record) hid the call from every later test, so
    their checks never ran against that function's mutants. In that run every test starts with empty caches."""
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        _clear_caches()


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.hookimpl(tryfirst=True)  # before ``-m gpu`` selects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:  # a test parametrized with a CUDA snippet runs it on the GPU: mark it so
        params = getattr(item, "callspec", None)
        if item.get_closest_marker("no_snippet_run") is not None:
            continue
        if params and any(str(v).endswith(".cu") for v in params.params.values()):
            item.add_marker(pytest.mark.gpu)
    if _cuda_available():
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """A test that runs a snippet this machine cannot run (``gpukb.site.snippets.UnavailableError``) skips with the
    reason: always for want of a GPU (CI has none), and for want of a tool (nvcc) only where
    ``GPUKB_REQUIRE_ALL`` is not set, so no per-topic snippet test needs its own skip logic."""
    try:
        return (yield)
    except NoGpuError as err:
        pytest.skip(str(err))
    except UnavailableError as err:
        require(False, str(err))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def _shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's one temporary folder: with pytest-xdist each worker's folder sits in it."""
    shared = tmp_path_factory.getbasetemp()
    return shared.parent if os.environ.get("PYTEST_XDIST_WORKER") else shared


def _build_site(shared: Path, wait: bool = True) -> None:
    """Build the site into ``shared / "site"`` and write ``site-build.log`` (return code, then the log), unless a
    build already wrote it. Under a file lock: one build per run, whichever worker gets there first; with
    ``wait=False`` return at once when another holds the lock (it is building)."""
    from filelock import Timeout

    from tests.site import docs_extra

    outcome = shared / "site-build.log"
    try:
        with FileLock(shared / "site-build.lock", timeout=-1 if wait else 0):
            if not outcome.exists():
                proc = subprocess.run(
                    [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(shared / "site")],
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    timeout=600,
                    env={**os.environ, **docs_extra.build_environment(), "PATH": path_without_scripts()},
                )
                outcome.write_text(f"{proc.returncode}\n{proc.stdout}{proc.stderr}", encoding="utf-8")
    except Timeout:
        pass


@pytest.fixture(scope="session", autouse=True)
def _start_the_site_build(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Start the site build in the background before the first test, when any test of this session needs it, so
    that the build runs while the other tests do instead of a worker waiting for it (about a minute on 2 cores)."""
    if not any("built_site" in getattr(item, "fixturenames", ()) for item in request.session.items):
        return
    threading.Thread(target=_build_site, args=(_shared_folder(tmp_path_factory), False), daemon=True).start()


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Build the site once per test run with ``mkdocs build --strict``; returns (site dir, build log).

    With pytest-xdist (``make test``) every worker asks for it: the first builds into the run's shared temporary
    folder under a file lock, the others wait and read the same build (the build starts before the first test:
    ``_start_the_site_build``). The build runs the way a reader runs
    ``.venv/bin/mkdocs build`` without activating the environment: this environment's scripts directory is taken off
    ``PATH`` (the hooks put it back for the ``gpukb`` console blocks). It runs as if only the docs extra were
    installed (every other package hidden, see ``tests/site/docs_extra.py``), so a page that needs a test-only or
    undeclared package fails it; and without the render cache, so every block runs.
    """
    shared = _shared_folder(tmp_path_factory)
    _build_site(shared)  # waits for a build another worker, or this one's background thread, is running
    returncode, log = (shared / "site-build.log").read_text(encoding="utf-8").split("\n", 1)
    if returncode != "0":
        pytest.fail(f"mkdocs build --strict failed:\n{log}")
    return shared / "site", log


@pytest.fixture(scope="session")
def installed_gpukb(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``gpukb`` as a reader gets it: the wheel built from this checkout (``pip wheel --no-deps``, no build
    isolation: no network), installed into a folder outside the repository (``pip install --target``), and a copy
    of ``snippets/`` beside it to run from. Returns (the install folder, the copied snippets' root).

    Put the install folder first on ``PYTHONPATH`` and the snippets import it, not the editable install. Built once
    per test run: with pytest-xdist the first worker builds under a file lock and the others use it (as
    ``built_site``). About 5 s.
    """
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    base = shared / "installed-gpukb"
    target, copied = base / "target", base / "reader"
    with FileLock(shared / "installed-gpukb.lock"):
        outcome = base / "outcome.log"
        if not outcome.exists():
            shutil.rmtree(base, ignore_errors=True)
            source = base / "source"  # the files the wheel is built from, so no build/ or *.egg-info lands in the repo
            ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
            shutil.copytree(ROOT / "src", source / "src", ignore=ignore)
            for name in ("pyproject.toml", "README.md"):
                shutil.copy2(ROOT / name, source / name)
            shutil.copytree(ROOT / "snippets", copied / "snippets", ignore=ignore)
            pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
            log = []
            for step in ("wheel", "install"):
                if step == "wheel":
                    command = [
                        *pip,
                        "wheel",
                        "--no-deps",
                        "--no-build-isolation",
                        "-w",
                        str(base / "dist"),
                        str(source),
                    ]
                else:  # the one wheel just built
                    command = [
                        *pip,
                        "install",
                        "--no-deps",
                        "--target",
                        str(target),
                        *map(str, (base / "dist").glob("*.whl")),
                    ]
                proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
                log.append(f"$ {' '.join(command)}\n{proc.stdout}{proc.stderr}")
                if proc.returncode != 0:
                    break
            outcome.write_text(f"{proc.returncode}\n" + "\n".join(log), encoding="utf-8")
    returncode, log = (base / "outcome.log").read_text(encoding="utf-8").split("\n", 1)
    if returncode != "0":
        pytest.fail(f"building or installing the wheel failed:\n{log}")
    return target, copied


def pytest_terminal_summary(terminalreporter) -> None:
    """List the case counts the calculator tests recorded (``tests/site/test_calculators.py``): a print inside a
    test is hidden under pytest-xdist, a recorded property travels with the report."""
    lines = [
        value
        for outcome in ("passed", "failed")
        for report in terminalreporter.stats.get(outcome, [])
        for name, value in getattr(report, "user_properties", [])
        if name == "calculator cases"
    ]
    if lines:
        terminalreporter.section("calculators checked against the library")
        for line in lines:
            terminalreporter.write_line(line)
