"""Thread-index arithmetic: where a thread of a 1D, 2D or 3D launch sits in the grid and in the data.

CUDA gives each thread ``threadIdx`` (its place in its block), ``blockIdx`` (its block's place in the grid),
``blockDim`` and ``gridDim`` (the sizes), each with ``x``, ``y`` and ``z`` components. These functions compute
what a kernel computes from them, so the arithmetic can be checked on the CPU: the global coordinates of a thread,
its row-major linear index, and the enumeration of every thread of a launch.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from gpukb import arguments
from gpukb.cuda import limits

#: The most threads :func:`launch_table` (and ``gpukb cuda threads``) lists: one row each.
LAUNCH_TABLE_LIMIT = 4096


class Dim3(NamedTuple):
    """A ``dim3``: three sizes or indices, unused dimensions 1 (sizes) or 0 (indices)."""

    x: int
    y: int = 1
    z: int = 1


def _dim(value: Dim3 | tuple[int, ...] | int, name: str, size: bool) -> Dim3:
    """``value`` as a full ``Dim3``: sizes ≥ 1 and indices ≥ 0, each below the CUDA launch limit of its axis
    (``blockDim`` 1024 × 1024 × 64 and 1024 threads in all, ``gridDim`` (2^31 − 1) × 65535 × 65535; an index
    is below its size's limit)."""
    if isinstance(value, numbers.Integral | np.integer) and not isinstance(value, bool | np.bool_):
        value = (value,)
    if not isinstance(value, tuple | list) or not 1 <= len(value) <= 3:
        raise TypeError(f"{name} must be an int or a tuple of 1 to 3 ints; got {arguments.given(value)}")
    launch = limits.launch()
    tops = launch.max_block_dim if name in ("blockDim", "threadIdx") else launch.max_grid_dim
    filler = 1 if size else 0
    parts = []
    for axis, v, top in zip("xyz", (*value, *([filler] * (3 - len(value)))), tops, strict=True):
        try:
            parts.append(arguments.integer(f"{name}.{axis}", v, minimum=filler, maximum=top if size else top - 1))
        except TypeError:
            raise TypeError(f"{name} must be an int or a tuple of 1 to 3 ints; got {arguments.given(value)}") from None
        except ValueError as err:
            raise ValueError(f"{err}{' (a CUDA launch limit)' if v > filler else ''}") from None
    full = Dim3(*parts)
    if name == "blockDim" and full.x * full.y * full.z > launch.max_threads_per_block:
        raise ValueError(
            f"blockDim {tuple(full)} has {full.x * full.y * full.z:,} threads; a block has at most "
            f"{launch.max_threads_per_block} (the CUDA launch limit)"
        )
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
    """Every thread of a small launch (at most :data:`LAUNCH_TABLE_LIMIT` threads) as ``(headers, rows)``: its
    indices, global coordinates, row-major index and block-major index. A 3-D launch shows (x, y, z), any other
    (x, y).

    Raises:
        TypeError: For sizes that are not ints or tuples of 1 to 3 ints.
        ValueError: For sizes outside the CUDA launch limits, or a launch of more than
            :data:`LAUNCH_TABLE_LIMIT` threads.
    """
    g, d = _dim(grid_dim, "gridDim", True), _dim(block_dim, "blockDim", True)
    total = g.x * g.y * g.z * d.x * d.y * d.z
    if total > LAUNCH_TABLE_LIMIT:
        raise ValueError(
            f"this lists every thread: keep the launch at {LAUNCH_TABLE_LIMIT} threads or fewer; gridDim "
            f"{tuple(g)} × blockDim {tuple(d)} has {total:,}"
        )
    axes = 3 if g.z > 1 or d.z > 1 else 2
    label = "(x, y, z)" if axes == 3 else "(x, y)"

    def show(v: Dim3) -> str:
        return f"({', '.join(str(c) for c in v[:axes])})"

    headers = [f"blockIdx {label}", f"threadIdx {label}", f"global {label}", "row-major index", "block-major index"]
    rows = []
    for b, t in threads(g, d):
        rows.append(
            [show(b), show(t), show(global_coordinates(b, d, t)), linear_index(b, d, t, g),
             block_major_index(b, d, t, g)]
        )  # fmt: skip
    return headers, rows


def blocks_for(n: int, threads_per_block: int) -> int:
    """Blocks a 1D launch needs to cover ``n`` elements: ``ceil(n / threads_per_block)``.

    Raises:
        TypeError: For a non-integer (a bool included).
        ValueError: For a negative ``n``, ``threads_per_block`` outside 1 to 1024, or more blocks than a grid's x
            dimension holds (2^31 − 1).
    """
    launch = limits.launch()
    n = arguments.integer("n", n, minimum=0)
    threads_per_block = arguments.integer(
        "threads_per_block", threads_per_block, minimum=1, maximum=launch.max_threads_per_block
    )
    blocks = -(-n // threads_per_block)
    if blocks > launch.max_grid_dim[0]:
        raise ValueError(
            f"n = {n:,} needs {blocks:,} blocks of {threads_per_block}; a grid's x dimension holds at most "
            f"{launch.max_grid_dim[0]:,} (loop inside the kernel, a grid-stride loop, to cover more)"
        )
    return blocks
