"""Recorded results cannot be lost: what ``gpukb.records.write`` refuses, and how it writes what it accepts.

Every test points the results folder at a temporary copy-free folder (``GPUKB_RESULTS_DIR``), so no committed
file is ever at risk while these run.
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
from gpukb.records import store
from gpukb.site import gpu_tests
from tests.fuzz.budget import SUBPROCESS_TIMEOUT_S


class Sample(records.Record):
    kind: Literal["test.sample"] = "test.sample"
    schema_version: Literal[1] = 1
    value: int


class Stranger(records.Record):
    kind: Literal["stranger.kind"] = "stranger.kind"
    schema_version: Literal[1] = 1


def _run() -> records.Run:
    return records.Run(date=dt.date(2026, 11, 27), command="python bench/x.py out.json", machine="x86_64",
                       cpu_count=2, gpu=None, versions=records.Versions(python="3.11.7"))  # fmt: skip


@pytest.fixture
def results(tmp_path, monkeypatch) -> Path:
    """A results folder of its own, with the two test kinds registered."""
    monkeypatch.setitem(store.KINDS, "test.sample", f"{__name__}:Sample")
    monkeypatch.setitem(store.KINDS, "stranger.kind", f"{__name__}:Stranger")
    folder = tmp_path / "results"
    (folder / "test").mkdir(parents=True)
    monkeypatch.setenv(records.RESULTS_DIR_VARIABLE, str(folder))
    return folder


def test_a_path_that_climbs_out_of_the_results_folder_is_refused(results) -> None:
    data_file = results.parent / "formats.toml"
    data_file.write_text("kept = true\n")
    for path in (results / ".." / "formats.toml", results / "test" / ".." / ".." / "x.json"):
        with pytest.raises(ValueError, match=r"may not climb out of its folder \('\.\.'\)"):
            records.write(Sample(run=_run(), value=1), path)
    assert data_file.read_text() == "kept = true\n"
    with pytest.raises(ValueError, match=r"a results file is named <id>\.json; got a \.toml name"):
        records.write(Sample(run=_run(), value=1), data_file)
    assert data_file.read_text() == "kept = true\n"


def test_a_link_out_of_the_results_folder_is_refused(results, tmp_path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (results / "test" / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ValueError, match="outside the results folder"):
        records.write(Sample(run=_run(), value=1), results / "test" / "linked" / "x.json")
    target = outside / "victim.json"
    target.write_text("{}")
    (results / "test" / "link.json").symlink_to(target)
    with pytest.raises(ValueError, match="is a link; write the file itself"):
        records.write(Sample(run=_run(), value=1), results / "test" / "link.json", replace=True)
    assert target.read_text() == "{}"
    assert list(outside.iterdir()) == [target]


def test_a_record_goes_only_under_its_kinds_folder(results) -> None:
    assert records.folder_for("cuda.device") == "cuda"
    assert records.folder_for("gemm.triton-gemm") == "gemm"
    assert records.folder_for("performance.sweep") == "performance"
    (results / "gemm").mkdir()
    with pytest.raises(ValueError, match=r"a 'test\.sample' record belongs under test/ in the results folder; its "
                                         r"id 'gemm/fp8-h100' puts it under gemm/"):  # fmt: skip
        records.write(Sample(run=_run(), value=1), results / "gemm" / "fp8-h100.json")
    with pytest.raises(ValueError, match="puts it under the top"):
        records.write(Sample(run=_run(), value=1), results / "loose.json")
    assert not (results / "gemm" / "fp8-h100.json").exists()
    assert not (results / "loose.json").exists()
    records.write(Sample(run=_run(), value=1), results / "test" / "fine.json")
    assert records.load("test/fine", Sample).value == 1


def test_a_file_copied_under_another_kinds_folder_does_not_load(results) -> None:
    (results / "gemm").mkdir()
    written = records.write(Sample(run=_run(), value=1), results / "test" / "a.json")
    (results / "gemm" / "fp8-h100.json").write_text(written.read_text())
    with pytest.raises(ValueError, match=r"results file 'gemm/fp8-h100': a 'test\.sample' record belongs under test/"):
        records.load("gemm/fp8-h100")


def test_an_existing_record_is_replaced_only_on_purpose_and_only_by_its_kind(results) -> None:
    path = results / "test" / "kept.json"
    records.write(Sample(run=_run(), value=1), path)
    before = path.read_text()
    with pytest.raises(ValueError, match=r"already there; recorded results are replaced only on purpose "
                                         r"\(replace=True; the scripts and commands take --rerecord\)"):  # fmt: skip
        records.write(Sample(run=_run(), value=2), path)
    assert path.read_text() == before
    with pytest.raises(TypeError, match="replace must be True or False; got 'yes'"):
        records.write(Sample(run=_run(), value=2), path, replace="yes")
    (results / "stranger").mkdir()
    other = results / "stranger" / "s.json"
    records.write(Stranger(run=_run()), other)
    outside = results.parent / "out.json"  # a fresh run's output folder: the same rule
    records.write(Stranger(run=_run()), outside)
    with pytest.raises(ValueError, match=r"holds a 'stranger\.kind' record; a 'test\.sample' record cannot replace"):
        records.write(Sample(run=_run(), value=2), outside, replace=True)
    records.write(Sample(run=_run(), value=2), path, replace=True)
    assert records.read(path, Sample).value == 2
    outside.write_text("not json")
    with pytest.raises(ValueError, match="the file there is not a results file, so it is not replaced"):
        records.write(Sample(run=_run(), value=2), outside, replace=True)
    assert outside.read_text() == "not json"


def test_a_write_is_atomic(results, monkeypatch) -> None:
    path = results / "test" / "atomic.json"
    records.write(Sample(run=_run(), value=1), path)
    before = path.read_text()

    def interrupted(src, dst):
        raise KeyboardInterrupt  # the run is stopped between writing the new file and renaming it

    monkeypatch.setattr(store.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        records.write(Sample(run=_run(), value=2), path, replace=True)
    assert path.read_text() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["atomic.json"]  # no temporary file left behind


def test_record_ids_are_bounded(results) -> None:
    huge = "x" * 100_000
    with pytest.raises(ValueError, match=r"at most 200 characters; got one of 100,005"):
        records.load(f"test/{huge}")
    with pytest.raises(ValueError, match=r"at most 200 characters; got one of 1,000"):
        records.write(Sample(run=_run(), value=1), results / "test" / f"{huge[:1000]}.json")
    with pytest.raises(ValueError, match=r"path is 100,\d{3} characters long; at most 2,000 are read"):
        records.write(Sample(run=_run(), value=1), results / "test" / f"{huge}.json")
    with pytest.raises(ValueError, match="a record id is a path like"):
        records.write(Sample(run=_run(), value=1), results / "test" / "a b.json")


def test_paths_are_checked_before_use(results) -> None:
    for bad, error in ((None, TypeError), (b"x.json", TypeError), (3, TypeError), ("", ValueError),
                       ("a\0b.json", ValueError), ("x" * 3000, ValueError)):  # fmt: skip
        with pytest.raises(error, match="path"):
            records.write(Sample(run=_run(), value=1), bad)


def test_anything_but_a_regular_file_is_refused_before_it_is_opened(results, tmp_path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"pipe\.json: not a regular file \(it is a named pipe\)"):
        records.read(fifo)
    with pytest.raises(ValueError, match=r"not a regular file \(it is a folder\)"):
        records.read(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"none\.json: no such file"):
        records.read(tmp_path / "none.json")
    with pytest.raises(ValueError, match="something other than a regular file is there"):
        records.write(Sample(run=_run(), value=1), fifo, replace=True)
    folder = results / "test" / "dir.json"
    folder.mkdir()
    with pytest.raises(ValueError, match="something other than a regular file is there"):
        records.write(Sample(run=_run(), value=1), folder, replace=True)


# --- the JUnit converter (python -m gpukb.site.gpu_tests) ----------------------------------------------------

JUNIT = """<?xml version="1.0"?><testsuites><testsuite name="pytest">
<testcase classname="tests.cuda.test_gpu" name="test_a" time="1.5"/></testsuite></testsuites>"""


def _main(argv, capsys) -> tuple[int, str]:
    try:
        status = gpu_tests.main([str(a) for a in argv])
    except SystemExit as exit_info:
        status = exit_info.code
    return status, capsys.readouterr().err


def test_the_junit_converter_never_replaces_a_record_silently(results, tmp_path, capsys) -> None:
    report = tmp_path / "report.xml"
    report.write_text(JUNIT)
    (results / "site").mkdir()
    committed = results / "site" / "gpu-tests-h100.json"
    assert _main([report, committed], capsys)[0] == 0
    before = committed.read_text()
    status, err = _main([report, committed], capsys)
    assert status == 2
    assert "already there" in err
    assert "--rerecord" in err
    assert committed.read_text() == before
    (results / "cuda").mkdir()
    status, err = _main([report, results / "cuda" / "device-h100.json"], capsys)
    assert status == 2
    assert "a 'site.gpu-tests' record belongs under site/" in err
    assert _main([report, committed, "--rerecord"], capsys)[0] == 0
    assert json.loads(committed.read_text())["kind"] == "site.gpu-tests"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "missing.xml: no such file"),
        ("<testsuites><testsuite>", "not a JUnit XML report (not well-formed XML"),
        ("<html/>", "not a JUnit XML report (root element <html>, no <testsuite>)"),
        ('<testsuite><testcase classname="a" name="b" time="soon"/></testsuite>', "time 'soon' is not a number"),
    ],
)
def test_a_bad_junit_report_is_one_line_naming_it(tmp_path, capsys, content, message) -> None:
    report = tmp_path / ("missing.xml" if content is None else "report.xml")
    if content is not None:
        report.write_text(content)
    status, err = _main([report, tmp_path / "out.json"], capsys)
    assert status == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith("python -m gpukb.site.gpu_tests: error: ")
    assert str(report) in last
    assert message in last
    assert "Traceback" not in err
    assert not (tmp_path / "out.json").exists()


def test_a_named_pipe_as_the_junit_report_does_not_hang(tmp_path) -> None:
    fifo = tmp_path / "report.xml"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "gpukb.site.gpu_tests", str(fifo), str(tmp_path / "o.json")],
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)  # fmt: skip
    assert proc.returncode == 2
    assert "not a regular file (it is a named pipe)" in proc.stderr


def test_every_script_that_writes_a_record_says_whether_it_replaces_one() -> None:
    """Each call of ``write`` in bench/ and in the package passes ``replace=`` (grep-level, so a new script that
    forgets cannot overwrite a committed record by accident... and fails here). Bench scripts write through the
    skeleton (``Script.write``), whose own call is among these."""
    root = Path(__file__).resolve().parents[2]
    calls = []
    for file in [*root.glob("bench/*.py"), *root.glob("src/gpukb/**/*.py")]:
        text = file.read_text(encoding="utf-8")
        if "gpukb.records" not in text or file.name == "store.py":
            continue
        calls_at = (i for i in range(len(text)) if text.startswith("write(", i) and text[i - 1] in " (=")
        for start in (i for i in calls_at if text[i - 4 : i] != "def "):  # calls, not the definition
            depth, end = 0, start
            for end in range(start + len("write"), len(text)):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                if depth == 0:
                    break
            calls.append((file.relative_to(root).as_posix(), text[start : end + 1]))
    assert "src/gpukb/records/script.py" in {file for file, _ in calls}
    assert len(calls) >= 3
    missing = [f"{file}: {call[:80]}" for file, call in calls if "replace=" not in call]
    assert not missing, missing


# --- the store's names, messages and cache, each read ------------------------------------------------------------


def test_an_id_of_the_longest_length_is_read(results) -> None:
    longest = "test/" + "x" * (store.MAX_ID_LENGTH - len("test/"))
    with pytest.raises(FileNotFoundError, match="does not exist"):  # looked for, not refused
        records.load(longest)
    with pytest.raises(ValueError, match=r"got one of 201: 'test/xxx.*\.\.\.\(203 characters\) \(str\)$"):
        records.load(longest + "x")


def test_the_folder_is_the_first_part_of_the_kind_and_of_the_id(results) -> None:
    assert store.folder_for("gemm.triton.sweep") == "gemm"
    record = Sample(run=_run(), value=1)
    path = records.write(record, results / "test" / "deeper" / "nested" / "x.json")  # parents made, two levels
    assert records.load("test/deeper/nested/x", Sample).value == 1
    assert path == results / "test" / "deeper" / "nested" / "x.json"


def test_what_the_store_refuses_names_the_file_and_what_was_given(results, tmp_path) -> None:
    with pytest.raises(ValueError, match=r"^x\.json: a results file holds a JSON object; got list$"):
        store.parse([], "x.json")
    path = results / "test" / "sample.json"
    records.write(Sample(run=_run(), value=1), path)
    with pytest.raises(ValueError, match=rf"^{path}: holds a 'test\.sample' record; expected 'stranger\.kind'$"):
        records.read(path, Stranger)
    with pytest.raises(ValueError, match=r"^results file 'test/sample' holds a 'test\.sample' record; expected 'str"):
        records.load("test/sample", Stranger)
    (results / "test" / "nothing.json").write_text("nothing")
    with pytest.raises(ValueError, match=rf"^results file 'test/nothing' \(in {results}\): not JSON"):
        records.load("test/nothing")
    with pytest.raises(TypeError, match=r"^results file must be a path .*; got 3 \(int\)"):
        records.read(3)  # type: ignore[arg-type]
    for call in (lambda: store.check_output(3), lambda: records.write(Sample(run=_run(), value=1), 3)):
        with pytest.raises(TypeError, match=r"^path must be a path .*; got 3 \(int\)"):
            call()
    with pytest.raises(ValueError, match=r"^x: a results file is named <id>\.json; got a suffix-less name$"):
        store.check_output("x")
    with pytest.raises(TypeError, match=r"^replace must be True or False; got 'yes' \(str\)$"):
        store.check_output(results / "test" / "new.json", replace="yes")  # type: ignore[arg-type]
    wrong = results / "stranger" / "x.json"
    with pytest.raises(ValueError, match=rf"^{wrong}: a 'test\.sample' record belongs under test/ in the results"):
        records.write(Sample(run=_run(), value=1), wrong)
    bad = results / "test" / "bad.json"
    bad.write_text("[1, 2")
    with pytest.raises(ValueError, match=rf"^{bad}: the file there is not a results file, so it is not replaced "
                       rf"\({bad}: not JSON \(Expecting"):  # fmt: skip
        records.write(Sample(run=_run(), value=1), bad, replace=True)


def test_an_unregistered_kind_is_named_by_its_model(results) -> None:
    class Unlisted(records.Record):
        kind: Literal["test.unlisted"] = "test.unlisted"
        schema_version: Literal[1] = 1

    with pytest.raises(ValueError, match=r"^Unlisted has kind 'test\.unlisted', which is not registered in KINDS$"):
        records.write(Unlisted(run=_run()), results / "test" / "u.json")


def test_check_output_refuses_an_existing_file_unless_told_and_returns_the_path_as_given(results, monkeypatch):
    path = results / "test" / "there.json"
    records.write(Sample(run=_run(), value=1), path)
    with pytest.raises(ValueError, match="a results file is already there"):
        store.check_output(path)
    assert store.check_output(path, replace=True) == path
    monkeypatch.chdir(results / "test")
    assert store.check_output("new.json") == Path("new.json")  # as given, not resolved


def test_a_re_recorded_file_is_read_again_not_served_from_the_cache(results) -> None:
    path = results / "test" / "again.json"
    records.write(Sample(run=_run(), value=1), path)
    assert records.load("test/again", Sample).value == 1
    records.write(Sample(run=_run(), value=2), path, replace=True)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))  # a clock coarser than the writes
    assert records.load("test/again", Sample).value == 2


def test_a_record_is_written_as_one_space_indented_json_readable_by_all(results, monkeypatch) -> None:
    record = Sample(run=_run(), value=7)
    path = results / "test" / "text.json"
    staged = []
    real_replace = os.replace

    def replace(src, dst):
        staged.append((Path(src), Path(dst), Path(src).read_text(encoding="utf-8")))
        real_replace(src, dst)

    monkeypatch.setattr(store.os, "replace", replace)
    records.write(record, path)
    assert path.read_text(encoding="utf-8") == record.model_dump_json(indent=1) + "\n"
    assert path.stat().st_mode & 0o777 == 0o644
    [(src, dst, text)] = staged
    # the temporary file is a hidden sibling of the target, named for it, so a rename is atomic and a leftover
    # from a killed run is recognisable
    assert (src.parent, dst) == (path.parent, path)
    assert src.name.startswith(".text.json.")
    assert src.name.endswith(".tmp")
    assert text == record.model_dump_json(indent=1) + "\n"


def test_the_rerecord_option_says_what_it_replaces() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    store.rerecord_option(parser)
    shown = " ".join(parser.format_help().split())
    assert "--rerecord replace the results file if it exists (it must hold a record of the same kind)" in shown
    assert parser.parse_args(["--rerecord"]).rerecord is True
