"""The page “Execution model and occupancy” (docs/cuda/execution.md): its tables, figures and text."""

from __future__ import annotations

from gpukb import records
from gpukb.calculators import Field, calculator_html
from gpukb.cuda import figures, indexing, limits, tables
from gpukb.cuda.occupancy import occupancy_table
from gpukb.figures import to_svg
from gpukb.tables import markdown_table


def limits_by_capability() -> str:
    """The per-compute-capability limits the calculator uses, with their sources."""
    table = limits.table()
    sources = "; ".join(f"[{s.title}]({s.url})" for s in table.sources.values())
    return markdown_table(*tables.limits_table()) + f"\n\nSources (checked {table.checked}): {sources}.\n"


def occupancy_sweep(registers: int, static_shared: int = 0, dynamic_shared: int = 0) -> str:
    """The calculator's answer for one kernel on Hopper at several block sizes."""
    return markdown_table(
        *occupancy_table("9.0", registers, static_shared, dynamic_shared, block_sizes=(64, 128, 256, 512, 768, 1024))
    )


def occupancy_check() -> str:
    """The calculator against the driver: the headline counts, and where the run was made."""
    record = tables.occupancy_record()
    counts = tables.occupancy_agreement()
    regs = sorted({k.num_regs for k in record.kernels})
    text = (
        f"**{counts['agree']} of {counts['configurations']}** launch configurations agree "
        f"({counts['differ']} differ): {counts['kernels']} compiled kernel variants (registers from {regs[0]} to "
        f"{regs[-1]} per thread, static shared memory from 0 to "
        f"{max(k.shared_size_bytes for k in record.kernels):,} bytes), each at every block size and dynamic "
        f"shared memory size of the grid. In {counts['cannot_run']} of them the driver answers 0 blocks (the launch "
        "cannot run) and the calculator raises `ValueError` naming the limit. The driver was asked through "
        f"`{record.api}`.\n\n"
        f"{counts['beyond_launch_bounds']} configurations ask for more threads per block than the kernel's own "
        "`__launch_bounds__` allow: the occupancy API answers them as if the kernel had no bound (the calculator, "
        "given the same inputs, agrees), while the launch itself fails; `occupancy(..., kernel_max_threads=...)` "
        "refuses them.\n\n" + records.measured_on(record.run) + "\n"
    )
    return text


def occupancy_kernels() -> str:
    """Per compiled kernel variant: its attributes and how many of its launches agree."""
    return markdown_table(*tables.occupancy_kernels_table())


def occupancy_distribution() -> str:
    """How the recorded launches spread over block counts."""
    return markdown_table(*tables.occupancy_distribution())


def triton_limit() -> str:
    """Triton's shared-memory refusal next to the device's opt-in figure."""
    record = tables.occupancy_record()
    t = record.triton
    if t is None:
        return "The recorded run has no Triton refusal.\n"
    same = "equals" if t.limit == t.shared_mem_per_block_optin else "differs from"
    rows = [
        ["shared memory the kernel needed (Triton's `Required`)", f"{t.required:,}"],
        ["Triton's `Hardware limit`", f"{t.limit:,}"],
        ["`sharedMemPerBlockOptin` of the device", f"{t.shared_mem_per_block_optin:,}"],
    ]
    note = (
        f"The kernel: {t.kernel}. Triton's limit {same} the per-block opt-in figure. Its message: ``{t.message}``\n\n"
    )
    return records.measured_table(["what", "bytes"], rows, record.run, note) + "\n"


def launch_grid() -> str:
    """The 72-thread launch (3 × 2 blocks of 4 × 3 threads) laid out as the grid of threads: each cell is a thread's
    block-major index (its block's number × 12 + its number inside the block), at its (x, y) place."""
    grid, block = (3, 2), (4, 3)
    width, height = grid[0] * block[0], grid[1] * block[1]
    cells = [[0] * width for _ in range(height)]
    for b, t in indexing.threads(grid, block):
        x, y, _ = indexing.global_coordinates(b, block, t)
        cells[y][x] = indexing.block_major_index(b, block, t, grid)
    headers = ["y \\ x", *[str(x) for x in range(width)]]
    return markdown_table(headers, [[y, *cells[y]] for y in range(height)])


def launch_figure() -> str:
    """Inline SVG: an example launch from grid to blocks to warps to SMs, with its residency."""
    return to_svg(figures.launch_figure())


def occupancy_calculator(cc: str = "9.0") -> str:
    """The occupancy calculator: :func:`gpukb.cuda.occupancy.occupancy` computed in the browser, with every compute
    capability's limits exported from ``cuda/limits.toml``."""
    caps = [limits.capability(c) for c in reversed(limits.known())]
    data = {"capabilities": [c.model_dump(exclude={"sources"}) for c in caps]}
    fields = [
        Field("cc", "compute capability", "select", cc, [(c.cc, f"{c.cc}: {c.name}") for c in caps]),
        Field("threads", "threads per block", default="256"),
        Field("registers", "registers per thread", default="64", hint="cudaFuncAttributes::numRegs"),
        Field("static_shared", "static shared memory (bytes)", default="0"),
        Field("dynamic_shared", "dynamic shared memory (bytes)", default="16384"),
        Field("opt_in", "opted in above 48 KiB", "checkbox", "on", hint="cudaFuncAttributeMaxDynamicSharedMemorySize"),
        Field("carveout", "carveout preference (%)", hint="empty: the default (largest)"),
        Field("cluster_size", "cluster size", hint="empty: no cluster (9.0 only)"),
        Field("nonportable_cluster", "non-portable cluster size allowed", "checkbox"),
    ]
    return calculator_html("occupancy", "Occupancy of one kernel launch", fields, data)
