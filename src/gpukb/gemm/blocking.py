"""Cache blocking: a blocked matrix product that counts its traffic, and the data-reuse analysis it obeys.

A matrix product ``C ← C + A·B`` (A of shape m×k, B of shape k×n) does ``2·m·n·k`` floating-point operations
on ``m·k + k·n + m·n`` elements, so each element could be reused many times, if the memory next to the
arithmetic could hold it until the next use. Blocking (tiling) makes that happen: C is cut into tiles of
``bm×bn``, each tile is held in fast memory while the tiles of A (``bm×bk``) and B (``bk×bn``) that it needs
stream past, and the same idea nests for several levels of memory (shared memory, then registers, on a GPU).

:func:`blocked_matmul` is that algorithm written out in numpy with every move between levels made explicit,
so it can count the elements loaded and stored at each level. :func:`reuse_analysis` gives the same counts in
closed form: at level ``l`` with tile ``(bm, bn, bk)`` inside a tile of ``bk'`` columns of A at the level above,

* A is loaded ``m·n·k / bn`` times an element (each A tile is reloaded for every tile column of C),
* B is loaded ``m·n·k / bm`` times,
* C is loaded and stored ``m·n·k / bk'`` times each (``bk' = k`` at the first level: once).

For square matrices and one level of square ``b×b`` tiles, with ``N = n / b`` tiles per side, that is the
textbook count of ``(2N + 2)·n²`` element moves, and an intensity ``q = 2n³ / ((2N + 2)·n²) ≈ n / N = b`` flops
per element moved. The explicit scheme holds three ``b×b`` tiles in fast memory of ``M`` elements, so its largest
block *size* is ``b = ⌊√(M/3)⌋`` (:func:`largest_block`), and ``q`` is bounded by about ``√(M/3)`` whatever ``n``
is. (A cache replaying the loop as a sum of outer products needs only about one tile, so blocks of about ``√M``
fit: :func:`lru_capacity_needed`.)

:func:`lru_traffic` checks the analysis without trusting the explicit copies: it replays the element accesses
of the same loop nest through a least-recently-used cache of a given capacity and counts misses and
write-backs.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gpukb.arguments import given, integer, positive_int

Tile = tuple[int, int, int]

#: Bounds on the work the counting functions do element by element in Python, so that no argument makes them
#: run for hours: innermost tile products of :func:`blocked_matmul`, multiply-adds replayed by
#: :func:`lru_traffic`, and elements of a random matrix made by :func:`traffic_rows` or :func:`level_comparison`.
MAX_TILE_PRODUCTS = 1 << 20
MAX_LRU_MULTIPLY_ADDS = 1 << 18
MAX_MATRIX_ELEMENTS = 1 << 24


def _within(what: str, count: int, limit: int, hint: str) -> None:
    if count > limit:
        raise ValueError(f"{what} is {count:,}, above the limit of {limit:,} this reference code runs; {hint}")


@dataclass(frozen=True)
class LevelTraffic:
    """Elements moved between one level of fast memory and the level above it.

    Attributes:
        level: 1 for the level filled from main memory, 2 for the next one down, and so on.
        tile: ``(bm, bn, bk)``: the C tile is ``bm×bn``, the A tile ``bm×bk``, the B tile ``bk×bn``.
        a_loads: Elements of A loaded into this level.
        b_loads: Elements of B loaded into this level.
        c_loads: Elements of C loaded into this level.
        c_stores: Elements of C stored back to the level above.
    """

    level: int
    tile: Tile
    a_loads: int
    b_loads: int
    c_loads: int
    c_stores: int

    @property
    def loads(self) -> int:
        """Elements loaded into this level: A, B and C."""
        return self.a_loads + self.b_loads + self.c_loads

    @property
    def moves(self) -> int:
        """Elements moved either way: loads plus stores (the textbook analysis's "memory accesses")."""
        return self.loads + self.c_stores

    @property
    def footprint(self) -> int:
        """Elements this level must hold at once: one tile each of A, B and C."""
        bm, bn, bk = self.tile
        return bm * bk + bk * bn + bm * bn


@dataclass(frozen=True)
class BlockedProduct:
    """The outcome of :func:`blocked_matmul`.

    Attributes:
        result: ``C + A·B``, computed in float64.
        levels: The traffic counted at each level, outermost first.
    """

    result: np.ndarray
    levels: list[LevelTraffic]


def normalize_tiles(m: int, n: int, k: int, tiles: int | Tile | Sequence[int | Tile]) -> list[Tile]:
    """Check a tiling of an m×n×k product and return it as a list of ``(bm, bn, bk)``, outermost first.

    Args:
        m: Rows of A and C.
        n: Columns of B and C.
        k: Columns of A, rows of B.
        tiles: One block size ``b`` (meaning ``(b, b, b)``), one ``(bm, bn, bk)``, or a sequence of either for
            several nested levels.

    Raises:
        TypeError: If a size is not an int.
        ValueError: If a tile does not divide the tile (or matrix) around it, naming both.
    """
    dims = (positive_int("m", m), positive_int("n", n), positive_int("k", k))
    if isinstance(tiles, int | np.integer) or (
        isinstance(tiles, tuple) and len(tiles) == 3 and all(isinstance(t, int | np.integer) for t in tiles)
    ):
        tiles = [tiles]
    if not isinstance(tiles, Sequence) or isinstance(tiles, str | bytes):
        raise TypeError(f"tiles must be a block size, a (bm, bn, bk) tuple, or a non-empty list of them; got "
                        f"{given(tiles)}")  # fmt: skip
    if len(tiles) == 0:
        raise ValueError("tiles is empty; give a block size, a (bm, bn, bk) tuple, or a non-empty list of them")
    out: list[Tile] = []
    outer, outer_name = dims, f"the {m}×{n}×{k} product"
    for level, tile in enumerate(tiles, start=1):
        if isinstance(tile, int | np.integer):
            tile = (tile, tile, tile)
        if not isinstance(tile, tuple | list):
            raise TypeError(f"level {level}: a tile is a block size or (bm, bn, bk); got {given(tile)}")
        if len(tile) != 3:
            raise ValueError(f"level {level}: a tile is a block size or (bm, bn, bk); got {tile!r}")
        sizes = tuple(
            positive_int(f"level {level} {name}", v) for name, v in zip(("bm", "bn", "bk"), tile, strict=True)
        )
        for name, size, whole in zip(("bm", "bn", "bk"), sizes, outer, strict=True):
            if whole % size:
                raise ValueError(
                    f"level {level}: {name}={size} does not divide {outer_name} ({whole}); "
                    f"allowed: the divisors of {whole}"
                )
        out.append(sizes)  # type: ignore[arg-type]
        outer, outer_name = sizes, f"the level-{level} tile {sizes}"
    return out


def blocked_matmul(
    a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None, tiles: int | Tile | Sequence[int | Tile] = 1
) -> BlockedProduct:
    """``C + A·B`` by nested blocking, counting every element moved between levels of memory.

    Each level copies a tile of C in, streams the tiles of A and B it needs through, and copies the C tile back;
    the innermost level multiplies its tiles with numpy. The copies are the loads and stores counted.

    Args:
        a: Shape (m, k).
        b: Shape (k, n).
        c: Shape (m, n), or ``None`` for zeros (it is loaded all the same, as ``C ← C + A·B`` reads it).
        tiles: The tiling, as for :func:`normalize_tiles`.

    Raises:
        ValueError: If the shapes do not conform or the tiling does not divide them.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"A must be m×k and B k×n; got shapes {a.shape} and {b.shape}")
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n)) if c is None else np.array(c, dtype=np.float64)
    if c.shape != (m, n):
        raise ValueError(f"C must be {m}×{n} to match A·B; got shape {c.shape}")
    levels = normalize_tiles(m, n, k, tiles)
    bm, bn, bk = levels[-1]
    _within("the number of innermost tile products", (m // bm) * (n // bn) * (k // bk), MAX_TILE_PRODUCTS,
            "use larger innermost tiles or smaller matrices")  # fmt: skip
    counts = [[0, 0, 0, 0] for _ in levels]  # a_loads, b_loads, c_loads, c_stores

    def multiply(a_: np.ndarray, b_: np.ndarray, c_: np.ndarray, depth: int) -> None:
        if depth == len(levels):
            c_ += a_ @ b_
            return
        bm, bn, bk = levels[depth]
        count = counts[depth]
        rows, inner = a_.shape
        cols = b_.shape[1]
        for i in range(0, rows, bm):
            for j in range(0, cols, bn):
                c_fast = c_[i : i + bm, j : j + bn].copy()
                count[2] += c_fast.size
                for p in range(0, inner, bk):
                    a_fast = a_[i : i + bm, p : p + bk].copy()
                    b_fast = b_[p : p + bk, j : j + bn].copy()
                    count[0] += a_fast.size
                    count[1] += b_fast.size
                    multiply(a_fast, b_fast, c_fast, depth + 1)
                c_[i : i + bm, j : j + bn] = c_fast
                count[3] += c_fast.size

    multiply(a, b, c, 0)
    traffic = [
        LevelTraffic(level, tile, *count) for level, (tile, count) in enumerate(zip(levels, counts, strict=True), 1)
    ]
    return BlockedProduct(result=c, levels=traffic)


def reuse_analysis(m: int, n: int, k: int, tiles: int | Tile | Sequence[int | Tile]) -> list[LevelTraffic]:
    """The traffic of :func:`blocked_matmul` at each level, in closed form (see the module docstring)."""
    levels = normalize_tiles(m, n, k, tiles)
    volume = m * n * k
    out = []
    outer_bk = k
    for level, (bm, bn, bk) in enumerate(levels, start=1):
        c_moves = volume // outer_bk
        out.append(LevelTraffic(level, (bm, bn, bk), volume // bn, volume // bm, c_moves, c_moves))
        outer_bk = bk
    return out


def slides_moves(n: int, blocks: int) -> int:
    """The textbook count of element moves for n×n matrices cut into ``blocks``×``blocks`` tiles: ``(2N + 2)·n²``.

    Raises:
        ValueError: If ``blocks`` does not divide ``n``.
    """
    positive_int("n", n)
    positive_int("blocks", blocks)
    if n % blocks:
        raise ValueError(f"blocks={blocks} must divide n={n}")
    return (2 * blocks + 2) * n * n


def intensity(flops: int, moves: int) -> float:
    """Flops per element moved, the "computational intensity" ``q = f / m``.

    Raises:
        ValueError: If ``moves`` is not positive.
    """
    for name, value in (("flops", flops), ("moves", moves)):
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise TypeError(f"{name} must be a number; got {given(value)}")
    if not moves > 0 or not math.isfinite(moves):
        raise ValueError(f"moves must be positive and finite; got {moves}")
    if not flops >= 0 or not math.isfinite(flops):
        raise ValueError(f"flops must be ≥ 0 and finite; got {flops}")
    return flops / moves


def largest_block(fast_memory: int) -> int:
    """The largest square block size ``b`` whose three tiles (A, B, C) fit in ``fast_memory`` elements.

    This is the "optimal value" ``√(M/3)`` of lecture slides on blocking; it is a block *size*, not a number of
    blocks.

    Raises:
        ValueError: If not even 1×1 tiles fit (``fast_memory < 3``).
    """
    positive_int("fast_memory", fast_memory)
    if fast_memory < 3:
        raise ValueError(f"fast memory must hold at least 3 elements (three 1×1 tiles); got {fast_memory}")
    return math.isqrt(fast_memory // 3)


def lru_traffic(m: int, n: int, k: int, tiles: int | Tile | Sequence[int | Tile], capacity: int) -> tuple[int, int]:
    """Loads and stores of the blocked loop nest run through a least-recently-used cache, element by element.

    The loop nest is :func:`blocked_matmul`'s; inside the innermost tile, ``C[i, j] += A[i, p]·B[p, j]`` runs
    in ``p, i, j`` order (a sum of outer products, the way GPU kernels update a C tile held in registers). Each
    access that misses loads one element (C's too: ``C ← C + A·B`` reads C); an evicted C element that was
    written is stored back, and so is every written element left at the end. A fully associative LRU cache is
    not the explicit copying of :func:`blocked_matmul`, so this checks the closed form independently: with room
    for the C tile and a few lines of A and B (:func:`lru_capacity_needed`) it moves what :func:`reuse_analysis`
    says, and with less it moves far more.

    Args:
        m: Rows of A and C.
        n: Columns of B and C.
        k: Columns of A, rows of B.
        tiles: The tiling, as for :func:`normalize_tiles` (use one level; nested levels only order the loops).
        capacity: Elements the cache holds.

    Returns:
        ``(loads, stores)`` between the cache and main memory.
    """
    levels = normalize_tiles(m, n, k, tiles)
    positive_int("capacity", capacity)
    _within("m·n·k", m * n * k, MAX_LRU_MULTIPLY_ADDS, "the replay touches every element access in Python")
    cache: OrderedDict[int, bool] = OrderedDict()  # address -> dirty
    loads = stores = 0
    b_base, c_base = m * k, m * k + k * n

    def touch(address: int, write: bool) -> None:
        nonlocal loads, stores
        if address in cache:
            cache.move_to_end(address)
            if write:
                cache[address] = True
            return
        loads += 1
        cache[address] = write
        if len(cache) > capacity:
            _, dirty = cache.popitem(last=False)
            stores += dirty

    def walk(i0: int, j0: int, p0: int, rows: int, cols: int, inner: int, depth: int) -> None:
        if depth == len(levels):
            for p in range(p0, p0 + inner):
                for i in range(i0, i0 + rows):
                    a_address = i * k + p
                    for j in range(j0, j0 + cols):
                        touch(a_address, False)
                        touch(b_base + p * n + j, False)
                        touch(c_base + i * n + j, True)
            return
        bm, bn, bk = levels[depth]
        for i in range(i0, i0 + rows, bm):
            for j in range(j0, j0 + cols, bn):
                for p in range(p0, p0 + inner, bk):
                    walk(i, j, p, bm, bn, bk, depth + 1)

    walk(0, 0, 0, m, n, k, 0)
    stores += sum(cache.values())
    return loads, stores


def lru_capacity_needed(block: int, n: int | None = None) -> int:
    """The smallest LRU cache (elements) in which :func:`lru_traffic` of ``b×b×b`` tiles moves no more than the
    closed form, found by bisection on an n×n×n product (``n = 2b`` unless given).

    The explicit scheme of :func:`blocked_matmul` holds three tiles, ``3b²``. Replayed in the outer-product
    order, an LRU cache needs about one tile: the C tile stays, while the A and B tiles stream through a column
    and a row at a time.
    """
    positive_int("block", block)
    n = 2 * block if n is None else positive_int("n", n)
    _within("n³", n**3, MAX_LRU_MULTIPLY_ADDS, "the bisection replays an n×n×n product through the cache")
    target = reuse_analysis(n, n, n, block)[0].moves
    low, high = 1, 3 * block * block + 3 * block + 1  # high always suffices
    while low < high:
        mid = (low + high) // 2
        if sum(lru_traffic(n, n, n, block, mid)) <= target:
            high = mid
        else:
            low = mid + 1
    return low


def traffic_rows(n: int, block_sizes: Sequence[int]) -> list[tuple[int, int, int, int, int, float]]:
    """One row per block size of an n×n×n product blocked once: the counts behind the page's table.

    Each row is ``(b, N, counted moves, the formula (2N+2)n², fast memory needed 3b², intensity q)``; the
    moves are counted by running :func:`blocked_matmul` on random matrices, and the run's result is checked.

    Raises:
        ValueError: If a block size does not divide ``n``, or the blocked result differs from ``A·B``.
    """
    positive_int("n", n)
    _within("n²", n * n, MAX_MATRIX_ELEMENTS, "the product is run on random n×n matrices")
    sizes = _sizes(block_sizes)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    rows = []
    for size in sizes:
        run = blocked_matmul(a, b, tiles=size)
        if not np.allclose(run.result, a @ b, rtol=1e-12, atol=1e-12):
            raise ValueError(f"the blocked product with b={size} differs from A·B")
        moves = run.levels[0].moves
        blocks = n // size
        rows.append((size, blocks, moves, slides_moves(n, blocks), run.levels[0].footprint, intensity(2 * n**3, moves)))
    return rows


def level_comparison(
    m: int, n: int, k: int, tiles: Sequence[int | Tile], seed: int = 1
) -> list[tuple[LevelTraffic, LevelTraffic]]:
    """Each level of a nested tiling as ``(counted, formula)``: :func:`blocked_matmul` run on random matrices next
    to :func:`reuse_analysis`."""
    for name, value in (("m", m), ("n", n), ("k", k)):
        positive_int(name, value)
    _within(
        "the largest matrix", max(m * k, k * n, m * n), MAX_MATRIX_ELEMENTS, "the product is run on random matrices"
    )
    rng = np.random.default_rng(integer("seed", seed, minimum=0))
    run = blocked_matmul(rng.standard_normal((m, k)), rng.standard_normal((k, n)), tiles=tiles)
    return list(zip(run.levels, reuse_analysis(m, n, k, tiles), strict=True))


def capacity_rows(block_sizes: Sequence[int]) -> list[tuple[int, int, int]]:
    """What fast memory each block size needs: ``(b, three tiles 3b², what an LRU cache replaying the
    outer-product order needs)`` (:func:`lru_capacity_needed`)."""
    return [(b, 3 * b * b, lru_capacity_needed(b)) for b in _sizes(block_sizes)]


def _sizes(block_sizes: Sequence[int]) -> list[int]:
    """Block sizes as a list of ints ≥ 1 (a lone int or a string is refused, not iterated)."""
    if isinstance(block_sizes, str | bytes) or not isinstance(block_sizes, Sequence):
        raise TypeError(f"block_sizes must be a list of block sizes (ints ≥ 1); got {given(block_sizes)}")
    return [positive_int(f"block_sizes[{i}]", b) for i, b in enumerate(block_sizes)]
