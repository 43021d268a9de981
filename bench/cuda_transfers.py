"""Host↔device copy bandwidth by transfer size, from pageable and from pinned (page-locked) host memory.

Usage: PYTHONPATH=src python bench/cuda_transfers.py OUTPUT.json

torch ``Tensor.copy_`` between a CPU tensor (``pin_memory=False`` or ``True``) and a CUDA tensor, each size timed
with the host clock around each synchronized copy after warm-up (a pageable copy is staged through a pinned
buffer by the driver, so only the host clock sees all of it): median, quartiles and extremes of 20 copies (5 for
256 MiB).
"""

from __future__ import annotations

import subprocess

from gpukb.cuda.results import Transfers
from gpukb.measuring.timing import Budget
from gpukb.records.script import Script, main

SIZES = (4 * 2**10, 64 * 2**10, 2**20, 16 * 2**20, 256 * 2**20)


def copies(size: int) -> int:
    """Timed copies of one size: fewer of the largest, which take tens of milliseconds each."""
    return 5 if size >= 2**28 else 20


def pcie_link() -> str:
    """The PCIe link nvidia-smi reports during the run, in words."""
    try:
        out = subprocess.run(
            [
                "nvidia-smi",
                "--query-gpu=pcie.link.gen.current,pcie.link.width.current,pcie.link.gen.max,pcie.link.width.max",
                "--format=csv,noheader",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
        gen, width, gen_max, width_max = [p.strip() for p in out.split(",")]
        return f"PCIe gen {gen} x{width} (max gen {gen_max} x{width_max}, as nvidia-smi reported during the run)"
    except Exception as err:  # no nvidia-smi: the record says so
        return f"not reported ({type(err).__name__})"


def measure(script: Script) -> Transfers:
    torch = script.torch
    script.note(
        "torch Tensor.copy_ of uint8 tensors, host clock around each synchronized copy (gpukb.measuring.timing."
        "HostTimer); 20 copies (5 for 256 MiB) after warm-up; no L2 flush."
    )
    rows = []
    for size in SIZES:
        device = torch.randint(1, 255, (size,), dtype=torch.uint8, device="cuda")
        for memory in ("pageable", "pinned"):
            host = torch.randint(1, 255, (size,), dtype=torch.uint8)
            if memory == "pinned":
                host = host.pin_memory()
            for direction in ("H2D", "D2H"):

                def copy(host=host, device=device, direction=direction):
                    device.copy_(host) if direction == "H2D" else host.copy_(device)

                n = copies(size)
                timed = script.measure(
                    copy, Budget(warmup_ms=0, rep_ms=0, min_reps=n, max_reps=n, min_warmup=3), flush=False, host=True
                )
                ms = timed.summary()
                gbps = size / (ms.median * 1e-3) / 1e9
                rows.append(
                    {"direction": direction, "host_memory": memory, "bytes": size, "ms": ms, "gbps": gbps,
                     "clocks": timed.window}
                )  # fmt: skip
                print(f"{direction} {memory:<8} {size:>10} B  {ms.median:8.3f} ms  {gbps:6.2f} GB/s", flush=True)
    link = pcie_link()
    print(link, flush=True)
    return Transfers(run=script.finished(), link=link, rows=rows)


if __name__ == "__main__":
    raise SystemExit(main(measure, __doc__))
