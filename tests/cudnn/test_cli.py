"""``gpukb cudnn``: strides and output dims on the command line, and bad input refused with status 2."""

from __future__ import annotations

import pytest

from gpukb.cli import main


def test_strides_of_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cudnn", "strides", "1,64,5,4"]) == 0
    out = capsys.readouterr().out
    assert "NCHW    (1280, 20, 4, 1)" in out
    assert "NHWC    (1280, 1, 256, 64)" in out
    assert "CHWN    (1, 20, 4, 1)" in out
    assert main(["cudnn", "strides", "2,8,3,5,4"]) == 0
    assert "NDHWC   (480, 1, 160, 32, 8)" in capsys.readouterr().out


def test_output_dims(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cudnn", "output", "32,3,224,224", "64,3,7,7", "--pad", "3", "--stride", "2"]) == 0
    assert capsys.readouterr().out == "output (32, 64, 112, 112)\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["strides", "1,64"], "3 to 8 dimensions"),
        (["strides", "1,2,3"], "formats are named for 4-D and 5-D tensors; got 3"),
        (["strides", "1,x,3,4"], "DIMS must be integers separated by commas"),
        (["output", "1,6,8,8", "4,1,3,3", "--groups", "4"], "rule groups-divide-channels"),
        (["output", "1,1,2,2", "1,1,5,5"], "rule output-at-least-1"),
        (["output", "1,1,8,8"], "output needs the FILTER"),
        (["output", "1,1,8,8", "1,1,3,3", "--stride", "0"], "rule conv-parameters"),
    ],
)
def test_bad_input_exits_2_with_the_rule(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["cudnn", *argv])
    assert info.value.code == 2
    assert message in capsys.readouterr().err
