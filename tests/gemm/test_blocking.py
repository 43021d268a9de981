"""The blocked matrix product: right results, traffic counted equal to the closed form, checked by an LRU cache."""

from __future__ import annotations

import numpy as np
import pytest

from gpukb.gemm.blocking import (
    blocked_matmul,
    capacity_rows,
    intensity,
    largest_block,
    level_comparison,
    lru_capacity_needed,
    lru_traffic,
    normalize_tiles,
    reuse_analysis,
    slides_moves,
    traffic_rows,
)
from gpukb.gemm.pages.ground_up import blocking_capacity, blocking_levels, blocking_traffic

TILINGS = [
    ((16, 16, 16), 4),
    ((16, 16, 16), [8, 2]),
    ((24, 16, 32), (8, 4, 16)),
    ((24, 16, 32), [(12, 8, 16), (6, 4, 4), (3, 2, 1)]),
    ((8, 12, 6), 1),
    ((8, 12, 6), (8, 12, 6)),
]


def _operands(m: int, n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))


@pytest.mark.parametrize(("dims", "tiles"), TILINGS)
def test_blocked_product_is_c_plus_ab(dims: tuple[int, int, int], tiles) -> None:
    m, n, k = dims
    a, b, c = _operands(m, n, k)
    run = blocked_matmul(a, b, c, tiles)
    np.testing.assert_allclose(run.result, c + a @ b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(blocked_matmul(a, b, tiles=tiles).result, a @ b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("dims", "tiles"), TILINGS)
def test_counted_traffic_equals_the_closed_form(dims: tuple[int, int, int], tiles) -> None:
    m, n, k = dims
    a, b, c = _operands(m, n, k)
    assert blocked_matmul(a, b, c, tiles).levels == reuse_analysis(m, n, k, tiles)


def test_single_level_square_matches_the_slides_formula() -> None:
    """The slides' m = (2N + 2)·n² and q = 2n³ / m ≈ n / N, for every block count that divides n."""
    n = 48
    a, b, _ = _operands(n, n, n)
    for blocks in (1, 2, 3, 4, 6, 8, 12, 16, 24, 48):
        level = blocked_matmul(a, b, tiles=n // blocks).levels[0]
        assert level.moves == slides_moves(n, blocks) == (2 * blocks + 2) * n * n
        q = intensity(2 * n**3, level.moves)
        assert q == pytest.approx(n / (blocks + 1))  # exactly n/(N+1): "≈ n/N" for large N
        assert q < n / blocks
    # N = 1 (one block, the whole matrix) moves each element once, C twice: the fewest moves.
    assert slides_moves(n, 1) == 4 * n * n


def test_three_tiles_are_what_a_level_must_hold() -> None:
    (level,) = reuse_analysis(32, 32, 32, (8, 4, 2))
    assert level.footprint == 8 * 2 + 2 * 4 + 8 * 4


@pytest.mark.parametrize("block", [1, 2, 4, 8, 16])
def test_an_lru_cache_of_three_tiles_moves_what_the_analysis_says(block: int) -> None:
    n = 16 if block == 16 else 32
    loads, stores = lru_traffic(n, n, n, block, capacity=3 * block * block)
    (formula,) = reuse_analysis(n, n, n, block)
    assert (loads, stores) == (formula.loads, formula.c_stores)


def test_an_lru_cache_too_small_for_the_tiles_moves_far_more() -> None:
    n, block = 32, 8
    (formula,) = reuse_analysis(n, n, n, block)
    loads, stores = lru_traffic(n, n, n, block, capacity=block * block)  # not even the C tile and a line
    assert loads + stores > 5 * formula.moves


@pytest.mark.parametrize("block", [1, 2, 4, 8])
def test_an_lru_cache_needs_about_one_tile_not_three(block: int) -> None:
    needed = lru_capacity_needed(block)
    n = 2 * block
    formula = reuse_analysis(n, n, n, block)[0].moves
    assert sum(lru_traffic(n, n, n, block, needed)) == formula
    assert sum(lru_traffic(n, n, n, block, needed - 1)) > formula
    assert block * block < needed <= 3 * block * block
    if block >= 4:
        assert needed < 2 * block * block  # the outer-product order keeps one tile, not three


def test_optimal_value_sqrt_m_over_3_is_a_block_size_not_a_block_count() -> None:
    """Decides the erratum on "the optimal value of N = √(size of fast memory / 3)".

    With fast memory M = 48 elements, √(M/3) = 4. Read as the slides define N (blocks per side), the block size
    would be n/4: too small for n = 8, too large to fit for n = 32. Read as a block size, b = 4 fits three tiles
    and an LRU cache of M elements moves exactly what the analysis predicts, at any n.
    """
    fast = 48
    best = largest_block(fast)
    assert best == 4 == int(np.sqrt(fast / 3))
    for n in (8, 32):
        slides_block = n // 4  # N = √(M/3) = 4 blocks per side
        ours = sum(lru_traffic(n, n, n, best, fast))
        theirs = sum(lru_traffic(n, n, n, slides_block, fast))
        assert ours == reuse_analysis(n, n, n, best)[0].moves
        assert theirs > ours
    # q is bounded by the block size, not by n: for fixed M it does not grow with the matrix.
    qs = [intensity(2 * n**3, sum(lru_traffic(n, n, n, best, fast))) for n in (8, 16, 32)]
    assert max(qs) < best


def test_largest_block() -> None:
    assert [largest_block(m) for m in (3, 11, 12, 47, 48, 3 * 64 * 64)] == [1, 1, 2, 3, 4, 64]
    with pytest.raises(ValueError, match="at least 3 elements"):
        largest_block(2)


def test_traffic_rows_and_tables() -> None:
    rows = traffic_rows(16, (1, 4, 16))
    assert [(b, blocks) for b, blocks, *_ in rows] == [(1, 16), (4, 4), (16, 1)]
    assert all(moves == formula for _, _, moves, formula, _, _ in rows)
    table = blocking_traffic(16, (2, 8))
    assert table.splitlines()[2].startswith("| 2 | 8 | ")
    assert "| 8 | 2 | 1,536 | 1,536 | 192 |" in table
    two = blocking_levels(32, 32, 32, [16, 4])
    assert "| 1 | 16×16×16 | 2,048 / 2,048 | 2,048 / 2,048 | 1,024 + 1,024 / 1,024 + 1,024 | 768 |" in two
    assert "| 2 | 4×4×4 | 8,192 / 8,192 |" in two
    assert all(counted == formula for counted, formula in level_comparison(32, 32, 32, [16, 4]))
    assert capacity_rows((2,)) == [(2, 12, lru_capacity_needed(2))]
    needed = lru_capacity_needed(2)
    assert blocking_capacity((2,)).splitlines()[2] == f"| 2 | 12 | {needed} | {needed / 4:.2f} |"


@pytest.mark.parametrize(
    ("tiles", "message"),
    [
        (5, r"level 1: bm=5 does not divide the 16×16×16 product \(16\)"),
        ([8, 3], r"level 2: bm=3 does not divide the level-1 tile \(8, 8, 8\) \(8\)"),
        ([], "non-empty list"),
        ([(2, 2)], r"a tile is a block size or \(bm, bn, bk\)"),
        (0, "level 1 bm must be an int ≥ 1; got 0"),
    ],
)
def test_bad_tilings_are_refused(tiles, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        normalize_tiles(16, 16, 16, tiles)


def test_bad_operands_are_refused() -> None:
    with pytest.raises(ValueError, match=r"A must be m×k and B k×n; got shapes \(4, 3\) and \(4, 2\)"):
        blocked_matmul(np.ones((4, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="C must be 4×2"):
        blocked_matmul(np.ones((4, 3)), np.ones((3, 2)), np.ones((2, 4)))
    with pytest.raises(TypeError, match=r"m must be an int ≥ 1; got 4\.0"):
        reuse_analysis(4.0, 4, 4, 1)
    with pytest.raises(ValueError, match="blocks=3 must divide n=16"):
        slides_moves(16, 3)
