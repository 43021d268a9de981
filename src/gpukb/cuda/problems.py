"""Worked problems of the CUDA chapter, every answer computed by the library (see :mod:`gpukb.problems`).

Per-SM limits come from ``cuda/limits.toml`` (:mod:`gpukb.cuda.limits`, sourced from the CUDA C++ Programming
Guide), the SM count and the overlap timings from the chapter's committed H100 records.
"""

from __future__ import annotations

from gpukb.cuda import limits, tables
from gpukb.cuda.indexing import blocks_for
from gpukb.cuda.occupancy import occupancy
from gpukb.problems import Problem

CC = "9.0"


def _guide() -> tuple[str, str]:
    source = limits.table().sources["guide"]
    return source.title, source.url


def launch_occupancy() -> Problem:
    threads, registers, shared = 256, 64, 32 * 1024
    o = occupancy(CC, threads, registers, dynamic_shared=shared)
    cap = limits.capability(CC)
    return Problem(
        id="occupancy",
        title="The occupancy of a launch",
        question=f"A kernel uses {registers} registers per thread and {shared // 1024} KiB of dynamic shared memory, "
        f"launched with {threads} threads per block on an H100. How many blocks fit on an SM, what occupancy is "
        "that, and what limits it?",
        answer=f"{o.active_blocks} blocks, {o.active_warps} of {o.max_warps} warps: {o.occupancy:.0%} occupancy, "
        f"limited by {' and '.join(o.limiting)}.",
        working=(
            f"Warps: {threads}/32 = {o.warps_per_block} per block; the SM holds {cap.max_warps_per_sm}: "
            f"{o.limits['warps']} blocks.",
            f"Registers: {registers} × 32 = {registers * 32:,} per warp (already a multiple of "
            f"{cap.register_allocation_unit}), {o.registers_per_block:,} per block; {cap.registers_per_sm:,} per SM: "
            f"{o.limits['registers']} blocks.",
            f"Shared memory: {shared:,} B + {cap.reserved_shared_per_block:,} B reserved = {o.shared_per_block:,} B "
            f"per block; {o.shared_per_sm:,} B per SM: {o.limits['shared memory']} blocks.",
            f"Blocks: at most {cap.max_blocks_per_sm} per SM. The smallest limit, {o.active_blocks}, wins "
            "(`gpukb.cuda.occupancy.occupancy`, the rules of `cuda_occupancy.h`).",
        ),
        sources=(_guide(),),
    )


def register_budget() -> Problem:
    threads = 256
    cap = limits.capability(CC)
    full = max(r for r in range(1, cap.max_registers_per_thread + 1) if occupancy(CC, threads, r).occupancy == 1)
    over = occupancy(CC, threads, full + 1)
    return Problem(
        id="register-budget",
        title="How many registers keep every warp resident",
        question=f"What is the most registers per thread a {threads}-thread kernel may use and still keep all "
        f"{cap.max_warps_per_sm} warps of an H100 SM resident?",
        answer=f"{full} registers per thread. At {full + 1} the SM holds {over.active_blocks} blocks, "
        f"{over.occupancy:.0%} occupancy (`__launch_bounds__({threads}, {cap.max_warps_per_sm * 32 // threads})` "
        "asks the compiler to stay within it).",
        working=(
            f"Full occupancy is {cap.max_warps_per_sm} warps × 32 = {cap.max_warps_per_sm * 32:,} threads sharing "
            f"{cap.registers_per_sm:,} registers: {cap.registers_per_sm // (cap.max_warps_per_sm * 32)} each.",
            f"Registers are allocated per warp in units of {cap.register_allocation_unit}: {full} × 32 = {full * 32:,} "
            f"fits exactly; {full + 1} × 32 = {(full + 1) * 32:,} rounds up to "
            f"{-(-(full + 1) * 32 // cap.register_allocation_unit) * cap.register_allocation_unit:,}.",
            f"The calculator, tried at every count from 1 to {cap.max_registers_per_thread}, keeps 100% up to {full}.",
        ),
        sources=(_guide(),),
    )


def grid_for_a_vector() -> Problem:
    n, threads, registers = 10**8, 256, 32
    blocks = blocks_for(n, threads)
    sms = int(tables.device_value(tables.device_record(), "multiProcessorCount"))
    fit = occupancy(CC, threads, registers)
    resident = fit.active_blocks
    waves = blocks / (sms * resident)
    return Problem(
        id="grid-size",
        title="A grid for 100 million elements",
        question=f"An elementwise kernel over {n:,} elements uses {threads} threads per block and {registers} "
        "registers per thread, one element per thread. How many blocks does the grid need, and how many waves of "
        "resident blocks is that on an H100?",
        answer=f"{blocks:,} blocks; with {resident} resident per SM on {sms} SMs ({sms * resident:,} at once) that "
        f"is {waves:,.1f} waves.",
        working=(
            f"Blocks: ⌈{n:,} / {threads}⌉ = {blocks:,} (the last block's extra threads must skip: `if (i < n)`).",
            f"At {registers} registers per thread a {threads}-thread block uses {fit.warps_per_block} warps; "
            f"{resident} blocks ({fit.occupancy:.0%} occupancy) are resident per SM, limited by "
            f"{' and '.join(fit.limiting)}.",
            f"{blocks:,} / ({sms} SMs × {resident}) = {waves:,.1f}: hundreds of waves, so the tail of a partly full "
            "last wave costs little; a grid-stride loop over fewer blocks does the same work.",
        ),
    )


def overlap_gain() -> Problem:
    b = tables.overlap_bounds()
    return Problem(
        id="overlap",
        title="What overlapping copies with compute can save",
        question=f"A job copies data in, runs a kernel and copies results out, in {b['chunks']} chunks, with the "
        "stage times the H100 recorded. How long does it take one stage after another, and what is the least it can "
        "take with the copies overlapped on their own engines?",
        answer=f"{b['sequential_ms']:.2f} ms one after another; at least {b['bound_ms']:.2f} ms overlapped, "
        f"{b['sequential_ms'] / b['bound_ms']:.2f}× faster at best.",
        working=(
            # Three decimals, so that the three totals a reader adds up give the sum shown.
            f"Recorded totals over the {b['chunks']} chunks: host → device {b['h2d_ms']:.3f} ms, kernel "
            f"{b['kernel_ms']:.3f} ms, device → host {b['d2h_ms']:.3f} ms; one after another they add up to "
            f"{b['sequential_ms']:.3f} ms.",
            "With one engine per stage the busiest engine's total is the floor, plus the first chunk's earlier "
            "stages and the last chunk's later ones (`gpukb.cuda.overlap.pipeline_bound`): "
            f"{b['bound_ms']:.2f} ms.",
            "More chunks shrink the added first and last stages, bringing the bound towards the largest stage total.",
        ),
    )


def problems() -> list[Problem]:
    """The chapter's worked problems, computed now."""
    return [launch_occupancy(), register_budget(), grid_for_a_vector(), overlap_gain()]
