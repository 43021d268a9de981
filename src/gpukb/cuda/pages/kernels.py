"""The page “Kernels you can run” (docs/cuda/kernels.md): its tables, figures and text."""

from __future__ import annotations

from gpukb import records
from gpukb.cuda import tables
from gpukb.cuda.results import KERNELS_ID, KernelBench


def kernels(group: str | None = None) -> str:
    """The chapter's kernels against their peers, timed in one run."""
    record = records.load(KERNELS_ID, KernelBench)
    return records.measured_table(*tables.kernels_table(group=group), record.run) + "\n"


def kernels_verdict() -> str:
    """The chapter's kernels against the rates a memory-bound kernel should reach, from the record, in words."""
    b = tables.kernels_summary()

    def against(ratio: float, bar: float) -> str:
        return f"at or above {bar}" if ratio >= bar else f"below {bar}"

    lines = []
    for group in ("copy", "vector add"):
        for framework in ("numba", "triton"):
            row = b.get(f"{group}/{framework}")
            if row is None:
                continue
            lines.append(
                f"- **{group}, {framework}** (best: {row['kernel']}): {row['ratio']:.2f} of torch's copy bandwidth, "
                f"{against(float(row['ratio']), 0.95)}."
            )
    red = b.get("reduction/numba")
    if red is not None:
        lines.append(
            f"- **reduction, numba** (best: {red['kernel']}): {red['ratio']:.2f} of `torch.sum`'s bandwidth, "
            f"{against(float(red['ratio']), 0.9)}."
        )
    mm = b.get("matmul/numba")
    if mm is not None:
        lines.append(
            f"- **tiled matmul, numba**: {mm['rate']:.1f} {mm['unit']} against cuBLAS's {mm['peer_rate']:.1f}, "
            f"{mm['ratio']:.2f} of it."
        )
    return "\n".join(lines) + "\n"


def bytes_in_flight() -> str:
    """What each numba copy and vector add reached against torch's copy, in words, from the kernel record."""
    record = records.load(KERNELS_ID, KernelBench)
    rows = [r for r in record.rows if r.framework == "numba"]

    def ratio(group: str, kernel: str) -> str:
        """The ratio of the row named ``kernel`` (or, ending in ``*``, starting so)."""
        found = [
            r
            for r in rows
            if r.group == group and (r.kernel.startswith(kernel[:-1]) if kernel.endswith("*") else r.kernel == kernel)
        ]
        return ", ".join(f"{r.ratio:.2f}" for r in found) if found else "not measured"

    return (
        f"- One element per thread: copy {ratio('copy', 'copy, one element per thread')}, vector add "
        f"{ratio('vector add', 'one element per thread')} of torch's copy bandwidth.\n"
        "- Several elements per thread, each stored right after it is loaded (4, then 8 per thread): copy "
        f"{ratio('copy', 'copy, 4 elements per thread')} and {ratio('copy', 'copy, 8 elements per thread')}, "
        f"vector add {ratio('vector add', '4 elements per thread')} and "
        f"{ratio('vector add', '8 elements per thread')}.\n"
        "- All loads first, then the stores (4, then 8 per thread): copy "
        f"{ratio('copy', 'copy, 4 loads then 4 stores')} and {ratio('copy', 'copy, 8 loads then 8 stores')}, "
        f"vector add {ratio('vector add', '4 loads of each input, then 4 stores')} and "
        f"{ratio('vector add', '8 loads of each input, then 8 stores')}.\n"
        "- The same as 8-byte words (the float32 buffer viewed as float64, 4 loads first): copy "
        f"{ratio('copy', 'copy, 8-byte words, 4 loads then 4 stores')}.\n"
        "- Loads first in a grid-stride loop over 8 blocks of 256 threads per SM: copy "
        f"{ratio('copy', 'copy, 4 loads then 4 stores, grid-stride*')}, vector add "
        f"{ratio('vector add', '4 loads of each input then 4 stores, grid-stride*')}.\n"
    )
