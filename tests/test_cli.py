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
    lines = dict(line.split(None, 1) for line in out.splitlines() if not line.startswith(("torch built", "CUDA")))
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


def test_format_value_table(capsys) -> None:
    assert main(["format", "42.5", "--formats", "fp32,e4m3,e5m2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in lines[2:]}
    assert rows["fp32"][1:6] == ["0x422A0000", "0", "10000100", "01010100000000000000000", "42.5"]
    assert rows["e4m3"][1:6] == ["0x63", "0", "1100", "011", "44"]
    assert rows["e5m2"][1:6] == ["0x51", "0", "10100", "01", "40"]


def test_format_decodes_a_pattern(capsys) -> None:
    assert main(["format", "0x63", "--as", "e4m3"]) == 0
    assert capsys.readouterr().out.splitlines()[2].split() == [
        "e4m3",
        "0x63",
        "0",
        "1100",
        "011",
        "normal",
        "5",
        "44",
    ]


def test_format_list(capsys) -> None:
    assert main(["format", "--list"]) == 0
    out = capsys.readouterr().out
    e4m3 = next(line.split() for line in out.splitlines() if line.startswith("e4m3 "))
    assert e4m3[1:5] == ["8", "4", "3", "7"]
    assert "448" in e4m3
    assert "HIP_R_8F_E4M3_FNUZ" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["format", "1", "--as", "fp7"], "unknown format 'fp7'; known formats: fp64"),
        (["format", "0x1ff", "--as", "e4m3"], "does not fit e4m3"),
        (["format", "ten", "--as", "e4m3"], "a bit pattern is written like 0x63, 0b1100011 or 99; got 'ten'"),
        (["format", "ten"], "'ten' is not a number"),
        (["format"], "give a VALUE, or --list"),
        (["format", "1", "--rounding", "up"], "invalid choice: 'up'"),
    ],
)
def test_format_errors_exit_2(argv, message, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
