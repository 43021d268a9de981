"""Record the formats chapter's GPU checks (TF32 rounding, CUDA casts) as a results file the pages render.

Usage: PYTHONPATH=src python bench/formats_gpu.py OUTPUT.json

Writes a ``formats.gpu-checks`` record (``gpukb.formats.results.GpuChecks``) through ``gpukb.records``; the
committed one is ``src/gpukb/data/results/formats/h100-gpu-checks.json``.
"""

from __future__ import annotations

import sys
import time


def main(argv: list[str]) -> int:
    rerecord = "--rerecord" in argv  # replace an existing results file (of the same kind) on purpose
    argv = [a for a in argv if a != "--rerecord"]
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    import torch

    if not torch.cuda.is_available():
        print("formats_gpu: no CUDA GPU here; nothing to record", file=sys.stderr)
        return 1
    from gpukb.formats import gpu_checks
    from gpukb.formats.results import GpuChecks
    from gpukb.records import describe_run, finished, write

    started = time.perf_counter()
    run = describe_run()
    tf32 = gpu_checks.tf32_matmul_check()
    casts = gpu_checks.cuda_cast_check()
    overflow = {"cuda": gpu_checks.overflow_probe("e4m3", "cuda"), "cpu": gpu_checks.overflow_probe("e4m3", "cpu")}
    run = finished(run, started)
    record = GpuChecks.model_validate({"run": run, "tf32": tf32, "casts": casts, "e4m3_overflow": overflow})
    path = write(record, argv[0], replace=rerecord)
    print(path.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
