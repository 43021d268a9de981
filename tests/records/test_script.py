"""The skeleton of the bench scripts (gpukb.records.script), on the CPU: its command line, the device check, the run
it describes, the timer it hands out and the record it writes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Literal

import pytest

from gpukb import records
from gpukb.measuring.timing import Budget, HostTimer
from gpukb.records import script, store
from gpukb.schema import StrictModel


class Row(StrictModel):
    label: str
    median: float


class Timed(records.Record):
    """A kind that exists only in these tests (registered by the ``timed_kind`` fixture)."""

    kind: Literal["test.timed"] = "test.timed"
    schema_version: Literal[1] = 1
    rows: list[Row]


@pytest.fixture
def timed_kind(monkeypatch: pytest.MonkeyPatch) -> type[Timed]:
    monkeypatch.setitem(store.KINDS, "test.timed", f"{__name__}:Timed")
    return Timed


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--rounds", type=script.count(), default=1)  # --rounds 0 trained nothing, then a traceback
    parser.add_argument("--warmup", type=script.count(0), default=0)


QUICK = Budget(warmup_ms=0, rep_ms=0, min_reps=3, max_reps=3, min_warmup=1)


def test_the_command_line_is_the_output_then_the_scripts_own_options(tmp_path: Path) -> None:
    args = script.parser("Doc.", _options).parse_args([str(tmp_path / "out.json"), "--size", "3"])
    assert (args.output, args.size) == (tmp_path / "out.json", 3)
    optional = script.parser("Doc.", _options, output="optional").parse_args([])
    assert (optional.output, optional.size) == (None, 8)
    ranks = script.parser("Doc.", device="ranks").parse_args(["out.json", "--backend", "gloo"])
    assert ranks.backend == "gloo"
    assert "--backend" not in script.parser("Doc.").format_help()  # only scripts that run on ranks have it


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "the following arguments are required: OUTPUT.json"),
        (["a.json", "b.json"], "unrecognized arguments: b.json"),
        (["a.json", "--size", "x"], "argument --size: invalid int value: 'x'"),
        (["a.json", "--rounds", "0"], "argument --rounds: N must be a whole number ≥ 1; got '0'"),
        (["a.json", "--rounds", "-1"], "argument --rounds: N must be a whole number ≥ 1; got '-1'"),
        (["a.json", "--rounds", "1e300"], "argument --rounds: N must be a whole number ≥ 1; got '1e300'"),
        (["a.json", "--warmup", "-1"], "argument --warmup: N must be a whole number ≥ 0; got '-1'"),
    ],
)
def test_a_bad_command_line_is_a_usage_error(argv, message, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        script.main(lambda s: None, "Doc.", _options, device="cpu", argv=argv, prog="demo.py")
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def _tiny_check(args: argparse.Namespace) -> str | None:
    return f"--tiny takes no --size; got {args.size}" if args.tiny and args.size != 8 else None


def test_options_that_do_not_go_together_are_refused_before_any_rank_starts(tmp_path: Path, monkeypatch, capsys):
    """A script's ``check`` refuses a combination as a usage error before the process group is joined (the
    distributed bench's ``--tiny --model gpu-bound`` was refused by each rank after the group started)."""

    def options(parser: argparse.ArgumentParser) -> None:
        _options(parser)
        parser.add_argument("--tiny", action="store_true")

    monkeypatch.setattr(script, "join_process_group", lambda backend: pytest.fail("joined a process group"))
    out = str(tmp_path / "out.json")
    with pytest.raises(SystemExit) as stop:
        script.main(lambda s: None, "Doc.", options, device="ranks", check=_tiny_check, argv=[out, "--tiny",
                    "--size", "3"], prog="demo.py")  # fmt: skip
    assert stop.value.code == 2
    assert "demo.py: error: --tiny takes no --size; got 3" in capsys.readouterr().err
    with pytest.raises(TypeError, match="check must be a function of the parsed arguments; got str"):
        script.main(lambda s: None, "Doc.", options, device="cpu", check="--tiny", argv=[out])  # type: ignore[arg-type]
    # options that go together pass the check and are measured
    assert script.main(lambda s: 7, "Doc.", options, device="cpu", check=_tiny_check, argv=[out, "--tiny"]) == 7


def test_the_help_is_the_scripts_docstring(capsys) -> None:
    with pytest.raises(SystemExit):
        script.main(lambda s: None, "Time a thing.\n\nUsage: python bench/demo.py OUT", _options, argv=["--help"])
    shown = capsys.readouterr().out
    assert "Time a thing." in shown
    assert "Usage: python bench/demo.py OUT" in shown
    assert "--size SIZE" in shown


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: script.parser("Doc.", output="dir"), ValueError, r"unknown output 'dir'; choose one of \['file'"),
        (lambda: script.parser("Doc.", device="tpu"), ValueError, r"unknown device 'tpu'; choose one of \['cuda'"),
        (lambda: script.parser("Doc.", arguments="--size"), TypeError, "arguments must be a function"),
    ],
)
def test_a_skeleton_it_does_not_model_is_refused(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()


def test_a_cuda_script_without_a_gpu_measures_nothing(tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    called = []
    status = script.main(called.append, "Doc.", argv=[str(tmp_path / "out.json")], prog="demo.py")
    assert status == script.NOTHING_MEASURED
    assert called == []
    assert not (tmp_path / "out.json").exists()
    assert "demo.py: no CUDA GPU is available" in capsys.readouterr().err


def test_a_cpu_script_times_with_the_host_clock_and_writes_its_record(tmp_path: Path, timed_kind) -> None:
    seen = {}

    def measure(s: script.Script) -> Timed:
        seen["timer"] = s.timer()
        timed = s.measure(lambda: sum(range(100)), QUICK)
        seen["n"] = timed.summary().n
        s.note("sums of 100 integers")
        return Timed(run=s.finished(), rows=[{"label": f"size {s.args.size}", "median": timed.summary().median}])

    out = tmp_path / "out.json"
    assert script.main(measure, "Doc.", _options, device="cpu", argv=[str(out), "--size", "5"]) == 0
    assert isinstance(seen["timer"], HostTimer)
    assert seen["timer"].sync is None  # nothing to synchronize on the CPU
    assert seen["n"] == 3  # the budget's repetitions
    written = records.read(out, Timed)
    assert written.rows[0].label == "size 5"
    assert written.run.notes == ["sums of 100 integers"]
    assert written.run.gpu is None
    assert written.run.duration_s is not None


def test_what_measure_returns_is_the_exit_status(tmp_path: Path) -> None:
    assert script.main(lambda s: None, "Doc.", device="cpu", argv=[str(tmp_path / "a.json")]) == 0
    assert script.main(lambda s: 3, "Doc.", device="cpu", argv=[str(tmp_path / "a.json")]) == 3
    assert not (tmp_path / "a.json").exists()


def test_without_an_optional_output_nothing_is_written(tmp_path: Path, timed_kind, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    paths = []

    def measure(s: script.Script) -> None:
        paths.append(s.write(Timed(run=s.finished(), rows=[])))

    assert script.main(measure, "Doc.", device="cpu", output="optional", argv=[]) == 0
    assert paths == [None]
    assert list(tmp_path.iterdir()) == []


def test_a_folder_output_takes_named_files(tmp_path: Path, timed_kind) -> None:
    def measure(s: script.Script) -> None:
        record = Timed(run=s.finished(), rows=[])
        assert s.write(record, "first.json") == tmp_path / "first.json"
        with pytest.raises(ValueError, match="name a file inside the output folder"):
            s.write(record)

    assert script.main(measure, "Doc.", device="cpu", output="folder", argv=[str(tmp_path)]) == 0
    assert records.read(tmp_path / "first.json", Timed).rows == []

    def one_file(s: script.Script) -> None:
        with pytest.raises(ValueError, match=r"this script writes one file; got 'x\.json'"):
            s.write(Timed(run=s.finished(), rows=[]), "x.json")

    assert script.main(one_file, "Doc.", device="cpu", argv=[str(tmp_path / "one.json")]) == 0


def test_notes_and_the_cpu_refuse_what_they_do_not_model(tmp_path: Path) -> None:
    def measure(s: script.Script) -> None:
        with pytest.raises(ValueError, match="a note is a non-empty string; got ''"):
            s.note("")
        with pytest.raises(ValueError, match="there is no L2 to flush on device 'cpu'"):
            _ = s.flush
        assert s.monitor is None  # no clocks to sample on the CPU
        with pytest.raises(ValueError, match="calls per sample must be an int ≥ 1; got 0"):
            s.timer(calls=0)

    assert script.main(measure, "Doc.", device="cpu", argv=[str(tmp_path / "a.json")]) == 0


def test_a_script_on_ranks_alone_joins_a_group_of_one(tmp_path: Path, timed_kind, monkeypatch) -> None:
    """Outside torchrun the skeleton makes a one-rank gloo group (the CI machine has no GPU), and leaves none."""
    pytest.importorskip("torch")
    import torch.distributed as dist

    from gpukb.distributed.launch import free_port

    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(free_port()))
    seen = {}

    def measure(s: script.Script) -> Timed:
        seen.update(rank=s.rank, world=s.world, device=s.device, backend=dist.get_backend())
        return Timed(run=s.finished(), rows=[])

    out = tmp_path / "out.json"
    assert script.main(measure, "Doc.", device="ranks", argv=[str(out), "--backend", "gloo"]) == 0
    assert seen == {"rank": 0, "world": 1, "device": "cpu", "backend": "gloo"}
    assert not dist.is_initialized()
    assert records.read(out, Timed).rows == []
    with pytest.raises(ValueError, match=r"unknown backend 'mpi'; choose one of \['nccl', 'gloo'\]"):
        script.join_process_group("mpi")
