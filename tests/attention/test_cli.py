"""``gpukb attention``: the numbers it prints are the library's, and bad arguments are usage errors."""

from __future__ import annotations

import pytest

from gpukb.cli import main


def test_kv_cache(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["attention", "kv-cache", "--layers", "32", "--kv-heads", "8", "--seq", "8192"]) == 0
    out = capsys.readouterr().out
    assert "1,073,741,824" in out
    assert "1.000" in out


def test_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["attention", "cost", "--batch", "1", "--heads", "1", "--seq", "4", "--head-dim", "1",
                 "--causal"]) == 0  # fmt: skip
    rows = dict(line.rsplit(None, 1) for line in capsys.readouterr().out.splitlines()[2:])
    assert rows["GFLOP (two matrix products)"] == "0.0"
    assert rows["FLOP per byte, fused"] == "1"  # 4 · (1+2+3+4) FLOP over 4 · 4 elements of 2 bytes: 40 / 32


def test_bad_arguments_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["attention", "cost", "--heads", "32", "--kv-heads", "3"])
    assert exit_info.value.code == 2
    assert "kv_heads (3) must divide heads (32)" in capsys.readouterr().err
