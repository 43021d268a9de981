"""Record what FP8 matrix products do on this GPU: which torch._scaled_mm combinations run, how close they come to
the emulator, what fast accumulation and overflow do, and TF32 against FP32. The GEMM accuracy page renders the file.

Usage: PYTHONPATH=src python bench/gemm_fp8_h100.py OUTPUT.json
"""

from __future__ import annotations

import datetime
import json
import sys
import time
from pathlib import Path

#: cuBLASLt attributes whose header comments the results keep, as the installed library documents them.
HEADER_NAMES = ("CUBLASLT_MATMUL_DESC_FAST_ACCUM", "CUBLASLT_MATMUL_DESC_D_SCALE_POINTER")


def header_notes() -> dict[str, str]:
    """The comment above each attribute of ``HEADER_NAMES`` in the cublasLt.h found on this machine."""
    import glob

    candidates = [
        "/usr/local/cuda/include/cublasLt.h",
        *glob.glob("/usr/local/lib/python3*/*-packages/nvidia/cu*/include/cublasLt.h"),
    ]
    for path in candidates:
        try:
            lines = Path(path).read_text(errors="replace").splitlines()
        except OSError:
            continue
        notes = {"path": path}
        for name in HEADER_NAMES:
            for i, line in enumerate(lines):
                if line.strip().startswith(name):
                    start = i
                    while start > 0 and lines[start - 1].strip().startswith(("*", "/*")):
                        start -= 1
                    notes[name] = " ".join(x.strip(" */") for x in lines[start:i] if x.strip(" */"))
                    break
        return notes
    return {}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    import torch

    if not torch.cuda.is_available():
        print("gemm_fp8_h100: no CUDA GPU here; nothing to record", file=sys.stderr)
        return 1
    from gpukb import environment
    from gpukb.bench.device import describe
    from gpukb.formats.gpu_checks import tf32_matmul_check
    from gpukb.gemm import fp8_hardware as hw

    started = time.perf_counter()
    parts: dict[str, object] = {}
    parts["acceptance"] = hw.acceptance_grid()
    parts["layout"] = hw.layout_probe()
    parts["agreement"] = hw.agreement_suite(parts["acceptance"])
    parts["accumulation"] = hw.accumulation_study()
    parts["accumulation_probe"] = hw.accumulation_probe()
    parts["overflow"] = hw.overflow_probe()
    parts["scale_result"] = hw.scale_result_probe()
    parts["int32_overflow"] = hw.int32_overflow_probe()
    parts["tf32"] = [tf32_matmul_check(n=n) for n in (256, 1024, 4096)]
    record = {
        "meta": {
            **describe(torch),
            "environment": environment.collect().as_dict(),
            "cublaslt": hw.cublaslt_version(),
            "cublaslt_header": header_notes(),
            "date": datetime.date.today().isoformat(),
            "command": "PYTHONPATH=src python3 " + " ".join(sys.argv),
            "seconds": round(time.perf_counter() - started, 1),
        },
        **parts,
    }
    Path(argv[0]).write_text(json.dumps(record, indent=1) + "\n")
    accepted = sum(r["accepted"] for r in parts["acceptance"])
    print(f"{accepted} of {len(parts['acceptance'])} combinations accepted; {record['meta']['seconds']} s")
    for r in parts["agreement"]:
        if r.get("emulated"):
            print(f"{r['a']}x{r['b']}->{r['out']} bias={r['bias']} fast={r['fast_accum']}: "
                  f"diff {r['hw_vs_emulator']:.2e} bound {r['bound']:.2e}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
