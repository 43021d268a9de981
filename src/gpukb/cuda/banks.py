"""Shared-memory banks: which accesses of a warp conflict, and how padding or an XOR swizzle removes the conflict.

Shared memory is divided into 32 banks; successive 32-bit words go to successive banks, so word ``w`` lives in bank
``w mod 32``. A warp's request is served in as many passes (wavefronts) as the largest number of *distinct* words
any one bank must deliver: lanes that read the same word share it (a broadcast), lanes that read different words of
one bank wait for one another. (CUDA C++ Programming Guide, "Shared Memory" of compute capabilities 5.x and later;
the model covers 32-bit accesses, the case that guide describes.)
"""

from __future__ import annotations

from collections.abc import Sequence

from gpukb.arguments import non_negative_int, positive_int

#: Banks of shared memory, and the bytes of one bank word, on every GPU of compute capability 5.0 and later.
BANKS = 32
WORD_BYTES = 4
WARP = 32


# --8<-- [start:banks]
def wavefronts(words: Sequence[int]) -> int:
    """Passes shared memory needs for one warp's 32-bit accesses, given the word index each lane reads.

    Each bank delivers one word per pass; lanes reading the same word are served together.
    """
    if len(words) != WARP:
        raise ValueError(f"one word index per lane of a {WARP}-lane warp; got {len(words)}")
    per_bank: dict[int, set[int]] = {}
    for w in words:
        per_bank.setdefault(non_negative_int("word index", w) % BANKS, set()).add(w)
    return max(len(distinct) for distinct in per_bank.values())


def tile_column(columns: int, column: int = 0, swizzle: bool = False) -> list[int]:
    """Word indices of a warp reading one column of a row-major float tile, lane ``i`` taking row ``i``.

    ``columns`` is the row length in words (32 for a 32 × 32 tile, 33 with one word of padding). With ``swizzle``
    the tile is stored with element ``(r, c)`` at column ``c XOR (r mod 32)``, so a column's 32 elements land in 32
    different banks without padding.
    """
    columns, column = positive_int("columns", columns), non_negative_int("column", column)
    if column >= columns:
        raise ValueError(f"column must be below columns = {columns}; got {column}")
    if swizzle and columns % BANKS:
        raise ValueError(f"the XOR swizzle needs rows of a multiple of {BANKS} words; got {columns}")
    return [r * columns + ((column ^ (r % BANKS)) if swizzle else column) for r in range(WARP)]
    # --8<-- [end:banks]


def strided(stride: int) -> list[int]:
    """Word indices of a warp whose lane ``i`` reads word ``i · stride``."""
    return [lane * positive_int("stride", stride) for lane in range(WARP)]


def matmul_tile_reads(tile: int, j: int = 0) -> dict[str, list[int]]:
    """Word indices the first warp of the tiled matmul's block reads in step ``j`` of its inner loop
    (:func:`gpukb.cuda.kernels.matmul_tiled`): ``sa[ty, j]`` and ``sb[j, tx]`` of row-major ``tile × tile``
    tiles, lane ``i`` being thread ``(tx, ty) = (i mod tile, i // tile)`` (x varies fastest within a warp)."""
    tile, j = positive_int("tile", tile), non_negative_int("j", j)
    if WARP % tile and tile % WARP:
        raise ValueError(f"tile must divide or be a multiple of {WARP}; got {tile}")
    if j >= tile:
        raise ValueError(f"j must be below tile = {tile}; got {j}")
    lanes = [(i % tile, i // tile) for i in range(WARP)]
    return {"sa[ty, j]": [ty * tile + j for _, ty in lanes], "sb[j, tx]": [j * tile + tx for tx, _ in lanes]}


def patterns_table() -> tuple[list[str], list[list[object]]]:
    """Access patterns of one warp, their first lanes' banks, and the passes they take: ``(headers, rows)``."""
    cases = [
        ("a row of a 32 × 32 tile (consecutive words)", strided(1)),
        ("every lane the same word (broadcast)", [0] * WARP),
        ("stride 2 words", strided(2)),
        ("a column of a 32 × 32 tile (stride 32)", tile_column(32)),
        ("a column of a 32 × 33 tile (one word of padding)", tile_column(33)),
        ("a column of a 32 × 32 tile, XOR-swizzled", tile_column(32, swizzle=True)),
    ]
    for tile in (16, 32):
        for name, words in matmul_tile_reads(tile).items():
            cases.append((f"the tiled matmul's `{name}`, {tile} × {tile} tiles", words))
    rows = [[label, ", ".join(str(w % BANKS) for w in words[:4]) + ", …", wavefronts(words)] for label, words in cases]
    return ["warp reads", "banks of lanes 0-3", "passes"], rows
