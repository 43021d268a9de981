"""Record the formats chapter's GPU checks (TF32 rounding, CUDA casts) as a results file the pages render.

Usage: PYTHONPATH=src python bench/formats_gpu.py OUTPUT.json
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    import torch

    if not torch.cuda.is_available():
        print("formats_gpu: no CUDA GPU here; nothing to record", file=sys.stderr)
        return 1
    from gpukb import environment
    from gpukb.bench.device import describe
    from gpukb.formats import gpu_checks

    record = {
        "meta": {
            **describe(torch),
            "environment": environment.collect().as_dict(),
            "date": datetime.date.today().isoformat(),
            "command": "PYTHONPATH=src python bench/formats_gpu.py " + argv[0],
        },
        "tf32": gpu_checks.tf32_matmul_check(),
        "casts": gpu_checks.cuda_cast_check(),
        "e4m3_overflow": {
            "cuda": gpu_checks.overflow_probe("e4m3", "cuda"),
            "cpu": gpu_checks.overflow_probe("e4m3", "cpu"),
        },
    }
    Path(argv[0]).write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
