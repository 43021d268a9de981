"""The cell checks of docs/cudnn/descriptors.md (``gpukb.cudnn.page.descriptors``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.cudnn.pages import _tuple
from tests.helpers import markdown_tables


def _tuple_text(values: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


def _packed(dims: tuple[int, ...], fmt: str) -> tuple[int, ...]:
    logical = "NCHW" if len(dims) == 4 else "NCDHW"
    size = dict(zip(logical, dims, strict=True))
    return tuple(math.prod(size[x] for x in fmt[fmt.index(letter) + 1 :]) for letter in logical)


def check_format_strides(markdown: str, kwargs: dict[str, Any]) -> None:
    (dims,) = kwargs["args"] or [(1, 64, 5, 4)]
    (table,) = markdown_tables(markdown)
    expected = ("NCHW", "NHWC", "CHWN") if len(dims) == 4 else ("NCDHW", "NDHWC", "CDHWN")
    assert [row["format"].strip("`") for row in table] == list(expected)
    logical = expected[0]
    second_channel = (0, 1) + (0,) * (len(dims) - 2)
    next_w = (0,) * (len(dims) - 1) + (1,)
    last = tuple(d - 1 for d in dims)
    assert list(table[0]) == ["format", f"strides ({', '.join(logical)})", f"offset of {_tuple_text(second_channel)}",
                              f"offset of {_tuple_text(next_w)}", f"offset of {_tuple_text(last)}"]  # fmt: skip
    for row in table:
        strides = _packed(tuple(dims), row["format"].strip("`"))
        assert _tuple(row[f"strides ({', '.join(logical)})"]) == strides
        assert int(row[f"offset of {_tuple_text(second_channel)}"]) == strides[1]  # the next channel
        assert int(row[f"offset of {_tuple_text(next_w)}"]) == strides[-1]  # the next element along W
        # packed: the last element is the last offset
        assert row[f"offset of {_tuple_text(last)}"] == f"{math.prod(dims) - 1:,}"


#: Numbers the descriptor table's "asked for" labels spell out.
_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def _overlaps(dims: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether two indices of ``dims`` reach one offset."""
    offsets = [sum(i * s for i, s in zip(idx, strides, strict=True)) for idx in np.ndindex(*dims)]
    return len(set(offsets)) < len(offsets)


def _broken_rules(dims: tuple[int, ...], strides: tuple[int, ...], output: bool) -> list[str]:
    """The descriptor rules ``dims`` and ``strides`` break, found here from the values themselves."""
    broken = []
    if not 3 <= len(dims) <= 8:
        broken.append("dims-3-to-8")
    if min(dims) < 1:
        broken.append("dims-positive")
    if len(strides) != len(dims):
        broken.append("strides-match-dims")
    if min(strides) < 0:
        broken.append("no-negative-strides")
    if output and len(strides) == len(dims) and _overlaps(dims, strides):
        broken.append("no-overlapping-outputs")
    return broken


def check_descriptor_errors(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert len(table) == 6
    for row in table:
        dims, strides, label, error = _tuple(row["dims"]), _tuple(row["strides"]), row["asked for"], row["error"]
        # what the row says it asks for is what its dims and strides are
        if m := re.fullmatch(r"(\w+) dimensions", label):
            assert len(dims) == _WORDS[m[1]]
        elif m := re.fullmatch(r"a dimension of (\d+)", label):
            assert int(m[1]) in dims
        elif label == "a negative stride (W mirrored)":  # W is last in logical order
            assert strides[-1] < 0
            assert min(strides[:-1]) > 0
        elif label == "fewer strides than dims":
            assert len(strides) < len(dims)
        elif label == "an output whose H and W overlap":
            assert _overlaps(dims[-2:], strides[-2:])
            # the tensor test_overlap_is_allowed_for_inputs_not_outputs refuses as an output: hStride 2 < W·wStride 4
            assert (dims, strides) == ((1, 2, 3, 4), (12, 6, 2, 1))
        else:
            raise AssertionError(f"unknown case {label!r}")
        # the error names the one rule the values break, and the values that break it
        (rule,) = _broken_rules(dims, strides, output=label.startswith("an output"))
        assert error.endswith(f" [rule {rule}]")
        if rule == "dims-3-to-8":
            assert f"; got {len(dims)}: {_tuple_text(dims)} [" in error
        elif rule == "dims-positive":
            i = next(i for i, d in enumerate(dims) if d < 1)
            assert f"; got dims[{i}] = {dims[i]} [" in error
        elif rule == "no-negative-strides":
            i = next(i for i, s in enumerate(strides) if s < 0)
            assert f"; got strides[{i}] = {strides[i]} [" in error
        elif rule == "strides-match-dims":
            assert f": {len(dims)} dims {_tuple_text(dims)}, {len(strides)} strides [" in error
        else:
            assert f"; dims {_tuple_text(dims)} with strides {_tuple_text(strides)} reach some element twice [" in error


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "format_strides": check_format_strides,
    "descriptor_errors": check_descriptor_errors,
}


def test_a_wrong_stride_fails_the_check() -> None:
    from gpukb.cudnn.pages.descriptors import format_strides

    good = format_strides((1, 64, 5, 4))
    with pytest.raises(AssertionError):
        check_format_strides(good.replace("`(1280, 1, 256, 64)`", "`(1280, 1, 64, 256)`"), {"args": ((1, 64, 5, 4),)})
