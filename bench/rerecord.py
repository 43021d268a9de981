"""Re-record committed results on the GPU machine: the GPU runs the chapters declare (``Chapter.gpu_runs``).

Run on the GPU machine, from the repository root, with ``PYTHONPATH=src``:

    python3 bench/rerecord.py OUT_DIR [RUN ...]      # every declared run, or the named ones
    python3 bench/rerecord.py --list

First the flush tests check the timing method (``tests/measuring/test_flush_gpu.py``); then each run writes
``OUT_DIR/<chapter>-<run>.json`` within its time limit, one line per run is printed, and the full output goes to
``OUT_DIR/log.txt``. Nothing under ``src/`` is touched: copy each output over the record id the run names (printed
with it) once you have looked at it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from gpukb import chapters

FLUSH_TESTS = "tests/measuring/test_flush_gpu.py"


def declared() -> dict[str, chapters.GpuRun]:
    """Every declared GPU run, as ``<chapter>-<run>``."""
    return {f"{c.name}-{name}": run for c in chapters.chapters() for name, run in c.gpu_runs.items()}


def main(argv: list[str] | None = None) -> int:
    runs = declared()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, nargs="?", help="folder for the new results files and the log")
    parser.add_argument("runs", nargs="*", metavar="RUN", help=f"runs: {', '.join(runs)}")
    parser.add_argument("--list", action="store_true", help="list the declared runs and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, run in runs.items():
            print(f"{name}: {run.command} -> {run.record} (limit {run.limit_s} s)")
        return 0
    if args.out is None:
        parser.error("OUT_DIR is required (or --list)")
    unknown = [name for name in args.runs if name not in runs]
    if unknown:
        parser.error(f"no declared GPU run is named {', '.join(unknown)}; runs: {', '.join(runs)}")
    repeated = sorted({name for name in args.runs if args.runs.count(name) > 1})
    if repeated:
        parser.error(f"a run is named twice: {', '.join(repeated)}; each run is run once")
    if os.path.lexists(args.out) and not args.out.is_dir():
        parser.error(f"{args.out}: not a folder; OUT_DIR is the folder for the new results files and the log")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        parser.error(f"{args.out}: cannot make the folder ({err.strerror or err})")
    log = args.out / "log.txt"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    steps = [
        (
            "flush-tests",
            f"{sys.executable} -m pytest -p no:cacheprovider -o addopts= -q -rA -s {FLUSH_TESTS}",
            120,
            None,
        )
    ]
    for name in args.runs or list(runs):
        run = runs[name]
        out = args.out / f"{name}.json"
        steps.append((name, run.command.replace("python3", sys.executable, 1).format(out=out), run.limit_s, run.record))
    status = 0
    for name, command, limit, record in steps:
        started = time.monotonic()
        with log.open("a", encoding="utf-8") as sink:
            sink.write(f"===== {name}: {command}\n")
            sink.flush()
            try:
                rc = subprocess.run(
                    command.split(), stdout=sink, stderr=subprocess.STDOUT, timeout=limit, env=env
                ).returncode
            except subprocess.TimeoutExpired:
                rc = 124
        target = f" -> replaces {record}" if record else ""
        print(f"{name}: rc={rc} in {time.monotonic() - started:.0f} s{target}", flush=True)
        status |= rc != 0
    return status


if __name__ == "__main__":
    sys.exit(main())
