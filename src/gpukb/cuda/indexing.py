"""Thread-index arithmetic: where a thread of a 1D, 2D or 3D launch sits in the grid and in the data.

CUDA gives each thread ``threadIdx`` (its place in its block), ``blockIdx`` (its block's place in the grid),
``blockDim`` and ``gridDim`` (the sizes), each with ``x``, ``y`` and ``z`` components. These functions compute
what a kernel computes from them, so the arithmetic can be checked on the CPU: the global coordinates of a thread,
its row-major linear index, and the enumeration of every thread of a launch.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple


class Dim3(NamedTuple):
    """A ``dim3``: three sizes or indices, unused dimensions 1 (sizes) or 0 (indices)."""

    x: int
    y: int = 1
    z: int = 1


def _dim(value: Dim3 | tuple[int, ...] | int, name: str, size: bool) -> Dim3:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if (
        not isinstance(value, tuple)
        or not 1 <= len(value) <= 3
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise TypeError(f"{name} must be an int or a tuple of 1 to 3 ints; got {value!r}")
    filler = 1 if size else 0
    full = Dim3(*value, *([filler] * (3 - len(value))))
    low = 1 if size else 0
    if any(v < low for v in full):
        raise ValueError(f"{name} components must be at least {low}; got {tuple(full)}")
    return full


def _inside(index: Dim3, dim: Dim3, name: str, dim_name: str) -> None:
    if any(i >= d for i, d in zip(index, dim, strict=True)):
        raise ValueError(f"{name} {tuple(index)} is outside {dim_name} {tuple(dim)}")


# --8<-- [start:global-index]
def global_index_1d(block_idx: int, block_dim: int, thread_idx: int) -> int:
    """``blockIdx.x * blockDim.x + threadIdx.x``: the index of a thread in a 1D launch.

    Raises:
        ValueError: If ``thread_idx`` is not below ``block_dim`` or an index is negative.
    """
    b, d, t = (
        _dim(block_idx, "blockIdx", False).x,
        _dim(block_dim, "blockDim", True).x,
        _dim(thread_idx, "threadIdx", False).x,
    )
    if t >= d:
        raise ValueError(f"threadIdx.x {t} is outside blockDim.x {d}")
    return b * d + t


def global_coordinates(block_idx, block_dim, thread_idx) -> Dim3:
    """The thread's coordinates in the whole grid of threads: ``blockIdx * blockDim + threadIdx`` per axis."""
    b, d, t = (
        _dim(block_idx, "blockIdx", False),
        _dim(block_dim, "blockDim", True),
        _dim(thread_idx, "threadIdx", False),
    )
    _inside(t, d, "threadIdx", "blockDim")
    return Dim3(*(bi * di + ti for bi, di, ti in zip(b, d, t, strict=True)))


def linear_index(block_idx, block_dim, thread_idx, grid_dim) -> int:
    """The row-major linear index of a thread over the whole grid (x fastest, then y, then z), the index a kernel
    uses for element ``[z][y][x]`` of an array shaped like the grid of threads."""
    g = _dim(grid_dim, "gridDim", True)
    b, d = _dim(block_idx, "blockIdx", False), _dim(block_dim, "blockDim", True)
    _inside(b, g, "blockIdx", "gridDim")
    x, y, z = global_coordinates(b, d, thread_idx)
    width, height = g.x * d.x, g.y * d.y
    return (z * height + y) * width + x


def block_major_index(block_idx, block_dim, thread_idx, grid_dim) -> int:
    """The thread's index when threads are numbered block by block: the block's linear id times threads per
    block, plus the thread's linear id inside its block."""
    g, b = _dim(grid_dim, "gridDim", True), _dim(block_idx, "blockIdx", False)
    d, t = _dim(block_dim, "blockDim", True), _dim(thread_idx, "threadIdx", False)
    _inside(b, g, "blockIdx", "gridDim")
    _inside(t, d, "threadIdx", "blockDim")
    block_id = b.x + b.y * g.x + b.z * g.x * g.y
    thread_id = t.x + t.y * d.x + t.z * d.x * d.y
    return block_id * (d.x * d.y * d.z) + thread_id
    # --8<-- [end:global-index]


def threads(grid_dim, block_dim) -> Iterator[tuple[Dim3, Dim3]]:
    """Every ``(blockIdx, threadIdx)`` of a launch, blocks and threads each in x-fastest order."""
    g, d = _dim(grid_dim, "gridDim", True), _dim(block_dim, "blockDim", True)
    for bz in range(g.z):
        for by in range(g.y):
            for bx in range(g.x):
                for tz in range(d.z):
                    for ty in range(d.y):
                        for tx in range(d.x):
                            yield Dim3(bx, by, bz), Dim3(tx, ty, tz)


def launch_table(grid_dim, block_dim) -> tuple[list[str], list[list[object]]]:
    """Every thread of a (small) launch as ``(headers, rows)``: its indices, global coordinates, row-major
    index and block-major index."""
    headers = ["blockIdx (x, y)", "threadIdx (x, y)", "global (x, y)", "row-major index", "block-major index"]
    rows = []
    for b, t in threads(grid_dim, block_dim):
        gx, gy, _ = global_coordinates(b, block_dim, t)
        rows.append(
            [
                f"({b.x}, {b.y})",
                f"({t.x}, {t.y})",
                f"({gx}, {gy})",
                linear_index(b, block_dim, t, grid_dim),
                block_major_index(b, block_dim, t, grid_dim),
            ]
        )
    return headers, rows


def blocks_for(n: int, threads_per_block: int) -> int:
    """Blocks a 1D launch needs to cover ``n`` elements: ``ceil(n / threads_per_block)``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int; got {n!r}")
    if isinstance(threads_per_block, bool) or not isinstance(threads_per_block, int) or threads_per_block < 1:
        raise ValueError(f"threads_per_block must be a positive int; got {threads_per_block!r}")
    return -(-n // threads_per_block)
