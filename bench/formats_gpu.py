"""Record the formats chapter's GPU checks (TF32 rounding, CUDA casts) as a results file the pages render.

Usage: PYTHONPATH=src python bench/formats_gpu.py OUTPUT.json

Writes a ``formats.gpu-checks`` record (``gpukb.formats.results.GpuChecks``) through ``gpukb.records``; the
committed one is ``src/gpukb/data/results/formats/h100-gpu-checks.json``.
"""

from __future__ import annotations

from gpukb.formats import gpu_checks
from gpukb.formats.results import GpuChecks
from gpukb.records.script import Script, main


def checks(script: Script) -> GpuChecks:
    tf32 = gpu_checks.tf32_matmul_check()
    casts = gpu_checks.cuda_cast_check()
    overflow = {"cuda": gpu_checks.overflow_probe("e4m3", "cuda"), "cpu": gpu_checks.overflow_probe("e4m3", "cpu")}
    found = {"tf32": tf32, "casts": casts, "e4m3_overflow": overflow}
    record = GpuChecks.model_validate({"run": script.finished(), **found})
    print(record.model_dump_json(indent=1))
    return record


if __name__ == "__main__":
    raise SystemExit(main(checks, __doc__))
