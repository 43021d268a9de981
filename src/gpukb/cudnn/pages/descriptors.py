"""The page “Tensor descriptors and layouts” (docs/cudnn/descriptors.md): its tables, figures and text."""

from __future__ import annotations

from collections.abc import Sequence

from gpukb.cudnn import descriptors
from gpukb.cudnn.figures import layout_figure
from gpukb.cudnn.pages import _tuple
from gpukb.figures import to_svg
from gpukb.tables import markdown_table


def format_strides(dims: Sequence[int] = (1, 64, 5, 4)) -> str:
    """Every named format of a 4-D or 5-D shape: its packed strides in logical order, and where a few elements land."""
    dims = tuple(dims)
    letters = descriptors.logical_letters(len(dims))
    last = tuple(d - 1 for d in dims)
    second_channel = (0, 1) + (0,) * (len(dims) - 2)
    next_w = (0,) * (len(dims) - 1) + (1,)
    rows = []
    for fmt in descriptors.FORMATS[len(dims)]:
        desc = descriptors.tensor(dims, fmt=fmt)
        rows.append([f"`{fmt}`", f"`{_tuple(desc.strides)}`", str(desc.offset(second_channel)),
                     str(desc.offset(next_w)), f"{desc.offset(last):,}"])  # fmt: skip
    headers = [
        "format",
        f"strides ({', '.join(letters)})",
        f"offset of {_tuple(second_channel)}",
        f"offset of {_tuple(next_w)}",
        f"offset of {_tuple(last)}",
    ]
    return markdown_table(headers, rows)


def memory_layout() -> str:
    """The layout figure: element offsets of N=1, C=64, H=5, W=4 in NCHW and NHWC, drawn at build time."""
    return to_svg(layout_figure())


#: Impossible descriptors the pages show, as (what is asked, dims, strides, dtype); the error is computed.
BAD_TENSORS = (
    ("two dimensions", (64, 20), (20, 1), "fp32"),
    ("nine dimensions", (2,) * 9, (256, 128, 64, 32, 16, 8, 4, 2, 1), "fp32"),
    ("a dimension of 0", (1, 0, 5, 4), (0, 20, 4, 1), "fp32"),
    ("a negative stride (W mirrored)", (1, 64, 5, 4), (1280, 20, 4, -1), "fp32"),
    ("fewer strides than dims", (1, 64, 5, 4), (1280, 20, 4), "fp16"),
)


def descriptor_errors() -> str:
    """What :func:`gpukb.cudnn.descriptors.tensor` says to impossible descriptors, and to an overlapping output."""
    rows = []
    for label, dims, strides, dtype in BAD_TENSORS:
        try:
            descriptors.tensor(dims, strides, dtype)
        except (ValueError, TypeError) as err:
            rows.append([label, f"`{_tuple(dims)}`", f"`{_tuple(strides)}`", str(err)])
        else:
            raise AssertionError(f"{label}: accepted")
    overlap = descriptors.tensor((1, 2, 3, 4), (12, 6, 2, 1))
    try:
        overlap.check_output()
    except ValueError as err:
        rows.append(["an output whose H and W overlap", f"`{_tuple(overlap.dims)}`", f"`{_tuple(overlap.strides)}`",
                     str(err)])  # fmt: skip
    return markdown_table(["asked for", "dims", "strides", "error"], rows)
