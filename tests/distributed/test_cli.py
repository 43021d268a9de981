"""``gpukb distributed``: plan and memory, and usage errors with status 2."""

from __future__ import annotations

import pytest

from gpukb.cli import main


def test_plan(capsys) -> None:
    assert main(["distributed", "plan", '{"mixed_precision": "DEFAULT", "activation_checkpointing": true}']) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split() == ["DEFAULT", "amp_bf16", "bfloat16", "float32", "bfloat16", "REENTRANT"]
    assert "reduce_dtype=torch.float32" in lines[-1]


def test_memory(capsys) -> None:
    assert main(["distributed", "memory", "--world-size", "64", "--params", "7.5e9"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[2:]}
    assert [rows[s][-1] for s in ("ddp", "zero1", "zero2", "zero3")] == ["120", "31.4", "16.6", "1.88"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["distributed", "plan", '{"x": 1}'], "unknown fsdp_config keys ['x']"),
        (["distributed", "plan", "{"], "config is not JSON"),
        (["distributed", "memory", "--world-size", "0"], "world_size must be an int ≥ 1; got 0"),
    ],
)
def test_usage_errors(argv, message, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
