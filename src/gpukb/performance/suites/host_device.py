"""Host-device bandwidth: copies to and from the GPU, from pageable and from pinned host memory.

Pageable memory can be paged out, so the driver first copies it into a pinned staging buffer; pinned
(page-locked) memory is read by the GPU's copy engine directly and allows asynchronous copies.
"""

from __future__ import annotations

from gpukb.performance.results import HostDeviceRecord
from gpukb.performance.suites import Context, timed

SIZES = {"full": (2**16, 2**20, 2**24, 2**28, 2**30), "quick": (2**20, 2**26)}


def cases(mode: str) -> list[tuple[str, str, int]]:
    """The (direction, memory, bytes) cases of a mode."""
    if mode not in SIZES:
        raise ValueError(f"mode must be one of {sorted(SIZES)}; got {mode!r}")
    return [(d, mem, size) for d in ("h2d", "d2h") for mem in ("pageable", "pinned") for size in SIZES[mode]]


def run(ctx: Context) -> list[HostDeviceRecord]:
    """Measure every case. Bandwidth is the bytes copied (each crosses the link once) over the time."""
    torch = ctx.torch
    largest = max(SIZES[ctx.mode])
    random_host = torch.randint(0, 256, (largest,), dtype=torch.uint8)
    pinned_host = torch.empty(largest, dtype=torch.uint8, pin_memory=True)
    pinned_host.copy_(random_host)
    device = torch.empty(largest, dtype=torch.uint8, device="cuda")
    todo = cases(ctx.mode)
    records = []
    for index, (direction, memory, nbytes) in enumerate(todo, start=1):
        host = (pinned_host if memory == "pinned" else random_host)[:nbytes]
        dev = device[:nbytes]
        blocking = memory == "pageable"
        if direction == "h2d":
            ms, clocks = timed(
                ctx, lambda dev=dev, host=host, b=blocking: dev.copy_(host, non_blocking=not b), flush=False
            )
        else:
            ms, clocks = timed(
                ctx, lambda dev=dev, host=host, b=blocking: host.copy_(dev, non_blocking=not b), flush=False
            )
        records.append(
            HostDeviceRecord(
                direction=direction,
                memory=memory,
                bytes=nbytes,
                ms=ms,
                gbps=nbytes / (ms.median * 1e-3) / 1e9,
                clocks=clocks,
            )
        )
        ctx.progress(
            f"host_device {index}/{len(todo)} {direction} {memory:<8} {nbytes:>11} B: {records[-1].gbps:6.1f} GB/s"
        )
    return records
