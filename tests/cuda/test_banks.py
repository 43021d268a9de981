"""Shared-memory bank conflicts: the passes a warp's 32-bit reads take, against the Programming Guide's rules."""

from __future__ import annotations

import math

import pytest

from gpukb.cuda import banks


def test_a_stride_of_s_words_takes_gcd_s_32_passes() -> None:
    for stride in range(1, 130):
        assert banks.wavefronts(banks.strided(stride)) == math.gcd(stride, 32), stride


def test_lanes_reading_one_word_share_it() -> None:
    assert banks.wavefronts([7] * 32) == 1
    assert banks.wavefronts([0] * 16 + [32] * 16) == 2  # two words of bank 0: two passes, whatever the lane count


def test_a_tile_column_conflicts_unless_padded_or_swizzled() -> None:
    for column in (0, 5, 31):
        assert banks.wavefronts(banks.tile_column(32, column)) == 32
        assert banks.wavefronts(banks.tile_column(33, column)) == 1
        assert banks.wavefronts(banks.tile_column(32, column, swizzle=True)) == 1
        # the swizzle is a permutation of each row: every element still has its own word
        assert len(set(banks.tile_column(32, column, swizzle=True))) == 32
    assert banks.wavefronts(banks.tile_column(34)) == 2  # two words of padding: stride 34, gcd(34, 32) = 2


@pytest.mark.parametrize("tile", [8, 16, 32])
def test_the_tiled_matmul_reads_shared_memory_without_conflicts(tile) -> None:
    for j in range(tile):
        reads = banks.matmul_tile_reads(tile, j)
        assert banks.wavefronts(reads["sb[j, tx]"]) == 1
        assert banks.wavefronts(reads["sa[ty, j]"]) == 1


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="one word index per lane of a 32-lane warp; got 31"):
        banks.wavefronts([0] * 31)
    with pytest.raises(ValueError, match="column must be below columns = 32; got 32"):
        banks.tile_column(32, 32)
    with pytest.raises(ValueError, match="the XOR swizzle needs rows of a multiple of 32 words; got 33"):
        banks.tile_column(33, swizzle=True)
    with pytest.raises(ValueError, match="tile must divide or be a multiple of 32; got 12"):
        banks.matmul_tile_reads(12)


def test_tile_and_column_arguments_are_named_in_errors() -> None:
    """Bad tile, step, column arguments are refused naming the argument; ``j = tile`` is one past the tile."""
    with pytest.raises(ValueError, match=r"^tile must be an int ≥ 1; got 0"):
        banks.matmul_tile_reads(0)
    with pytest.raises(ValueError, match=r"^j must be an int ≥ 0; got -1"):
        banks.matmul_tile_reads(4, -1)
    with pytest.raises(ValueError, match=r"^j must be below tile = 4; got 4"):
        banks.matmul_tile_reads(4, 4)
    with pytest.raises(ValueError, match=r"^columns must be an int ≥ 1; got 0"):
        banks.tile_column(0)
    with pytest.raises(ValueError, match=r"^column must be an int ≥ 0; got -1"):
        banks.tile_column(4, -1)


def test_a_tile_twice_the_warp_wide() -> None:
    """tile = 64 (a multiple of 32): the warp is the first 32 threads of row 0: ``sa[0, j]`` broadcast, and
    ``sb[j, 0..31]`` = words 64·j + 0..31, 32 banks."""
    reads = banks.matmul_tile_reads(64, 3)
    assert reads == {"sa[ty, j]": [3] * 32, "sb[j, tx]": list(range(192, 224))}


def test_word_and_stride_arguments_are_named_in_errors() -> None:
    with pytest.raises(ValueError, match=r"^stride must be an int ≥ 1; got 0"):
        banks.strided(0)
    with pytest.raises(ValueError, match=r"^word index must be an int ≥ 0; got -1"):
        banks.wavefronts([0] * 31 + [-1])
