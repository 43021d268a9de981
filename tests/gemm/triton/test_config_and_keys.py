"""What :class:`~gpukb.gemm.triton.configs.Config` accepts and refuses, with each refusal's whole message, and the
Triton GEMM's host helpers beneath a plan: the storage order read from a matrix's strides, the bytes a tensor spans,
the stand-in for an output ``matmul`` allocates, and the key plans are kept by. Expected values are worked by hand
from the ranges the docstrings give and from the tensors' shapes, strides and addresses; nothing is launched."""

from __future__ import annotations

import pytest

from gpukb.gemm.triton.configs import MAX_SPLIT_K, Config, block_parts

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from gpukb.gemm.triton import matmul as mm  # noqa: E402
from tests.helpers import exactly  # noqa: E402

F16 = torch.float16
BLOCK = (
    "{} must be a power of two ≥ 16 (tl.dot's shortest K; the smallest M and N tiled here) and ≤ 1024 (Triton's "
    "largest tile is 2^20 elements); got {}"
)
TAIL_TMA_ONLY = "split_tail applies to the 'tma' kernel without warp_specialize"
TMA_ONLY = "warp_specialize, epilogue_subtile and fp8_imprecise_acc apply to the 'tma' kernel only"
TWO_SIDES = (
    "{} must be a power of two from 16 to 1024 or, for the 'tma' kernel, the sum of two powers of two ≥ 16 (a tile "
    "of two blocks: 192 = 128 + 64); got {}"
)
TWO_OPTIONS = (
    "a tile of two blocks ({}) runs on the 'tma' kernel without warp_specialize, epilogue_subtile, split_tail, "
    "stream_k or fp8_imprecise_acc"
)
ACC = "fp8_imprecise_acc must be None, an int from 16 to block_k ({}) or a multiple of block_k; got {}"


# --- Config ---------------------------------------------------------------------------------------------------------


def test_configs_at_the_edges_of_every_range_are_accepted() -> None:
    # tiles of 16 and of 1024 (2^20 elements), group_m 1..64, num_stages 1..16, split_k 1..128, and an fp8 chunk of
    # 16, of one K step and of two K steps
    for kernel in ("tma", "blocked", "splitk"):
        for block in (16, 1024):
            assert Config(kernel, block, block, block).block_k == block
        for group_m, num_stages in ((1, 1), (64, 16)):
            assert Config(kernel, 16, 16, 16, group_m=group_m, num_stages=num_stages).num_stages == num_stages
    assert MAX_SPLIT_K == 128
    for split in (1, 128):
        assert Config("splitk", 16, 16, 16, split_k=split).split_k == split
    for acc in (16, 32, 64):
        assert Config("tma", 16, 16, 32, fp8_imprecise_acc=acc).fp8_imprecise_acc == acc


def test_a_tile_side_may_be_two_blocks_on_the_persistent_kernel() -> None:
    assert [block_parts(size) for size in (16, 192, 160, 48, 768, 208, 1)] == [
        (16, 0), (128, 64), (128, 32), (32, 16), (512, 256), (128, 80), (1, 0)
    ]  # fmt: skip
    assert Config("tma", 192, 128, 64).two_part
    assert Config("tma", 128, 768, 64).two_part
    assert not Config("tma", 128, 256, 64).two_part
    assert Config("tma", 192, 160, 64, flatten=False).label == "tma 192x160x64 g8 s3 w8 noflat"
    for size, error in ((0, ValueError), (1025, ValueError), (2**100, ValueError), (True, TypeError),
                        (192.0, TypeError), (float("nan"), TypeError), ("192", TypeError)):  # fmt: skip
        with pytest.raises(error, match="size must be"):
            block_parts(size)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("tma", 2048, 16, 16), {}, BLOCK.format("block_m", 2048)),  # a power of two, past 1024
        (("tma", 16, 32.0, 16), {}, BLOCK.format("block_n", 32.0)),  # a float, even a power of two
        (("tma", 208, 16, 16), {}, TWO_SIDES.format("block_m", 208)),  # 128 + 80: 80 is no block
        (("tma", 16, 24, 16), {}, TWO_SIDES.format("block_n", 24)),  # 16 + 8: a block under 16
        (("tma", 16, 1023, 16), {}, TWO_SIDES.format("block_n", 1023)),
        (("tma", 16, 16, 48), {}, BLOCK.format("block_k", 48)),  # K steps are one block
        (("blocked", 48, 16, 16), {}, BLOCK.format("block_m", 48)),  # two blocks: the persistent kernel only
        (("splitk", 16, 192, 16), {}, BLOCK.format("block_n", 192)),
        (("tma", 48, 16, 16), {"warp_specialize": True}, TWO_OPTIONS.format("48x16")),
        (("tma", 16, 48, 16), {"epilogue_subtile": True}, TWO_OPTIONS.format("16x48")),
        (("tma", 48, 48, 16), {"split_tail": True}, TWO_OPTIONS.format("48x48")),
        (("tma", 48, 16, 16), {"stream_k": True}, TWO_OPTIONS.format("48x16")),
        (("tma", 48, 16, 32), {"fp8_imprecise_acc": 32}, TWO_OPTIONS.format("48x16")),
        (("tma", 16, 16, 16), {"num_stages": 0}, "num_stages must be in 1..16; got 0"),
        (("tma", 16, 16, 16), {"num_stages": 17}, "num_stages must be in 1..16; got 17"),
        (("tma", 16, 16, 16), {"group_m": True}, "group_m must be in 1..64; got True"),  # True == 1, but a bool
        (("blocked", 16, 16, 16), {"epilogue_subtile": True}, TMA_ONLY),  # each of the three alone
        (("blocked", 16, 16, 16), {"fp8_imprecise_acc": 32}, TMA_ONLY),
        (("blocked", 16, 16, 16), {"warp_specialize": True}, TMA_ONLY),
        (("blocked", 16, 16, 16), {"pad_rows": True},
         "pad_rows applies to the 'tma' and 'splitk' kernels (the blocked kernel reads any rows)"),
        (("tma", 16, 16, 16), {"pad_rows": 1}, "pad_rows must be a bool; got 1"),
        (("tma", 16, 16, 16), {"split_tail": 1}, "split_tail must be a bool; got 1"),
        (("splitk", 16, 16, 16), {"split_tail": True}, TAIL_TMA_ONLY),
        (("tma", 16, 16, 16), {"split_tail": True, "warp_specialize": True}, TAIL_TMA_ONLY),
        (("splitk", 16, 16, 16), {"epilogue_subtile": True},
         "warp_specialize and epilogue_subtile apply to the 'tma' kernel only"),
        (("splitk", 16, 16, 16), {"split_k": True}, "split_k must be None or an int from 1 to 128; got True"),
        (("splitk", 16, 16, 16), {"split_k": 2.5}, "split_k must be None or an int from 1 to 128; got 2.5"),
        (("tma", 16, 16, 64), {"fp8_imprecise_acc": 8}, ACC.format(64, 8)),  # fewer than 16
        (("tma", 16, 16, 16), {"fp8_imprecise_acc": 40}, ACC.format(16, 40)),  # past block_k, not a multiple
        (("tma", 16, 16, 32), {"fp8_imprecise_acc": 64.0}, ACC.format(32, 64.0)),  # a float multiple
        (("tma", 16, 16, 32), {"fp8_imprecise_acc": True}, ACC.format(32, True)),
    ],
)  # fmt: skip
def test_a_config_is_refused_with_the_whole_message(args, kwargs, message: str) -> None:
    with pytest.raises(ValueError, match=exactly(message)):
        Config(*args, **kwargs)


# --- storage orders and byte extents ------------------------------------------------------------------------------


def _view(shape: tuple[int, int], stride: tuple[int, int]):
    return torch.empty(64, dtype=F16).as_strided(shape, stride)


@pytest.mark.parametrize(
    ("shape", "stride", "layout"),
    [
        ((3, 4), (4, 1), "row"),
        ((3, 4), (6, 1), "row"),  # rows 6 apart: padded
        ((3, 4), (1, 3), "col"),
        ((1, 1), (1, 1), "row"),
        ((1, 4), (1, 1), "row"),  # a contiguous 4×1 column transposed: one row, unit steps along it
        ((4, 1), (1, 4), "row"),  # a 1×4 row transposed: one column, any column pitch
        ((1, 4), (8, 2), "col"),  # one row whose columns are 2 apart: column-major with a pitch of 2
        ((4, 1), (2, 8), "row"),  # one column whose rows are 2 apart: row-major with a pitch of 2
        ((3, 4), (0, 1), None),  # a row broadcast to 3 rows: rows overlap
        ((3, 4), (1, 0), None),  # a column broadcast to 4 columns
        ((3, 2), (1, 1), None),  # overlapping windows
        ((4, 4), (2, 8), None),  # every other row of a column-major matrix
        ((2, 4), (3, 2), None),
    ],
)
def test_the_storage_order_read_from_the_strides(shape, stride, layout) -> None:
    # "row": a unit step along each row (or one column) and rows that do not overlap (or one row); "col" likewise
    # down the columns; a matrix that is both is read as row-major
    assert mm._layout(_view(shape, stride)) == layout


@pytest.fixture
def interpret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")


TMA = Config("tma", 16, 32, 16, group_m=2, num_stages=1, num_warps=4)


@pytest.mark.usefixtures("interpret")
def test_a_broadcast_operand_is_copied_and_a_transposed_column_is_read_in_place() -> None:
    b, out = torch.empty(16, 32, dtype=F16), torch.empty(16, 32, dtype=F16)
    broadcast = torch.empty(16, dtype=F16).expand(16, 16)  # every row the same 16 elements: stride 0 between rows
    assert mm.staging(broadcast, b, out, TMA)["A"] == (
        "(shape (16, 16), strides (0, 1)) must be row-major or col-major for a tensor descriptor"
    )
    # one row of 16 fp16 elements, 32 bytes, read as a row; as a column it would have a pitch of 2 bytes
    one_row = torch.empty(16, 1, dtype=F16).t()
    assert mm.staging(one_row, b, out[:1], TMA) == {"A": None, "B": None, "C": None}
    assert mm.layout_code(one_row, b) == "NN"


def test_the_bytes_a_tensor_spans() -> None:
    assert mm._extent(_view((3, 4), (8, 1))) == (2 * 8 + 3 + 1) * 2  # first element to just past the last
    assert mm._extent(_view((3, 4), (1, 3))) == (2 + 3 * 3 + 1) * 2
    assert mm._extent(_view((3, 4), (0, 1))) == 4 * 2
    assert mm._extent(torch.empty(0, 4, dtype=F16)) == 0
    assert mm._extent(torch.empty(4, 0)) == 0


@pytest.mark.usefixtures("interpret")
def test_an_empty_tensor_shares_no_memory() -> None:
    # an empty out at B's address, an empty A at out's: no byte in common, so no refusal; K = 0 gives zeros
    b = torch.randn(4, 5).half()
    out = b[:0]
    assert mm.matmul(torch.empty(0, 4, dtype=F16), b, out=out) is out
    out = torch.full((3, 5), float("nan"), dtype=F16)
    assert torch.equal(mm.matmul(out[:, :0], torch.empty(0, 5, dtype=F16), out=out), torch.zeros(3, 5, dtype=F16))


# --- the output matmul allocates ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("interpret")
def test_an_output_of_its_own_is_row_major_and_aligned() -> None:
    # A 53×208 and B 208×32 read in place; an output of its own, 53 rows of 64 bytes: no copy of C, so a split tail
    # makes its two plans (48 rows persistent, the last tile's 13 K steps in 3 slices), and a plain plan copies nothing
    m, n, k = 53, 32, 208
    a, b = torch.randn(m, k).half(), torch.randn(k, n).half()
    tail = Config("tma", 16, 32, 16, group_m=2, num_stages=1, num_warps=4, split_tail=True)
    plan = mm._make_plan(a, b, None, F16, tail, m, n, k)
    assert isinstance(plan, mm._TailPlan)
    assert (plan.rows, plan.split) == (48, 3)
    assert not any(mm._make_plan(a, b, None, F16, TMA, m, n, k).staged.values())
    stand_in = mm._OutShape(m, 20, F16)  # rows of 40 bytes: C alone cannot be described
    assert mm.staging(a, b[:, :20], stand_in, TMA)["C"] == (
        "base address and leading stride (20 elements of 2 bytes) must be multiples of 16 bytes for a tensor descriptor"
    )


# --- the key plans are kept by ------------------------------------------------------------------------------------


def _at(residue: int, shape=(16, 16)):
    """A contiguous fp16 matrix whose address is ``residue`` bytes past a multiple of 32."""
    buf = torch.empty(shape[0] * shape[1] + 32, dtype=F16)
    skip = ((residue - buf.data_ptr()) % 32) // 2
    view = buf[skip : skip + shape[0] * shape[1]].view(shape)
    assert view.data_ptr() % 32 == residue
    return view


@pytest.mark.parametrize("out", [False, True], ids=["own output", "given output"])
def test_plans_are_kept_by_alignment_not_by_address(out: bool) -> None:
    def key(a_at: int, b_at: int, c_at: int = 0) -> tuple:
        return mm._plan_key(_at(a_at), _at(b_at), _at(c_at) if out else None, None, TMA)

    aligned = key(0, 0)
    # 16 bytes further on is as aligned: the same plan (bit 4 of an address is no part of the key)
    assert key(16, 0) == aligned
    assert key(0, 16) == aligned
    # 2 bytes off a 16-byte boundary: a plan of its own (it copies what a descriptor cannot read)
    assert key(2, 0) != aligned
    assert key(0, 2) != aligned
    if out:
        assert key(0, 0, 16) == aligned
        assert key(0, 0, 2) != aligned
        assert key(2, 2, 2) != aligned
