"""Thread-index arithmetic against a brute-force enumeration of launches."""

from __future__ import annotations

import itertools

import pytest

from gpukb.cuda import indexing as ix


def test_the_worked_examples() -> None:
    assert ix.global_index_1d(2, 8, 5) == 21  # thread 5 of block 2, 8 threads per block
    assert ix.blocks_for(50_000, 256) == 196
    assert ix.blocks_for(0, 256) == 0
    assert ix.blocks_for(256, 256) == 1
    headers, rows = ix.launch_table((3, 2), (4, 3))
    assert len(rows) == 72
    assert len(headers) == 5
    assert rows[0] == ["(0, 0)", "(0, 0)", "(0, 0)", 0, 0]
    assert rows[-1] == ["(2, 1)", "(3, 2)", "(11, 5)", 71, 71]


@pytest.mark.parametrize(("grid", "block"), [((3, 2), (4, 3)), ((2, 3, 2), (3, 1, 2)), (5, 7), ((1, 4), (8, 2))])
def test_every_thread_gets_a_distinct_index(grid, block) -> None:
    g, b = ix._dim(grid, "g", True), ix._dim(block, "b", True)
    total = g.x * g.y * g.z * b.x * b.y * b.z
    launch = list(ix.threads(grid, block))
    assert len(launch) == total
    linear = sorted(ix.linear_index(bi, block, ti, grid) for bi, ti in launch)
    major = sorted(ix.block_major_index(bi, block, ti, grid) for bi, ti in launch)
    assert linear == major == list(range(total))
    # Row-major: the coordinates read back from the index.
    width, height = g.x * b.x, g.y * b.y
    for bi, ti in launch:
        x, y, z = ix.global_coordinates(bi, block, ti)
        assert ix.linear_index(bi, block, ti, grid) == x + width * (y + height * z)


def test_one_dimensional_agrees_with_the_general_form() -> None:
    for b, d, t in itertools.product(range(4), (1, 8, 32), range(8)):
        if t < d:
            assert ix.global_index_1d(b, d, t) == ix.linear_index(b, d, t, 4) == ix.block_major_index(b, d, t, 4)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match=r"threadIdx\.x 8 is outside blockDim\.x 8"):
        ix.global_index_1d(0, 8, 8)
    with pytest.raises(ValueError, match=r"blockIdx \(3, 0, 0\) is outside gridDim \(3, 2, 1\)"):
        ix.linear_index((3, 0), (4, 3), (0, 0), (3, 2))
    with pytest.raises(ValueError, match=r"blockDim.y must be an int ≥ 1, ≤ 1024; got 0"):
        ix.global_coordinates(0, (4, 0), 0)
    with pytest.raises(TypeError, match="an int or a tuple of 1 to 3 ints"):
        ix.global_coordinates(0, (1, 2, 3, 4), 0)
    with pytest.raises(ValueError, match="threads_per_block must be an int ≥ 1, ≤ 1024; got 0"):
        ix.blocks_for(10, 0)


def test_a_three_dimensional_launch_table_shows_z() -> None:
    headers, rows = ix.launch_table((2, 1, 2), (2, 1, 2))
    assert headers[:3] == ["blockIdx (x, y, z)", "threadIdx (x, y, z)", "global (x, y, z)"]
    assert len(rows) == 16
    assert rows[-1][:3] == ["(1, 0, 1)", "(1, 0, 1)", "(3, 0, 3)"]
    assert sorted(r[3] for r in rows) == list(range(16))  # every thread has its own row-major index
    assert ix.launch_table((3, 2), (4, 3))[0][0] == "blockIdx (x, y)"  # a 2-D launch keeps two components


@pytest.mark.parametrize(
    ("grid", "block", "message"),
    [
        (2, 2048, r"blockDim\.x must be an int ≥ 1, ≤ 1024; got 2048 \(a CUDA launch limit\)"),
        (1, (2, 2, 128), r"blockDim\.z must be an int ≥ 1, ≤ 64; got 128"),
        (1, (64, 32), r"blockDim \(64, 32, 1\) has 2,048 threads; a block has at most 1024"),
        ((1, 65536), 1, r"gridDim\.y must be an int ≥ 1, ≤ 65535; got 65536"),
        (2**31, 1, r"gridDim\.x must be an int ≥ 1, ≤ 2147483647; got 2147483648"),
        (2**30, 1, r"keep the launch at 4096 threads or fewer; gridDim \(1073741824, 1, 1\) .* has 1,073,741,824"),
    ],
)
def test_every_launch_function_holds_the_cuda_limits(grid, block, message) -> None:
    """The limits hold in the table (which used to hang on a huge grid) and in every index function."""
    with pytest.raises(ValueError, match=message):
        ix.launch_table(grid, block)
    if "4096" not in message:
        zero = (0, 0, 0)
        for call in (
            lambda: ix.linear_index(zero, block, zero, grid),
            lambda: ix.block_major_index(zero, block, zero, grid),
        ):
            with pytest.raises(ValueError, match=message):
                call()
    with pytest.raises(ValueError, match=r"needs 4,294,967,296 blocks of 1; a grid's x dimension holds at most"):
        ix.blocks_for(2**32, 1)
