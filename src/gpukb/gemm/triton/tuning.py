"""Which configuration the Triton GEMM uses for a product: a tuning table keyed by shape class, measured on the H100
by ``bench/triton_gemm_sweep.py`` and committed as a results record (:data:`TABLE_RECORD`) with the run that
produced it.

A *shape class* is the input type, the layout (``"NN"``: A and B row-major; ``"NT"``: B column-major, the
transpose of a row-major N×K matrix; ``"TN"``, ``"TT"``: A column-major), a bucket for each of M, N and K
(:data:`M_EDGES`, :data:`N_EDGES`, :data:`K_EDGES`) and whether the rows the kernel reads start on 128-byte lines
(``aligned``: 3000 bf16 columns are 6000 bytes, a legal tensor-descriptor stride whose rows start off those
lines). The table holds, for each class the tuning run measured, the configuration that was fastest on that
class's representative shape, with every candidate's time. A class the
table lacks gets :func:`heuristic`, a rule stated in code. Within a class, the candidate chosen for a shape is the
one whose measured time, carried over to that shape by counting the rounds of tiles it takes
(:func:`predicted_ms`), is shortest: the best tiling of 3000³ is not the best of 2048³ when 132 multiprocessors
share the tiles. Nothing is timed at call time.

Torch-free and triton-free, so that pages and tests can use it anywhere.
"""

from __future__ import annotations

import bisect
import functools
import math
import statistics
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import Field

from gpukb.arguments import choice, flag, integer, positive_int, text
from gpukb.cuda import limits
from gpukb.gemm.triton.configs import (
    DEFAULT_CONFIGS,
    MAX_DIMENSION,
    MAX_SPLIT_K,
    SMALL_CONFIGS,
    SMALL_RATE,
    Config,
    _config,
    block_parts,
    pick_by_waves,
    shared_memory_model,
    split_for,
    tail_rounds,
)
from gpukb.records import Record, load, record_ids
from gpukb.schema import StrictModel

#: Upper edges of the buckets of M, N and K: a size goes in the first bucket whose edge it does not exceed, or in
#: the last one (above every edge). M ≤ 64 is the small-M (decode) class.
M_EDGES = (16, 64, 256, 512, 1024, 4096)
N_EDGES = (1024, 4096, 16384)
K_EDGES = (1024, 4096, 16384)

#: Products with at most this many rows take the small-M path (64-row tiles: one warpgroup's MMA).
SMALL_M = 64

#: Products with fewer multiply-adds than this, and a K of at most :data:`TINY_K`, are *tiny*: a class of their own
#: per type and layout, whatever their sizes, since their time is the launch and one short tile loop, not throughput
#: (3×5×7, 64³).
TINY_MNK = 2**20
#: The longest K a tiny product may have: eight K steps of the tiny class's 32-deep tiles. A product with few
#: multiply-adds but a long K is not latency-bound but a chain of K steps: 1×896×896 (802,816 multiply-adds) took
#: the tiny class's 32×32 tiles, 28 programs each walking 28 K steps, and ran at a third of cuBLAS's speed on the
#: second held-out sweep, with the same host path as 3×5×7 (its record). It takes the small-M path instead.
TINY_K = 256


def is_tiny(m: int, n: int, k: int) -> bool:
    """Whether an m×n×k product is *tiny* (:data:`TINY_MNK`, :data:`TINY_K`).

    Raises:
        TypeError, ValueError: For a size that is not an int ≥ 0.
    """
    m, n, k = _sizes(m=m, n=n, k=k)
    return m * n * k < TINY_MNK and k <= TINY_K


def _sizes(**sizes: int) -> tuple[int, ...]:
    """The sizes as ints ≥ 0 (a torch size is an int64); a ``TypeError`` or ``ValueError`` names one that is not."""
    return tuple(integer(name, value, minimum=0, maximum=MAX_DIMENSION) for name, value in sizes.items())


#: The committed tables, results records (ids for :func:`gpukb.records.load`), first the one that wins where two
#: tuned the same class: the fifth run tuned shapes designed for the decode classes and three classes of
#: under-filled waves, with 16-row tiles and the one-launch split-K (``sweep.FILL_TUNING``); the fourth run tuned
#: shapes designed for the classes the others left empty (``sweep.GAP_TUNING``); the third run tuned the classes of
#: the random sweep's products and of the first sweep's slowest (``sweep.LOSER_TUNING``); the second (issue 29) the
#: classes the first sweep left out (tiny products, under-filled waves, rows off 128-byte lines, transposed
#: operands); the first, the first sweep's classes.
TABLE_RECORDS = (
    "gemm/triton-gemm-tuning-h100-fill",
    "gemm/triton-gemm-tuning-h100-gaps",
    "gemm/triton-gemm-tuning-h100-losers",
    "gemm/triton-gemm-tuning-h100-issue29",
    "gemm/triton-gemm-tuning-h100",
)
#: The first run's table (what the page's tuning table showed before issue 29).
TABLE_RECORD = TABLE_RECORDS[-1]

Layout = Literal["NN", "NT", "TN", "TT"]

#: Types that share another type's tuned entries where they have none of their own (same element size, same MMA
#: rate on sm_90).
SHARES = {"float16": "bfloat16", "bfloat16": "float16"}

#: The candidates the tuning run tries, by input type: the persistent TMA kernel with large and small tiles, and
#: the split-K kernel with 64-row tiles (the small-M path: one warpgroup's MMA is 64 rows) and 128-row tiles.
CANDIDATES_16: tuple[Config, ...] = (
    Config("tma", 128, 256, 64, num_stages=4, num_warps=8, epilogue_subtile=True),
    Config("tma", 128, 256, 64, num_stages=3, num_warps=8),
    Config("tma", 128, 128, 64, num_stages=4, num_warps=8),
    Config("tma", 64, 128, 64, num_stages=4, num_warps=4),
    Config("splitk", 128, 128, 64, num_stages=4, num_warps=8),
    Config("splitk", 128, 256, 64, num_stages=3, num_warps=8),
    Config("splitk", 64, 128, 128, num_stages=4, num_warps=4),
    Config("splitk", 64, 64, 128, num_stages=5, num_warps=4),
    Config("splitk", 64, 256, 64, num_stages=4, num_warps=4),
)
#: Added for issue 29's classes: tilings between 128×256 and 64×128 for products that fill less than one wave of
#: 128×256 tiles, and a split-K tiling of 128×256 with its split chosen by the rule.
CANDIDATES_16_WAVES: tuple[Config, ...] = (
    Config("tma", 128, 128, 64, num_stages=5, num_warps=8),
    Config("tma", 64, 256, 64, num_stages=4, num_warps=4),
    Config("tma", 128, 64, 64, num_stages=5, num_warps=4),
    Config("tma", 256, 128, 64, num_stages=3, num_warps=8),
    Config("splitk", 128, 128, 64, num_stages=4, num_warps=8, split_k=2),
)
#: For rows that do not start on 128-byte lines: the TMA kernels on padded copies (``pad_rows``), and the blocked
#: kernel, whose masked pointer loads read any rows where they are.
CANDIDATES_16_UNALIGNED: tuple[Config, ...] = (
    Config("tma", 128, 256, 64, num_stages=4, num_warps=8, epilogue_subtile=True, pad_rows=True),
    Config("tma", 128, 128, 64, num_stages=4, num_warps=8, pad_rows=True),
    Config("splitk", 128, 256, 64, num_stages=3, num_warps=8, pad_rows=True),
    Config("blocked", 128, 256, 64, num_stages=3, num_warps=8),
    Config("blocked", 128, 128, 64, num_stages=4, num_warps=8),
)
#: For tiny products: the blocked kernel with small tiles (one launch, no descriptors, no copies) and the smallest
#: TMA tilings.
CANDIDATES_16_TINY: tuple[Config, ...] = (
    Config("blocked", 32, 32, 32, num_stages=2, num_warps=4),
    Config("blocked", 64, 64, 32, num_stages=2, num_warps=4),
    Config("blocked", 64, 64, 64, num_stages=2, num_warps=4),
    Config("tma", 64, 128, 64, num_stages=4, num_warps=4),
    Config("splitk", 64, 64, 128, num_stages=5, num_warps=4),
)
#: Added for the third run's classes (the random sweep's losers): the large tilings with a split tail
#: (``split_tail``: whole rounds of tiles on the persistent kernel, the rows left over split along K) ...
CANDIDATES_16_TAIL: tuple[Config, ...] = (
    Config("tma", 128, 256, 64, num_stages=4, num_warps=8, epilogue_subtile=True, split_tail=True),
    Config("tma", 128, 256, 64, num_stages=3, num_warps=8, split_tail=True),
    Config("tma", 128, 128, 64, num_stages=5, num_warps=8, split_tail=True),
    Config("tma", 256, 128, 64, num_stages=3, num_warps=8, split_tail=True),
)
#: ... and, for decode (M ≤ 64, where B's bytes are the time), narrow tiles along N, so that more programs stream
#: B at once without cutting K as finely (no partial sums to add where one slice suffices).
CANDIDATES_16_DECODE: tuple[Config, ...] = (
    Config("splitk", 64, 32, 128, num_stages=4, num_warps=4),
    Config("splitk", 64, 32, 256, num_stages=3, num_warps=4),
    Config("splitk", 64, 16, 256, num_stages=4, num_warps=4),
    Config("splitk", 64, 64, 64, num_stages=6, num_warps=4),
    Config("splitk", 64, 64, 128, num_stages=4, num_warps=4, split_k=1),
    Config("splitk", 64, 32, 128, num_stages=4, num_warps=4, split_k=1),
    Config("tma", 64, 64, 64, num_stages=5, num_warps=4),
    Config("tma", 64, 32, 128, num_stages=4, num_warps=4),
)
#: Added for the fourth run's classes (``sweep.GAP_TUNING``): deeper pipelines of the middle tilings, 256×64 tiles
#: for small N, and split-K at fixed splits of two and three for products with fewer tiles than multiprocessors.
CANDIDATES_16_GAPS: tuple[Config, ...] = (
    Config("tma", 128, 64, 64, num_stages=6, num_warps=4),
    Config("tma", 64, 128, 64, num_stages=6, num_warps=4),
    Config("tma", 256, 64, 64, num_stages=4, num_warps=8),
    Config("tma", 128, 128, 64, num_stages=5, num_warps=8, group_m=1),
    Config("splitk", 128, 128, 64, num_stages=5, num_warps=8, split_k=2),
    Config("splitk", 128, 128, 64, num_stages=5, num_warps=8, split_k=3),
    Config("splitk", 128, 64, 64, num_stages=5, num_warps=4),
    Config("splitk", 64, 128, 64, num_stages=5, num_warps=4),
    Config("splitk", 64, 64, 64, num_stages=6, num_warps=4, split_k=2),
)
#: Added for the fifth run's classes (``sweep.FILL_TUNING``), for decode steps (M ≤ 64), whose time is the weight's
#: bytes over the bandwidth of the programs that stream it: 16- and 32-row tiles (``tl.dot``'s smallest is 16, so a
#: decode step multiplies fewer rows of zeros), the K slices added by the last slice of each tile instead of a second
#: kernel (``fused_reduce``: one launch), and the transposed product (``swap_ab``: the weight's rows in the MMA's
#: 64-row dimension, the tokens in its narrow one). One tiling without ``fused_reduce``, to show what the second
#: kernel costs.
CANDIDATES_16_FILL_DECODE: tuple[Config, ...] = (
    Config("splitk", 16, 64, 128, num_stages=4, num_warps=4, fused_reduce=True),
    Config("splitk", 16, 64, 128, num_stages=4, num_warps=4),
    Config("splitk", 16, 64, 128, num_stages=6, num_warps=4, fused_reduce=True),
    Config("splitk", 16, 64, 256, num_stages=3, num_warps=4, fused_reduce=True),
    Config("splitk", 16, 32, 256, num_stages=4, num_warps=4, fused_reduce=True),
    Config("splitk", 16, 128, 128, num_stages=4, num_warps=4, fused_reduce=True),
    Config("splitk", 32, 64, 128, num_stages=4, num_warps=4, fused_reduce=True),
    Config("splitk", 64, 64, 128, num_stages=5, num_warps=4, fused_reduce=True),
    Config("splitk", 16, 64, 128, num_stages=4, num_warps=4, fused_reduce=True, swap_ab=True),
    Config("splitk", 16, 128, 128, num_stages=4, num_warps=4, fused_reduce=True, swap_ab=True),
    Config("splitk", 64, 128, 128, num_stages=4, num_warps=4, fused_reduce=True, swap_ab=True),
)
#: ... and for products above 64 rows whose tiles fill less than one wave: split-K with the one-launch reduction.
CANDIDATES_16_FILL_MID: tuple[Config, ...] = (
    Config("splitk", 128, 128, 64, num_stages=5, num_warps=8, split_k=2, fused_reduce=True),
    Config("splitk", 128, 128, 64, num_stages=5, num_warps=8, split_k=3, fused_reduce=True),
    Config("splitk", 128, 256, 64, num_stages=3, num_warps=8, fused_reduce=True),
    Config("splitk", 64, 128, 64, num_stages=5, num_warps=4, fused_reduce=True),
)
#: Step 12's candidates (``bench/triton_gemm_sweep.py --tune streamk``): the persistent tilings with one stream-K
#: round (``stream_k``: the tiles of the last, part-full round share their K steps among all the programs), each next
#: to the same tiling without it.
CANDIDATES_16_STREAMK: tuple[Config, ...] = tuple(
    config
    for plain in (
        Config("tma", 128, 256, 64, num_stages=4, num_warps=8, epilogue_subtile=True),
        Config("tma", 128, 256, 64, num_stages=3, num_warps=8),
        Config("tma", 128, 128, 64, num_stages=5, num_warps=8),
        Config("tma", 256, 128, 64, num_stages=3, num_warps=8),
        Config("tma", 64, 128, 64, num_stages=4, num_warps=4),
    )
    for config in (plain, replace(plain, stream_k=True))
)


def streamk_trials(chosen: Config) -> tuple[Config, ...]:
    """What step 12 times on a product: the configuration the look-up gives it (``chosen``), the same with one
    stream-K round where it is a persistent tiling that can take one (with its ``pad_rows``), and
    :data:`CANDIDATES_16_STREAMK` (with ``chosen``'s ``pad_rows``, so that every candidate reads the operands as
    ``chosen`` does).

    Raises:
        TypeError: For a ``chosen`` that is not a :class:`Config`.
    """
    own = ()
    if isinstance(chosen, Config) and chosen.kernel == "tma" and not (
        chosen.warp_specialize or chosen.split_tail or chosen.stream_k
    ):  # fmt: skip
        own = (replace(chosen, stream_k=True),)
    return _chosen_first(chosen, own, CANDIDATES_16_STREAMK)


def _chosen_first(chosen: Config, own: tuple[Config, ...], candidates: tuple[Config, ...]) -> tuple[Config, ...]:
    """The trials of a product-by-product run: ``chosen`` (the look-up's choice), ``own`` (variants of it), then
    ``candidates`` with ``chosen``'s ``pad_rows`` (so that every candidate reads the operands as ``chosen`` does; Config
    refuses ``pad_rows`` on the blocked kernel), each once."""
    _config(chosen, "chosen")
    return tuple(dict.fromkeys((chosen, *own, *(replace(c, pad_rows=chosen.pad_rows) for c in candidates))))


#: Step 14's candidates (``bench/triton_gemm_sweep.py --tune twoblock``): three tilings of one block each way, the
#: tile loop and the K loop flattened into one for the pipeliner (``flatten``, as in every persistent tiling the
#: tables chose) and not; tiles of two blocks on a side (:func:`~gpukb.gemm.triton.configs.block_parts`), not flattened,
#: and one flattened, so that the two ways are compared on a tile of two blocks too.
CANDIDATES_16_TWO_BLOCK: tuple[Config, ...] = (
    *(
        replace(plain, flatten=flatten)
        for flatten in (True, False)
        for plain in (
            Config("tma", 128, 256, 64, num_stages=4, num_warps=8, epilogue_subtile=True),
            Config("tma", 128, 128, 64, num_stages=4, num_warps=8),
            Config("tma", 64, 256, 64, num_stages=4, num_warps=4),
        )
    ),
    Config("tma", 192, 128, 64, num_stages=4, num_warps=8),
    Config("tma", 192, 128, 64, num_stages=4, num_warps=8, flatten=False),
    Config("tma", 128, 192, 64, num_stages=4, num_warps=8, flatten=False),
    Config("tma", 192, 192, 64, num_stages=3, num_warps=8, flatten=False),
    Config("tma", 64, 192, 64, num_stages=4, num_warps=4, flatten=False),
    Config("tma", 192, 64, 64, num_stages=4, num_warps=4, flatten=False),
    Config("tma", 128, 160, 64, num_stages=4, num_warps=8, flatten=False),
)


def two_block_trials(chosen: Config) -> tuple[Config, ...]:
    """What step 14 times on a product: the configuration the look-up gives it (``chosen``), then
    :data:`CANDIDATES_16_TWO_BLOCK` (with ``chosen``'s ``pad_rows``, so that every candidate reads the operands as
    ``chosen`` does).

    Raises:
        TypeError: For a ``chosen`` that is not a :class:`Config`.
    """
    return _chosen_first(chosen, (), CANDIDATES_16_TWO_BLOCK)


# --8<-- [start:token_tiles]
#: Step 16's products: more than :data:`SMALL_M` rows and at most this many (a prefill or a batch of a few hundred
#: tokens), where a tile can be as tall as all the rows, so that each tile of the weight is read by one program.
TOKEN_MAX_M = 320
#: Sides of a tall tile whose blocks are all at least 64 rows (:func:`~gpukb.gemm.triton.configs.block_parts`):
#: each block one warpgroup MMA (``wgmma``). A block of 16 or 32 rows compiles to the older ``mma.sync``
#: instruction instead (the PTX of a 160×128 tile, 128 + 32 rows, holds both).
WGMMA_SIDES = (64, 128, 192, 256, 320)
#: Every side of at most :data:`TOKEN_MAX_M` rows the two-block kernel takes, on 16-row steps (80 = 64 + 16, ...).
FINE_SIDES = tuple(
    side for side in range(80, TOKEN_MAX_M + 1, 16) if not (rest := block_parts(side)[1]) or rest & (rest - 1) == 0
)
#: The most accumulator elements a tall tile may hold: 160 float32 registers a thread at 8 warps (320×128 compiled
#: for sm_90 with 190 to 193 registers as B's layout goes, none spilled; 160×256 with 232 to 238: a CPU test checks).
TALL_MAX_AREA = 40960
#: The one-block tilings step 16 times beside the tall tiles: the look-up's usual choices for these products.
CANDIDATES_16_TOKENS: tuple[Config, ...] = (
    Config("tma", 128, 256, 64, num_stages=3, num_warps=8),
    Config("tma", 128, 128, 64, num_stages=4, num_warps=8),
    Config("tma", 64, 256, 64, num_stages=4, num_warps=4),
    Config("splitk", 64, 128, 64, num_stages=5, num_warps=4, fused_reduce=True),
    Config("splitk", 128, 128, 64, num_stages=5, num_warps=8, split_k=2, fused_reduce=True),
)


def _cover(m: int, sides: tuple[int, ...]) -> int:
    # the shortest side of `sides` that holds m rows
    return min(side for side in sides if side >= m)


def token_tiles(m: int) -> tuple[Config, ...]:
    """Step 16's tall tiles for a product of ``m`` rows (more than :data:`SMALL_M`, at most :data:`TOKEN_MAX_M`):
    tiles whose height holds all ``m`` rows in one row of tiles (the shortest side of :data:`WGMMA_SIDES`, and of
    :data:`FINE_SIDES` where it is shorter) or in two (the shortest side of :data:`WGMMA_SIDES` holding half), each 64,
    128 and 256 columns wide where it holds at most :data:`TALL_MAX_AREA` accumulator elements; 8 warps above 16384
    of them and at 128×128 (a 96×256 tile spilled at 4; a 64-row tile is one warpgroup's MMA, and the tables' 64×256
    ran at 4), and the deepest pipeline of 4, 3 or 2 stages whose buffers fit in the shared memory one block may use
    on sm_90 (:func:`~gpukb.gemm.triton.configs.shared_memory_model` against ``shared_per_block_optin`` of
    :mod:`gpukb.cuda.limits`; the model counts a whole tile of C, more than the compiler takes for a tile of two
    blocks, which stores one block at a time). Their loops are not flattened (step 14: a tile of two blocks ran slower
    flattened).

    Raises:
        TypeError, ValueError: For an ``m`` that is not an int from ``SMALL_M + 1`` to ``TOKEN_MAX_M``.
    """
    m = integer("m", m, minimum=SMALL_M + 1, maximum=TOKEN_MAX_M)
    sides = dict.fromkeys((_cover(m, WGMMA_SIDES), _cover(m, FINE_SIDES), _cover(-(-m // 2), WGMMA_SIDES)))
    limit = limits.capability("9.0").shared_per_block_optin
    tiles = []
    for side in sides:
        for width in (64, 128, 256):
            area = side * width
            if area > TALL_MAX_AREA:
                continue
            warps = 8 if area > 16384 or (area == 16384 and side > 64) else 4
            tile = Config("tma", side, width, 64, num_stages=4, num_warps=warps, flatten=False)
            fitting = [s for s in (4, 3, 2) if shared_memory_model(replace(tile, num_stages=s)) <= limit]
            if fitting:
                tiles.append(replace(tile, num_stages=fitting[0]))
    return tuple(tiles)


def token_trials(chosen: Config, m: int) -> tuple[Config, ...]:
    """What step 16 times on a product of ``m`` rows: the configuration the look-up gives it (``chosen``), then
    :data:`CANDIDATES_16_TOKENS` and :func:`token_tiles` (with ``chosen``'s ``pad_rows``).

    Raises:
        TypeError, ValueError: For a ``chosen`` that is not a :class:`Config`, or an ``m`` :func:`token_tiles`
            refuses.
    """
    return _chosen_first(chosen, (), CANDIDATES_16_TOKENS + token_tiles(m))
    # --8<-- [end:token_tiles]


# --8<-- [start:swap_tiles]
#: Sides of a tile along the tokens (C's rows) where each block is computed as its transpose (``swap_ab``): the
#: tokens are then the MMA's N, which ``wgmma`` takes 16 or 32 wide too, so each block may be any power of two from
#: 16 (48 = 32 + 16, 80 = 64 + 16, 160 = 128 + 32, ...). At most 192: a 192×256 tile compiled for sm_90 with 218
#: registers a thread (a CPU test checks it), and a taller one would hold more accumulators than 160×256.
SWAP_SIDES = tuple(side for side in range(16, 193, 16) if not (rest := block_parts(side)[1]) or rest & (rest - 1) == 0)
#: The widths of a swapped tile (B's columns: the MMA's M, 64 rows a warpgroup) and the warps each is run with.
SWAP_WIDTHS = {64: 4, 128: 4, 256: 8}
#: The most rows of tiles along the tokens a swapped tiling is timed with.
SWAP_MAX_ROWS = 4


def swap_tiles(m: int) -> tuple[Config, ...]:
    """Step 19's swapped tiles for a product of ``m`` rows (more than :data:`SMALL_M`, at most :data:`TOKEN_MAX_M`):
    for one to :data:`SWAP_MAX_ROWS` rows of tiles, the shortest side of :data:`SWAP_SIDES` that holds that share of
    the rows, each :data:`SWAP_WIDTHS` wide. A side of one block runs on the persistent kernel as the tables' tilings
    do (flattened, up to 6 stages, as the tables' 64×128); one of two blocks on the two-block kernel (not flattened,
    step 14; up to 4 stages); each at the deepest pipeline whose buffers fit in the shared memory one block may use on
    sm_90 (as :func:`token_tiles`).

    Raises:
        TypeError, ValueError: For an ``m`` that is not an int from ``SMALL_M + 1`` to ``TOKEN_MAX_M``.
    """
    return _swap_tiles(integer("m", m, minimum=SMALL_M + 1, maximum=TOKEN_MAX_M))


@functools.cache
def _swap_tiles(m: int) -> tuple[Config, ...]:
    # swap_tiles for a checked m, kept: step 19's rule asks for every product of a few hundred rows it sees
    shares = (-(-m // rows) for rows in range(1, SWAP_MAX_ROWS + 1))
    sides = dict.fromkeys(_cover(share, SWAP_SIDES) for share in shares if share <= SWAP_SIDES[-1])
    limit = limits.capability("9.0").shared_per_block_optin
    tiles = []
    for side in sides:
        one_block = not block_parts(side)[1]
        for width, warps in SWAP_WIDTHS.items():
            tile = Config("tma", side, width, 64, num_warps=warps, flatten=one_block, swap_ab=True)
            depths = (6, 5, 4, 3, 2) if one_block else (4, 3, 2)
            fitting = [s for s in depths if shared_memory_model(replace(tile, num_stages=s)) <= limit]
            if fitting:
                tiles.append(replace(tile, num_stages=fitting[0]))
    return tuple(tiles)


def swap_trials(chosen: Config, m: int) -> tuple[Config, ...]:
    """What step 19 times on a product of ``m`` rows: the configuration the look-up gives it (``chosen``), then
    :func:`swap_tiles` (with ``chosen``'s ``pad_rows``).

    Raises:
        TypeError, ValueError: For a ``chosen`` that is not a :class:`Config`, or an ``m`` :func:`swap_tiles` refuses.
    """
    return _chosen_first(chosen, (), swap_tiles(m))
    # --8<-- [end:swap_tiles]


# --8<-- [start:depth_trials]
#: The deepest pipeline step 21 times: cuBLAS's kernels kept 4 to 16 K steps in flight on the products of 65 to 320
#: rows of step 19's run, 16 most often (``nvjet_sm90_tst_64x48_64x15_…``: 15), where step 19's swapped tiles ran at
#: most 6.
DEEPEST_STAGES = 16


def deepest(config: Config) -> Config:
    """``config`` (a ``tma`` tiling) at the deepest pipeline, up to :data:`DEEPEST_STAGES` stages, whose buffers fit
    in the shared memory one block may use on sm_90 (:func:`~gpukb.gemm.triton.configs.shared_memory_model`, 16-bit
    inputs and output); ``config`` itself where it is already as deep or is not a ``tma`` tiling.

    Raises:
        TypeError: For a ``config`` that is not a :class:`Config`.
    """
    _config(config)
    if config.kernel != "tma":
        return config
    limit = limits.capability("9.0").shared_per_block_optin
    fitting = [s for s in range(DEEPEST_STAGES, config.num_stages, -1)
               if shared_memory_model(replace(config, num_stages=s)) <= limit]  # fmt: skip
    return replace(config, num_stages=fitting[0]) if fitting else config


def depth_trials(chosen: Config, m: int) -> tuple[Config, ...]:
    """What step 21 times on a product of ``m`` rows: the configuration the look-up gives it (``chosen``), the same at
    its :func:`deepest` pipeline, then each swapped tile of :func:`swap_tiles` 64 wide (cuBLAS's width on these
    products) at step 19's depth and at its deepest, and each 128 wide at its deepest (with ``chosen``'s
    ``pad_rows``), each once.

    Raises:
        TypeError, ValueError: For a ``chosen`` that is not a :class:`Config`, or an ``m`` :func:`swap_tiles` refuses.
    """
    _config(chosen, "chosen")
    tiles = swap_tiles(m)
    narrow = [c for t in tiles if t.block_n == 64 for c in (t, deepest(t))]
    wide = [deepest(t) for t in tiles if t.block_n == 128]
    return _chosen_first(chosen, (deepest(chosen),), (*narrow, *wide))
    # --8<-- [end:depth_trials]


#: Step 17's candidates (``bench/triton_gemm_sweep.py --tune default``): the default tiling, the same without the
#: subtiled epilogue at 3 stages (a choice of several tables), and its transpose, 256×128.
CANDIDATES_16_DEFAULT: tuple[Config, ...] = (
    DEFAULT_CONFIGS["bfloat16"],
    Config("tma", 128, 256, 64, num_stages=3, num_warps=8),
    Config("tma", 256, 128, 64, num_stages=3, num_warps=8),
)


def default_trials(chosen: Config) -> tuple[Config, ...]:
    """What step 17 times on a product: the configuration the look-up gives it (``chosen``), then
    :data:`CANDIDATES_16_DEFAULT` (with ``chosen``'s ``pad_rows``).

    Raises:
        TypeError: For a ``chosen`` that is not a :class:`Config`.
    """
    return _chosen_first(chosen, (), CANDIDATES_16_DEFAULT)


#: Step 18's split-K tilings of 64 rows and 128 (``bench/triton_gemm_sweep.py --tune tokensplit``), each with its
#: slices added by the last slice (``fused_reduce``), timed at the automatic split and twice it, beside the look-up's
#: two persistent tilings for these products.
CANDIDATES_16_TOKEN_SPLIT: tuple[Config, ...] = (
    Config("splitk", 64, 128, 64, num_stages=5, num_warps=4, fused_reduce=True),
    Config("splitk", 64, 256, 64, num_stages=4, num_warps=4, fused_reduce=True),
    Config("splitk", 64, 64, 128, num_stages=5, num_warps=4, fused_reduce=True),
    Config("splitk", 128, 128, 64, num_stages=5, num_warps=8, fused_reduce=True),
    Config("tma", 64, 256, 64, num_stages=4, num_warps=4),
    Config("tma", 64, 128, 64, num_stages=6, num_warps=4),
)


def token_split_trials(chosen: Config, m: int, n: int, k: int, sms: int) -> tuple[Config, ...]:
    """What step 18 times on an m×n×k product: the configuration the look-up gives it (``chosen``), then
    :data:`CANDIDATES_16_TOKEN_SPLIT`, each split-K tiling at its automatic split
    (:func:`~gpukb.gemm.triton.configs.split_for`) and at twice it where K has the steps (with ``chosen``'s
    ``pad_rows``).

    Raises:
        TypeError, ValueError: For a ``chosen`` that is not a :class:`Config`, a size that is not an int ≥ 1, or an
            ``sms`` below 1.
    """
    m = integer("m", m, minimum=1, maximum=MAX_DIMENSION)
    n = integer("n", n, minimum=1, maximum=MAX_DIMENSION)
    k = integer("k", k, minimum=1, maximum=MAX_DIMENSION)
    sms = positive_int("sms", sms)
    pool: list[Config] = []
    for config in CANDIDATES_16_TOKEN_SPLIT:
        if config.kernel != "splitk":
            pool.append(config)
            continue
        auto = split_for(m, n, k, config, sms)
        pool += [
            replace(config, split_k=split)
            for split in (auto, 2 * auto)
            if split <= min(MAX_SPLIT_K, -(-k // config.block_k))
        ]
    return _chosen_first(chosen, (), tuple(pool))


CANDIDATES_FP8: tuple[Config, ...] = (
    Config("tma", 128, 256, 128, num_stages=4, num_warps=8, epilogue_subtile=True),
    Config("tma", 128, 256, 128, num_stages=3, num_warps=8),
    Config("tma", 128, 128, 128, num_stages=4, num_warps=8),
    Config("splitk", 128, 128, 128, num_stages=4, num_warps=8),
    Config("splitk", 128, 256, 128, num_stages=3, num_warps=8),
    Config("splitk", 64, 128, 256, num_stages=4, num_warps=4),
    Config("splitk", 64, 64, 256, num_stages=5, num_warps=4),
)


#: FP8 products whose K is longer than this many products have their partial sums promoted to float32 every this
#: many products (``Config.fp8_imprecise_acc``): the tensor cores' fast accumulation otherwise loses accuracy as
#: K grows (the sweep's FP8 rows show the error against cuBLAS's rising with K), and with chunks of this length
#: the error stays that of a K = 4096 product.
FP8_PROMOTE = 4096


def candidates(
    dtype: str,
    m: int,
    k: int = 0,
    *,
    tiny: bool = False,
    aligned: bool = True,
    extended: bool = False,
    losers: bool = False,
    gaps: bool = False,
    fill: bool = False,
) -> tuple[Config, ...]:
    """The candidates the tuning run tries for an input type, M and K: for M ≤ 64, only those with 64-row tiles;
    for fp8 with K > :data:`FP8_PROMOTE`, each with its partial sums promoted every :data:`FP8_PROMOTE` products.
    ``extended`` (the issue-29 run): 16-bit classes also try :data:`CANDIDATES_16_WAVES`, and, for rows that are
    not 128-byte aligned, :data:`CANDIDATES_16_UNALIGNED`; a tiny 16-bit class tries :data:`CANDIDATES_16_TINY`.
    ``losers`` (the third run): as ``extended``, and :data:`CANDIDATES_16_TAIL` and :data:`CANDIDATES_16_DECODE`.
    ``gaps`` (the fourth run): as ``losers``, and :data:`CANDIDATES_16_GAPS`. ``fill`` (the fifth run): for M ≤ 64,
    the 64-row tilings of :data:`CANDIDATES_16`, :data:`CANDIDATES_16_WAVES` and :data:`CANDIDATES_16_DECODE`, and
    :data:`CANDIDATES_16_FILL_DECODE` (the only pool with tiles under 64 rows); above, as ``gaps``, and
    :data:`CANDIDATES_16_FILL_MID`."""
    fp8 = dtype == "float8_e4m3fn"
    pool = CANDIDATES_FP8 if fp8 else CANDIDATES_16
    gaps = gaps or fill
    losers = losers or gaps
    if tiny and not fp8:
        return CANDIDATES_16_TINY
    if fill and not fp8 and m <= SMALL_M:  # the 64-row tilings the decode classes chose before, and the new ones
        earlier = CANDIDATES_16 + CANDIDATES_16_WAVES + CANDIDATES_16_DECODE
        return tuple(c for c in earlier if c.block_m == 64) + CANDIDATES_16_FILL_DECODE
    if (extended or losers) and not fp8:
        pool = pool + CANDIDATES_16_WAVES + (() if aligned else CANDIDATES_16_UNALIGNED)
    if losers and not fp8:
        pool = pool + CANDIDATES_16_TAIL + (CANDIDATES_16_DECODE if m <= SMALL_M else ())
    if gaps and not fp8:
        pool = pool + CANDIDATES_16_GAPS
    if m <= SMALL_M:
        pool = tuple(c for c in pool if c.block_m == 64)
    if fill and not fp8:
        pool = pool + (CANDIDATES_16_FILL_DECODE if m <= SMALL_M else CANDIDATES_16_FILL_MID)
    if fp8 and k > FP8_PROMOTE:
        pool = tuple(replace(c, fp8_imprecise_acc=FP8_PROMOTE) for c in pool)
    return pool


def trials(
    dtype: str,
    m: int,
    n: int,
    k: int,
    sms: int,
    *,
    aligned: bool = True,
    extended: bool = False,
    losers: bool = False,
    gaps: bool = False,
    fill: bool = False,
) -> tuple[Config, ...]:
    """What the tuning run times on a class's representative m×n×k product: the :func:`candidates`, and for each
    split-K one whose automatic split (:func:`~gpukb.gemm.triton.configs.split_for`) is above 1, the same tiling at
    half and at twice that split, so that the record shows what the rule's choice is worth. ``fill``: for each
    split-K tiling of :data:`CANDIDATES_16_FILL_DECODE` and :data:`CANDIDATES_16_FILL_MID` without a fixed split,
    also two and four times the automatic split, where it is 1 too (programs filling two and four rounds: a
    stream of bytes needs more in flight than one round of programs keeps)."""
    pool = candidates(
        dtype, m, k, tiny=is_tiny(m, n, k), aligned=aligned, extended=extended, losers=losers, gaps=gaps, fill=fill
    )
    new = set(CANDIDATES_16_FILL_DECODE + CANDIDATES_16_FILL_MID) if fill else set()
    extra = []
    for config in pool:
        if config.kernel != "splitk" or config.split_k is not None:
            continue
        auto = split_for(m, n, k, config, sms)
        splits = (auto // 2, 2 * auto, 4 * auto) if config in new else (auto // 2, 2 * auto)
        for split in splits:
            if (auto > 1 or config in new) and 1 <= split <= min(max(1, k // config.block_k), MAX_SPLIT_K):
                extra.append(replace(config, split_k=split))
    return tuple(dict.fromkeys((*pool, *extra)))


def bucket(size: int, edges: tuple[int, ...]) -> int:
    """The index of the bucket ``size`` falls in: the first edge it does not exceed, or ``len(edges)``."""
    return bisect.bisect_left(edges, size)


def bucket_label(index: int, edges: tuple[int, ...]) -> str:
    """``"≤ 64"``, ``"65–256"``, ..., ``"> 4096"``."""
    if index == 0:
        return f"≤ {edges[0]}"
    if index == len(edges):
        return f"> {edges[-1]}"
    return f"{edges[index - 1] + 1}–{edges[index]}"


#: Bytes of a sector, the unit a row start is next checked against when it is off 128-byte lines: rows of 4000
#: bytes (2000 bf16 columns) start on 32-byte sectors, rows of 6000 bytes (3000 columns) only on 16-byte ones, and
#: the two ran best with different kernels (the issue-29 and the third tuning records).
SECTOR_BYTES = 32


@dataclass(frozen=True)
class ShapeClass:
    """Input type, layout, the buckets of M, N and K, and whether the rows start on 128-byte lines (``aligned``) and,
    if not, on 32-byte sectors (``sectors``); or, for a tiny product (fewer than :data:`TINY_MNK` multiply-adds), the
    type, the layout and ``tiny`` (buckets 0, aligned)."""

    dtype: str
    layout: str
    m: int
    n: int
    k: int
    aligned: bool = True
    tiny: bool = False
    sectors: bool = True

    @classmethod
    def of(
        cls, dtype: str, layout: str, m: int, n: int, k: int, aligned: bool = True, sectors: bool = True
    ) -> ShapeClass:
        """The class of an m×n×k product (rows on 128-byte lines are on sectors too)."""
        if is_tiny(m, n, k):
            return cls(dtype, layout, 0, 0, 0, True, True)
        buckets = (bucket(m, M_EDGES), bucket(n, N_EDGES), bucket(k, K_EDGES))
        return cls(dtype, layout, *buckets, aligned, False, sectors or aligned)

    @property
    def label(self) -> str:
        """E.g. ``"bfloat16 NN, M ≤ 64, N 4097–16384, K 1025–4096"`` (``", rows not 128-byte aligned"`` after)."""
        if self.tiny:
            return f"{self.dtype} {self.layout}, tiny (M·N·K < 2^{TINY_MNK.bit_length() - 1})"
        return (
            f"{self.dtype} {self.layout}, M {bucket_label(self.m, M_EDGES)}, N {bucket_label(self.n, N_EDGES)}, "
            f"K {bucket_label(self.k, K_EDGES)}"
            + ("" if self.aligned else ", rows not 128-byte aligned")
            + ("" if self.sectors else f" nor on {SECTOR_BYTES}-byte sectors")
        )


class Trial(StrictModel):
    """One candidate on a class's representative shape: its median time (ms, ``None`` where it failed), the split
    it used, and the first line of the error that stopped it."""

    config: Config
    split_k: int | None
    ms: float | None = Field(gt=0, allow_inf_nan=False)  # a time of 0, below it or NaN would be divided by
    error: str | None = None


class TunedClass(StrictModel):
    """One shape class: its representative shape, every candidate's trial, and the fastest (``config``).

    Attributes:
        aligned: Whether the representative's rows start on 128-byte lines (the class's ``aligned``).
        cublas_ms: cuBLAS's median time on the representative shape in the same run (for scale).
        cublas_kernels: The kernels cuBLAS launched for it, where the run asked the profiler (step 16 on).
    """

    dtype: str
    layout: Layout
    m_bucket: int = Field(ge=0)
    n_bucket: int = Field(ge=0)
    k_bucket: int = Field(ge=0)
    aligned: bool = True
    tiny: bool = False
    shape: tuple[int, int, int]
    config: Config
    trials: list[Trial]
    cublas_ms: float | None = Field(gt=0, allow_inf_nan=False)
    cublas_kernels: list[str] | None = None

    @property
    def shape_class(self) -> ShapeClass:
        """The class this entry is for (``sectors`` from the representative's contiguous operands, as the tuning run
        made them: :func:`contiguous_sectors`)."""
        sectors = self.aligned or self.tiny or contiguous_sectors(self.dtype, self.layout, *self.shape)
        return ShapeClass(
            self.dtype, self.layout, self.m_bucket, self.n_bucket, self.k_bucket, self.aligned, self.tiny, sectors
        )


def contiguous_sectors(dtype: str, layout: str, m: int, n: int, k: int) -> bool:
    """Whether every operand of an m×n×k product made of contiguous matrices in ``layout`` (``"NT"``: B the
    transpose of a contiguous N×K matrix) that the kernels read in place has rows starting on
    :data:`SECTOR_BYTES`-byte sectors. An operand of one row, or one copied first (rows not a multiple of 16 bytes;
    for fp8, an operand that is not K-major), counts as on them, as in ``matmul.rows_aligned``."""
    fp8 = dtype == "float8_e4m3fn"
    size = 1 if fp8 else 2
    a = (k, m, False) if layout[0] == "N" else (m, k, fp8)  # (row length, rows, copied first)
    b = (n, k, fp8) if layout[1] == "N" else (k, n, False)
    for length, rows, copied in (a, b):
        nbytes = length * size
        if not copied and rows > 1 and nbytes % 16 == 0 and nbytes % SECTOR_BYTES:
            return False
    return m <= 1 or (n * 2) % 16 != 0 or (n * 2) % SECTOR_BYTES == 0  # C: 16-bit


class GemmTuning(Record):
    """A tuning table of the Triton GEMM: the best configuration by shape class, from one run on one GPU.

    Attributes:
        edges: The bucket edges of M, N and K the run used (``"m"``, ``"n"``, ``"k"``).
        timing: How candidates were timed, in words.
        classes: One entry per tuned class.
    """

    kind: Literal["gemm.triton-tuning"] = "gemm.triton-tuning"
    schema_version: Literal[1] = 1
    edges: dict[str, list[int]]
    timing: str
    classes: list[TunedClass]

    def table(self) -> dict[ShapeClass, Config]:
        """Class → the configuration fastest on its representative shape."""
        return {c.shape_class: c.config for c in self.classes}


def committed(record_id: str = TABLE_RECORD) -> GemmTuning:
    """A committed tuning table (by default the first run's, :data:`TABLE_RECORD`)."""
    return load(record_id, expect=GemmTuning)


#: The table in use: the committed one, unless :func:`use_table` set another (``None``: none, rules only); and the
#: rates :func:`wave_rate_samples` computed from it.
_ACTIVE: dict[str, Any] = {}


def use_table(table: GemmTuning | None, merge: bool = False) -> None:
    """Use ``table`` instead of the committed ones (``None``: no table, :func:`heuristic` only), or, with ``merge``,
    over them (its classes replace theirs, as a later record's would). For the tuning run, which measures the table
    it has just made, and for tests. Plans ``matmul`` made before keep their configuration: call
    :func:`gpukb.gemm.triton.matmul.clear_plans` after.

    Raises:
        TypeError: For a ``table`` that is not a :class:`GemmTuning` (or ``None``).
    """
    if table is not None and not isinstance(table, GemmTuning):
        raise TypeError(f"table must be a GemmTuning or None; got {type(table).__name__}")
    merge = flag("merge", merge)
    base: dict[ShapeClass, TunedClass] = {}
    if merge and table is not None:
        _ACTIVE.clear()
        base = dict(active_table() or {})
    _ACTIVE.clear()  # the wave rates too (wave_rate_samples)
    _ACTIVE["table"] = None if table is None else {**base, **{c.shape_class: c for c in table.classes}}


def use_bytes_rules(on: bool) -> None:
    """Whether :func:`lookup` applies step 11's rules (:func:`by_bytes` for weight-bound products, a borrowed
    split-K's split from this product's tiles, :func:`one_launch_cap`). Off by default: on the fifth held-out draw,
    measured both ways in one run (records ``gemm/triton-gemm-sweep-h100-held-out-5-rules`` and
    ``-without-rules``), they lost (bf16 geometric mean 0.866 with them, 0.906 without). For a run that measures a
    set both ways; :func:`use_table` turns them off again. Like it, call :func:`gpukb.gemm.triton.matmul.clear_plans`
    after.

    Raises:
        TypeError: For anything but a bool.
    """
    _ACTIVE["bytes_rules"] = flag("on", on)


def active_table() -> dict[ShapeClass, TunedClass] | None:
    """The table :func:`choose` reads: the committed one (``None`` where the package has none)."""
    if "table" not in _ACTIVE:
        merged: dict[ShapeClass, TunedClass] = {}
        for record_id in reversed(TABLE_RECORDS):  # the later run's classes replace the earlier's
            if record_id not in record_ids():
                continue
            record = committed(record_id)
            edges = {name: tuple(record.edges.get(name, ())) for name in ("m", "n", "k")}
            if edges != {"m": M_EDGES, "n": N_EDGES, "k": K_EDGES}:
                raise ValueError(
                    f"the tuning table {record_id} was made with bucket edges {record.edges}; the code's differ"
                )
            merged.update({c.shape_class: c for c in record.classes})
        _ACTIVE["table"] = merged or None
    return _ACTIVE["table"]


def efficiency(m: int, n: int, k: int, config: Config, sms: int) -> float:
    """The fraction of the GPU's tile slots an m×n×k product keeps busy with ``config``: the work units (output
    tiles, times the K slices of a split-K configuration) over the slots of the rounds they take on ``sms``
    multiprocessors, times the fraction of the tiles' area inside C.

    Raises:
        TypeError, ValueError: For M or N not an int ≥ 1, K not an int ≥ 0, ``sms`` below 1 or a ``config`` that
            is not a :class:`Config`.
    """
    m = integer("m", m, minimum=1, maximum=MAX_DIMENSION)
    n = integer("n", n, minimum=1, maximum=MAX_DIMENSION)
    (k,) = _sizes(k=k)
    sms = positive_int("sms", sms)
    if not isinstance(config, Config):
        raise TypeError(f"config must be a Config; got {type(config).__name__}")
    tiles = -(-m // config.block_m) * -(-n // config.block_n)
    area = (m * n) / (tiles * config.block_m * config.block_n)
    if config.split_tail:  # rounds of whole tiles: a tail slice counts as its share of one
        return tiles / (tail_rounds(m, n, k, config, sms) * sms) * area
    units = tiles * (split_for(m, n, k, config, sms) if config.kernel == "splitk" else 1)
    rounds = -(-units // sms)
    return units / (rounds * sms) * area


def predicted_ms(entry: TunedClass, trial: Trial, m: int, n: int, k: int, sms: int) -> float:
    """A candidate's time on an m×n×k product, predicted from its time on the class's representative shape: the
    rate it reached there, divided by its :func:`efficiency` there, is taken as its rate per busy slot, and
    multiplied by its efficiency on the new shape. On the representative itself the prediction is the
    measured time."""
    if trial.ms is None:
        return math.inf
    rm, rn, rk = entry.shape
    rate = 2 * rm * rn * rk / trial.ms / efficiency(rm, rn, rk, trial.config, sms)
    return 2 * m * n * k / (rate * efficiency(m, n, k, trial.config, sms))


def heuristic(dtype: str, m: int, n: int, k: int, sms: int) -> Config:
    """The rule for a class the table lacks.

    M ≤ 64: the split-K kernel with 64-row tiles (the small-M path; for 16-bit types, :func:`small_m_rule`). A
    product whose large tiles would leave most multiprocessors idle while K is long (fewer tiles than half the
    multiprocessors, K at least four times the larger of M and N): the split-K kernel with 128×128 tiles. Otherwise
    the persistent TMA kernel: of the large tiling and :data:`WAVE_LADDER`, the one with the most work per unit of
    time by its rounds of tiles and its measured rate (:func:`_by_rate`; without a table, large or small tiles by
    :func:`~gpukb.gemm.triton.configs.pick_by_waves`). FP8 with K > :data:`FP8_PROMOTE`: promoted partial sums.
    """
    fp8 = dtype == "float8_e4m3fn"
    config = _rule(dtype, m, n, k, sms)
    return replace(config, fp8_imprecise_acc=FP8_PROMOTE) if fp8 and k > FP8_PROMOTE else config


def _rule(dtype: str, m: int, n: int, k: int, sms: int) -> Config:
    fp8 = dtype == "float8_e4m3fn"
    bk = 128 if fp8 else 64
    if not fp8 and is_tiny(m, n, k):  # one launch, no descriptors or copies: latency is all a tiny product has
        return Config("blocked", 64, 64, 32, num_stages=2, num_warps=4)
    if m <= SMALL_M and fp8:
        return Config("splitk", 64, 128, 2 * bk, num_stages=4, num_warps=4)
    if m <= SMALL_M:
        return small_m_rule(n, k, sms)
    large = DEFAULT_CONFIGS.get(dtype, DEFAULT_CONFIGS["bfloat16"])
    tiles = -(-m // large.block_m) * -(-n // large.block_n)
    if 2 * tiles < sms and k >= 4 * max(m, n):
        return Config("splitk", 128, 128, bk, num_stages=4, num_warps=8)
    if fp8 or dtype not in SMALL_CONFIGS:
        return Config("tma", 128, 256, 128, num_stages=4, num_warps=8, epilogue_subtile=True) if fp8 else large
    ladder = [c for c in WAVE_LADDER if c.label in wave_rates()]
    if not ladder:  # no table to measure the tilings' rates on: the first sweep's two tilings and their ratio
        return pick_by_waves(m, n, large, SMALL_CONFIGS[dtype], sms, SMALL_RATE)
    return _by_rate([large, *ladder], m, n, k, sms)


def small_m_rule(n: int, k: int, sms: int) -> Config:
    """The rule for a 16-bit product with M ≤ :data:`SMALL_M` (decode) that no tuned class of its layout covers:
    the split-K kernel's 64-row tiles, split so that its programs fill at most half the multiprocessors.

    Where N gives at least ``sms / 2`` tiles 128 wide: 64×128 tiles, not split. Otherwise 64×64 tiles, K cut into
    ``sms // (2 × tiles)`` slices (each at least four K steps). The tuned decode classes chose so: at N = 4096 (64
    tiles of 64 columns, half of 132) every class from M = 8 to 64 chose the 64×64 tiles unsplit over their split of
    two, 47×896×4864 (14 tiles) a split of four, the N ≥ 12288 ones 128 or 256 columns unsplit (the tuning
    records): a decode product streams B, and half the multiprocessors already read it at the memory's rate, so
    more slices only add partial sums to write and add.

    Raises:
        TypeError, ValueError: For N not an int ≥ 1, K not an int ≥ 0 or an ``sms`` below 1.
    """
    n = integer("n", n, minimum=1, maximum=MAX_DIMENSION)
    (k,) = _sizes(k=k)
    sms = positive_int("sms", sms)
    wide = Config("splitk", 64, 128, 128, num_stages=4, num_warps=4, split_k=1)
    if 2 * -(-n // wide.block_n) >= sms:
        return wide
    tiles = -(-n // 64)
    split = max(1, min(sms // (2 * tiles), k // (4 * 128), MAX_SPLIT_K))
    return Config("splitk", 64, 64, 128, num_stages=5, num_warps=4, split_k=split)


def lookup(
    dtype: str,
    layout: str,
    m: int,
    n: int,
    k: int,
    sms: int,
    aligned: bool = True,
    sectors: bool = True,
    copied: bool | None = None,
) -> Config | None:
    """The table's configuration for a product: of the candidates timed for its class, the one with the shortest
    :func:`predicted_ms` on this shape, then :func:`refill`'s rule for a wave it would leave under-filled;
    ``None`` where the table has no class of the product's *group* (which then takes :func:`heuristic`).

    The group is the layout and whether the rows start on 128-byte lines: a class is searched only within it (its
    own; for rows off 128-byte lines, the class of the other sector alignment; the same for the type that shares
    its tiles, :data:`SHARES`), as times measured in another layout, or on other rows, say nothing of this one's.
    A class one bucket away (:func:`_neighbour`) must also match whether the product's operands are copied before
    the kernel reads them (``copied``: rows a descriptor cannot read; by default as for contiguous operands,
    :func:`contiguous_copied`), as its representative's time includes those copies or not. A tiny product
    (:func:`is_tiny`) takes its tiny class's configuration as it is, in any layout (the blocked kernel it takes
    reads every layout in place, without copies).

    Raises:
        TypeError: For an ``aligned``, ``sectors`` or ``copied`` (unless ``None``) that is not a bool.
    """
    aligned, sectors = flag("aligned", aligned), flag("sectors", sectors)  # a truthy 1 or None would pick the group
    copied = None if copied is None else flag("copied", copied)
    table = active_table()
    if not table:
        return None
    if is_tiny(m, n, k):
        tiny = ShapeClass.of(dtype, layout, m, n, k)
        search = [
            replace(tiny, dtype=name, layout=other)
            for name in (dtype, SHARES.get(dtype))
            if name is not None
            for other in dict.fromkeys((layout, "NN", "NT", "TN", "TT"))
        ]
        entry = next((table[cls] for cls in search if cls in table), None)
        return None if entry is None else entry.config  # latency-bound: no carrying over of rates
    if copied is None:
        copied = contiguous_copied(dtype, layout, m, n, k)
    flags = [(True, True)] if aligned else list(dict.fromkeys(((False, sectors), (False, not sectors))))
    search = [
        ShapeClass.of(name, layout, m, n, k, *flag)
        for flag in flags
        for name in (dtype, SHARES.get(dtype))
        if name is not None
    ]
    entry = next((table[cls] for cls in search if cls in table), None)
    borrowed = entry is None
    if entry is None:
        entry = _neighbour(table, search[0], copied)
    if entry is None:
        return None
    # Split-tail candidates are timed but never chosen: where one split its tail it lost to the plain persistent
    # kernel on every class of the third run (its tuning record), and where it did not split it was that kernel.
    timed = [t for t in entry.trials if t.ms is not None and not t.config.split_tail]
    if not timed:
        return refill(replace(entry.config, split_tail=False), entry.shape, m, n, k, sms)
    if not _ACTIVE.get("bytes_rules", False):  # step 11's rules lost on fresh products: off unless asked for
        return refill(min(timed, key=lambda t: predicted_ms(entry, t, m, n, k, sms)).config, entry.shape, m, n, k, sms)
    if weight_bound(dtype, m, n, k) and weight_bound(entry.dtype, *entry.shape):
        best = by_bytes(entry, m, n, k, sms)
    else:
        best = min(timed, key=lambda t: predicted_ms(entry, t, m, n, k, sms)).config
        if borrowed and best.kernel == "splitk":  # a split fixed on another class's tiles: this product's instead
            best = replace(best, split_k=None)
    return refill(one_launch_cap(best, m, n, k, sms), entry.shape, m, n, k, sms)


# --8<-- [start:bytes]
#: Element types by the key of their product ceiling in :func:`gpukb.performance.ceilings.h100_ceilings`.
CEILING_KEYS = {"bfloat16": "bf16", "float16": "fp16", "float8_e4m3fn": "fp8"}


@functools.cache
def _ridge(dtype: str) -> float:
    """The H100's measured ridge point for ``dtype`` (FLOP per byte): the GPU the tables were tuned on."""
    from gpukb.performance.ceilings import h100_ceilings, measured_ridge  # reads records: only when a lookup needs it

    ridge = measured_ridge(h100_ceilings(), CEILING_KEYS[dtype])
    if ridge is None:
        raise ValueError(f"the H100's measured ceilings have no {dtype} rate or no bandwidth")
    return ridge


def weight_bound(dtype: str, m: int, n: int, k: int) -> bool:
    """Whether an m×n×k product of ``dtype`` is bound by reading B, the weight of a linear layer: it moves more bytes
    than it multiplies (its intensity, 2·M·N·K over the bytes of A, B and C each moved once, is below the ridge point
    the H100 measured for the type, rate over bandwidth, :func:`gpukb.performance.ceilings.measured_ridge`: about 270
    FLOP/B for bf16), and B is most of those bytes (N·K above M·K + M·N). A product with M ≤ 64 and N, K ≥ 128 is;
    112×8192×8192 and 86×4096×32000 are too; 65536×64×2048, which streams A, is not, nor an empty product.

    Raises:
        TypeError, ValueError: For a ``dtype`` other than ``"bfloat16"``, ``"float16"`` or ``"float8_e4m3fn"``,
            or a size that is not an int ≥ 0.
    """
    choice("dtype", dtype, tuple(CEILING_KEYS))
    m, n, k = _sizes(m=m, n=n, k=k)
    size = 1 if dtype == "float8_e4m3fn" else 2
    moved = size * (m * k + k * n) + 2 * m * n  # C in a 16-bit type
    return m * n * k > 0 and n * k > m * k + m * n and 2 * m * n * k < _ridge(dtype) * moved


def by_bytes(entry: TunedClass, m: int, n: int, k: int, sms: int) -> Config:
    """The configuration for a :func:`weight_bound` m×n×k product from a class whose representative is weight-bound
    too: the representative's fastest candidate, with the K split it ran there, cut where this product's tiles times
    that split would exceed the representative's work units (tiles × slices).

    A weight-bound product's time is its bytes over the rate its programs stream them, and that rate is what the
    representative measured, candidate by candidate: carried over by bytes, every candidate's time scales alike,
    so their order is the representative's. :func:`predicted_ms` carries times over by rounds of tiles instead,
    which rewards more work units: it moved 17×768×768 (class of 40×768×768, where one slice was fastest) to two.
    A split never adds programs beyond those the representative ran: 86×4096×32000, in the class of
    128×128×65536 whose 4 tiles ran fastest in 33 slices, has 128 tiles of 64×64, and takes one slice.

    Raises:
        TypeError, ValueError: For an ``entry`` that is not a :class:`TunedClass` with a timed candidate, a size
            that is not an int ≥ 1 (K ≥ 0), or an ``sms`` below 1.
    """
    if not isinstance(entry, TunedClass):
        raise TypeError(f"entry must be a TunedClass; got {type(entry).__name__}")
    m = integer("m", m, minimum=1, maximum=MAX_DIMENSION)
    n = integer("n", n, minimum=1, maximum=MAX_DIMENSION)
    (k,) = _sizes(k=k)
    sms = positive_int("sms", sms)
    timed = [t for t in entry.trials if t.ms is not None and not t.config.split_tail]
    if not timed:
        raise ValueError(f"the class of {entry.shape} has no timed candidate")
    best = min(timed, key=lambda t: t.ms)  # the bytes scale every candidate's time alike
    config = best.config
    if config.kernel != "splitk":
        return config
    rm, rn, rk = entry.shape
    ran = best.split_k or split_for(rm, rn, rk, config, sms)
    units = _tiles(rm, rn, config) * ran
    split = max(1, min(ran, units // _tiles(m, n, config), k // config.block_k, MAX_SPLIT_K))
    return replace(config, split_k=split)


#: The most K slices the one-launch reduction (``Config.fused_reduce``) is kept for: its last slice adds the others'
#: partial sums one after another. Against the reduction kernel, the same 16×64 tiling in the fifth tuning run's
#: decode classes was faster in 11 of 12 classes at two slices, 7 of 13 at four, none of 7 at eight
#: (``results.fill_summary``).
FUSED_MAX_SPLIT = 2


def one_launch_cap(config: Config, m: int, n: int, k: int, sms: int) -> Config:
    """``config`` without ``fused_reduce`` where it cuts the m×n×k product's K into more than
    :data:`FUSED_MAX_SPLIT` slices (the reduction kernel then adds them, in the same order); otherwise ``config``.

    Raises:
        TypeError, ValueError: For a ``config`` that is not a :class:`Config`, a size that is not an int ≥ 0, or an
            ``sms`` below 1.
    """
    _config(config)
    if config.fused_reduce and split_for(m, n, k, config, sms) > FUSED_MAX_SPLIT:
        return replace(config, fused_reduce=False)
    return config


# --8<-- [end:bytes]


def contiguous_copied(dtype: str, layout: str, m: int, n: int, k: int) -> bool:
    """Whether ``matmul`` copies A or B of an m×n×k product of contiguous matrices in ``layout`` before a TMA kernel
    reads them: rows that are not a multiple of 16 bytes (1023×1025×1027: A's rows are 2054 bytes), or, for fp8, an
    operand that is not K-major (``matmul.staging``). An operand of one row is never copied.

    Raises:
        TypeError, ValueError: For a ``dtype`` that is not a string, a ``layout`` other than ``"NN"``, ``"NT"``,
            ``"TN"``, ``"TT"``, or a size that is not an int ≥ 0.
    """
    text("dtype", dtype)
    choice("layout", layout, ("NN", "NT", "TN", "TT"))
    m, n, k = _sizes(m=m, n=n, k=k)
    fp8 = dtype == "float8_e4m3fn"
    size = 1 if fp8 else 2
    a = (k, m, False) if layout[0] == "N" else (m, k, fp8)  # (row length, rows, not K-major fp8)
    b = (n, k, fp8) if layout[1] == "N" else (k, n, False)
    return any(wrong or (rows > 1 and (length * size) % 16 != 0) for length, rows, wrong in (a, b))


def _copied(entry: TunedClass) -> bool:
    """Whether a class's representative had its operands copied (:func:`contiguous_copied`), as it was timed."""
    return contiguous_copied(entry.dtype, entry.layout, *entry.shape)


#: The tilings :func:`refill` may move an under-filled product to: the persistent kernel's smaller tiles with the
#: deeper pipelines the fourth tuning run measured (``CANDIDATES_16_GAPS``), and 128×128.
WAVE_LADDER: tuple[Config, ...] = (
    Config("tma", 128, 128, 64, num_stages=4, num_warps=8),
    Config("tma", 64, 128, 64, num_stages=6, num_warps=4),
    Config("tma", 128, 64, 64, num_stages=6, num_warps=4),
)

#: A tiling's rate counts in :func:`wave_rates` only on a product where it keeps at least this fraction of its
#: rounds' tile slots busy (:func:`efficiency`), as does the default tiling: the rate of a full GPU.
FULL_FILL = 0.9


def wave_rate_samples() -> dict[str, list[float]]:
    """What :func:`wave_rates` takes the median of: for each 16-bit persistent tiling (by :attr:`Config.label`), its
    rate per busy tile slot relative to the default tiling's (:data:`~gpukb.gemm.triton.configs.DEFAULT_CONFIGS`) on
    every aligned class of the active table with M above :data:`SMALL_M` where both kept at least
    :data:`FULL_FILL` of their slots busy: (the default's time ÷ its efficiency) ÷ (the tiling's time ÷ its
    efficiency). The default's own entry is ``[1.0]``."""
    if "rate samples" in _ACTIVE:
        return _ACTIVE["rate samples"]
    _ACTIVE["rate samples"] = _rate_samples((active_table() or {}).values())
    return _ACTIVE["rate samples"]


def _rate_samples(entries: Any) -> dict[str, list[float]]:
    # wave_rate_samples' reading of one set of tuned classes (see there)
    base_config = DEFAULT_CONFIGS["bfloat16"]
    samples: dict[str, list[float]] = {base_config.label: [1.0]}
    for entry in entries:
        m, n, k = entry.shape
        if entry.tiny or m <= SMALL_M or not entry.aligned or entry.dtype == "float8_e4m3fn":
            continue
        timed = {t.config: t.ms for t in entry.trials if t.ms is not None}
        base = timed.get(base_config)
        base_fill = efficiency(m, n, k, base_config, SMS_TUNED)
        if base is None or base_fill < FULL_FILL:
            continue
        for config, ms in timed.items():
            fill = efficiency(m, n, k, config, SMS_TUNED)
            if config.kernel == "tma" and not config.split_tail and config != base_config and fill >= FULL_FILL:
                samples.setdefault(config.label, []).append((base / base_fill) / (ms / fill))
    return samples


def wave_rates() -> dict[str, float]:
    """Each 16-bit persistent tiling's rate per busy tile slot relative to the default tiling's, by
    :attr:`Config.label`: the median of its :func:`wave_rate_samples` (the default's is 1.0)."""
    return {label: statistics.median(values) for label, values in wave_rate_samples().items()}


#: Multiprocessors of the GPU the tables were tuned on (the H100 SXM: its records' ``run.gpu``).
SMS_TUNED = 132


def refill(config: Config, shape: tuple[int, int, int], m: int, n: int, k: int, sms: int) -> Config:
    """The rule for a wave a class's choice leaves under-filled: where ``config`` (a persistent tiling, M above
    :data:`SMALL_M`) gives the product fewer tiles than ``sms`` while it gave the class's representative ``shape``
    at least ``sms`` (so its time there says nothing about a part-empty GPU), the tiling of ``config`` and
    :data:`WAVE_LADDER` with the most work per unit of time: :func:`efficiency` × its rate (:func:`wave_rates`;
    ``config``'s own, or 1.0 where the tables never measured it on a full GPU). ``config`` wins ties; any other
    product keeps ``config``. 1209×2048 in 128×256 tiles is 80 tiles for 132 multiprocessors.

    Raises:
        TypeError, ValueError: For a ``config`` that is not a :class:`Config`, a ``shape`` that is not three sizes,
            a size that is not an int ≥ 0, or an ``sms`` below 1.
    """
    _config(config)
    if not isinstance(shape, tuple | list) or len(shape) != 3:
        raise TypeError(f"shape must be the representative's (m, n, k); got {shape!r}")
    rm, rn, _ = _sizes(**dict(zip(("shape m", "shape n", "shape k"), shape, strict=True)))
    m, n, k = _sizes(m=m, n=n, k=k)
    sms = positive_int("sms", sms)
    if config.kernel != "tma" or m <= SMALL_M:
        return config
    if _tiles(m, n, config) >= sms or _tiles(rm, rn, config) < sms:
        return config
    return _by_rate([config, *(c for c in WAVE_LADDER if c.label in wave_rates())], m, n, k, sms)


def _rule_args(config: Config, dtype: str, m: int, n: int, k: int, sms: int) -> tuple[str, int, int, int, int]:
    """A rule's arguments after :func:`_rule_inputs`'s checks, the sizes as ints ≥ 0 and ``sms`` as an int ≥ 1."""
    dtype = _rule_inputs(config, dtype)
    m, n, k = _sizes(m=m, n=n, k=k)
    return dtype, m, n, k, positive_int("sms", sms)


def _one_block_persistent(config: Config) -> bool:
    """Whether ``config`` is what the rules of steps 15, 16 and 19 replace: a persistent (``tma``) tile of one block,
    unswapped, without warp specialization, a split tail or stream-K."""
    extras = config.two_part or config.warp_specialize or config.split_tail or config.stream_k or config.swap_ab
    return config.kernel == "tma" and not extras


def _rule_inputs(config: Config, dtype: str) -> str:
    """``dtype``, after the checks every rule :func:`choose` applies makes of its choice and type: a misspelt type
    would silently skip the rule, so only the tables' types pass."""
    _config(config)
    return choice("dtype", dtype, tuple(DEFAULT_CONFIGS))


# --8<-- [start:two_blocks]
#: Step 15's tiles of two blocks (step 14), their loops not flattened: the three whose rates
#: (:func:`two_block_rates`) step 14's run measured on full GPUs.
TWO_BLOCK_LADDER: tuple[Config, ...] = (
    Config("tma", 192, 128, 64, num_stages=4, num_warps=8, flatten=False),
    Config("tma", 128, 192, 64, num_stages=4, num_warps=8, flatten=False),
    Config("tma", 192, 192, 64, num_stages=3, num_warps=8, flatten=False),
)
#: The run that measured them (``bench/triton_gemm_sweep.py --tune twoblock``).
TWO_BLOCK_RECORD = "gemm/triton-gemm-tuning-h100-twoblock"


@functools.cache
def two_block_rates() -> dict[str, float]:
    """The rate per busy tile slot, relative to the default tiling's, of each tiling step 14's run timed, by
    :attr:`Config.label`: as :func:`wave_rates` reads a table, on that run's products where both kept at least
    :data:`FULL_FILL` of their rounds' slots busy (for the tiles of two blocks, 8192³ and Llama-3-8B's MLP up at 4096
    tokens; for tilings of one block, 4096³ too)."""
    record = load(TWO_BLOCK_RECORD, expect=GemmTuning)
    return {label: statistics.median(values) for label, values in _rate_samples(record.classes).items()}


def two_blocks(config: Config, dtype: str, m: int, n: int, k: int, sms: int) -> Config:
    """Step 15's rule: the tile of two blocks of :data:`TWO_BLOCK_LADDER` with the most work per unit of time on
    an m×n×k product (its :func:`efficiency` times its rate, :func:`two_block_rates`), where that is more than
    ``config``'s (its efficiency times its rate, :func:`wave_rates`, or 1.0, the default tiling's, where no table
    measured it); otherwise ``config``. Only for a 16-bit product above :data:`SMALL_M` rows whose ``config`` is a
    persistent tiling of one block without warp specialization, a split tail or stream-K; any other keeps ``config``.
    :func:`choose` skips it after ``use_rule("two_blocks", False)``.

    Raises:
        TypeError, ValueError: For a ``config`` that is not a :class:`Config`, a ``dtype`` other than the types the
            tables tuned, a size that is not an int ≥ 0, or an ``sms`` below 1.
    """
    dtype, m, n, k, sms = _rule_args(config, dtype, m, n, k, sms)
    if dtype not in SHARES or not _one_block_persistent(config):
        return config
    if m <= SMALL_M or n == 0:
        return config
    rates = two_block_rates()
    own = efficiency(m, n, k, config, sms) * wave_rates().get(config.label, 1.0)
    best = max(TWO_BLOCK_LADDER, key=lambda c: efficiency(m, n, k, c, sms) * rates[c.label])
    return best if efficiency(m, n, k, best, sms) * rates[best.label] > own else config
    # --8<-- [end:two_blocks]


#: Step 20's candidates for products of 321 to 2048 rows (``bench/triton_gemm_sweep.py --tune mid``): every way the
#: kernels above can fill a part-empty round, side by side on the same products. The one-block persistent tilings
#: the tables choose from; step 14's tiles of two blocks (step 15's ladder) and three more along N (96 = 64 + 32,
#: 160 = 128 + 32: a 32-wide block of N stays on ``wgmma``, where 32 rows would not), whose counts of tiles fall
#: between the powers of two; split-K with the one-launch reduction, at two slices and at the automatic split; and one
#: stream-K round on the default tiling.
CANDIDATES_16_MID: tuple[Config, ...] = (
    DEFAULT_CONFIGS["bfloat16"],
    Config("tma", 128, 128, 64, num_stages=4, num_warps=8),
    Config("tma", 64, 256, 64, num_stages=4, num_warps=4),
    Config("tma", 64, 128, 64, num_stages=6, num_warps=4),
    Config("tma", 128, 64, 64, num_stages=6, num_warps=4),
    Config("tma", 256, 128, 64, num_stages=3, num_warps=8),
    *TWO_BLOCK_LADDER,
    Config("tma", 128, 160, 64, num_stages=4, num_warps=8, flatten=False),
    # 192×160 at 4 stages needs 241,664 bytes of shared memory by shared_memory_model, past the 232,448 a block may
    # have on sm_90: it failed at launch on every product (the record keeps the errors; a test pins it)
    Config("tma", 192, 160, 64, num_stages=4, num_warps=8, flatten=False),
    Config("tma", 128, 96, 64, num_stages=4, num_warps=8, flatten=False),
    Config("splitk", 128, 128, 64, num_stages=5, num_warps=8, split_k=2, fused_reduce=True),
    Config("splitk", 128, 256, 64, num_stages=3, num_warps=8, fused_reduce=True),
    replace(DEFAULT_CONFIGS["bfloat16"], stream_k=True),
)


def mid_trials(chosen: Config) -> tuple[Config, ...]:
    """What step 20 times on a product: the configuration the look-up gives it (``chosen``), then
    :data:`CANDIDATES_16_MID` (with ``chosen``'s ``pad_rows``).

    Raises:
        TypeError: For a ``chosen`` that is not a :class:`Config`.
    """
    return _chosen_first(chosen, (), CANDIDATES_16_MID)


# --8<-- [start:few_tokens]
#: Step 16's rule takes this tiling for a product of a few hundred rows (:func:`few_tokens`).
TOKEN_TILE = Config("tma", 64, 256, 64, num_stages=4, num_warps=4)


def few_tokens(config: Config, dtype: str, m: int) -> Config:
    """Step 16's rule: a 16-bit product of more than :data:`SMALL_M` and at most :data:`TOKEN_MAX_M` rows that
    64-row tiles cover with fewer rows of zeros than 128-row tiles (M mod 128 from 1 to 64: 297 rows fill 320 rows of
    64-row tiles, 384 of 128-row ones), whose ``config`` is a one-block persistent tile of 128 rows and 128 or more
    columns (without warp specialization, a split tail or stream-K), takes :data:`TOKEN_TILE`, 64×256, instead; any
    other keeps ``config``. On the six such products of step 16's run, 64×256 beat 128×128 and 128×256 on every one;
    on the five others (M mod 128 of 0 or above 64: the same rows of zeros either way) it was level with 128×128 (at
    most 0.04 of cuBLAS's speed apart), and on earlier draws' products of 128, 209 and 256 rows 128×256 tiles matched
    cuBLAS. :func:`choose` skips it after ``use_rule("few_tokens", False)``.

    Raises:
        TypeError, ValueError: For a ``config`` that is not a :class:`Config`, a ``dtype`` other than the types the
            tables tuned (``"bfloat16"``, ``"float16"``, ``"float8_e4m3fn"``), or an ``m`` that is not an int ≥ 0.
    """
    dtype = _rule_inputs(config, dtype)
    (m,) = _sizes(m=m)
    if dtype not in SHARES or not SMALL_M < m <= TOKEN_MAX_M:
        return config
    fewer_zeros = 1 <= m % 128 <= 64  # 64-row tiles end closer to M: 297 rows fill 320 of them, 384 of 128
    if _one_block_persistent(config) and config.block_m == 128 and config.block_n >= 128 and fewer_zeros:
        return replace(TOKEN_TILE, pad_rows=config.pad_rows)
    return config
    # --8<-- [end:few_tokens]


# --8<-- [start:token_split]
#: Step 18's rule takes this persistent tiling for a split-K choice of a few hundred rows (:func:`token_split`).
TOKEN_SPLIT_TILE = Config("tma", 64, 128, 64, num_stages=6, num_warps=4)
#: ... where the product's K is at most this (128 K steps of 64) ...
TOKEN_SPLIT_MAX_K = 8192
#: ... and its 64×128 tiles are at least this many programs (about a quarter of the H100's 132 multiprocessors).
TOKEN_SPLIT_MIN_TILES = 32


def token_split(config: Config, dtype: str, m: int, n: int, k: int) -> Config:
    """Step 18's rule: a 16-bit product of more than :data:`SMALL_M` and at most :data:`TOKEN_MAX_M` rows whose
    ``config`` is the split-K kernel takes :data:`TOKEN_SPLIT_TILE`, the persistent kernel's 64×128 tiles (with
    ``config``'s ``pad_rows``), where its K is at most :data:`TOKEN_SPLIT_MAX_K` and those tiles number at least
    :data:`TOKEN_SPLIT_MIN_TILES`; any other keeps ``config``. Of step 18's 25 seen products it changes 7, and on all
    7 the persistent tiles ran faster than the look-up's split-K choice, by up to 0.16 of cuBLAS's speed; of the 18
    it leaves, the split-K choice was faster than those tiles on 14, slower on 4 (86×4096×32000 and 174×8192×10240,
    K longer than 8192; 126×768×768 and 102×896×1152, 12 and 14 tiles).

    Raises:
        TypeError, ValueError: For a ``config`` that is not a :class:`Config`, a ``dtype`` other than the types the
            tables tuned, or a size that is not an int ≥ 0.
    """
    dtype = _rule_inputs(config, dtype)
    m, n, k = _sizes(m=m, n=n, k=k)
    if dtype not in SHARES or not SMALL_M < m <= TOKEN_MAX_M or config.kernel != "splitk":
        return config
    if k > TOKEN_SPLIT_MAX_K or _tiles(m, n, TOKEN_SPLIT_TILE) < TOKEN_SPLIT_MIN_TILES:
        return config
    return replace(TOKEN_SPLIT_TILE, pad_rows=config.pad_rows)
    # --8<-- [end:token_split]


# --8<-- [start:swap_tokens]
#: Step 19's rule takes swapped tiles this wide (B's columns, the MMA's M) that cut the tokens into one or two rows of
#: tiles (:func:`swap_tokens`) ...
SWAP_TALL_WIDTH = 128
#: ... where, by :func:`tile_work`, they leave each multiprocessor this much less work than the choice, or more.
SWAP_TALL_MARGIN = 0.05
#: ... and this tiling for a split-K choice whose K is at most :data:`SWAP_SHORT_MAX_K` (32 K steps of 64).
SWAP_SHORT_TILE = Config("tma", 32, 64, 64, num_stages=6, num_warps=4, swap_ab=True)
SWAP_SHORT_MAX_K = 2048


def tile_work(m: int, n: int, config: Config, sms: int) -> float:
    """Step 19's count of what a persistent tiling leaves the busiest multiprocessor of ``sms``: its rounds of tiles
    times a tile's area, over a rate that grows with the tile's multiply-adds per element it loads a K step
    (area / (rows + columns)): the square root of that against the default tiling's (128×256), at most 1. Two tiles
    of equal area are weighed alike whichever way they are swapped.

    Raises:
        TypeError, ValueError: For a ``config`` that is not a :class:`Config` or not a persistent tiling (the
            ``"tma"`` kernel without ``split_tail`` or ``stream_k``: the count ignores K slices and shared K steps),
            a size that is not an int ≥ 0, or an ``sms`` below 1.
    """
    _config(config)
    if config.kernel != "tma" or config.split_tail or config.stream_k:
        raise ValueError(
            "tile_work counts a persistent tiling (the 'tma' kernel without split_tail or stream_k); got "
            f"{config.label!r}"
        )
    m, n = _sizes(m=m, n=n)
    sms = positive_int("sms", sms)
    default = DEFAULT_CONFIGS["bfloat16"]
    per_load = config.block_m * config.block_n / (config.block_m + config.block_n)
    rate = min(1.0, math.sqrt(per_load / (default.block_m * default.block_n / (default.block_m + default.block_n))))
    return -(-_tiles(m, n, config) // sms) * config.block_m * config.block_n / rate


def swap_tokens(config: Config, dtype: str, m: int, n: int, k: int, sms: int) -> Config:
    """Step 19's rule, for a 16-bit product of more than :data:`SMALL_M` and at most :data:`TOKEN_MAX_M` rows:

    * a ``config`` that is a persistent tiling of one block (unswapped, without warp specialization, a split tail or
      stream-K) takes the swapped tile of :func:`swap_tiles` :data:`SWAP_TALL_WIDTH` wide, at least 64 tokens high,
      that cuts the tokens into one or two rows of tiles with the least :func:`tile_work`, where that is at least
      :data:`SWAP_TALL_MARGIN` less than ``config``'s;
    * a split-K ``config`` that cuts a K of at most :data:`SWAP_SHORT_MAX_K` into slices takes
      :data:`SWAP_SHORT_TILE`, 32×64 swapped tiles in one slice;

    each with ``config``'s ``pad_rows``; any other keeps ``config``. On step 19's 75 seen products the first changes
    11 (7 faster by more than 2 %, 2 slower) and the second 5 (all faster, by 13 to 29 %). :func:`choose` skips it
    after ``use_rule("swap_tokens", False)``.

    Raises:
        TypeError, ValueError: For a ``config`` that is not a :class:`Config`, a ``dtype`` other than the types the
            tables tuned, a size that is not an int ≥ 0, or an ``sms`` below 1.
    """
    dtype, m, n, k, sms = _rule_args(config, dtype, m, n, k, sms)
    if dtype not in SHARES or not SMALL_M < m <= TOKEN_MAX_M or n == 0:
        return config
    if config.kernel == "splitk":
        # a K of one K step is one slice whatever split_k asks: matmul runs no empty slice
        if config.block_k < k <= SWAP_SHORT_MAX_K and split_for(m, n, k, config, sms) > 1:
            return replace(SWAP_SHORT_TILE, pad_rows=config.pad_rows)
        return config
    if not _one_block_persistent(config):
        return config
    tall = [
        c for c in swap_tiles(m)
        if c.block_n == SWAP_TALL_WIDTH and c.block_m >= 64 and -(-m // c.block_m) <= 2
    ]  # fmt: skip
    if not tall:
        return config
    best = min(tall, key=lambda c: tile_work(m, n, c, sms))
    if tile_work(m, n, best, sms) <= (1 - SWAP_TALL_MARGIN) * tile_work(m, n, config, sms):
        return replace(best, pad_rows=config.pad_rows)
    return config
    # --8<-- [end:swap_tokens]


# --8<-- [start:deep_tokens]
#: Step 21's rule deepens the pipeline of a product of a few hundred rows whose K is at least this many K steps
#: (4096 at a K step of 64): on the products of step 21's run it won at 64 K steps and more, and lost at 12 to 18.
DEEP_MIN_K_STEPS = 64


def deep_tokens(config: Config, dtype: str, m: int, n: int, k: int) -> Config:
    """Step 21's rule: a 16-bit product of more than :data:`SMALL_M` and at most :data:`TOKEN_MAX_M` rows whose K is
    at least :data:`DEEP_MIN_K_STEPS` K steps of ``config``, and whose ``config`` is a persistent tiling (of one block
    or two, swapped or not; without warp specialization, a split tail or stream-K), takes the same tiling at its
    :func:`deepest` pipeline; any other keeps ``config``. On step 21's 106 seen products it changes 27: 15 faster by
    more than 2 %, 3 slower. :func:`choose` skips it after ``use_rule("deep_tokens", False)``.

    Raises:
        TypeError, ValueError: For a ``config`` that is not a :class:`Config`, a ``dtype`` other than the types the
            tables tuned, or a size that is not an int ≥ 0.
    """
    dtype = _rule_inputs(config, dtype)
    m, n, k = _sizes(m=m, n=n, k=k)
    if dtype not in SHARES or not SMALL_M < m <= TOKEN_MAX_M or n == 0:
        return config
    persistent = config.kernel == "tma" and not (config.warp_specialize or config.split_tail or config.stream_k)
    if persistent and -(-k // config.block_k) >= DEEP_MIN_K_STEPS:
        return deepest(config)
    return config
    # --8<-- [end:deep_tokens]


# --8<-- [start:mid_tiles]
#: Step 20's rule covers products of more than :data:`TOKEN_MAX_M` rows and at most this many (:func:`mid_tiles`).
MID_MAX_M = 2048
#: It takes this tiling for a 128×128 choice: the same area, 64 rows and 256 columns, on one warpgroup ...
MID_WIDE_TILE = Config("tma", 64, 256, 64, num_stages=4, num_warps=4)
#: ... and this tile of two blocks for a 64×128 choice whose tiles take more than one round of programs.
MID_TWO_BLOCK_TILE = Config("tma", 128, 192, 64, num_stages=4, num_warps=8, flatten=False)


def mid_tiles(
    config: Config, dtype: str, m: int, n: int, k: int, sms: int, aligned: bool = True, copied: bool = False
) -> Config:
    """Step 20's rule, for a 16-bit product of more than :data:`TOKEN_MAX_M` and at most :data:`MID_MAX_M` rows that
    the kernels read and write where they are, as every product of step 20's run was: rows on 128-byte lines
    (``aligned``), no operand copied first (``copied``, as :func:`lookup` takes it), and C's rows a multiple of 16
    bytes (N a multiple of 8; C is copied otherwise). Each with ``config``'s ``pad_rows``:

    * a persistent 128×128 tiling of one block takes :data:`MID_WIDE_TILE`, 64×256;
    * a persistent 64×128 tiling of one block whose tiles outnumber ``sms`` takes :data:`MID_TWO_BLOCK_TILE`, 128×192;
    * a split-K choice takes step 18's persistent tiling (:data:`TOKEN_SPLIT_TILE`) where step 18's rule would take it
      for fewer rows: K at most :data:`TOKEN_SPLIT_MAX_K`, at least :data:`TOKEN_SPLIT_MIN_TILES` tiles.

    Any other keeps ``config``. On step 20's 58 seen products the three change 4, 5 and 2, and each of the 11 ran
    faster than the look-up's choice. :func:`choose` skips it after ``use_rule("mid_tiles", False)``.

    Raises:
        TypeError, ValueError: For a ``config`` that is not a :class:`Config`, a ``dtype`` other than the types the
            tables tuned, a size that is not an int ≥ 0, an ``sms`` below 1, or an ``aligned`` or ``copied`` that is
            not a bool.
    """
    dtype, m, n, k, sms = _rule_args(config, dtype, m, n, k, sms)
    in_place = flag("aligned", aligned) and not flag("copied", copied) and n % 8 == 0
    if dtype not in SHARES or not TOKEN_MAX_M < m <= MID_MAX_M or n == 0 or not in_place:
        return config
    if config.kernel == "splitk":
        if k > TOKEN_SPLIT_MAX_K or _tiles(m, n, TOKEN_SPLIT_TILE) < TOKEN_SPLIT_MIN_TILES:
            return config
        return replace(TOKEN_SPLIT_TILE, pad_rows=config.pad_rows)
    if not _one_block_persistent(config):
        return config
    if (config.block_m, config.block_n) == (128, 128):
        return replace(MID_WIDE_TILE, pad_rows=config.pad_rows)
    if (config.block_m, config.block_n) == (64, 128) and _tiles(m, n, config) > sms:
        return replace(MID_TWO_BLOCK_TILE, pad_rows=config.pad_rows)
    return config
    # --8<-- [end:mid_tiles]


# --8<-- [start:many_rounds]
#: Step 17's rule takes the default tiling for a product whose tiles in it fill at least this many rounds
#: (:func:`many_rounds`).
MANY_ROUNDS = 4


def many_rounds(config: Config, dtype: str, m: int, n: int, k: int, sms: int) -> Config:
    """Step 17's rule: a 16-bit product of more than :data:`TOKEN_MAX_M` rows and at least 2^30 multiply-adds whose
    tiles in the default tiling (:data:`~gpukb.gemm.triton.configs.DEFAULT_CONFIGS`, 128×256) fill at least
    :data:`MANY_ROUNDS` rounds of ``sms`` programs takes that tiling (with ``config``'s ``pad_rows``), unless
    ``config`` is a 128×256 tiling already; any other keeps ``config``. Of the 47 seen products of step 17's run (more
    than 320 rows, at least 2^30 multiply-adds, a look-up choice other than the default), it changes 11: the default
    ran faster than the look-up's choice on 7 of them, by 0.02 to 0.16 of cuBLAS's speed, and at most 0.03 slower on
    the other 4 (weight gradients of 16 to 118 tokens); on products of fewer rounds the default lost by up to 0.92.
    A class carries its candidates' times on its representative over by rounds of tiles (:func:`predicted_ms`), and a
    product no class covers weighs tilings by rates measured on full GPUs (:func:`heuristic`); where a product fills
    many rounds, both favoured smaller tiles the default outran. :func:`choose` skips it after
    ``use_rule("many_rounds", False)``; the rule itself does not (so that a reader of step 17's record classifies its
    products by the rule whatever a run switched off).

    Raises:
        TypeError, ValueError: For a ``config`` that is not a :class:`Config`, a ``dtype`` other than the types the
            tables tuned, a size that is not an int ≥ 0, or an ``sms`` below 1.
    """
    dtype, m, n, k, sms = _rule_args(config, dtype, m, n, k, sms)
    default = DEFAULT_CONFIGS["bfloat16"]
    if dtype not in SHARES or m <= TOKEN_MAX_M or m * n * k < 2**30:
        return config
    if (config.block_m, config.block_n) == (128, 256) or _tiles(m, n, default) < MANY_ROUNDS * sms:
        return config  # (another 128×256 tiling: the tables chose it, and step 17 found it level with the default)
    return replace(default, pad_rows=config.pad_rows)
    # --8<-- [end:many_rounds]


def _by_rate(options: list[Config], m: int, n: int, k: int, sms: int) -> Config:
    """Of ``options``, the one with the most work per unit of time on an m×n×k product: its :func:`efficiency`
    times its rate (:func:`wave_rates`; 1.0 where none was measured); the first wins ties."""
    rates = wave_rates()
    return max(options, key=lambda c: efficiency(m, n, k, c, sms) * rates.get(c.label, 1.0))


def _tiles(m: int, n: int, config: Config) -> int:
    return -(-m // config.block_m) * -(-n // config.block_n)


def _neighbour(table: dict[ShapeClass, TunedClass], cls: ShapeClass, copied: bool) -> TunedClass | None:
    """A tuned class one bucket away from ``cls`` (in M, N or K) of its group (same layout, same alignment, operands
    copied or not as ``copied`` says; same type or the type sharing its tiles; not tiny), preferring the same type,
    then the smaller M, N, K buckets in that order; ``None`` where there is none. Its candidates' times are carried
    over to the shape by :func:`predicted_ms`."""
    types = (cls.dtype, SHARES.get(cls.dtype))
    near = [
        c
        for c in table
        if c.dtype in types
        and c.layout == cls.layout
        and c.aligned == cls.aligned
        and not c.tiny
        and _copied(table[c]) == copied
        and abs(c.m - cls.m) + abs(c.n - cls.n) + abs(c.k - cls.k) == 1
        and (c.m > SMALL_M_BUCKET) == (cls.m > SMALL_M_BUCKET)  # never across the small-M (64-row) boundary
    ]
    if not near:
        return None
    best = min(near, key=lambda c: (c.dtype != cls.dtype, c.m, c.n, c.k, c.sectors != cls.sectors))
    return table[best]


#: The last M bucket of the small-M path (M ≤ :data:`SMALL_M`).
SMALL_M_BUCKET = bucket(SMALL_M, M_EDGES)


def choose(
    dtype: str,
    layout: str,
    m: int,
    n: int,
    k: int,
    sms: int,
    aligned: bool = True,
    sectors: bool = True,
    copied: bool | None = None,
    out_copied: bool = False,
) -> Config:
    """The configuration for a product: the table's (:func:`lookup`), else :func:`heuristic`; then a tile of two
    blocks where :func:`two_blocks` finds one that does more work per unit of time; then, for a product of a few
    hundred rows, 64-row tiles where :func:`few_tokens` says, persistent ones for a split-K choice where
    :func:`token_split` says, swapped ones where :func:`swap_tokens` says, and a deeper pipeline where
    :func:`deep_tokens` says; for a product of a few hundred to 2048
    rows, the tiles :func:`mid_tiles` says (not where ``out_copied``: a C the persistent kernel cannot write where it
    is, a strided view say, as :func:`mid_tiles` takes only products with nothing copied); then the default tiling
    where :func:`many_rounds` says.

    Raises:
        TypeError: For an ``out_copied`` that is not a bool (the other arguments as :func:`lookup` and the rules).
    """
    out_copied = flag("out_copied", out_copied)
    if copied is None:
        copied = contiguous_copied(dtype, layout, m, n, k)
    found = lookup(dtype, layout, m, n, k, sms, aligned, sectors, copied)
    config = found if found is not None else heuristic(dtype, m, n, k, sms)
    off = _ACTIVE.get("rules off", frozenset())  # each rule on unless a run switched it off (use_rule)
    if "two_blocks" not in off:
        config = two_blocks(config, dtype, m, n, k, sms)
    if "few_tokens" not in off:
        config = few_tokens(config, dtype, m)
    if "token_split" not in off:
        config = token_split(config, dtype, m, n, k)
    if "swap_tokens" not in off:
        config = swap_tokens(config, dtype, m, n, k, sms)
    if "deep_tokens" not in off:
        config = deep_tokens(config, dtype, m, n, k)
    if "mid_tiles" not in off:
        config = mid_tiles(config, dtype, m, n, k, sms, aligned, copied or out_copied)
    if "many_rounds" not in off:
        config = many_rounds(config, dtype, m, n, k, sms)
    return config


#: The rules :func:`choose` applies after the look-up, in that order (steps 15 to 21), by function name.
RULES = ("two_blocks", "few_tokens", "token_split", "swap_tokens", "deep_tokens", "mid_tiles", "many_rounds")


def use_rule(name: str, on: bool) -> None:
    """Whether :func:`choose` applies the rule ``name`` (of :data:`RULES`; each on by default, and :func:`use_table`
    turns them all on again). For a run that measures a set both ways; the rule itself, called directly, is unchanged.
    Call :func:`gpukb.gemm.triton.matmul.clear_plans` after.

    Raises:
        TypeError, ValueError: For a ``name`` not in :data:`RULES`, or an ``on`` that is not a bool.
    """
    name = choice("name", name, RULES)
    on = flag("on", on)
    off = set(_ACTIVE.get("rules off", ()))
    _ACTIVE["rules off"] = frozenset(off - {name} if on else off | {name})
