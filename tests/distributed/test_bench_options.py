"""The distributed and parallelism bench scripts refuse options that do not go together while parsing them, before
a process group starts (they were refused by each rank after it had, or silently ignored)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gpukb.records import script

BENCH = Path(__file__).parents[2] / "bench"


def _bench(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("name", "argv", "message"),
    [
        ("distributed_fsdp", ["--tiny", "--model", "gpu-bound"], "--tiny trains the tiny model; --model gpu-bound "
         "does not apply"),
        ("distributed_fsdp", ["--tiny", "--backend", "nccl"], "--tiny runs on the CPU with gloo; --backend nccl does "
         "not apply"),
        ("parallelism_schemes", ["--tiny", "--backend", "nccl"], "--tiny runs on CPU ranks with gloo; --backend nccl "
         "does not apply"),
        ("parallelism_schemes", ["--rounds", "0"], "argument --rounds: N must be a whole number ≥ 1; got '0'"),
        ("parallelism_schemes", ["--steps", "-2"], "argument --steps: N must be a whole number ≥ 1; got '-2'"),
    ],
)  # fmt: skip
def test_options_a_bench_does_not_model_are_a_usage_error(name, argv, message, tmp_path, monkeypatch, capsys):
    module = _bench(name)
    monkeypatch.setattr(script, "join_process_group", lambda backend: pytest.fail("joined a process group"))
    run = getattr(module, "fsdp" if name == "distributed_fsdp" else name)
    with pytest.raises(SystemExit) as stop:
        script.main(run, module.__doc__, module.arguments, device="ranks", check=module.check,
                    argv=[str(tmp_path / "out.json"), *argv], prog=f"{name}.py")  # fmt: skip
    assert stop.value.code == 2
    assert f"{name}.py: error: {message}" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("name", ["distributed_fsdp", "parallelism_schemes"])
def test_tiny_alone_passes_the_check_and_runs_on_gloo(name) -> None:
    """``--tiny`` runs on gloo; without it ``--backend`` is used (parallelism_schemes ignored it and took NCCL)."""
    module = _bench(name)
    parse = script.parser(module.__doc__, module.arguments, device="ranks").parse_args
    tiny = parse(["out.json", "--tiny"])
    assert (module.check(tiny), module.backend(tiny)) == (None, "gloo")
    assert module.backend(parse(["out.json", "--backend", "gloo"])) == "gloo"
    assert module.backend(parse(["out.json"])) is None  # the skeleton's default: NCCL with CUDA, else gloo
