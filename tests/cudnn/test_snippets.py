"""The cuDNN chapter's snippets (``snippets/cudnn/*``): each run as a reader runs it, what it prints asserted.

The ``.cu`` program's static checks and its runs at other shapes are in ``test_conv_program.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from tests.cudnn.test_conv_program import check_conv_forward


def _packed(dims: tuple[int, ...], order: str, logical: str) -> tuple[int, ...]:
    """Packed strides computed independently: the product of the sizes of the letters inside each one."""
    size = dict(zip(logical, dims, strict=True))
    return tuple(int(np.prod([size[x] for x in order[order.index(letter) + 1 :]])) for letter in logical)


def check_descriptor_strides(out: str) -> None:
    lines = out.splitlines()
    for line, dims in zip(lines[:2], [(1, 64, 5, 4), (8, 3, 7, 5)], strict=True):
        want = ", ".join(f"{fmt} {_packed(dims, fmt, 'NCHW')}" for fmt in ("NCHW", "NHWC", "CHWN"))
        assert line == f"{dims}: {want}"
    assert lines[1] == "(8, 3, 7, 5): NCHW (105, 35, 5, 1), NHWC (105, 1, 15, 3), CHWN (1, 280, 40, 8)"
    dims = (2, 8, 3, 5, 4)
    assert lines[2] == f"{dims}: NCDHW {_packed(dims, 'NCDHW', 'NCDHW')}, NDHWC {_packed(dims, 'NDHWC', 'NCDHW')}"
    assert lines[3] == f"offset of (0, 1, 2, 3) in NCHW: {1 * 20 + 2 * 4 + 3}"  # 31
    assert lines[4] == f"offset of (0, 1, 2, 3) in NHWC: {1 + 2 * 256 + 3 * 64}"  # 705
    assert lines[5] == "size-1 rule: torch strides (64, 1, 256, 64) -> (1280, 1, 256, 64), layout NHWC"
    assert len(lines) == 6


def check_reference_conv(out: str) -> None:
    rows = re.findall(r"^\((.+?)\) \* \((.+?)\) -> \((.+?)\): direct (\S+), im2col (\S+)$", out, re.M)
    assert [r[2] for r in rows] == ["2, 4, 5, 4", "1, 2, 3, 3", "2, 8, 5, 8", "1, 4, 5, 5"]
    assert all(float(d) < 1e-12 and float(i) < 1e-12 for *_, d, i in rows)  # float64 sums: equal to rounding
    modes = re.search(r"modes differ by up to (\S+); convolution = cross-correlation with a flipped filter: (\w+)", out)
    assert float(modes[1]) > 0.5
    assert modes[2] == "True"
    flops, nbytes = 2 * 32 * 64 * 56 * 56 * 64 * 9, 2 * (32 * 64 * 56 * 56 * 2 + 64 * 64 * 9)
    assert f"3x3 layer: {flops:,} FLOP, {nbytes:,} bytes, {flops / nbytes:.0f} FLOP/byte" in out


def check_small_cnn(out: str) -> None:
    assert re.search(r"^conv 3×3, 2 filters, stride 2\s+\(1, 3, 3, 2\)\s+56 parameters$", out, re.M)
    assert re.search(r"^dense, 2 units\s+\(1, 2\)\s+18 parameters$", out, re.M)
    assert "total: 74 parameters" in out  # 3·3·3·2 + 2 and 8·2 + 2
    assert "with 10 dense units instead of 2: 146 parameters" in out  # 56 + 8·10 + 10


CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/cudnn/conv_forward.cu": check_conv_forward,  # compiled with nvcc, run on the GPU
    "snippets/cudnn/descriptor_strides.py": check_descriptor_strides,
    "snippets/cudnn/reference_conv.py": check_reference_conv,
    "snippets/cudnn/small_cnn.py": check_small_cnn,
}
