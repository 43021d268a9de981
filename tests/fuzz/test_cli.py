"""Fuzz: any command line gets output and exit status 0, or exit status 2 with ``gpukb <command>: error: ...``;
never a traceback, never a hang. Runs ``gpukb.cli.main`` in-process (fast); ``test_failure_classes`` runs the
console script as a real process for the inputs that used to hang."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpukb.cli import main
from gpukb.formats.codec import ROUNDING_MODES
from gpukb.formats.spec import formats
from gpukb.performance.results import H100_SWEEP
from gpukb.records import results_dir
from tests.fuzz.common import SPECIAL_SPELLINGS, decimal_text, fuzz_settings, near_misses, time_bound

SETTINGS = fuzz_settings("test_cli.py")
RESULTS = str(results_dir().joinpath(*f"{H100_SWEEP}.json".split("/")))
FORMAT_NAMES = list(formats())

#: Text an option value may be: real names, near misses, numbers, random text (never starting with "-", which
#: argparse would read as an option; those are tried on their own below).
word = st.one_of(
    st.sampled_from([*FORMAT_NAMES, "fp8", "bf8", "H100", "MI300X", "eeg", "people", "verified", ""]),
    near_misses(FORMAT_NAMES),
    decimal_text.filter(lambda t: not t.startswith("-")),
    st.text(max_size=12).filter(lambda t: not t.startswith("-")),
)
value = st.one_of(decimal_text, st.sampled_from(SPECIAL_SPELLINGS), st.text(max_size=15), st.just("1" * 2500))


def _options(draw, table: dict[str, st.SearchStrategy | None]) -> list[str]:
    argv: list[str] = []
    for option in draw(st.lists(st.sampled_from(sorted(table)), max_size=4, unique=True)):
        strategy = table[option]
        argv += [option] if strategy is None else [option, draw(strategy)]
    return argv


@st.composite
def format_argv(draw) -> list[str]:
    options = {
        "--formats": st.one_of(st.lists(st.sampled_from(FORMAT_NAMES), min_size=1, max_size=3).map(",".join), word),
        "--rounding": st.one_of(st.sampled_from(ROUNDING_MODES), word),
        "--saturate": None,
        "--list": None,
        "--as": word,
    }
    argv = ["format", *_options(draw, options)]
    if draw(st.booleans()):
        argv += ["--", draw(value)]  # "--" lets a value such as -1 or --x through as VALUE
    return argv


@st.composite
def gemm_argv(draw) -> list[str]:
    lib = draw(st.one_of(st.sampled_from(["hipblaslt", "cublaslt", "HIPBLASLT"]), word))
    fields = {f"--{name}": word for name in ("a", "b", "c", "d", "compute", "scale", "bias", "arch")}
    return ["gemm-types", "--lib", lib, *_options(draw, {**fields, "--list": None})]


@st.composite
def bench_argv(draw, tmp: Path) -> list[str]:
    show = draw(st.sampled_from([RESULTS, str(tmp), str(tmp / "none.json"), str(tmp / "garbage.json"),
                                 str(tmp / "binary.json")]))  # fmt: skip
    # Always --show: without it, bench measures the GPU (or reports that there is none).
    return ["bench", "--show", show, *_options(draw, {"--quick": None, "--suite": word})]


@st.composite
def datasets_argv(draw, tmp: Path) -> list[str]:
    action = draw(st.sampled_from(["list", "show", "papers", "stats", "nonsense"]))
    if action == "list":
        table = {"--domain": word, "--status": word, "--search": word, "--min-subjects": st.one_of(word, value)}
        return ["datasets", "list", *_options(draw, table)]
    if action == "show":
        return ["datasets", "show", draw(st.one_of(word, st.sampled_from(["bci-iv-2a", "CrowdHuman"])))]
    if action == "papers":
        return ["datasets", "papers", *_options(draw, {"--domain": word})]
    if action == "stats":
        files = draw(st.lists(st.sampled_from([str(tmp / n) for n in ("a.json", "b.odgt", "c.edf", "garbage.json",
                                                                       "binary.json", "missing.edf")]),
                              min_size=1, max_size=3))  # fmt: skip
        return ["datasets", "stats", *files, *_options(draw, {"--category": word})]
    return ["datasets", action]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("fuzz-cli")
    (tmp / "garbage.json").write_text("{not json", encoding="utf-8")
    (tmp / "binary.json").write_bytes(b"\xff\xfe\x00\x01")
    (tmp / "a.json").write_text('{"images": [], "annotations": [], "categories": []}', encoding="utf-8")
    (tmp / "b.odgt").write_text('{"ID": "x", "gtboxes": []}\n', encoding="utf-8")
    (tmp / "c.edf").write_bytes(b"0" * 300)
    return tmp


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """``gpukb`` in-process: (exit status, stdout, stderr)."""
    capsys.readouterr()
    with time_bound(10):
        try:
            status = main(argv)
        except SystemExit as exit_info:
            status = exit_info.code
    out, err = capsys.readouterr()
    return status, out, err


def check_outcome(argv: list[str], status: int, out: str, err: str) -> None:
    assert "Traceback" not in err + out, f"gpukb {argv}: a traceback"
    assert status in (0, 2), f"gpukb {argv}: exit status {status}\n{err}"
    if status == 2:
        # argparse's usage lines, then "gpukb <command>: error: ..." (a message may go on over several lines)
        lines = [line for line in err.split("\n") if line.startswith("gpukb") and ": error: " in line]
        assert lines, f"gpukb {argv}: no 'gpukb <command>: error: ...' line in {err!r}"
        message = err.split(": error: ", 1)[1]
        assert len(message.strip()) > 10, f"gpukb {argv}: an error that says nothing: {message!r}"
    else:
        assert out.strip(), f"gpukb {argv}: exit status 0 and no output"


@SETTINGS
@given(argv=format_argv())
def test_gpukb_format(argv, capsys) -> None:
    check_outcome(argv, *run_cli(argv, capsys))


@SETTINGS
@given(argv=gemm_argv())
def test_gpukb_gemm_types(argv, capsys) -> None:
    check_outcome(argv, *run_cli(argv, capsys))


@SETTINGS
@given(data=st.data())
def test_gpukb_bench_show(data, files, capsys) -> None:
    argv = data.draw(bench_argv(files))
    status, out, err = run_cli(argv, capsys)
    check_outcome(argv, status, out, err)
    assert (status == 0) == (argv[2] == RESULTS and len(argv) == 3)


@SETTINGS
@given(data=st.data())
def test_gpukb_datasets(data, files, capsys) -> None:
    argv = data.draw(datasets_argv(files))
    check_outcome(argv, *run_cli(argv, capsys))


@SETTINGS
@given(extra=st.lists(st.one_of(word, st.sampled_from(["--json", "--help-me", "-x", "--version2"])), max_size=3))
def test_gpukb_info_and_unknown_commands(extra, capsys) -> None:
    if set(extra) - {"--json"}:  # info with anything but --json is a usage error (the report itself is slow)
        check_outcome(["info", *extra], *run_cli(["info", *extra], capsys))
    argv = extra or ["nonsense"]
    if argv[0] != "info":
        check_outcome(argv, *run_cli(argv, capsys))


@pytest.mark.parametrize("argv", [["info"], ["info", "--json"]])
def test_gpukb_info_runs(argv, capsys) -> None:
    check_outcome(argv, *run_cli(argv, capsys))


def test_gpukb_without_a_command(capsys) -> None:
    status, _, err = run_cli([], capsys)
    assert status == 2
    assert "gpukb: error: a command is required" in err
