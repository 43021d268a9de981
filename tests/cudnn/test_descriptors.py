"""The tensor descriptor model: packed strides equal torch's for contiguous, channels_last and channels_last_3d
tensors, offsets, overlap, the size-1 stride rule, and bad descriptors refused naming the rule and the value."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from gpukb.cudnn import descriptors
from gpukb.cudnn.descriptors import (
    ENUMERATE_LIMIT,
    FORMATS,
    DescriptorError,
    dims_of,
    fix_size_one_strides,
    layout_grid,
    offset,
    overlapping,
    packed_strides,
    tensor,
)
from gpukb.cudnn.facts import fact, load

SHAPES_4D = [(1, 64, 5, 4), (8, 3, 7, 5), (2, 1, 5, 4), (1, 1, 1, 1), (3, 16, 1, 9)]
SHAPES_5D = [(2, 8, 3, 5, 4), (1, 3, 1, 7, 2)]


@pytest.mark.parametrize("dims", SHAPES_4D + SHAPES_5D)
def test_packed_strides_equal_torch_strides(dims: tuple[int, ...]) -> None:
    """NCHW/NCDHW is torch's contiguous layout, NHWC its channels_last and NDHWC its channels_last_3d: where torch
    reports the packed strides, they are ours; where it does not, only size-1 dimensions differ."""
    x = torch.empty(dims)
    logical, last = ("NCHW", torch.channels_last) if len(dims) == 4 else ("NCDHW", torch.channels_last_3d)
    channels_last = "NHWC" if len(dims) == 4 else "NDHWC"
    assert packed_strides(dims, logical) == x.stride()
    cl = x.to(memory_format=last)
    ours = packed_strides(dims, channels_last)
    if cl.stride() != ours:  # torch keeps its strides where C = 1: the tensor is channels-last either way
        assert cl.is_contiguous(memory_format=last)
        assert [i for i, (a, b) in enumerate(zip(cl.stride(), ours, strict=True)) if a != b] == [
            i for i, d in enumerate(dims) if d == 1 and cl.stride()[i] != ours[i]
        ]
        assert fix_size_one_strides(dims, cl.stride(), channels_last) == ours


@pytest.mark.parametrize("dims", SHAPES_4D[:2] + SHAPES_5D[:1])
def test_every_named_format_packs_densely(dims: tuple[int, ...]) -> None:
    """Each named format is a permutation of the logical letters; its offsets cover 0..N-1 exactly once, and the
    letters sorted by decreasing stride spell the format."""
    logical = "NCHW" if len(dims) == 4 else "NCDHW"
    assert FORMATS[len(dims)][0] == logical
    for fmt in FORMATS[len(dims)]:
        desc = tensor(dims, fmt=fmt)
        offsets = sorted(desc.offset(i) for i in itertools.product(*(range(d) for d in dims)))
        assert offsets == list(range(int(np.prod(dims))))
        moving = [letter for letter in logical if dims[logical.index(letter)] > 1]  # size-1 strides tie
        order = "".join(sorted(moving, key=lambda letter: -desc.strides[logical.index(letter)]))
        assert order == "".join(letter for letter in fmt if letter in moving)
        assert not desc.overlaps()
        assert desc.span == desc.elements


def test_offsets_are_index_times_stride_and_match_torch_storage() -> None:
    dims = (1, 64, 5, 4)
    x = torch.arange(64 * 20).reshape(dims)  # each element holds its NCHW offset
    cl = x.to(memory_format=torch.channels_last)
    nhwc = tensor(dims, fmt="NHWC")
    flat = cl.permute(0, 2, 3, 1).reshape(-1)  # the storage of the channels_last copy, in memory order
    for index in [(0, 0, 0, 0), (0, 1, 2, 3), (0, 63, 4, 3), (0, 32, 0, 1)]:
        assert int(flat[nhwc.offset(index)]) == tensor(dims, fmt="NCHW").offset(index) == int(x[index])
    grid = layout_grid(dims, "NCHW")[0]
    assert grid[0].ravel().tolist() == list(range(20))
    assert grid[63, 4, 3] == 1279
    assert layout_grid(dims, "NHWC")[0, :, 0, 0].tolist() == list(range(64))  # one pixel's channels are adjacent
    with pytest.raises(IndexError, match=r"index \(0, 64, 0, 0\) is outside dims \(1, 64, 5, 4\)"):
        nhwc.offset((0, 64, 0, 0))


def test_size_one_strides_are_rewritten_to_the_packed_value() -> None:
    view = torch.empty(5, 4, 1, 64).permute(2, 3, 0, 1)
    assert view.shape == (1, 64, 5, 4)
    assert view.stride() == (64, 1, 256, 64)
    assert view.is_contiguous(memory_format=torch.channels_last)  # torch ignores the size-1 stride ...

    def order(strides: tuple[int, ...]) -> str:  # letters by decreasing stride, as a format name is read
        return "".join(sorted("NCHW", key=lambda letter: -strides["NCHW".index(letter)]))

    assert order(view.stride()) == "HNWC"  # ... but read from the strides, the layout is no format at all
    fixed = fix_size_one_strides(view.shape, view.stride(), "NHWC")
    assert order(fixed) == "NHWC"
    assert fixed == packed_strides((1, 64, 5, 4), "NHWC") == (1280, 1, 256, 64)
    assert tensor(view.shape, fixed).layout() == "NHWC"
    # Whatever a size-1 stride is, no offset changes.
    for stride in (0, 1, 7, 10**6):
        assert tensor((1, 64, 5, 4), (stride, 1, 256, 64)).offset((0, 5, 4, 3)) == 5 + 4 * 256 + 3 * 64


def test_overlap_is_allowed_for_inputs_not_outputs() -> None:
    overlap = tensor((1, 2, 3, 4), (12, 6, 2, 1))  # hStride 2 < W · wStride = 4
    assert overlap.overlaps()
    assert overlap.span < overlap.elements
    message = r"output tensor's dimensions cannot overlap .* \[rule no-overlapping-outputs\]"
    with pytest.raises(DescriptorError, match=message):
        overlap.check_output()
    assert tensor((1, 2, 3, 4), fmt="NHWC").check_output().strides == (24, 1, 8, 2)
    assert overlapping((2, 2), (3, 2)) is False  # fails the stride-order test, yet reaches 0, 2, 3, 5
    assert overlapping((4, 4), (0, 1)) is True  # a zero stride repeats every element (a broadcast)
    assert overlapping((1, 1, 1), (0, 0, 0)) is False


@pytest.mark.parametrize(
    ("dims", "strides", "dtype", "rule", "value"),
    [
        ((64, 20), (20, 1), "fp32", "dims-3-to-8", "got 2: (64, 20)"),
        ((2,) * 9, (1,) * 9, "fp32", "dims-3-to-8", "got 9"),
        ((1, 0, 5, 4), (0, 20, 4, 1), "fp32", "dims-positive", "dims[1] = 0"),
        ((1, 64, 5, 4), (1280, 20, 4, -1), "fp16", "no-negative-strides", "strides[3] = -1"),
        ((1, 64, 5, 4), (1280, 20, 4), "bf16", "strides-match-dims", "4 dims (1, 64, 5, 4), 3 strides"),
    ],
)  # fmt: skip
def test_bad_descriptors_name_the_rule_and_the_value(dims, strides, dtype, rule, value) -> None:
    with pytest.raises(DescriptorError) as info:
        tensor(dims, strides, dtype)
    assert info.value.rule == rule
    assert value in str(info.value)
    fact(rule) if rule != "strides-match-dims" else None  # every other rule is a cited fact


def test_dims_outside_3_to_8_are_refused() -> None:
    for rank in range(1, 11):
        dims = (2,) * rank
        if 3 <= rank <= 8:
            assert tensor(dims, (1,) * rank).dims == dims
        else:
            with pytest.raises(DescriptorError, match=rf"3 to 8 dimensions \(CUDNN_DIM_MAX = 8\); got {rank}"):
                tensor(dims, (1,) * rank)


def test_wrong_types_and_names_are_refused() -> None:
    with pytest.raises(TypeError, match=r"dims\[1\] must be an int ≤ 2147483647; got 2.5"):
        tensor((1, 2.5, 3, 4), fmt="NCHW")
    with pytest.raises(TypeError, match="dims must be a sequence of ints; got 'NCHW'"):
        tensor("NCHW")
    with pytest.raises(ValueError, match="unknown data type 'fp12'"):
        tensor((1, 2, 3, 4), fmt="NCHW", dtype="fp12")
    with pytest.raises(ValueError, match=r"format 'NHW' is not an ordering of NCHW .* NCHW, NHWC, CHWN"):
        packed_strides((1, 2, 3, 4), "NHW")
    with pytest.raises(ValueError, match=r"format names cover 4-D \(NCHW\) and 5-D \(NCDHW\) tensors; got 3"):
        packed_strides((1, 2, 3), "NCH")
    assert tensor((1, 2, 3), (6, 3, 1)).layout() is None  # 3-D tensors are valid; formats are named for 4-D, 5-D


def test_every_fact_names_a_test_that_exists() -> None:
    import ast

    from tests.helpers import ROOT

    for f in load().facts:
        path, _, name = f.test.partition("::")
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        assert name in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}, f.id


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fix_size_one_strides((1, 2.5, 3, 4), (24, 12, 4, 1), "NCHW"), r"^dims\[1\] must be an int"),
        (lambda: fix_size_one_strides((1, 2, 3, 4), (24, 1.5, 4, 1), "NCHW"), r"^strides\[1\] must be an int"),
        (lambda: overlapping((1, 2.5, 3, 4), (24, 12, 4, 1)), r"^dims\[1\] must be an int"),
        (lambda: overlapping((1, 2, 3, 4), (24, 1.5, 4, 1)), r"^strides\[1\] must be an int"),
        (lambda: tensor((1, 2, 3, 4), (24, 1.5, 4, 1)), r"^strides\[1\] must be an int"),
        (lambda: tensor((1, 2, 3, 4), fmt="NCHW").offset((0, 0.5, 0, 0)), r"^index\[1\] must be an int"),
    ],
)
def test_an_entry_that_is_not_an_int_is_named_by_its_argument(call, message) -> None:
    """Each function names the argument whose entry is wrong (dims, strides or index), and the entry's position."""
    with pytest.raises(TypeError, match=message):
        call()


def test_length_mismatches_and_missing_strides_are_refused_in_words() -> None:
    for call in (lambda: fix_size_one_strides((1, 2, 3, 4), (6, 3, 1), "NCHW"), lambda: overlapping((2, 2), (1,))):
        with pytest.raises(ValueError, match=r"^dims has (4|2) entries and strides (3|1)$"):
            call()
    with pytest.raises(ValueError, match=r"^give strides or a format \(fmt='NCHW'\) to pack them$"):
        tensor((1, 2, 3, 4))
    assert tensor((1, 2, 3, 4), fmt="NHWC", dtype="fp16").dtype == "fp16"
    assert tensor((1, 2, 3, 4), (24, 12, 4, 1), dtype="int8").element_bytes == 1


def test_an_innermost_size_one_dimension_gets_stride_one() -> None:
    """Walking NCHW from W: a W of size 1 takes the innermost packed stride, 1, whatever it was; H then steps 1."""
    assert fix_size_one_strides((2, 3, 4, 1), (12, 4, 1, 99), "NCHW") == (12, 4, 1, 1)
    assert fix_size_one_strides((2, 3, 1, 1), (3, 1, 7, 5), "NCHW") == (3, 1, 1, 1)


def test_overlap_of_large_and_size_two_tensors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Worked by hand: a size-2 dimension with stride 0 reaches every element twice; a size-1 dimension with stride
    0 (torch's expand of N = 1) changes nothing, even above the enumeration limit; and a tensor of exactly the limit
    that fails the stride-order test is still listed, so one that does not overlap is not counted as overlapping."""
    assert overlapping((2, 3), (0, 1)) is True
    assert ENUMERATE_LIMIT < 64 * 256 * 512
    assert overlapping((1, 64, 256, 512), (0, 256 * 512, 512, 1)) is False
    assert overlapping((2, 2**22), (0, 1)) is True  # above the limit, decided without listing
    monkeypatch.setattr(descriptors, "ENUMERATE_LIMIT", 4)  # the boundary, without listing 2^22 addresses
    assert overlapping((2, 2), (3, 2)) is False  # 4 elements, at the limit: listed, 0, 2, 3, 5
    assert overlapping((2, 2, 2), (3, 2, 1)) is True  # 8, above it: counted as overlapping (it does: 2 = 2·1)


def test_the_layout_grid_is_integer_offsets_and_refuses_big_tensors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(descriptors, "LAYOUT_GRID_LIMIT", 12)  # at the limit: still drawn
    grid = layout_grid((1, 2, 2, 3), "NHWC")
    monkeypatch.undo()
    assert grid.dtype.kind == "i"
    assert grid[0, 1, 1, 2].item() == 1 + 1 * 3 * 2 + 2 * 2  # c + h·(W·C) + w·C
    with pytest.raises(ValueError, match=r"keep the tensor at 65,536 elements or fewer; dims \(1, 1, 257, 256\)"):
        layout_grid((1, 1, 257, 256), "NCHW")


def test_entry_lists_are_bounded_and_named() -> None:
    """64 entries are read (and refused later by the rank rule); 65 are refused before any is read. An entry above a C
    int says why; every argument's entries are named by the argument."""
    assert dims_of("dims", [1] * 64) == (1,) * 64
    with pytest.raises(ValueError, match=r"^dims has 65 entries; a cuDNN descriptor has at most 8$"):
        dims_of("dims", [1] * 65)
    with pytest.raises(ValueError, match=r"^dims\[0\] must be an int ≤ 2147483647; got 2147483648 \(cuDNN takes dims "):
        dims_of("dims", [2**31])
    with pytest.raises(TypeError, match=r"^format must be a string such as 'NHWC'; got 4 \(int\)$"):
        packed_strides((1, 2, 3, 4), 4)
    with pytest.raises(TypeError, match=r"^dims\[1\] must be an int"):
        packed_strides((1, 2.5, 3, 4), "NCHW")
    with pytest.raises(TypeError, match=r"^index\[1\] must be an int"):
        offset((0, 0.5), (1, 1))
    with pytest.raises(TypeError, match=r"^strides\[1\] must be an int"):
        offset((0, 1), (1, 1.5))
    with pytest.raises(ValueError, match=r"^index has 2 entries and strides 1$"):
        offset((0, 1), (1,))
    assert offset((1, 2, 3), (100, 10, 1)) == 123
