"""The ground-up page (docs/gemm/ground-up.md): BLAS levels, blocking, cuBLASLt called directly and
batched products (record ``gemm/ground-up-h100``).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from gpukb.gemm import blas, blocking
from gpukb.gemm.pages import _ground_up
from gpukb.gemm.pages import ground_up_measured_on as ground_up_measured_on  # shown on this page too
from gpukb.gemm.results import GROUND_UP_H100
from gpukb.performance.ceilings import quoted_ceilings
from gpukb.performance.results import H100_SWEEP
from gpukb.tables import markdown_table


def blas_examples(n: int, dtype: str = "fp32") -> str:
    """The BLAS examples at size n: operations, bytes, and intensity per element and per byte."""
    rows = [
        (
            f"`{op.routine}`",
            op.level,
            op.operation,
            f"{op.flops:,}",
            f"{op.nbytes:,}",
            f"{op.per_element:,.2f}",
            f"{op.intensity:,.2f}",
            f"{blas.growth(name, n, dtype):.2f}",
        )
        for name, op in zip(blas.EXAMPLES, blas.examples(n, dtype), strict=True)
    ]
    headers = ["routine", "level", "computes", "FLOPs", "bytes", "FLOP/element", "FLOP/byte", "× when n doubles"]
    return markdown_table(headers, rows)


def blas_roofline(sizes: tuple[int, ...] = (256, 4096), dtype: str = "fp32", record_id: str = H100_SWEEP) -> str:
    """Each BLAS example bounded on a measured GPU: the larger of the compute and the memory bound, and which.

    Args:
        sizes: The sizes n to show.
        dtype: The element type; its measured matrix-product rate is the compute ceiling.
        record_id: A committed ``gpukb bench`` sweep whose ceilings the pages quote
            (:func:`gpukb.performance.ceilings.quoted_ceilings`: for the H100, the copy and the fp16/bf16 products
            from the interleaved ceilings run, the other types the sweep's best product).
    """
    roof = quoted_ceilings(record_id)
    if dtype not in roof or "bandwidth" not in roof:
        raise ValueError(f"{record_id} has no measured {dtype} product or copy bandwidth; it has {sorted(roof)}")
    rows = [
        (
            f"`{op.routine}`",
            f"{n:,}",
            f"{op.intensity:,.2f}",
            f"{floor.time_s * 1e6:,.3g}",
            f"{op.flops / floor.time_s / 1e12:,.2f}",
            floor.limiter,
        )
        for n, op, floor in blas.floors(sizes, dtype, roof[dtype] * 1e12, roof["bandwidth"] * 1e9)
    ]
    headers = ["routine", "n", "FLOP/byte", "floor (µs)", "at most TFLOP/s", "limited by"]
    ridge = roof[dtype] * 1e3 / roof["bandwidth"]
    note = (
        f"Ceilings: {roof[dtype]:.1f} TFLOP/s ({dtype} matrix product) and {roof['bandwidth']:,.0f} GB/s (copy), "
        f"ridge point {ridge:.0f} FLOP/byte."
    )
    return markdown_table(headers, rows) + "\n\n" + note


def blocking_traffic(n: int = 64, block_sizes: Sequence[int] = (1, 2, 4, 8, 16, 32, 64)) -> str:
    """Element moves of a blocked n×n×n product, counted and from the textbook formula ``(2N + 2)·n²``."""
    headers = ["block size b", "blocks per side N", "moves counted", "(2N+2)·n²", "fast memory 3b²", "q = 2n³ / moves"]
    rows = [
        (b, blocks, f"{moves:,}", f"{formula:,}", f"{fits:,}", f"{q:.2f}")
        for b, blocks, moves, formula, fits, q in blocking.traffic_rows(n, block_sizes)
    ]
    return markdown_table(headers, rows)


def blocking_levels(m: int, n: int, k: int, tiles: Sequence[int | blocking.Tile]) -> str:
    """Traffic at each level of a nested tiling, counted by ``blocked_matmul`` next to the closed form."""
    rows = [
        (
            counted.level,
            "×".join(map(str, counted.tile)),
            f"{counted.a_loads:,} / {formula.a_loads:,}",
            f"{counted.b_loads:,} / {formula.b_loads:,}",
            f"{counted.c_loads:,} + {counted.c_stores:,} / {formula.c_loads:,} + {formula.c_stores:,}",
            f"{counted.footprint:,}",
            f"{blocking.intensity(2 * m * n * k, counted.moves):.1f}",
        )
        for counted, formula in blocking.level_comparison(m, n, k, tiles)
    ]
    headers = ["level", "tile bm×bn×bk", "A loads (counted / formula)", "B loads", "C loads + stores", "held", "q"]
    return markdown_table(headers, rows)


def blocking_capacity(block_sizes: Sequence[int] = (2, 4, 8, 16)) -> str:
    """What fast memory each block size needs: three tiles, and what an LRU cache replaying the loop needs."""
    rows = [
        (b, f"{three:,}", f"{needed:,}", f"{needed / (b * b):.2f}")
        for b, three, needed in blocking.capacity_rows(block_sizes)
    ]
    headers = ["block size b", "three tiles, 3b²", "LRU cache needs", "LRU need / one tile b²"]
    return markdown_table(headers, rows)


#: The batched variants in the order the page shows them, with their labels.
BATCHED_LABELS = {
    "loop": "loop of torch.mm",
    "loop_graph": "same loop, CUDA graph",
    "bmm": "torch.bmm",
    "one_gemm": "one torch.mm (shared B)",
}


def cublaslt_build(record_id: str = GROUND_UP_H100) -> str:
    """The compile command and the nvcc that ran it, as a code block."""
    c = _ground_up(record_id).cublaslt
    version = c.nvcc_version.splitlines()[-2:] if c.nvcc_version else ["nvcc not found"]
    lines = ["$ nvcc --version | tail -2", *version]
    if c.compile is not None:
        lines += [f"$ {c.compile.command}", f"(exit status {c.compile.returncode})"]
    return "```text\n" + "\n".join(lines) + "\n```"


def cublaslt_output(record_id: str = GROUND_UP_H100, index: int = 0) -> str:
    """What one run of the compiled snippet printed (the first run is the check at the default size)."""
    runs = _ground_up(record_id).cublaslt.runs
    if not runs:
        return "The snippet did not compile on the GPU machine, so it did not run."
    r = runs[index]
    return "```text\n" + f"$ {r.command}\n" + r.stdout.rstrip() + f"\n(exit status {r.returncode})\n```"


def _spread(rates: list[float]) -> str:
    """``median (lowest–highest)`` of a few rates, or the one rate, or a dash."""
    if not rates:
        return "–"
    if len(rates) == 1:
        return f"{rates[0]:.0f}"
    return f"{statistics.median(rates):.0f} ({min(rates):.0f}–{max(rates):.0f})"


def cublaslt_speed(record_id: str = GROUND_UP_H100) -> str:
    """The snippet's own timing next to ``torch.mm`` on the same bf16 shapes, with each BLAS preference: the
    median TFLOP/s over the rounds, and the lowest and highest round."""
    c = _ground_up(record_id).cublaslt
    rows = []
    for shape, rates in sorted(c.snippet_rates().items()):
        cells = [f"{shape[0]}×{shape[1]}×{shape[2]}", str(len(rates)), _spread(rates)]
        cells += [_spread(c.torch_rates(shape, library)) for library in ("cublas", "cublaslt")]
        rows.append(cells)
    headers = ["bf16 M×N×K", "rounds", "snippet (cublasLtMatmul), TFLOP/s", "torch.mm, cuBLAS preferred",
               "torch.mm, cuBLASLt preferred"]  # fmt: skip
    return markdown_table(headers, rows)


def batched_table(record_id: str = GROUND_UP_H100) -> str:
    """Microseconds per batch for each way of computing it, and how many times faster ``torch.bmm`` is."""
    data = _ground_up(record_id)
    rows = []
    for size, count in data.batched_cases():
        by = data.batched_by_variant(size, count)
        cells = [f"{size}³", f"{count:,}"]
        for name in BATCHED_LABELS:
            r = by.get(name)
            if r is None:
                cells.append("–")
            elif name.startswith("loop"):  # per product: what one iteration of the loop costs
                cells.append(f"{r.ms.median * 1e3:,.0f} ({r.ms.median * 1e3 / count:,.1f} per product)")
            else:
                cells.append(f"{r.ms.median * 1e3:,.1f} ({r.tflops:,.3g} TFLOP/s)")
        ratio = data.loop_over_bmm(size, count)
        cells.append("–" if ratio is None else f"{ratio:,.0f}×")
        rows.append(cells)
    headers = ["m = n = k", "batch", *(f"{label} (µs)" for label in BATCHED_LABELS.values())]
    return markdown_table([*headers, "loop time / bmm time"], rows)


def batched_agreement(record_id: str = GROUND_UP_H100) -> str:
    """One sentence: the largest difference between the variants' results, relative to the largest output."""
    worst = _ground_up(record_id).worst_batched_difference()
    return (
        f"Before timing, every variant's result was compared with `torch.bmm`'s on the same operands: the largest "
        f"difference, relative to the largest output element, was {worst:.1e} (bf16 outputs carry 8 significant "
        f"bits, a relative step of {2**-8:.1e})."
    )


def batched_figure(record_id: str = GROUND_UP_H100) -> str:
    """Inline SVG: how many times faster one ``torch.bmm`` is than the loop, against batch count, per size."""
    from gpukb.figures import new_figure, to_svg

    data = _ground_up(record_id)
    fig, ax = new_figure(6.5, 3.6)
    for size in sorted({m for m, _ in data.batched_cases()}):
        points = [
            (count, ratio)
            for m, count in data.batched_cases()
            if m == size and (ratio := data.loop_over_bmm(m, count)) is not None
        ]
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", label=f"{size}×{size}×{size}")
    ax.axhline(1.0, color="grey", linestyle=":")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("matrices in the batch")
    ax.set_ylabel("loop time / bmm time")
    ax.set_title("One batched call against a loop of GEMMs (bf16)")
    ax.legend(fontsize=8, title="each product")
    return to_svg(fig)
