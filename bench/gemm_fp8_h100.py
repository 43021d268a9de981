"""Record what FP8 matrix products do on this GPU: which torch._scaled_mm combinations run, how close they come to
the emulator, what fast accumulation and overflow do, and TF32 against FP32. The GEMM accuracy page renders the
record (kind ``gemm.fp8-hardware``; the committed one is ``gemm/fp8-h100``).

Usage: PYTHONPATH=src python bench/gemm_fp8_h100.py OUTPUT.json
"""

from __future__ import annotations

import glob
from pathlib import Path

from gpukb.gemm.results import Fp8Hardware
from gpukb.records.script import Script, main

#: cuBLASLt attributes whose header comments the record keeps, as the installed library documents them.
HEADER_NAMES = ("CUBLASLT_MATMUL_DESC_FAST_ACCUM", "CUBLASLT_MATMUL_DESC_D_SCALE_POINTER")


def header_notes():
    """The comment above each attribute of ``HEADER_NAMES`` in the cublasLt.h found on this machine, or ``None``."""
    from gpukb.gemm.results import CublasltHeader

    candidates = [
        "/usr/local/cuda/include/cublasLt.h",
        *glob.glob("/usr/local/lib/python3*/*-packages/nvidia/cu*/include/cublasLt.h"),
    ]
    for path in candidates:
        try:
            lines = Path(path).read_text(errors="replace").splitlines()
        except OSError:
            continue
        comments = {}
        for name in HEADER_NAMES:
            for i, line in enumerate(lines):
                if line.strip().startswith(name):
                    start = i
                    while start > 0 and lines[start - 1].strip().startswith(("*", "/*")):
                        start -= 1
                    comments[name] = " ".join(x.strip(" */") for x in lines[start:i] if x.strip(" */"))
                    break
        return CublasltHeader(path=path, comments=comments)
    return None


def fp8(script: Script) -> Fp8Hardware:
    from gpukb.formats.gpu_checks import tf32_matmul_check
    from gpukb.formats.results import Tf32Check
    from gpukb.gemm import fp8_hardware as hw

    acceptance = hw.acceptance_grid()
    parts = {
        "acceptance": acceptance,
        "layout": hw.layout_probe(),
        "agreement": hw.agreement_suite(acceptance),
        "accumulation": hw.accumulation_study(),
        "accumulation_probe": hw.accumulation_probe(),
        "overflow": hw.overflow_probe(),
        "scale_result": hw.scale_result_probe(),
        "int32_overflow": hw.int32_overflow_probe(),
        "tf32": [Tf32Check(**tf32_matmul_check(n=n)) for n in (256, 1024, 4096)],
    }
    run = script.finished(versions=script.run.versions.model_copy(update={"cublaslt": hw.cublaslt_version()}))
    record = Fp8Hardware(run=run, cublaslt_header=header_notes(), **parts)
    accepted = sum(r.accepted for r in record.acceptance)
    print(f"{accepted} of {len(record.acceptance)} combinations accepted; {run.duration_s:.1f} s")
    for r in record.agreement:
        if r.emulated:
            print(f"{r.a}x{r.b}->{r.out} bias={r.bias} fast={r.fast_accum}: "
                  f"diff {r.hw_vs_emulator:.2e} bound {r.bound:.2e}")  # fmt: skip
    return record


if __name__ == "__main__":
    raise SystemExit(main(fp8, __doc__))
