"""Every file under snippets/ has exactly one check, and the shared runner behaves.

The checks live with their topic, FastAPI-style: ``tests/<topic>/test_snippets.py`` defines
``CHECKS = {"snippets/<topic>/<name>.<suffix>": check}`` and a test that runs each snippet with
:func:`gpukb.site.snippets.run_snippet` and asserts what it printed. This module imports them all and holds the
line: a snippet of any suffix (``.py``, ``.cu``, ...) without a check, a check registered twice, a check for a
file that is gone fails here, and one runner (:func:`test_snippet_output`) runs every snippet and its check.
"""

from __future__ import annotations

import importlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from gpukb import environment
from gpukb.site import snippets as runner
from gpukb.site.includes import snippet_files
from gpukb.site.snippets import (
    MissingToolError,
    NoGpuError,
    SnippetError,
    compile_cuda,
    find_nvcc,
    gpu_present,
    nvcc_flags,
    run_snippet,
)
from tests import conftest
from tests.cuda import numba_target
from tests.helpers import ROOT

Check = Callable[[str], None]

# --8<-- [start:collector]
TOPIC_MODULES = sorted(p.parent.name for p in (ROOT / "tests").glob("*/test_snippets.py"))


def topic_checks() -> dict[str, ModuleType]:
    """Each topic's ``tests.<topic>.test_snippets`` module, by topic."""
    return {topic: importlib.import_module(f"tests.{topic}.test_snippets") for topic in TOPIC_MODULES}


def collect(modules: dict[str, ModuleType]) -> dict[str, Check]:
    """The union of the topics' ``CHECKS``.

    Raises:
        ValueError: If two topics register the same snippet, naming both.
    """
    found: dict[str, Check] = {}
    owner: dict[str, str] = {}
    for topic, module in modules.items():
        for path, check in module.CHECKS.items():
            if path in found:
                raise ValueError(f"{path} has a check in tests/{owner[path]}/ and in tests/{topic}/")
            found[path], owner[path] = check, topic
    return found
    # --8<-- [end:collector]


MODULES = topic_checks()
CHECKS = collect(MODULES)


# --8<-- [start:runner]
@pytest.mark.parametrize("snippet", sorted(CHECKS))
def test_snippet_output(snippet: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """The one runner: each snippet run as a reader runs it, its output handed to its topic's check. A Python
    snippet runs from a folder outside the repository with ``gpukb`` installed from the built wheel first on
    ``PYTHONPATH`` (``installed_gpukb``), so a file the wheel leaves out fails here, not on a reader's machine.
    Without a GPU it runs on the CPU stand-ins a reader would use (Triton's interpreter, numba's simulator); a
    CUDA C++ snippet is a GPU test (tests/conftest.py marks it)."""
    path = ROOT / snippet
    if not snippet.endswith(".cu"):
        target, copied = request.getfixturevalue("installed_gpukb")
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")]))
        path = copied / snippet
    if not snippet.endswith(".cu") and not gpu_present():
        monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
        monkeypatch.setenv("TRITON_INTERPRET", "1")
    elif "numba" in snippet and numba_target.unavailable_reason() is not None:
        pytest.skip(numba_target.unavailable_reason())  # numba-cuda's GPU target on numpy >= 2.5
    CHECKS[snippet](run_snippet(path))
    # --8<-- [end:runner]


def test_snippets_run_the_installed_wheel(installed_gpukb: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """What the runner above runs is the wheel, not this checkout: from the copied snippets' folder, with the
    install folder first on ``PYTHONPATH``, ``gpukb`` and its data files come from the install folder (the
    editable install, and ``src/`` on ``PYTHONPATH`` where a developer set it, come later)."""
    target, copied = installed_gpukb
    assert not copied.is_relative_to(ROOT)
    assert not target.is_relative_to(ROOT)
    assert sorted(p.relative_to(copied).as_posix() for p in copied.rglob("*") if p.is_file()) == snippet_files(ROOT)
    probe = copied / "snippets" / "probe.py"
    probe.write_text(
        "import gpukb, gpukb.data\nfrom importlib import resources\n"
        "print(gpukb.__file__)\nprint(resources.files(gpukb.data).joinpath('glossary.toml').is_file())\n"
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")]))
    try:
        where, data = run_snippet(probe).splitlines()
    finally:
        probe.unlink()
    assert Path(where).is_relative_to(target), where
    assert data == "True"


def test_every_snippet_has_exactly_one_check() -> None:
    """Every file under snippets/, whatever its suffix, is a key of exactly one topic's ``CHECKS``."""
    missing = [path for path in snippet_files(ROOT) if path not in CHECKS]
    assert missing == [], f"snippets without a check (add them to tests/<topic>/test_snippets.py): {missing}"


def test_every_check_names_an_existing_snippet() -> None:
    registered = {path for module in MODULES.values() for path in module.CHECKS}
    assert sorted(registered - set(snippet_files(ROOT))) == []


@pytest.mark.parametrize("topic", TOPIC_MODULES)
def test_each_topic_module_registers_and_runs_its_snippets(topic: str) -> None:
    """A topic module checks files under snippets/ (the library's topic may differ from the page's: the Triton
    snippet is checked in tests/gemm/); the one runner above runs them."""
    module = MODULES[topic]
    assert module.CHECKS, f"tests/{topic}/test_snippets.py has an empty CHECKS"
    elsewhere = [path for path in module.CHECKS if not path.startswith("snippets/")]
    assert elsewhere == []
    assert all(callable(check) for check in module.CHECKS.values())
    assert (ROOT / "tests" / topic / "__init__.py").is_file(), f"tests/{topic}/ needs an __init__.py"


def test_a_snippet_registered_twice_fails() -> None:
    one = ModuleType("one")
    one.CHECKS = {"snippets/a/x.py": print}
    two = ModuleType("two")
    two.CHECKS = {"snippets/a/x.py": print}
    with pytest.raises(ValueError, match=r"snippets/a/x.py has a check in tests/one/ and in tests/two/"):
        collect({"one": one, "two": two})


# --- the runner -----------------------------------------------------------------------------------------------


def test_a_broken_snippet_fails(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("from gpukb.formats.explain import explain\nexplain('42.5', 'fp7')\n")
    with pytest.raises(SnippetError, match="ValueError: unknown format 'fp7'"):
        run_snippet(broken)


def test_a_missing_snippet_fails(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no snippet"):
        run_snippet(tmp_path / "nowhere.py")


def test_arguments_reach_the_snippet(tmp_path: Path) -> None:
    echo = tmp_path / "echo.py"
    echo.write_text("import sys\nprint(sys.argv[1:])\n")
    assert run_snippet(echo, args=["256", "3"]) == "['256', '3']\n"


def test_an_unknown_suffix_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.rs").write_text("fn main() {}\n")
    with pytest.raises(ValueError, match=r"no runner for '.rs' snippets"):
        run_snippet(tmp_path / "x.rs")


KERNEL = """// A kernel that fills a vector, and its host check.
//
// Build and run:
//   nvcc -O2 -std=c++17 snippets/t/fill.cu -o fill -lcublas
#include <cstdio>
__global__ void fill(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = i; }
int main() {
  float* x; cudaMalloc(&x, 64 * sizeof(float)); fill<<<1, 64>>>(x, 64);
  float h[64]; cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost); std::printf("%g\\n", h[63]); return 0;
}
"""


def test_the_build_line_comes_from_the_snippet(tmp_path: Path) -> None:
    (tmp_path / "fill.cu").write_text(KERNEL)
    assert nvcc_flags(tmp_path / "fill.cu") == ["-O2", "-std=c++17", "-lcublas"]
    (tmp_path / "bare.cu").write_text("int main() { return 0; }\n")
    assert nvcc_flags(tmp_path / "bare.cu") == list(runner.DEFAULT_NVCC_FLAGS)


def _fake_nvcc(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    nvcc = folder / "nvcc"
    nvcc.write_text("#!/bin/sh\necho fake\n")
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IXUSR)
    return nvcc


def test_find_nvcc_looks_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("NVCC", *environment.CUDA_PREFIXES):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(environment, "DEFAULT_CUDA_PREFIX", str(tmp_path / "no-cuda"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_nvcc() is None
    home = _fake_nvcc(tmp_path / "toolkit" / "bin")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    assert find_nvcc() == str(home)
    on_path = _fake_nvcc(tmp_path / "path")
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    assert find_nvcc() == str(on_path)
    named = _fake_nvcc(tmp_path / "named")
    monkeypatch.setenv("NVCC", str(named))
    assert find_nvcc() == str(named)


def test_without_nvcc_compiling_says_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fill.cu").write_text(KERNEL)
    monkeypatch.setattr(runner, "find_nvcc", lambda: None)
    with pytest.raises(MissingToolError, match=r"no nvcc to compile .*fill.cu \(looked at \$NVCC, PATH"):
        compile_cuda(tmp_path / "fill.cu", tmp_path / "fill")
    monkeypatch.setattr(runner, "gpu_present", lambda: True)
    with pytest.raises(MissingToolError):
        run_snippet(tmp_path / "fill.cu")


def test_without_a_gpu_a_cuda_snippet_does_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fill.cu").write_text(KERNEL)
    monkeypatch.setattr(runner, "gpu_present", lambda: False)
    with pytest.raises(NoGpuError, match="runs on a CUDA GPU and none is visible"):
        run_snippet(tmp_path / "fill.cu")


def test_nvcc_compiles_a_kernel(tmp_path: Path) -> None:
    """Where nvcc is present, the runner's compile step works (``-c``: no GPU needed)."""
    if find_nvcc() is None:
        pytest.skip("no nvcc (looked at $NVCC, PATH, $CUDA_HOME/bin and /usr/local/cuda/bin)")
    (tmp_path / "fill.cu").write_text(KERNEL)
    command = compile_cuda(tmp_path / "fill.cu", tmp_path / "fill.o", compile_only=True)
    assert "-c" in command
    assert "-lcublas" not in command  # link flags are left out when only compiling
    assert (tmp_path / "fill.o").stat().st_size > 0
    (tmp_path / "bad.cu").write_text("int main() { return undeclared; }\n")
    with pytest.raises(SnippetError, match="undeclared"):
        compile_cuda(tmp_path / "bad.cu", tmp_path / "bad.o", compile_only=True)


@pytest.mark.gpu
def test_a_cuda_snippet_runs_on_the_gpu(tmp_path: Path) -> None:
    (tmp_path / "fill.cu").write_text(KERNEL.replace(" -lcublas", ""))
    assert run_snippet(tmp_path / "fill.cu") == "63\n"


def _through_the_hook(error: Exception) -> None:
    """Raise ``error`` inside tests/conftest.py's ``pytest_runtest_call`` wrapper, as a failing test body would."""
    wrapper = conftest.pytest_runtest_call(item=None)
    next(wrapper)
    wrapper.throw(error)


@pytest.mark.parametrize("require_all", ["", "1"])
def test_a_missing_gpu_always_skips(monkeypatch: pytest.MonkeyPatch, require_all: str) -> None:
    """CI sets GPUKB_REQUIRE_ALL=1 and has no GPU: a CUDA snippet's test skips there, with the reason."""
    monkeypatch.setenv("GPUKB_REQUIRE_ALL", require_all)
    with pytest.raises(pytest.skip.Exception, match="runs on a CUDA GPU and none is visible here"):
        _through_the_hook(NoGpuError("x.cu runs on a CUDA GPU and none is visible here"))


def test_a_missing_tool_skips_or_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUKB_REQUIRE_ALL", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"no nvcc to compile x\.cu"):
        _through_the_hook(MissingToolError("no nvcc to compile x.cu"))
    monkeypatch.setenv("GPUKB_REQUIRE_ALL", "1")
    with pytest.raises(pytest.fail.Exception, match=r"GPUKB_REQUIRE_ALL=1 but no nvcc to compile x\.cu"):
        _through_the_hook(MissingToolError("no nvcc to compile x.cu"))


def test_other_errors_pass_through_the_hook() -> None:
    with pytest.raises(SnippetError, match="exited with status 1"):
        _through_the_hook(SnippetError("x.py exited with status 1"))


def test_a_cuda_snippets_test_carries_the_gpu_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    """``pytest -m gpu`` on the GPU machine selects the tests that run ``.cu`` snippets."""

    class Item:
        def __init__(self, snippet: str) -> None:
            self.callspec = SimpleNamespace(params={"snippet": snippet})
            self.keywords: dict[str, object] = {}
            self.markers: list[str] = []

        def add_marker(self, marker: pytest.MarkDecorator) -> None:
            self.markers.append(marker.name)

        def get_closest_marker(self, name: str) -> str | None:
            return name if name in self.markers else None

    reads_only = Item("snippets/gemm/cublaslt_matmul.cu")
    reads_only.markers.append("no_snippet_run")  # parametrized by the path, runs no snippet: not a GPU test
    items = [Item("snippets/gemm/cublaslt_matmul.cu"), Item("snippets/gemm/emulate.py"), reads_only]
    monkeypatch.setattr(conftest, "_cuda_available", lambda: True)
    conftest.pytest_collection_modifyitems(config=None, items=items)
    assert [item.markers for item in items] == [["gpu"], [], ["no_snippet_run"]]
