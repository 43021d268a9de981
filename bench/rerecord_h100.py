"""Re-record the measurements the performance and GEMM pages render, in one call on the GPU machine.

Runs, each in its own process with a time limit, writing into the folder given (``$OUT`` on the device machine):
the gpu-marked tests of the flush, the full and quick sweeps (``bench/gpu_sweep.py``), the Triton GEMM run
(``bench/triton_gemm.py``) and the GEMM ground-up run (``bench/gemm_ground_up.py``). Prints one line per step.
Copy the files into ``src/gpukb/data/results/`` under the ids the pages read::

    PYTHONPATH=src python3 bench/rerecord_h100.py "$OUT"
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

STEPS = (
    (
        "flush-tests",
        [
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-q",
            "-rA",
            "-s",
            "tests/bench/test_flush_gpu.py",
        ],
        None,
        120,
    ),
    ("sweep-quick", ["bench/gpu_sweep.py", "--quick", "--output", "{out}/sweep-quick.json"], None, 90),
    ("sweep", ["bench/gpu_sweep.py", "--output", "{out}/sweep.json"], None, 240),
    ("triton", ["bench/triton_gemm.py", "{out}/triton.json"], None, 300),
    ("ground-up", ["bench/gemm_ground_up.py", "{out}/ground-up.json"], None, 150),
)


def main(argv: list[str]) -> int:
    if len(argv) < 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0])
    only = set(argv[1:])
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    status = 0
    with open(out / "log.txt", "a", encoding="utf-8") as log:
        for name, args, _, limit in STEPS:
            if only and name not in only:
                continue
            cmd = [sys.executable, *(a.format(out=out) for a in args)]
            started = time.perf_counter()
            log.write(f"\n===== {name}: {' '.join(cmd)}\n")
            log.flush()
            try:
                rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=limit).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
            line = f"{name}: rc={rc} in {time.perf_counter() - started:.0f} s"
            log.write(line + "\n")
            print(line, flush=True)
            status = status or (rc != 0)
    return int(status)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
