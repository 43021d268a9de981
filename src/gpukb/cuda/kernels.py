"""The chapter's numba CUDA kernels: one thread per element, 2D grids, shared-memory tiles, reductions, atomics.

Every kernel runs on an NVIDIA GPU and, with ``NUMBA_ENABLE_CUDASIM=1`` set before numba is imported, on numba's
CPU simulator (slow: keep simulated sizes tiny). Kernels whose shared arrays need a size known at compile time
come from factories (:func:`matmul_tiled`, :func:`reduce_shared`, ...), cached per size. The host functions
(:func:`vector_add`, :func:`tiled_matmul`, :func:`reduce_sum`, :func:`histogram`) copy numpy arrays to the device,
launch, and copy the result back.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import cuda, float32, int32

from gpukb.cuda import simulator

simulator.install()  # numba's CPU simulator lacks warp shuffles; on a GPU this does nothing

#: Threads per block of the 1D host functions.
THREADS = 256
#: Threads per warp.
WARP = 32
#: Every lane of a warp takes part in the shuffles.
FULL_MASK = 0xFFFFFFFF


# --8<-- [start:hello]
@cuda.jit
def hello(out):
    """Each thread prints its indices and writes its global index into ``out``."""
    i = cuda.grid(1)  # blockIdx.x * blockDim.x + threadIdx.x
    print("hello from block", cuda.blockIdx.x, "thread", cuda.threadIdx.x, "global index", i)
    if i < out.size:
        out[i] = i
    # --8<-- [end:hello]


# --8<-- [start:vector-add]
@cuda.jit
def vector_add_kernel(a, b, c):
    """``c[i] = a[i] + b[i]``, one element per thread; threads past the end do nothing."""
    i = cuda.grid(1)
    if i < c.size:  # the last block may stick out past the end of the arrays
        c[i] = a[i] + b[i]
    # --8<-- [end:vector-add]


@cuda.jit
def copy_kernel(src, dst):
    """``dst[i] = src[i]``, one element per thread."""
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


#: Elements each thread of the unrolled kernels handles by default.
PER_THREAD = 4


# --8<-- [start:unrolled]
@cache
def vector_add_unrolled(per_thread: int = PER_THREAD):
    """A kernel for ``c = a + b`` in which each thread adds ``per_thread`` elements, ``blockDim.x`` apart: a warp's
    accesses stay consecutive (coalesced). Each element is stored right after it is loaded, and the compiler may not
    move the next loads above that store (``c`` might overlap ``a`` or ``b``), so a thread still has one element's
    loads in flight at a time: :func:`vector_add_ilp` loads first. Launch ``ceil(n / (threads * per_thread))``
    blocks."""

    @cuda.jit
    def kernel(a, b, c):
        base = cuda.blockIdx.x * cuda.blockDim.x * per_thread + cuda.threadIdx.x
        for k in range(per_thread):  # a trip count fixed at compile time: numba unrolls it
            i = base + k * cuda.blockDim.x
            if i < c.size:
                c[i] = a[i] + b[i]

    return kernel
    # --8<-- [end:unrolled]


@cache
def copy_unrolled(per_thread: int = PER_THREAD):
    """A kernel for ``dst = src`` in which each thread copies ``per_thread`` elements, ``blockDim.x`` apart."""

    @cuda.jit
    def kernel(src, dst):
        base = cuda.blockIdx.x * cuda.blockDim.x * per_thread + cuda.threadIdx.x
        for k in range(per_thread):
            i = base + k * cuda.blockDim.x
            if i < dst.size:
                dst[i] = src[i]

    return kernel


# --8<-- [start:ilp]
@cache
def copy_ilp(per_thread: int = PER_THREAD, dtype=float32):
    """A grid-stride copy in which each thread first loads ``per_thread`` elements (``blockDim.x`` apart, so a
    warp's accesses stay coalesced) into registers and only then stores them.

    Why the order matters: ``src`` and ``dst`` may overlap as far as the compiler knows, so in
    ``dst[i] = src[i]; dst[j] = src[j]`` the load of ``src[j]`` cannot move above the store to ``dst[i]``, and each
    thread has one load in flight at a time. Loading everything first puts ``per_thread`` loads in flight. The
    grid may be smaller than the array (for example a few blocks per SM): each block then walks the array in
    steps of the whole grid's tile. ``dtype`` is the numba type of the elements (the local array needs it).
    """

    @cuda.jit
    def kernel(src, dst):
        n = dst.size
        width = cuda.blockDim.x
        tile = width * per_thread
        values = cuda.local.array(per_thread, dtype)  # a fixed size: numba keeps it in registers
        for base in range(cuda.blockIdx.x * tile + cuda.threadIdx.x, n, cuda.gridDim.x * tile):
            if base + (per_thread - 1) * width < n:  # the whole tile is inside: no test per element
                for k in range(per_thread):
                    values[k] = src[base + k * width]
                for k in range(per_thread):
                    dst[base + k * width] = values[k]
            else:
                for k in range(per_thread):
                    if base + k * width < n:
                        dst[base + k * width] = src[base + k * width]

    return kernel


@cache
def vector_add_ilp(per_thread: int = PER_THREAD):
    """``c = a + b`` (float32) as :func:`copy_ilp` copies: each thread loads ``per_thread`` elements of ``a`` and
    of ``b`` before it adds and stores any, in a grid-stride loop."""

    @cuda.jit
    def kernel(a, b, c):
        n = c.size
        width = cuda.blockDim.x
        tile = width * per_thread
        va = cuda.local.array(per_thread, float32)
        vb = cuda.local.array(per_thread, float32)
        for base in range(cuda.blockIdx.x * tile + cuda.threadIdx.x, n, cuda.gridDim.x * tile):
            if base + (per_thread - 1) * width < n:
                for k in range(per_thread):
                    va[k] = a[base + k * width]
                    vb[k] = b[base + k * width]
                for k in range(per_thread):
                    c[base + k * width] = va[k] + vb[k]
            else:
                for k in range(per_thread):
                    if base + k * width < n:
                        c[base + k * width] = a[base + k * width] + b[base + k * width]

    return kernel
    # --8<-- [end:ilp]


@cuda.jit
def iterate_kernel(x, y, iters):
    """``y[i]`` = ``x[i]`` after ``iters`` steps of ``v = 0.999 v + 0.001``: a kernel whose time is set by
    ``iters`` (arithmetic, not memory), for timelines where a kernel should last as long as a copy."""
    i = cuda.grid(1)
    if i < y.size:
        v = x[i]
        for _ in range(iters):
            v = v * float32(0.999) + float32(0.001)
        y[i] = v


def iterate_reference(x: np.ndarray, iters: int) -> np.ndarray:
    """What :func:`iterate_kernel` computes, on the host in float32 (the GPU fuses each step into one FMA, so
    results agree to a few units in the last place, not bit for bit)."""
    v = np.asarray(x, dtype=np.float32).copy()
    for _ in range(iters):
        v = v * np.float32(0.999) + np.float32(0.001)
    return v


# --8<-- [start:add-2d]
@cuda.jit
def add_2d_kernel(a, b, c):
    """``c = a + b`` for 2D arrays, one thread per element: x runs along columns, y along rows."""
    x, y = cuda.grid(2)  # (blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y)
    if y < c.shape[0] and x < c.shape[1]:
        c[y, x] = a[y, x] + b[y, x]
    # --8<-- [end:add-2d]


# --8<-- [start:matmul-tiled]
@cache
def matmul_tiled(tile: int):
    """A kernel computing ``c = a @ b`` (float32) in ``tile × tile`` blocks of threads, one output per thread.

    Each block walks along the shared dimension one tile at a time: its threads load a tile of ``a`` and one of
    ``b`` into shared memory (one element each), wait for each other (``syncthreads``), multiply the tiles out of
    shared memory, and wait again before the next load overwrites the tiles. Every element loaded from global
    memory is then used ``tile`` times.
    """

    @cuda.jit
    def kernel(a, b, c):
        sa = cuda.shared.array((tile, tile), float32)
        sb = cuda.shared.array((tile, tile), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        m, k, n = a.shape[0], a.shape[1], b.shape[1]
        acc = float32(0.0)
        for t in range((k + tile - 1) // tile):
            ka, kb = t * tile + tx, t * tile + ty
            sa[ty, tx] = a[row, ka] if row < m and ka < k else float32(0.0)
            sb[ty, tx] = b[kb, col] if kb < k and col < n else float32(0.0)
            cuda.syncthreads()  # the tiles are complete
            for j in range(tile):
                acc += sa[ty, j] * sb[j, tx]
            cuda.syncthreads()  # everyone is done with the tiles before they are overwritten
        if row < m and col < n:
            c[row, col] = acc

    return kernel
    # --8<-- [end:matmul-tiled]


# --8<-- [start:reductions]
@cuda.jit
def reduce_atomic(x, out):
    """Naive: every thread adds its element to ``out[0]`` with an atomic; all of them contend for one address."""
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, 0, x[i])


@cache
def reduce_shared(block: int):
    """Each thread sums a grid-stride slice; the block adds its threads' sums in a shared-memory tree (halving the
    active threads each step, ``syncthreads`` between steps); thread 0 adds the block's sum to ``out[0]``.
    ``block`` must be a power of two and equal ``blockDim.x``."""

    @cuda.jit
    def kernel(x, out):
        partial = cuda.shared.array(block, float32)
        tid = cuda.threadIdx.x
        acc = float32(0.0)
        for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            acc += x[i]
        partial[tid] = acc
        cuda.syncthreads()
        step = block // 2
        while step > 0:
            if tid < step:
                partial[tid] += partial[tid + step]
            cuda.syncthreads()
            step //= 2
        if tid == 0:
            cuda.atomic.add(out, 0, partial[0])

    return kernel


@cache
def reduce_warp(block: int):
    """Each thread sums a grid-stride slice four elements at a time; each warp adds its 32 sums with shuffles
    (``shfl_down_sync``: no shared memory, no ``syncthreads``); the warps' sums meet in shared memory, are
    added by a second round of shuffles, and thread 0 adds the block's sum to ``out[0]``. ``block`` is a multiple
    of 32, at most 1024 (so at most 32 warps' sums)."""
    warps = block // WARP

    @cuda.jit
    def kernel(x, out):
        sums = cuda.shared.array(warps, float32)
        tid = cuda.threadIdx.x
        lane, warp = tid % WARP, tid // WARP
        stride = cuda.gridsize(1)
        n = x.size
        acc = float32(0.0)
        i = cuda.grid(1)
        while i + 3 * stride < n:  # four independent loads in flight per iteration
            acc += x[i] + x[i + stride] + x[i + 2 * stride] + x[i + 3 * stride]
            i += 4 * stride
        while i < n:
            acc += x[i]
            i += stride
        offset = WARP // 2
        while offset > 0:
            acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
            offset //= 2
        if lane == 0:
            sums[warp] = acc
        cuda.syncthreads()
        # Every warp adds the warps' sums (the same shuffles in every warp keep control flow uniform);
        # only thread 0 publishes the result.
        acc = sums[lane] if lane < warps else float32(0.0)
        offset = WARP // 2
        while offset > 0:
            acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
            offset //= 2
        if tid == 0:
            cuda.atomic.add(out, 0, acc)

    return kernel
    # --8<-- [end:reductions]


# --8<-- [start:histogram]
@cuda.jit
def histogram_global(values, bins):
    """One atomic increment in global memory per value: threads that hit the same bin are serialized."""
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(bins, values[i], 1)


@cache
def histogram_shared(nbins: int):
    """A private histogram per block in shared memory (atomics there are cheaper and contend only within the
    block), added to the global one at the end: one global atomic per bin per block."""

    @cuda.jit
    def kernel(values, bins):
        local = cuda.shared.array(nbins, int32)
        tid = cuda.threadIdx.x
        for b in range(tid, nbins, cuda.blockDim.x):
            local[b] = 0
        cuda.syncthreads()
        for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
            cuda.atomic.add(local, values[i], 1)
        cuda.syncthreads()
        for b in range(tid, nbins, cuda.blockDim.x):
            if local[b] != 0:
                cuda.atomic.add(bins, b, local[b])

    return kernel
    # --8<-- [end:histogram]


# --8<-- [start:bit-cast]
@cuda.jit
def float_bits(x, bits):
    """``bits[i]`` = the IEEE-754 bit pattern of ``x[i]``: the same 4 bytes read as an unsigned int (a view,
    no conversion), as C++20's ``std::bit_cast<uint32_t>`` or CUDA's ``__float_as_uint`` would give."""
    as_int = x.view(np.uint32)
    i = cuda.grid(1)
    if i < x.size:
        bits[i] = as_int[i]
    # --8<-- [end:bit-cast]


def blocks(n: int, threads: int = THREADS) -> int:
    """Blocks a 1D launch of ``threads`` per block needs to cover ``n`` elements."""
    return (n + threads - 1) // threads


def vector_add(a: np.ndarray, b: np.ndarray, threads: int = THREADS, unrolled: bool = False) -> np.ndarray:
    """``a + b`` computed by :func:`vector_add_kernel` (or :func:`vector_add_unrolled`) for float32 arrays of one
    length, ``threads`` per block."""
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"vector_add needs two 1D arrays of one length; got shapes {a.shape} and {b.shape}")
    c = cuda.device_array_like(a)
    if unrolled:
        kernel = vector_add_unrolled(PER_THREAD)
        kernel[blocks(a.size, threads * PER_THREAD), threads](cuda.to_device(a), cuda.to_device(b), c)
    else:
        vector_add_kernel[blocks(a.size, threads), threads](cuda.to_device(a), cuda.to_device(b), c)
    return c.copy_to_host()


def add_2d(a: np.ndarray, b: np.ndarray, block: tuple[int, int] = (16, 16)) -> np.ndarray:
    """``a + b`` for 2D arrays computed by :func:`add_2d_kernel` with a 2D grid of ``block``-shaped blocks."""
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"add_2d needs two 2D arrays of one shape; got shapes {a.shape} and {b.shape}")
    rows, cols = a.shape
    grid = ((cols + block[0] - 1) // block[0], (rows + block[1] - 1) // block[1])
    c = cuda.device_array_like(a)
    add_2d_kernel[grid, block](cuda.to_device(a), cuda.to_device(b), c)
    return c.copy_to_host()


def tiled_matmul(a: np.ndarray, b: np.ndarray, tile: int = 16) -> np.ndarray:
    """``a @ b`` (float32) by :func:`matmul_tiled`."""
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"tiled_matmul needs (m, k) and (k, n) arrays; got {a.shape} and {b.shape}")
    m, n = a.shape[0], b.shape[1]
    c = cuda.device_array((m, n), dtype=np.float32)
    grid = ((n + tile - 1) // tile, (m + tile - 1) // tile)
    matmul_tiled(tile)[grid, (tile, tile)](cuda.to_device(a), cuda.to_device(b), c)
    return c.copy_to_host()


#: The reductions by name, for :func:`reduce_sum`.
REDUCTIONS = ("atomic", "shared", "warp")


def reduce_sum(x: np.ndarray, method: str = "warp", threads: int = THREADS, grid: int | None = None) -> float:
    """The sum of a float32 array by one of :data:`REDUCTIONS`; ``grid`` blocks (default: enough for one element
    per thread, at most 1024 blocks for the grid-stride kernels)."""
    if method not in REDUCTIONS:
        raise ValueError(f"unknown reduction {method!r}; choose from {REDUCTIONS}")
    out = cuda.to_device(np.zeros(1, dtype=np.float32))
    d = cuda.to_device(x)
    if method == "atomic":
        reduce_atomic[blocks(x.size, threads), threads](d, out)
    else:
        kernel = reduce_shared(threads) if method == "shared" else reduce_warp(threads)
        kernel[grid or max(1, min(1024, blocks(x.size, threads))), threads](d, out)
    return float(out.copy_to_host()[0])


def histogram(
    values: np.ndarray, nbins: int, shared: bool = True, threads: int = THREADS, grid: int | None = None
) -> np.ndarray:
    """Counts of each value in ``0 .. nbins - 1`` (an int32 array), by atomics in shared or global memory."""
    if values.size and (values.min() < 0 or values.max() >= nbins):
        raise ValueError(f"values must lie in 0 .. {nbins - 1}; got {values.min()} .. {values.max()}")
    bins = cuda.to_device(np.zeros(nbins, dtype=np.int32))
    d = cuda.to_device(values)
    if shared:
        histogram_shared(nbins)[grid or max(1, min(1024, blocks(values.size, threads))), threads](d, bins)
    else:
        histogram_global[blocks(values.size, threads), threads](d, bins)
    return bins.copy_to_host()


def bits_of(x: np.ndarray, threads: int = 32) -> np.ndarray:
    """The bit patterns of a float32 array, read on the device by :func:`float_bits`."""
    out = cuda.device_array(x.size, dtype=np.uint32)
    float_bits[blocks(x.size, threads), threads](cuda.to_device(x), out)
    return out.copy_to_host()
