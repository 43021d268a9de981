"""``gpukb bench``: the no-GPU message and exit status, usage errors, ``--show``, and the runner's helpers."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from gpukb.cli import main
from gpukb.performance import runner
from gpukb.performance.ceilings import gemm_best
from gpukb.performance.results import H100_SWEEP, SweepRecord
from gpukb.records import load, read, results_dir
from tests.conftest import _cuda_available

GPUKB = Path(sys.executable).with_name("gpukb")
RUN = Path(str(results_dir().joinpath(*f"{H100_SWEEP}.json".split("/"))))


def _status(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exit_info:
        return exit_info.code


def test_without_a_gpu_it_says_so_and_exits_1(monkeypatch, capsys) -> None:
    monkeypatch.setattr(runner, "gpu_status", lambda: "no CUDA GPU is available (torch 0.0, a CPU build)")
    assert _status(["bench", "--quick"]) == runner.FAILURE
    err = capsys.readouterr().err
    assert "gpukb bench: no CUDA GPU is available (torch 0.0, a CPU build); nothing was measured." in err
    assert "--show FILE" in err
    assert "Traceback" not in err


@pytest.mark.skipif(_cuda_available(), reason="this machine has a CUDA GPU, so gpukb bench would measure it")
def test_the_console_script_without_a_gpu() -> None:
    proc = subprocess.run([str(GPUKB), "bench", "--quick"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == runner.FAILURE
    assert "no CUDA GPU is available" in proc.stderr
    assert "nothing was measured" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bench", "--suite", "fft"], "argument --suite: invalid choice: 'fft'"),
        (["bench", "--quick", "extra"], "unrecognized arguments: extra"),
        (["bench", "--show", str(RUN), "--quick"], "--show reads a results file; it cannot be combined"),
        (
            ["bench", "--show", str(RUN), "--suite", "gemm"],
            "cannot be combined with --quick, --suite, --output or --rerecord",
        ),
        (["bench", "--output"], "argument --output: expected one argument"),
    ],
)
def test_usage_errors_exit_2(argv, message, capsys) -> None:
    assert _status(argv) == 2
    err = capsys.readouterr().err
    assert "usage: gpukb" in err  # argparse reports stray arguments with the top-level usage
    assert message in err


def test_show_prints_the_tables_of_a_results_file(capsys) -> None:
    assert _status(["bench", "--show", str(RUN)]) == 0
    out = capsys.readouterr().out
    record = load(H100_SWEEP, SweepRecord)
    assert f"| GPU | {record.run.gpu.name} |" in out
    best_bf16 = max(r.tflops for r in record.gemm if r.dtype == "bf16" and r.tflops)
    assert gemm_best(record)["bf16"].tflops == best_bf16
    assert f"| bf16 | {best_bf16:,.1f} |" in out
    assert "## Mistake: sync" in out


def test_show_refuses_a_missing_or_malformed_file(tmp_path, capsys) -> None:
    assert _status(["bench", "--show", str(tmp_path / "none.json")]) == 2
    assert "none.json" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(f'{{"kind": "performance.sweep", "schema_version": {SweepRecord.version()}, "mode": "full"}}')
    assert _status(["bench", "--show", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: run: Field required" in err
    bad.write_text('{"schema": 1, "meta": {}}')  # the first results format: no kind
    assert _status(["bench", "--show", str(bad)]) == 2
    assert f"{bad}: kind: unknown results kind None" in capsys.readouterr().err


def test_suites_run_in_a_fixed_order() -> None:
    assert runner.ordered(["gemm", "mistakes"]) == ["mistakes", "gemm"]  # mistakes needs the first call
    assert runner.ordered(None) == ["mistakes", "gemm", "copy", "host_device", "attention", "kernels"]
    with pytest.raises(ValueError, match=r"unknown suites \['fft'\]; suites are"):
        runner.ordered(["fft"])


def test_run_without_a_gpu_raises(monkeypatch) -> None:
    monkeypatch.setattr(runner, "gpu_status", lambda: "no CUDA GPU is available")
    with pytest.raises(RuntimeError, match="no CUDA GPU is available"):
        runner.run(["gemm"], "quick")
    with pytest.raises(ValueError, match="mode must be one of"):
        runner.run(["gemm"], "slow")


def test_progress_lines_carry_the_elapsed_time() -> None:
    stream = io.StringIO()
    runner.Progress(stream)("gemm 1/2 done")
    assert stream.getvalue().endswith(" s] gemm 1/2 done\n")
    assert stream.getvalue().startswith("[")


def test_nvidia_smi_lines_are_parsed() -> None:
    from gpukb.measuring.device import CLOCK_QUERY, parse_smi_csv

    parsed = parse_smi_csv("1980, 2619, 1980, 2619, 84.2, 700.00, 40, P0\n", CLOCK_QUERY)
    assert parsed["clocks.sm"] == 1980.0
    assert parsed["pstate"] == "P0"
    assert parse_smi_csv("[N/A], 1\n", ("a", "b")) == {"a": "[N/A]", "b": 1.0}
    assert parse_smi_csv("1, 2, 3", ("a", "b")) is None
    assert parse_smi_csv("", ("a",)) is None


@pytest.mark.gpu
def test_a_quick_gemm_run_on_the_gpu(tmp_path) -> None:
    out = tmp_path / "run.json"
    assert _status(["bench", "--quick", "--suite", "gemm", "--output", str(out)]) == 0
    record = read(out, SweepRecord)
    assert {r.dtype for r in record.gemm if r.tflops} >= {"fp32", "tf32", "fp16", "bf16"}
    assert record.suites == ["gemm"]
    assert record.mode == "quick"
    assert set(record.run.clocks) == {"start", "after_gemm", "end"}
    assert record.run.duration_s > 0
