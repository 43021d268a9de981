"""The README's two commands are the ones the project really uses."""

from __future__ import annotations

import re

from tests.helpers import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _console_commands() -> list[str]:
    blocks = re.findall(r"```console\n(.*?)```", README, flags=re.DOTALL)
    return [line[2:].strip() for block in blocks for line in block.splitlines() if line.startswith("$ ")]


def test_readme_names_serve_and_test() -> None:
    commands = _console_commands()
    assert "make serve" in commands
    assert "make test" in commands


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci, flags=re.MULTILINE)


def test_makefile_serves_with_livereload_on_localhost() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^serve: ", makefile, flags=re.MULTILINE)
    assert "mkdocs serve --livereload" in makefile  # Click 8.3+ needs the flag for live reload
    assert re.search(r"^test: ", makefile, flags=re.MULTILINE)


def test_readme_gpukb_commands_run() -> None:
    import shlex
    import shutil
    import subprocess

    import torch

    commands = [c.split("#")[0].strip() for c in _console_commands() if c.startswith("gpukb ")]
    assert len(commands) >= 4
    for command in commands:
        measures = command.startswith("gpukb bench")
        if measures and torch.cuda.is_available():
            continue  # on a GPU machine this is a benchmark run, which bench/ and tests/performance cover
        proc = subprocess.run([shutil.which("gpukb"), *shlex.split(command)[1:]], capture_output=True, text=True)
        if measures:  # no GPU: a clear message and status 1, not a traceback
            assert proc.returncode == 1, proc.stderr
            assert "no CUDA GPU is available" in proc.stderr
            assert "Traceback" not in proc.stderr
            continue
        assert proc.returncode == 0, (command, proc.stderr)
        assert proc.stdout.strip(), command
