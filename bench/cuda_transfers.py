"""Host↔device copy bandwidth by transfer size, from pageable and from pinned (page-locked) host memory.

Usage: PYTHONPATH=src python bench/cuda_transfers.py OUTPUT.json [--rerecord]

torch ``Tensor.copy_`` between a CPU tensor (``pin_memory=False`` or ``True``) and a CUDA tensor, each size timed
as the median of repeated synchronous copies with the host clock after warm-up (a pageable copy is staged through
a pinned buffer by the driver, so only the host clock sees all of it).
"""

from __future__ import annotations

import argparse
import statistics
import time

SIZES = (4 * 2**10, 64 * 2**10, 2**20, 16 * 2**20, 256 * 2**20)


def main() -> int:
    from gpukb.records import rerecord_option

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", help="write the results here (a cuda.transfers record, JSON)")
    rerecord_option(parser)
    args = parser.parse_args()

    import torch

    from gpukb.cuda.results import Transfers
    from gpukb.records import describe_run, finished, write

    started = time.perf_counter()
    run = describe_run(
        notes=[
            "torch Tensor.copy_ of uint8 tensors, host clock around each synchronized copy; "
            "medians of 20 copies (5 for 256 MiB) after 3 warm-up copies."
        ]
    )
    rows = []
    for size in SIZES:
        device = torch.randint(1, 255, (size,), dtype=torch.uint8, device="cuda")
        for memory in ("pageable", "pinned"):
            host = (
                torch.randint(1, 255, (size,), dtype=torch.uint8).pin_memory()
                if memory == "pinned"
                else (torch.randint(1, 255, (size,), dtype=torch.uint8))
            )
            for direction in ("H2D", "D2H"):

                def copy(host=host, device=device, direction=direction):
                    (device.copy_(host) if direction == "H2D" else host.copy_(device))
                    torch.cuda.synchronize()

                for _ in range(3):
                    copy()
                times = []
                for _ in range(5 if size >= 2**28 else 20):
                    t0 = time.perf_counter()
                    copy()
                    times.append(time.perf_counter() - t0)
                median = statistics.median(times)
                gbps = size / median / 1e9
                rows.append(
                    {
                        "direction": direction,
                        "host_memory": memory,
                        "bytes": size,
                        "median_ms": median * 1e3,
                        "gbps": gbps,
                    }
                )
                print(f"{direction} {memory:<8} {size:>10} B  {median * 1e3:8.3f} ms  {gbps:6.2f} GB/s", flush=True)
    link = "unknown"
    try:
        import subprocess

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
        link = f"PCIe gen {gen} x{width} (max gen {gen_max} x{width_max}, as nvidia-smi reported during the run)"
    except Exception as err:  # no nvidia-smi: the record says so
        link = f"not reported ({type(err).__name__})"
    print(link, flush=True)
    write(Transfers(run=finished(run, started), link=link, rows=rows), args.output, replace=args.rerecord)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
