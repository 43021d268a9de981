"""Thread-index arithmetic against a brute-force enumeration of launches."""

from __future__ import annotations

import itertools

import pytest

from gpukb.cuda import indexing as ix
from tests.helpers import exactly


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


_BIG = 2**31 - 1  # the largest gridDim.x: one past every blockIdx.x
_BLOCK_IDX = "blockIdx.x must be an int ≥ 0, ≤ 2147483646; got 2147483647"
_BLOCK_DIM = "blockDim.x must be an int ≥ 1, ≤ 1024; got 1025"
_THREAD_IDX = "threadIdx.x must be an int ≥ 0, ≤ 1023; got 1024"
#: Each index function given one argument past its own CUDA limit (blockIdx below gridDim's 2^31 - 1, blockDim 1 to
#: 1024, threadIdx below 1024, gridDim up to 2^31 - 1), and the message that must name that argument, its axis and
#: its limit; or an index outside the launch it was given, named with the launch's sizes. An argument past its own
#: limit is named before what it does to the rest (a blockIdx outside a 1-block grid, a table of 5 × 1025 threads).
_REFUSED = {
    "global_index_1d blockIdx": (lambda: ix.global_index_1d(_BIG, 1, 0), _BLOCK_IDX),
    "global_index_1d blockDim": (lambda: ix.global_index_1d(0, 1025, 0), _BLOCK_DIM),
    "global_index_1d threadIdx": (lambda: ix.global_index_1d(0, 1024, 1024), _THREAD_IDX),
    "global_coordinates blockIdx": (lambda: ix.global_coordinates(_BIG, 1, 0), _BLOCK_IDX),
    "global_coordinates threadIdx": (lambda: ix.global_coordinates(0, 1024, 1024), _THREAD_IDX),
    "global_coordinates outside": (
        lambda: ix.global_coordinates(0, (4, 3), (4, 0)),
        "threadIdx (4, 0, 0) is outside blockDim (4, 3, 1)",
    ),
    "linear_index blockIdx": (lambda: ix.linear_index(_BIG, 1, 0, _BIG), _BLOCK_IDX),
    "linear_index blockDim": (lambda: ix.linear_index(1, 1025, 0, 1), _BLOCK_DIM),
    "block_major_index blockIdx": (lambda: ix.block_major_index(_BIG, 1, 0, _BIG), _BLOCK_IDX),
    "block_major_index threadIdx": (lambda: ix.block_major_index(0, 1024, 1024, 1), _THREAD_IDX),
    "block_major_index block outside": (
        lambda: ix.block_major_index((3, 0), (4, 3), 0, (3, 2)),
        "blockIdx (3, 0, 0) is outside gridDim (3, 2, 1)",
    ),
    "block_major_index thread outside": (
        lambda: ix.block_major_index(0, (4, 3), (0, 3), (3, 2)),
        "threadIdx (0, 3, 0) is outside blockDim (4, 3, 1)",
    ),
    "threads gridDim": (
        lambda: next(ix.threads(_BIG + 1, 1)),
        "gridDim.x must be an int ≥ 1, ≤ 2147483647; got 2147483648",
    ),
    "threads blockDim": (lambda: next(ix.threads(1, 1025)), _BLOCK_DIM),
    "launch_table blockDim": (lambda: ix.launch_table(5, 1025), _BLOCK_DIM),
}


@pytest.mark.parametrize(("call", "message"), list(_REFUSED.values()), ids=list(_REFUSED))
def test_each_index_function_names_the_argument_past_its_limit(call, message) -> None:
    limit = " (a CUDA launch limit)" if "must be" in message else ""
    with pytest.raises(ValueError, match=exactly(message + limit)):
        call()


def test_the_largest_block_and_grid_are_accepted() -> None:
    """The limits are inclusive: a block of 1024 threads, its last thread, the last block of the largest grid."""
    assert ix.global_index_1d(1, 1024, 1023) == 2047
    assert ix.global_index_1d(_BIG - 1, 1, 0) == _BIG - 1
    assert ix.blocks_for(_BIG, 1) == _BIG  # exactly the grid's x limit
    with pytest.raises(ValueError, match=r"^n = 2,147,483,648 needs 2,147,483,648 blocks of 1; .* 2,147,483,647 \("):
        ix.blocks_for(_BIG + 1, 1)
    with pytest.raises(ValueError, match=r"^n must be an int ≥ 0; got -1$"):
        ix.blocks_for(-1, 256)


@pytest.mark.parametrize(
    ("grid", "block"),
    [(5, (1, 16, 64)), (5, (1, 1024)), ((1, 1, 5), 1024), ((1, 5), 1024)],
    ids=["blockDim.z", "blockDim.y", "gridDim.z", "gridDim.y"],
)
def test_the_launch_table_counts_threads_along_every_axis(grid, block) -> None:
    """5 × 1024 = 5,120 threads each way, whichever axis holds the factor: over the table's 4,096."""
    with pytest.raises(ValueError, match=r"has 5,120$"):
        ix.launch_table(grid, block)


def test_the_launch_table_holds_exactly_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the limit the table lists every thread; one more is refused (a limit of 6 here: 4,096 rows cost 0.5 s)."""
    monkeypatch.setattr(ix, "LAUNCH_TABLE_LIMIT", 6)
    headers, rows = ix.launch_table(2, 3)
    assert headers == ["blockIdx (x, y)", "threadIdx (x, y)", "global (x, y)", "row-major index", "block-major index"]
    assert [r[2:] for r in rows] == [[f"({i}, 0)", i, i] for i in range(6)]
    with pytest.raises(ValueError, match=r"keep the launch at 6 threads or fewer; gridDim \(7, 1, 1\) .* has 7$"):
        ix.launch_table(7, 1)


@pytest.mark.parametrize(("grid", "block"), [((1, 1, 2), 1), (1, (1, 1, 2))], ids=["grid z", "block z"])
def test_a_z_extent_of_two_in_either_size_shows_z(grid, block) -> None:
    headers, rows = ix.launch_table(grid, block)
    assert headers[:3] == ["blockIdx (x, y, z)", "threadIdx (x, y, z)", "global (x, y, z)"]
    assert [r[2] for r in rows] == ["(0, 0, 0)", "(0, 0, 1)"]


def test_below_the_minimum_is_no_launch_limit_and_z_counts_in_the_thread_total() -> None:
    """A size of 0 is refused without calling it a launch limit (the limit is the top); (32, 32, 2) has
    32 · 32 · 2 = 2,048 threads, over the 1024 a block may have though each axis is within its own limit."""
    with pytest.raises(ValueError, match=r"^blockDim\.x must be an int ≥ 1, ≤ 1024; got 0$"):
        ix.global_index_1d(0, 0, 0)
    with pytest.raises(ValueError, match=r"^blockDim \(32, 32, 2\) has 2,048 threads; a block has at most 1024"):
        next(ix.threads(1, (32, 32, 2)))
