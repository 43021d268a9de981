"""The gpukb command line: --version, info, and usage errors with exit status 2."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpukb import __version__
from gpukb.cli import main

GPUKB = Path(sys.executable).with_name("gpukb")


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"gpukb {__version__}"


def test_info_text(capsys) -> None:
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    lines = dict(
        line.split(None, 1) for line in out.splitlines() if not line.startswith(("torch built", "CUDA"))
    )
    assert lines["python"].strip() == platform.python_version()
    assert lines["numpy"].strip() == np.__version__
    assert "CUDA GPU" in out
    assert "nvcc" in out


def test_info_json(capsys) -> None:
    assert main(["info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["python"] == platform.python_version()
    assert data["libraries"]["numpy"] == np.__version__
    assert set(data) == {"python", "libraries", "cuda_gpu", "torch_cuda", "nvcc"}


@pytest.mark.parametrize("argv", [["nonsense"], ["info", "--bogus"], []])
def test_usage_errors_exit_2(argv, capsys) -> None:
    try:
        status = main(argv)
    except SystemExit as exit_info:
        status = exit_info.code
    assert status == 2
    assert "usage: gpukb" in capsys.readouterr().err


def test_console_script_and_module_entry_points() -> None:
    for command in ([str(GPUKB), "--version"], [sys.executable, "-m", "gpukb", "--version"]):
        proc = subprocess.run(command, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == f"gpukb {__version__}"
    proc = subprocess.run([str(GPUKB), "frobnicate"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "invalid choice: 'frobnicate'" in proc.stderr
