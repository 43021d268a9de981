"""Device memory bandwidth: copies by size and by element width.

Two ways to copy: ``dst.copy_(src)``, which torch turns into a device-to-device ``cudaMemcpyAsync`` for
contiguous tensors of one type (the element type does not reach the copy engine at all), and an elementwise
kernel, ``torch.bitwise_not(src, out=dst)``, which reads and writes the same bytes through torch's vectorized
elementwise path and so does see the element width. Bandwidth counts bytes read plus bytes written.
"""

from __future__ import annotations

from typing import Any

from gpukb.dtypes import torch_dtype
from gpukb.measuring.counting import copy_bytes
from gpukb.performance.results import CopyRecord
from gpukb.performance.suites import Context, timed

WIDTHS = ("uint8", "int16", "int32", "int64")
SIZES = {
    "full": (*(2**p for p in range(16, 32, 2)), 2**31),
    "quick": (2**20, 2**28),
}
WIDTH_BYTES = {"full": 2**30, "quick": 2**28}


def random_bytes(torch: Any, nbytes: int) -> Any:
    """A device buffer of random bytes (never zeros)."""
    return torch.randint(0, 256, (nbytes,), dtype=torch.uint8, device="cuda")


def gbps(nbytes: int, ms: float) -> float:
    """GB/s (10⁹ bytes per second) of a copy of ``nbytes`` bytes taking ``ms`` milliseconds."""
    return copy_bytes(nbytes) / (ms * 1e-3) / 1e9


def cases(mode: str) -> list[tuple[str, str, int]]:
    """The (method, dtype, bytes) cases of a mode: a size sweep of memcpy, then every width both ways."""
    if mode not in SIZES:
        raise ValueError(f"mode must be one of {sorted(SIZES)}; got {mode!r}")
    out = [("memcpy", "uint8", size) for size in SIZES[mode]]
    out += [(method, width, WIDTH_BYTES[mode]) for method in ("memcpy", "elementwise") for width in WIDTHS]
    return out


def run(ctx: Context) -> list[CopyRecord]:
    """Measure every copy case; the L2 cache is flushed before each timed call."""
    torch = ctx.torch
    todo = cases(ctx.mode)
    records = []
    for index, (method, width, nbytes) in enumerate(todo, start=1):
        src = random_bytes(torch, nbytes).view(torch_dtype(width))
        dst = torch.empty_like(src)
        if method == "memcpy":
            ms, clocks = timed(ctx, lambda src=src, dst=dst: dst.copy_(src))
        else:
            ms, clocks = timed(ctx, lambda src=src, dst=dst: torch.bitwise_not(src, out=dst))
        records.append(
            CopyRecord(
                method=method,
                dtype=width,
                bytes=nbytes,
                l2_flushed=True,
                ms=ms,
                gbps=gbps(nbytes, ms.median),
                clocks=clocks,
            )
        )
        del src, dst
        ctx.progress(f"copy {index}/{len(todo)} {method:<11} {width:<6} {nbytes:>11} B: {records[-1].gbps:7.1f} GB/s")
    return records
