"""The occupancy calculator: how many blocks of a kernel an SM holds at once, and which resource limits it.

The arithmetic is that of ``cuda_occupancy.h`` (the CUDA Toolkit's occupancy calculator, which the runtime's
``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` implements for the device at hand), with the limits of each
compute capability read from :mod:`gpukb.cuda.limits`:

- **warps**: ``max_warps_per_sm // ceil(threads / 32)``;
- **registers**: registers are allocated per warp in units of 256 (``ceil(regs × 32 / 256) × 256`` per warp), and
  warps are placed in the SM's 4 sub-partitions, each holding a quarter of the register file; a block must also
  fit the per-block register limit with its warps rounded up to a multiple of 4 (the hardware's check);
- **shared memory**: static + dynamic + the bytes the driver reserves per block (1 KiB from compute capability
  8.0), rounded up to the allocation unit (128 bytes from 8.0, 256 before), against the SM's shared memory at the
  chosen carveout;
- **blocks**: the SM's limit on resident blocks.

Active blocks per SM is the smallest of the four. A launch that cannot run at all raises ``ValueError`` naming
the limit and its value. GPU-checked on an H100 against the driver (see ``bench/cuda_occupancy.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpukb.arguments import given, integer
from gpukb.cuda.limits import Capability, capability, launch

#: The resources that can limit occupancy, in the order the result lists them.
RESOURCES = ("warps", "registers", "shared memory", "blocks")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, unit: int) -> int:
    return _ceil_div(a, unit) * unit


def _check_int(name: str, value: object, low: int) -> int:
    return integer(name, value, minimum=low)


@dataclass(frozen=True)
class Occupancy:
    """What :func:`occupancy` computes for one launch configuration.

    Attributes:
        cc: The compute capability.
        threads_per_block: Threads per block.
        warps_per_block: ``ceil(threads / 32)``.
        registers_per_block: Registers allocated to a block (per-warp allocation rounded to 256, × warps).
        shared_per_block: Shared memory allocated to a block: static + dynamic + reserved, rounded to the unit.
        shared_per_sm: The SM's shared-memory capacity (the carveout) the result assumes.
        limits: Blocks per SM each resource allows, by resource (``None``: that resource sets no limit).
        active_blocks: Resident blocks per SM, the smallest of ``limits``.
        active_warps: ``active_blocks × warps_per_block``.
        max_warps: The SM's warp limit.
        limiting: The resources whose limit equals ``active_blocks``.
    """

    cc: str
    threads_per_block: int
    warps_per_block: int
    registers_per_block: int
    shared_per_block: int
    shared_per_sm: int
    limits: dict[str, int | None]
    active_blocks: int
    active_warps: int
    max_warps: int
    limiting: tuple[str, ...]

    @property
    def occupancy(self) -> float:
        """Active warps as a fraction of the SM's warp limit."""
        return self.active_warps / self.max_warps


def carveout(cap: Capability, needed: int, preference_percent: int | None = None) -> int:
    """The SM shared-memory capacity (bytes) for a block that needs ``needed`` bytes (allocated, reserve included).

    With no preference the calculator assumes the largest carveout, as ``cuda_occupancy.h`` does for the default
    preference. A preference (``cudaFuncAttributePreferredSharedMemoryCarveout``, percent of the maximum) is
    rounded up to the next supported capacity and is overridden by the smallest capacity that holds one block
    when it is too small.
    """
    steps = [kib * 1024 for kib in cap.carveouts_kib]
    if preference_percent is None:
        preferred = cap.shared_per_sm
    else:
        if isinstance(preference_percent, bool) or not isinstance(preference_percent, int):
            raise TypeError(f"carveout preference must be an int percent; got {preference_percent!r}")
        if not 0 <= preference_percent <= 100:
            raise ValueError(f"carveout preference must be 0 to 100 percent; got {preference_percent}")
        wanted = preference_percent * cap.shared_per_sm // 100
        preferred = next(s for s in steps if s >= wanted)
    if preferred >= needed:
        return preferred
    return next(s for s in steps if s >= needed)


# --8<-- [start:occupancy]
def occupancy(
    cc: str | tuple[int, int],
    threads: int,
    registers: int,
    static_shared: int = 0,
    dynamic_shared: int = 0,
    *,
    cluster_size: int | None = None,
    nonportable_cluster: bool = False,
    opt_in: bool = True,
    kernel_max_threads: int | None = None,
    carveout_percent: int | None = None,
) -> Occupancy:
    """Active blocks per SM of a kernel launch, and which resource limits them.

    Args:
        cc: Compute capability, ``"9.0"`` or ``(9, 0)``.
        threads: Threads per block.
        registers: Registers per thread (``cudaFuncAttributes::numRegs``).
        static_shared: Static shared memory per block in bytes (``sharedSizeBytes``).
        dynamic_shared: Dynamic shared memory per block in bytes (the launch's third ``<<< >>>`` argument).
        cluster_size: Blocks per thread-block cluster (compute capability 9.0), or ``None``.
        nonportable_cluster: The kernel allows non-portable cluster sizes (up to 16 on 9.0 instead of 8).
        opt_in: The kernel opted in to more than 48 KiB of dynamic shared memory
            (``cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...)``).
        kernel_max_threads: The kernel's own block-size limit (``cudaFuncAttributes::maxThreadsPerBlock``, lowered
            by ``__launch_bounds__``), where known.
        carveout_percent: The kernel's preferred shared-memory carveout in percent, or ``None`` for the default.

    Raises:
        ValueError: For a launch that cannot run, naming the limit and its value: more threads than a block may
            have, more registers than a thread may have or than a block's register file holds, more shared memory
            than a block may have (with or without opt-in), static shared memory over 48 KiB, an unsupported or
            too large cluster.
        TypeError: For arguments that are not ints.
    """
    cap = capability(cc)
    _check_int("threads per block", threads, 1)
    _check_int("registers per thread", registers, 0)
    _check_int("static shared memory", static_shared, 0)
    _check_int("dynamic shared memory", dynamic_shared, 0)
    where = f"compute capability {cap.cc}"
    if threads > cap.max_threads_per_block:
        raise ValueError(f"{threads} threads per block exceeds the limit of {cap.max_threads_per_block} ({where})")
    if kernel_max_threads is not None and threads > _check_int("kernel_max_threads", kernel_max_threads, 1):
        raise ValueError(f"{threads} threads per block exceeds the kernel's maxThreadsPerBlock of {kernel_max_threads}")
    if registers > cap.max_registers_per_thread:
        raise ValueError(
            f"{registers} registers per thread exceeds the limit of {cap.max_registers_per_thread} ({where})"
        )
    _check_cluster(cap, cluster_size, nonportable_cluster)

    warps = _ceil_div(threads, cap.warp_size)
    # Registers: allocated per warp in units of 256; the hardware checks the block with its warps rounded up to
    # the number of sub-partitions (cudaOccMaxBlocksPerSMRegsLimit).
    per_warp = _round_up(registers * cap.warp_size, cap.register_allocation_unit)
    per_block = per_warp * warps
    assumed = per_warp * _round_up(warps, cap.register_sub_partitions)
    if max(per_block, assumed) > cap.registers_per_block:
        rounded = _round_up(warps, cap.register_sub_partitions)
        how = f"{warps} warps" if rounded == warps else f"{warps} warps counted as {rounded}"
        raise ValueError(
            f"{threads} threads at {registers} registers need {max(per_block, assumed)} registers per block "
            f"({per_warp} per warp, {how}), more than the limit of {cap.registers_per_block} registers per block "
            f"({where})"
        )
    if per_warp:
        warps_per_partition = cap.registers_per_sm // cap.register_sub_partitions // per_warp
        by_registers: int | None = warps_per_partition * cap.register_sub_partitions // warps
    else:
        by_registers = None  # a kernel with no registers sets no register limit

    # Shared memory: static + dynamic + the driver's reserve, rounded up to the allocation unit.
    if static_shared > cap.shared_per_block:
        raise ValueError(
            f"{static_shared} bytes of static shared memory exceed the limit of {cap.shared_per_block} bytes "
            f"(48 KiB) for static allocations; use dynamic shared memory above it ({where})"
        )
    requested = static_shared + dynamic_shared
    block_limit = cap.shared_per_block_optin if opt_in else cap.shared_per_block
    if requested > block_limit:
        if opt_in or requested > cap.shared_per_block_optin:
            raise ValueError(
                f"{requested} bytes of shared memory per block exceed the opt-in limit of "
                f"{cap.shared_per_block_optin} bytes (sharedMemPerBlockOptin, {where})"
            )
        raise ValueError(
            f"{requested} bytes of shared memory per block exceed the default limit of {cap.shared_per_block} "
            f"bytes (sharedMemPerBlock, {where}); opt in with cudaFuncAttributeMaxDynamicSharedMemorySize "
            f"(up to {cap.shared_per_block_optin})"
        )
    allocated = _round_up(requested + cap.reserved_shared_per_block, cap.shared_allocation_unit)
    sm_shared = carveout(cap, allocated, carveout_percent)
    by_shared = sm_shared // allocated if requested or cap.reserved_shared_per_block else None

    limits = {
        "warps": cap.max_warps_per_sm // warps,
        "registers": by_registers,
        "shared memory": by_shared,
        "blocks": cap.max_blocks_per_sm,
    }
    active = min(v for v in limits.values() if v is not None)
    return Occupancy(
        cc=cap.cc,
        threads_per_block=threads,
        warps_per_block=warps,
        registers_per_block=per_block,
        shared_per_block=allocated,
        shared_per_sm=sm_shared,
        limits=limits,
        active_blocks=active,
        active_warps=active * warps,
        max_warps=cap.max_warps_per_sm,
        limiting=tuple(r for r in RESOURCES if limits[r] == active),
    )
    # --8<-- [end:occupancy]


def _check_cluster(cap: Capability, size: int | None, nonportable: bool) -> None:
    if size is None:
        return
    _check_int("cluster size", size, 1)
    if cap.max_cluster_size is None:
        raise ValueError(f"thread-block clusters need compute capability 9.0 or later; got {cap.cc}")
    top = cap.max_cluster_size_nonportable if nonportable else cap.max_cluster_size
    if size > top:
        how = (
            "non-portable" if nonportable else "portable (allow 16 with cudaFuncAttributeNonPortableClusterSizeAllowed)"
        )
        raise ValueError(f"cluster size {size} exceeds the {how} limit of {top} blocks (compute capability {cap.cc})")


def occupancy_table(
    cc: str | tuple[int, int],
    registers: int,
    static_shared: int = 0,
    dynamic_shared: int = 0,
    block_sizes: tuple[int, ...] = (64, 128, 256, 512, 1024),
) -> tuple[list[str], list[list[object]]]:
    """Occupancy of one kernel at several block sizes, as ``(headers, rows)``; a size that cannot run shows why.

    Raises:
        TypeError: For arguments that are not ints (block sizes a sequence of ints).
        ValueError: For an unknown compute capability, negative sizes, more registers per thread than the
            capability allows, block sizes outside 1 to 1024: what no block size changes.
    """
    cap = capability(cc)
    _check_int("registers per thread", registers, 0)
    _check_int("static shared memory", static_shared, 0)
    _check_int("dynamic shared memory", dynamic_shared, 0)
    if registers > cap.max_registers_per_thread:
        raise ValueError(
            f"{registers} registers per thread exceeds the limit of {cap.max_registers_per_thread} "
            f"(compute capability {cap.cc}) at every block size"
        )
    if isinstance(block_sizes, str | bytes) or not isinstance(block_sizes, tuple | list) or not block_sizes:
        raise TypeError(f"block_sizes must be a non-empty tuple of ints; got {given(block_sizes)}")
    top = launch().max_threads_per_block
    block_sizes = tuple(integer(f"block_sizes[{i}]", t, 1, top) for i, t in enumerate(block_sizes))
    headers = ["threads/block", "blocks/SM", "warps/SM", "occupancy", "limited by"]
    rows: list[list[object]] = []
    for threads in block_sizes:
        try:
            occ = occupancy(cc, threads, registers, static_shared, dynamic_shared)
        except ValueError as err:
            rows.append([threads, 0, 0, "0%", f"cannot launch: {err}"])
            continue
        rows.append([threads, occ.active_blocks, occ.active_warps, f"{occ.occupancy:.0%}", ", ".join(occ.limiting)])
    return headers, rows
