"""Fuzz, the file-reading chapters and the command line: the datasets readers, the results store and every new
subcommand, driven with missing, empty, binary, non-JSON files, folders and named pipes, and with NaN, inf,
negative, zero, huge, bool and text values for each option. Each call ends, within a bound, in a clear error that
names what was given (exit status 2 and ``gpukb <command>: error: ...`` on the command line) or a right answer.
Named pipes, which used to hang a reader, are tried through real processes with a timeout.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest

from gpukb import records
from gpukb.cli import main
from gpukb.datasets import catalog, coco, eeg_files, odgt, tables
from gpukb.records import store
from tests.fuzz.budget import SUBPROCESS_TIMEOUT_S
from tests.fuzz.common import attempt, time_bound

GPUKB = Path(sys.executable).with_name("gpukb")


def _outcome(function, *args, **kwargs) -> tuple[object, Exception | None]:
    """``(result, None)`` or ``(None, error)`` for the errors bad files may raise, within a time bound (a named
    pipe opened for reading would block forever)."""
    with time_bound(5):
        try:
            return function(*args, **kwargs), None
        except (ValueError, TypeError, FileNotFoundError) as caught:
            return None, caught


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """One of each kind of bad file, and a folder."""
    made = {
        "missing": tmp_path / "missing.json",
        "empty": tmp_path / "empty.json",
        "binary": tmp_path / "binary.json",
        "not json": tmp_path / "text.json",
        "json list": tmp_path / "list.json",
        "folder": tmp_path / "folder.json",
        "fifo": tmp_path / "pipe.json",
    }
    made["empty"].write_bytes(b"")
    made["binary"].write_bytes(b"\xff\xfe\x00\x01" * 64)
    made["not json"].write_text("42.5 becomes 44\n")
    made["json list"].write_text("[1, 2]\n")
    made["folder"].mkdir()
    os.mkfifo(made["fifo"])
    return made


# --- datasets ------------------------------------------------------------------------------------------------

READERS = {
    "coco.load": coco.load,
    "odgt.read": odgt.read,
    "eeg_files.read_header": eeg_files.read_header,
    "eeg_files.summarize": lambda path: eeg_files.summarize([path]),
}


@pytest.mark.parametrize("reader", READERS)
def test_every_dataset_reader_refuses_bad_files_naming_them(files, reader) -> None:
    for kind, path in files.items():
        result, err = _outcome(READERS[reader], path)
        if err is None:  # an empty .odgt file holds no records, which is what it says
            assert (reader, kind, result) == ("odgt.read", "empty", []), f"{reader} accepted {kind} file {path}"
        else:
            assert str(path) in str(err), (kind, str(err))
            assert isinstance(err, FileNotFoundError) == (kind == "missing")
    for bad in (None, 3, True, b"x.json", "", "x" * 3000):
        _, err = attempt(READERS[reader], bad)
        assert err is not None, bad


@pytest.mark.parametrize("bad", [-1, True, 2.5, "3", float("nan"), float("inf"), 10**30, 0])
def test_the_catalog_filter_refuses_or_answers(bad) -> None:
    eeg = catalog.load("eeg")
    kept, err = attempt(tables.select, eeg, min_subjects=bad)
    if err is None:  # a count: the entries with at least that many subjects, none for a count no dataset has
        counts = {e.id: getattr(e.facts, "subjects", None) for e in eeg.datasets}
        assert [e.id for e in kept] == [i for i, n in counts.items() if n is not None and n >= bad]
    else:
        assert repr(bad) in str(err) or str(bad) in str(err)


# --- the results store ----------------------------------------------------------------------------------------


class Fuzzed(records.Record):
    kind: Literal["fuzz.sample"] = "fuzz.sample"
    schema_version: Literal[1] = 1


def _record() -> Fuzzed:
    run = records.Run(date=dt.date(2026, 11, 27), command="x", machine=None, cpu_count=1, gpu=None,
                      versions=records.Versions(python="3.11.7"))  # fmt: skip
    return Fuzzed(run=run)


def test_the_results_store_refuses_every_bad_path_and_id(files, tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(store.KINDS, "fuzz.sample", f"{__name__}:Fuzzed")
    results = tmp_path / "results"
    (results / "fuzz").mkdir(parents=True)
    monkeypatch.setenv(records.RESULTS_DIR_VARIABLE, str(results))
    for kind, path in files.items():
        _, err = _outcome(records.read, path)
        assert err is not None, f"read accepted {kind} file {path}"
        assert str(path) in str(err), (kind, err)
        with time_bound(5):
            _, err = attempt(records.write, _record(), path, replace=True)
        assert (err is None) == (kind == "missing"), (kind, err)  # only a fresh path is written
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    bad_paths = [None, 3, True, b"x.json", "", "a\0b.json", "x" * 3000, tmp_path / "x.toml", tmp_path / "x",
                 results / ".." / "formats.json", results / "fuzz" / ".." / "fuzz" / "a.json",
                 results / "gemm" / "x.json", results / "loose.json", results / "fuzz" / f"{'y' * 300}.json",
                 results / "fuzz" / "a b.json"]  # fmt: skip
    for bad in bad_paths:
        _, err = attempt(records.write, _record(), bad)
        assert err is not None, bad
    for bad in [None, 3, True, "", "../x", "/abs", "a//b", "x" * 100_000, "fuzz/none", "fuzz/a b", "ü/x"]:
        _, err = _outcome(records.load, bad)
        assert err is not None, f"load accepted {bad!r}"
        assert str(err).strip()
    for bad in [None, 3, "", "cuda", "cuda.device ", "x" * 3000]:
        _, err = attempt(records.model_for, bad)
        assert err is not None, bad
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and p in before}
    assert after == before, "a refused write changed a file"


# --- the command line -----------------------------------------------------------------------------------------

#: Subcommands with a value that is wrong, and a piece of text the error must show.
BAD_COMMANDS = [
    (["cuda", "threads", "--grid", "2", "--block", "2048"], "got 2048"),
    (["cuda", "threads", "--grid", "1", "--block", "2", "2", "128"], "blockDim.z must be an int ≥ 1, ≤ 64; got 128"),
    (["cuda", "threads", "--grid", "7", "70000", "--block", "1"], "gridDim.y must be an int ≥ 1, ≤ 65535; got 70000"),
    (["cuda", "threads", "--grid", "1", "2", "3", "4", "--block", "1"], "(1, 2, 3, 4)"),
    (["cuda", "threads", "--grid", "100", "--block", "100"], "10,000"),
    (["cuda", "threads", "--grid", "0", "--block", "1"], "gridDim.x must be an int ≥ 1, ≤ 2147483647; got 0"),
    (["cuda", "threads", "--grid", "nan", "--block", "1"], "'nan'"),
    (["cuda", "occupancy", "--registers", "-1"], "got -1"),
    (["cuda", "occupancy", "--registers", "32", "--threads", "0"], "got 0"),
    (["cuda", "occupancy", "--registers", "32", "--sweep", "--threads", "64"], "it takes no --threads"),
    (["cuda", "occupancy", "--registers", "32", "--sweep", "--cluster", "2"], "it takes no --cluster"),
    (["cuda", "occupancy", "--registers", "1e3"], "'1e3'"),
    (["attention", "cost", "--seq", "0"], "got 0"),
    (["attention", "cost", "--batch", "-4"], "got -4"),
    (["attention", "cost", "--layers", "2"], "cost is one attention pass and takes none"),
    (["attention", "kv-cache", "--causal"], "a KV cache holds the same bytes either way"),
    (["attention", "kv-cache", "--head-dim", "inf"], "'inf'"),
    (["attention", "cost", "--dtype", "fp7"], "'fp7'"),
    (["cudnn", "strides", "1,2147483648,3,3"], "2147483648"),
    (["cudnn", "strides", "1,64,5,4", "--pad", "1"], "it takes no --pad"),
    (["cudnn", "strides", "1,64,5,4", "--groups", "2", "--stride", "3"], "--stride, --groups"),
    (["cudnn", "output", "1,3,8,8", "2,3,3,3", "--stride", "0"], "stride must be at least 1"),
    (["cudnn", "output", "1,3,8,8", "2,3,3,3", "--pad", "-1"], "pad must be at least 0"),
    (["cudnn", "output", "1,3,2,2", "2,3,5,5"], "does not fit"),
    (["cudnn", "output", "1,3,nan,8", "2,3,3,3"], "'1,3,nan,8'"),
    (["cudnn", "output", "1,3,8,8", "2,3,3,3", "--dilation", "2147483648"], "2147483648"),
    (["distributed", "memory", "--params", "nan"], "got nan"),
    (["distributed", "memory", "--params", "-1"], "got -1"),
    (["distributed", "memory", "--params", "inf"], "got inf"),
    (["distributed", "memory", "--params", "0"], "got 0"),
    (["distributed", "memory", "--world-size", "0"], "got 0"),
    (["distributed", "plan", "[1, 2]"], "[1, 2]"),
    (["distributed", "plan", "{"], "config is not JSON"),
    (["bleu", "--example", "nonexistent"], "'nonexistent'"),
    (["format", "1e99999999999999999999"], "has an exponent of 20 digits; at most 18 are read"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "shown"), BAD_COMMANDS, ids=[" ".join(a) for a, _ in BAD_COMMANDS])
def test_every_bad_value_on_the_command_line_is_a_usage_error_naming_it(argv, shown, capsys) -> None:
    capsys.readouterr()
    with time_bound(10):
        try:
            status = main(argv)
        except SystemExit as exit_info:
            status = exit_info.code
    out, err = capsys.readouterr()
    assert status == 2, (out, err)
    assert out == ""
    assert f"gpukb {argv[0]}" in err.splitlines()[-1]
    assert ": error: " in err.splitlines()[-1]
    assert shown in err, err
    assert "Traceback" not in err


PIPE_COMMANDS = [
    ["datasets", "stats", "{fifo}"],
    ["datasets", "stats", "{fifo_odgt}"],
    ["datasets", "stats", "{fifo_edf}", "{fifo_edf}"],
    ["bleu", "{fifo}", "{fifo}"],
    ["bench", "--show", "{fifo}"],
]

#: Runs each command line in one process (one interpreter start for all), printing status and last error line.
PIPE_RUNNER = """
import contextlib, io, json, sys
from gpukb.cli import main
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit_info:
            status = exit_info.code
    print(json.dumps([status, err.getvalue().strip().splitlines()[-1]]), flush=True)
"""


def test_a_named_pipe_in_place_of_a_file_is_refused_not_read(tmp_path) -> None:
    pipes = {"fifo": tmp_path / "pipe.json", "fifo_odgt": tmp_path / "pipe.odgt", "fifo_edf": tmp_path / "pipe.edf"}
    for pipe in pipes.values():
        os.mkfifo(pipe)
    commands = [[a.format(**pipes) for a in argv] for argv in PIPE_COMMANDS]
    proc = subprocess.run(
        [sys.executable, "-c", PIPE_RUNNER, json.dumps(commands)],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )  # fmt: skip  (a reader blocked on a pipe is killed here)
    assert proc.returncode == 0, proc.stderr
    outcomes = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(outcomes) == len(commands)
    for argv, (status, last) in zip(commands, outcomes, strict=True):
        assert status == 2, (argv, last)
        assert last.startswith(f"gpukb {argv[0]}: error: "), last
        assert "not a regular file (it is a named pipe)" in last, last


# --- paths into the package's data, the bench skeleton's output, and the maintenance commands' files ---------


@pytest.mark.parametrize(
    "bad", ["..", "../chapters.py", "results/../../chapters.py", "/etc/passwd", "", "a//b", "./glossary.toml",
            "formats\\spec.toml", "glossary.toml/", "results"],
)  # fmt: skip
def test_data_files_are_read_only_inside_the_package(bad) -> None:
    from gpukb.data import data_text

    _, err = _outcome(data_text, bad)
    assert isinstance(err, ValueError), (bad, err)
    assert repr(bad) in str(err) or f"gpukb/data/{bad}" in str(err), err


def test_a_data_file_reads_as_its_file_and_a_missing_one_is_named() -> None:
    import gpukb.data
    from gpukb.data import data_text

    assert data_text("glossary.toml") == (Path(gpukb.data.__file__).parent / "glossary.toml").read_text("utf-8")
    _, err = _outcome(data_text, "nope/missing.toml")
    assert isinstance(err, FileNotFoundError)
    assert "gpukb/data/nope/missing.toml: no such data file" in str(err)


@pytest.mark.parametrize(
    ("kind", "message"),
    [("folder", "something other than a regular file is there"), ("fifo", "something other than a regular file"),
     ("binary", "a results file is already there"), ("not json", "a results file is already there")],
)  # fmt: skip
def test_a_bench_script_refuses_a_bad_output_before_it_measures(files, kind, message, capsys) -> None:
    from gpukb.records import script

    measured: list[int] = []
    with time_bound(5), pytest.raises(SystemExit) as stop:
        script.main(lambda s: measured.append(1), "Doc.", device="cpu", argv=[str(files[kind])], prog="bench.py")
    assert stop.value.code == 2
    assert not measured
    assert f"bench.py: error: {files[kind]}: {message}" in capsys.readouterr().err
    with time_bound(5), pytest.raises(SystemExit):  # an output folder that is a file or a pipe
        script.main(lambda s: measured.append(1), "Doc.", output="folder", device="cpu", argv=[str(files["fifo"])])
    assert not measured
    assert "not a folder" in capsys.readouterr().err


def _rerecord():
    import importlib.util

    spec = importlib.util.spec_from_file_location("rerecord", Path(__file__).parents[2] / "bench" / "rerecord.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("kind", ["folder.json", "fifo", "binary", "missing"])
def test_the_maintenance_commands_refuse_what_is_not_their_file_in_one_line(files, kind, capsys) -> None:
    from gpukb.site import mutation_scope

    path = files["folder"] if kind == "folder.json" else files[kind]
    with time_bound(5), pytest.raises(SystemExit) as stop:
        mutation_scope.main(["--write", str(path)])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert stop.value.code == 2
    assert err.startswith(f"python -m gpukb.site.mutation_scope: error: {path}: "), err
    if kind in ("fifo", "binary"):  # rerecord's OUT_DIR must be a folder (or nothing yet)
        with time_bound(5), pytest.raises(SystemExit) as stop:
            _rerecord().main([str(path)])
        assert stop.value.code == 2
        assert f"{path}: not a folder" in capsys.readouterr().err


def test_rerecord_refuses_a_run_named_twice_or_unknown(tmp_path, capsys) -> None:
    rerecord = _rerecord()
    name = next(iter(rerecord.declared()))
    twice, unknown = [name, name], ["nope"]
    for argv, shown in ((twice, f"a run is named twice: {name}"), (unknown, "no declared GPU run is named nope")):
        with pytest.raises(SystemExit) as stop:
            rerecord.main([str(tmp_path / "out"), *argv])
        assert stop.value.code == 2
        assert shown in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # nothing was run or made
