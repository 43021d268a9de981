"""Measure the GPU that is present and write a results file: the suites of ``gpukb bench``, as a bench script.

Run from the repository root, on a machine with an NVIDIA GPU and a CUDA build of torch::

    python bench/gpu_sweep.py src/gpukb/data/results/performance/<gpu>-<date>.json   # minutes
    python bench/gpu_sweep.py --quick /tmp/quick.json                                # seconds

It needs no installation: it puts the checkout's ``src/`` on ``sys.path`` when ``gpukb`` is not importable.
Progress goes to stderr, the summary tables to stdout. ``gpukb bench`` runs the same suites
(:func:`gpukb.performance.runner.run`) from the command line.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import gpukb  # noqa: F401
except ImportError:  # a checkout on a machine where gpukb is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from gpukb.performance import runner
from gpukb.records.script import Script, main


def gpu_sweep(script: Script) -> int:
    from gpukb.performance.pages import h100 as h100_page

    mode = "quick" if script.args.quick else "full"
    record = runner.run(script.args.suite, mode, described=script.run, started=script.started)
    script.write(record)
    print(h100_page.run_summary(record))
    if record.failed():
        print(f"gpu_sweep: some suites failed: {record.failed()}", file=sys.stderr)
        return runner.FAILURE
    return 0


if __name__ == "__main__":
    raise SystemExit(main(gpu_sweep, __doc__, runner.add_suite_arguments))
