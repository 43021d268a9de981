"""``gpukb cuda``: the occupancy and thread-index commands print the library's answers and refuse bad input."""

from __future__ import annotations

import pytest

from gpukb.cli import main


def test_occupancy_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cuda", "occupancy", "--cc", "9.0", "--threads", "256", "--registers", "64"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("4 blocks/SM, 32 of 64 warps (50%), limited by registers\n")
    assert main(["cuda", "occupancy", "--registers", "32", "--sweep"]) == 0
    assert "1024" in capsys.readouterr().out


def test_threads_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cuda", "threads", "--grid", "3", "2", "--block", "4", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 + 72
    assert lines[-1].split()[-2:] == ["71", "71"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["cuda", "occupancy", "--threads", "1025", "--registers", "1"], "exceeds the limit of 1024"),
        (["cuda", "occupancy", "--registers", "32", "--cluster", "9"], "cluster size 9 exceeds"),
        (["cuda", "threads", "--grid", "100", "--block", "100"], "4096 threads or fewer"),
    ],
)
def test_bad_input_is_a_usage_error(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        main(argv)
    assert err.value.code == 2
    assert message in capsys.readouterr().err
