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
