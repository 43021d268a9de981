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
        with pytest.raises(ValueError, match=r"^name a file inside the output folder$"):
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


# --- the skeleton's paths past the device check, with the device faked on the CPU --------------------------------


def _help(made) -> str:
    return " ".join(made.format_help().split())


def test_the_help_names_each_output_and_keeps_the_docstrings_lines() -> None:
    doc = "Time a thing.\n\n  indented usage line\nnext line"
    assert "  indented usage line\nnext line" in script.parser(doc).format_help()  # not refilled
    assert "OUTPUT.json write the results here (JSON) " in _help(script.parser(doc))
    assert "print only when left out" not in _help(script.parser(doc))
    assert "OUTPUT.json write the results here (JSON); print only when left out" in _help(
        script.parser(doc, output="optional")
    )
    folder = script.parser(doc, output="folder")
    assert "OUT_DIR the folder to write the results files into" in _help(folder)
    assert folder.parse_args(["d"]).output == Path("d")
    ranks = script.parser(doc, device="ranks")
    assert "--backend {nccl,gloo} the process group's backend (default: nccl with CUDA, else gloo)" in _help(ranks)
    assert ranks.parse_args(["o.json"]).backend is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"doc": 3}, r"^doc must be a string or None; got int$"),
        ({"doc": "Doc.", "prog": b"x"}, r"^prog must be a string or None; got bytes$"),
        ({"doc": "Doc.", "arguments": "--size"}, r"^arguments must be a function that adds options to a parser; "
         r"got str$"),
    ],
)  # fmt: skip
def test_a_skeleton_argument_of_the_wrong_type_is_named(kwargs, message) -> None:
    with pytest.raises(TypeError, match=message):
        script.parser(**kwargs)


def test_a_bad_budget_is_named() -> None:
    with pytest.raises(TypeError, match=r"^budget must be a gpukb\.measuring\.timing\.Budget; got int$"):
        script.main(lambda s: None, "Doc.", device="cpu", budget=3, argv=["a.json"])  # type: ignore[arg-type]


def test_a_backend_not_modelled_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit):
        script.parser("Doc.", device="ranks").parse_args(["o.json", "--backend", "mpi"])
    assert "argument --backend: invalid choice: 'mpi'" in capsys.readouterr().err


class _Cuda:
    def __init__(self, available: bool) -> None:
        self.available, self.devices = available, []

    def is_available(self) -> bool:
        return self.available

    def set_device(self, index: int) -> None:
        self.devices.append(index)


def test_cuda_missing_says_why_there_is_no_gpu(monkeypatch) -> None:
    import sys
    import types

    def torch_like(cuda: str | None, available: bool):
        return types.SimpleNamespace(__version__="2.11.0", version=types.SimpleNamespace(cuda=cuda),
                                     cuda=_Cuda(available))  # fmt: skip

    assert script.cuda_missing(torch_like("13.0", True)) is None
    assert script.cuda_missing(torch_like("13.0", False)) == (
        "no CUDA GPU is available (torch 2.11.0, built with CUDA 13.0)"
    )
    assert script.cuda_missing(torch_like(None, False)) == (
        "no CUDA GPU is available (torch 2.11.0, built with no CUDA (a CPU build))"
    )
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    assert script.cuda_missing() == "torch is not installed, so no GPU can be reached"


@pytest.fixture
def fake_group(monkeypatch):
    """torch.distributed and torch.cuda replaced where join_process_group reaches them: what it asks is kept."""
    pytest.importorskip("torch")
    import torch
    import torch.distributed as dist

    asked: dict = {"init": []}
    cuda = _Cuda(True)
    monkeypatch.setattr(torch.cuda, "is_available", cuda.is_available)
    monkeypatch.setattr(torch.cuda, "set_device", cuda.set_device)
    monkeypatch.setattr(dist, "is_initialized", lambda: bool(asked["init"]))
    monkeypatch.setattr(dist, "init_process_group", lambda backend, **kw: asked["init"].append((backend, kw)))
    monkeypatch.setattr(dist, "get_rank", lambda: 3)
    monkeypatch.setattr(dist, "get_world_size", lambda: 4)
    for name in ("WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    asked["cuda"] = cuda
    return asked


def test_under_torchrun_with_gpus_a_rank_takes_nccl_and_its_local_gpu(fake_group, monkeypatch) -> None:
    import os

    import torch

    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("LOCAL_RANK", "2")
    assert script.join_process_group() == (3, 4, "cuda:2")
    assert fake_group["init"] == [("nccl", {"device_id": torch.device("cuda:2")})]
    assert fake_group["cuda"].devices == [2]
    assert "MASTER_ADDR" not in os.environ  # torchrun's own rendezvous is used


def test_alone_with_a_gpu_a_script_makes_a_one_rank_nccl_group(fake_group) -> None:
    import os

    import torch

    assert script.join_process_group() == (3, 4, "cuda:0")  # LOCAL_RANK unset: GPU 0
    assert fake_group["init"] == [("nccl", {"device_id": torch.device("cuda:0"), "rank": 0, "world_size": 1})]
    assert (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]) == script.SINGLE_RANK_ADDRESS


def test_without_a_gpu_a_script_joins_with_gloo_on_the_cpu(fake_group, monkeypatch) -> None:
    fake_group["cuda"].available = False
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert script.join_process_group() == (3, 4, "cpu")
    assert fake_group["init"] == [("gloo", {})]
    assert fake_group["cuda"].devices == []


def test_main_hands_measure_the_rank_world_device_and_budget_it_joined_with(tmp_path, monkeypatch) -> None:
    budget = Budget(warmup_ms=0, rep_ms=0, min_reps=2, max_reps=2, min_warmup=1)
    asked, seen = [], {}
    monkeypatch.setattr(script, "join_process_group", lambda backend: asked.append(backend) or (1, 2, "cpu"))

    def measure(s: script.Script) -> None:
        seen.update(rank=s.rank, world=s.world, device=s.device, budget=s.budget, folder=s.folder)

    out = [str(tmp_path / "o.json")]
    script.main(measure, "Doc.", device="ranks", budget=budget, argv=[*out, "--backend", "gloo"])
    assert seen == {"rank": 1, "world": 2, "device": "cpu", "budget": budget, "folder": False}
    script.main(measure, "Doc.", device="ranks", backend=lambda args: f"from {args.backend}", argv=[*out])
    assert asked == ["gloo", "from None"]
    script.main(measure, "Doc.", device="cpu", argv=out)
    assert (seen["rank"], seen["world"], seen["device"]) == (0, 1, "cpu")


def test_an_existing_output_is_taken_with_rerecord_and_replaced(tmp_path, timed_kind) -> None:
    out = tmp_path / "o.json"

    def measure(s: script.Script) -> Timed:
        return Timed(run=s.finished(), rows=[{"label": str(s.args.size), "median": 1.0}])

    assert script.main(measure, "Doc.", _options, device="cpu", argv=[str(out), "--size", "1"]) == 0
    with pytest.raises(SystemExit):
        script.main(measure, "Doc.", _options, device="cpu", argv=[str(out), "--size", "2"])
    assert script.main(measure, "Doc.", _options, device="cpu", argv=[str(out), "--size", "3", "--rerecord"]) == 0
    assert records.read(out, Timed).rows[0].label == "3"


def _script(tmp_path: Path, device: str = "cpu", rerecord: bool = False) -> script.Script:
    args = argparse.Namespace(output=tmp_path / "o.json", rerecord=rerecord)
    return script.Script(args=args, output=args.output, run=records.describe_run("x"), started=0.0, device=device)


def test_a_script_rewrites_only_what_it_wrote_and_says_so(tmp_path, timed_kind, capsys) -> None:
    s = _script(tmp_path)
    record = Timed(run=s.finished(), rows=[])
    assert s.write(record) == tmp_path / "o.json"
    assert capsys.readouterr() == ("", f"wrote {tmp_path / 'o.json'}\n")
    assert s.write(record) == tmp_path / "o.json"  # a partial record saved again by the same run
    with pytest.raises(ValueError, match="a results file is already there"):
        _script(tmp_path).write(record)  # another run
    assert _script(tmp_path, rerecord=True).write(record) == tmp_path / "o.json"


def test_finished_takes_the_scripts_notes_or_the_ones_given_and_other_changes(tmp_path) -> None:
    s = _script(tmp_path)
    s.note("measured")
    assert s.finished().notes == ["measured"]
    done = s.finished(notes=["instead"], machine="elsewhere")
    assert (done.notes, done.machine) == (["instead"], "elsewhere")


def test_the_timer_and_the_step_before_each_sample_follow_the_device(tmp_path, monkeypatch) -> None:
    import torch

    from gpukb.measuring.timing import EventTimer

    gpu = _script(tmp_path, device="cuda:0")
    events = gpu.timer(3)
    assert (type(events), events.torch, events.calls_per_sample) == (EventTimer, torch, 3)
    assert (type(gpu.timer()), gpu.timer().calls_per_sample) == (EventTimer, 1)
    host = gpu.timer(2, host=True)
    assert (type(host), host.sync, host.calls_per_sample) == (HostTimer, torch.cuda.synchronize, 2)
    cpu = _script(tmp_path).timer()
    assert (type(cpu), cpu.sync, cpu.calls_per_sample) == (HostTimer, None, 1)

    calls = []
    monkeypatch.setattr(script, "benchmark", lambda *a: calls.append(a) or "measured")
    flush, monitor, before, work = object(), object(), (lambda: None), (lambda: None)
    gpu._flush, gpu._monitor, gpu._monitor_made = flush, monitor, True
    gpu.measure(work)
    gpu.measure(work, flush=False)
    gpu.measure(work, before=before, calls=2, host=True, budget=QUICK)
    (f1, t1, b1, s1, m1), (_, _, _, s2, _), (_, t3, b3, s3, _) = calls
    assert (f1, b1, s1, m1, type(t1), t1.calls_per_sample) == (work, gpu.budget, flush, monitor, EventTimer, 1)
    assert s2 is None
    assert (b3, s3, type(t3), t3.calls_per_sample) == (QUICK, before, HostTimer, 2)
    _script(tmp_path).measure(work)
    assert calls[-1][3] is None  # no L2 to flush on the CPU


def test_marks_are_made_on_the_scripts_torch(tmp_path) -> None:
    import torch

    marks = _script(tmp_path).marks()
    assert (marks.torch, marks.events) == (torch, [])


def test_a_count_of_a_minimum_that_is_no_int_is_refused() -> None:
    with pytest.raises(TypeError, match=r"^minimum must be an int; got 1\.5 \(float\)$"):
        script.count(1.5)  # type: ignore[arg-type]
    assert script.count(0)("0") == 0
