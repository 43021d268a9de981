"""``gpukb bench``: run the suites on the GPU that is present, report progress, write a results file.

Without a CUDA GPU it says so and exits with status 1; ``--show FILE`` prints the tables of a results file on
any machine.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from gpukb.performance.results import SUITES, SweepRecord, file_name
from gpukb.performance.suites import Stopwatch, first_line
from gpukb.records import ClockReading, Run, clock_reading, describe_run, finished, read, rerecord_option, write
from gpukb.records.script import Script, cuda_missing

#: Exit status when nothing could be measured or a suite failed (argparse uses 2 for usage errors).
FAILURE = 1


def gpu_status() -> str | None:
    """Why nothing can be measured here, or ``None`` when a CUDA GPU is available (the bench scripts' answer,
    :func:`gpukb.records.script.cuda_missing`)."""
    return cuda_missing()


class Progress:
    """Writes one line per finished measurement, prefixed with the seconds since the run began."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.clock = Stopwatch()

    def __call__(self, line: str) -> None:
        print(f"[{self.clock():7.1f} s] {line}", file=self.stream, flush=True)


def ordered(suites: Sequence[str] | None) -> list[str]:
    """The suites to run, in the order they must run (``mistakes`` first), without repeats.

    Raises:
        TypeError: For a lone string (give a list).
        ValueError: For a name that is not a suite.
    """
    if isinstance(suites, str | bytes):  # list("gemm") would be four one-letter suites
        raise TypeError(f"suites must be a list of suite names, e.g. [{suites!r}]; got a string")
    chosen = list(SUITES) if not suites else list(suites)
    unknown = [s for s in chosen if s not in SUITES]
    if unknown:
        raise ValueError(f"unknown suites {unknown}; suites are {list(SUITES)}")
    return [s for s in SUITES if s in chosen]


def run(
    suites: Sequence[str] | None = None,
    mode: str = "full",
    command: str | None = None,
    progress: Callable[[str], None] | None = None,
    described: Run | None = None,
    started: float | None = None,
) -> SweepRecord:
    """Measure the chosen suites on CUDA device 0 and return the sweep record (write it with
    :func:`gpukb.records.write`).

    The run is described first (:func:`gpukb.records.describe_run`, with a clock reading at the start); the
    clocks are read again after each suite (``run.clocks["after_<suite>"]``), and sampled during every timed
    window (each record's ``clocks``). L2 is flushed by reading a buffer (:class:`~gpukb.measuring.timing.L2Flusher`).
    A suite that raises is reported on stderr and recorded as a ``FAILED`` note with no records, so that one
    broken suite does not lose what the others measured.

    Args:
        suites: Names from ``SUITES``; all of them when omitted.
        mode: ``"full"`` or ``"quick"`` (smaller sweeps, shorter budgets; well under a minute).
        command: The command line to record; the one that started this process when omitted.
        progress: Receives progress lines; a :class:`Progress` on stderr when omitted.
        described: The run, already described (by a bench script's skeleton, :mod:`gpukb.records.script`), and
            ``started``, the ``time.perf_counter()`` of that moment; described here when omitted.

    Raises:
        RuntimeError: If no CUDA GPU is available.
        ValueError: For an unknown suite or mode.
    """
    from gpukb.measuring import device
    from gpukb.measuring.timing import BUDGETS
    from gpukb.performance.suites import Context, attention, copy, gemm, host_device, kernels, mistakes

    if mode not in BUDGETS:
        raise ValueError(f"mode must be one of {sorted(BUDGETS)}; got {mode!r}")
    names = ordered(suites)
    reason = gpu_status()
    if reason is not None:
        raise RuntimeError(reason)
    import torch

    progress = progress or Progress()
    torch.cuda.init()
    if described is None:
        started, described = time.perf_counter(), describe_run(command)
    elif started is None:
        raise ValueError("a run described elsewhere comes with the time it started (started=...)")
    gpu = described.gpu
    if gpu is None:
        raise RuntimeError("torch sees a CUDA GPU, but the run description found none")
    # the sweep times the way every bench script does: one Script (no output of its own; the runner writes)
    script = Script(argparse.Namespace(output=None, rerecord=False), None, described, started, budget=BUDGETS[mode])
    ctx = Context(script=script, mode=mode, progress=progress)
    if script.monitor is None:
        ctx.notes.append("clocks: neither pynvml nor nvidia-smi answered; no clocks were sampled during timed calls")
    modules = {
        "mistakes": mistakes,
        "gemm": gemm,
        "copy": copy,
        "host_device": host_device,
        "attention": attention,
        "kernels": kernels,
    }
    sections: dict[str, list] = {}
    clocks: dict[str, ClockReading] = {}
    progress(f"{gpu.name}, {gpu.sm_count} SMs, driver {gpu.driver}, torch {described.versions.torch}")
    for name in names:
        try:
            sections[name] = modules[name].run(ctx)
        except Exception as err:  # keep what the other suites measured; the note and the exit status say so
            traceback.print_exc()
            ctx.notes.append(f"{name}: FAILED, {first_line(err)}")
            sections[name] = []
        reading = clock_reading(device.clocks())
        if reading is not None:
            clocks[f"after_{name}"] = reading
        torch.cuda.empty_cache()
    return SweepRecord(
        run=finished(described, started, clocks=clocks, notes=[*described.notes, *ctx.notes]),
        l2_flush=script.flush.method,
        mode=mode,
        suites=names,
        **sections,
    )


def add_suite_arguments(parser: argparse.ArgumentParser) -> None:
    """What to measure: ``--quick`` and ``--suite``, options of ``gpukb bench`` and of ``bench/gpu_sweep.py``."""
    parser.add_argument("--quick", action="store_true", help="small sweeps and short budgets (under a minute)")
    parser.add_argument(
        "--suite",
        action="append",
        choices=SUITES,
        metavar="SUITE",
        help=f"run only this suite (repeatable); one of {', '.join(SUITES)}",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``gpukb bench``: what to measure, where to write it, or a results file to show."""
    add_suite_arguments(parser)
    parser.add_argument("--output", type=Path, metavar="FILE", help="where to write the results (JSON)")
    rerecord_option(parser)
    parser.add_argument(
        "--show", type=Path, metavar="FILE", help="print the tables of a results file instead of measuring"
    )


def execute(args: argparse.Namespace, parser: argparse.ArgumentParser, out: TextIO | None = None) -> int:
    """Carry out parsed ``gpukb bench`` arguments; returns the exit status.

    A results file for ``--show`` that is missing, unreadable or invalid is a usage error: exit status 2, with
    ``gpukb bench: error: ...`` naming the file and what is wrong.
    """
    from gpukb.performance.pages import h100 as h100_page

    out = out if out is not None else sys.stdout
    if args.show is not None:
        if args.quick or args.suite or args.output or args.rerecord:
            parser.error(
                "--show reads a results file; it cannot be combined with --quick, --suite, --output or --rerecord"
            )
        try:
            record = read(args.show, SweepRecord)
        except UnicodeDecodeError:
            parser.error(f"{args.show}: not a results file (JSON text in UTF-8)")
        except (OSError, ValueError) as err:  # missing, a folder, unreadable, or not a valid results file
            parser.error(str(err))
        print(h100_page.run_summary(record), file=out)
        return 0
    if args.output is not None and args.output.exists() and not args.rerecord:
        parser.error(f"{args.output} exists; pass --rerecord to replace it (with a record of the same kind)")
    reason = gpu_status()
    if reason is not None:
        print(
            f"{parser.prog}: {reason}; nothing was measured.\n"
            f"Run it on a machine with an NVIDIA GPU and a CUDA build of torch, "
            f"or read a recorded run with --show FILE (see src/gpukb/data/results/performance/).",
            file=sys.stderr,
        )
        return FAILURE
    record = run(args.suite, "quick" if args.quick else "full", command=None)
    path = args.output or Path(file_name(record.run.gpu.name, record.run.date.isoformat()))
    try:
        write(record, path, replace=args.rerecord)
    except ValueError as err:
        raw = path.with_suffix(".invalid.json")
        raw.write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")
        print(f"{parser.prog}: error: the results do not fit the schema ({err}); raw data in {raw}", file=sys.stderr)
        return FAILURE
    print(h100_page.run_summary(record), file=out)
    print(f"\nwrote {path}", file=out)
    if record.failed():
        print(f"{parser.prog}: some suites failed: {record.failed()}", file=sys.stderr)
        return FAILURE
    return 0
