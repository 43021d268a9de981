"""Measure the GPU that is present and write a results file: the script behind ``gpukb bench``.

Run from the repository root, on a machine with an NVIDIA GPU and a CUDA build of torch::

    python bench/gpu_sweep.py --output src/gpukb/data/results/performance/<gpu>-<date>.json   # minutes
    python bench/gpu_sweep.py --quick --output /tmp/quick.json                                # seconds

It needs no installation: it puts the checkout's ``src/`` on ``sys.path`` when ``gpukb`` is not importable.
Progress goes to stderr, the summary tables to stdout.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    from gpukb.performance.runner import main
except ImportError:  # a checkout on a machine where gpukb is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    from gpukb.performance.runner import main

if __name__ == "__main__":
    raise SystemExit(main())
