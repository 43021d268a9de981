"""cuDNN's tensor descriptor as a model you can compute with: dims in logical order, the layout in the strides.

A cuDNN tensor descriptor (``cudnnSetTensorNdDescriptor``) holds a data type, 3 to 8 dimensions and one stride per
dimension. The dimensions are always given in logical order, N, C, then the spatial ones (D, H, W); how the tensor
sits in memory is carried only by the strides. A format name such as ``NHWC`` lists the letters by decreasing
stride. The rules this module enforces, each with its source, are in ``gpukb/data/cudnn/facts.toml`` and on the
chapter's first page; every error message names the rule and the value that broke it.

Indices and strides count elements, not bytes, as cuDNN's do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise, product

import numpy as np

from gpukb.arguments import given, integer

#: The fewest and most dimensions of a tensor descriptor (``CUDNN_DIM_MAX`` is 8 in cudnn_graph.h).
MIN_DIMS, MAX_DIMS = 3, 8

#: Element types of a descriptor: gpukb's short name → (``cudnnDataType_t`` enumerator, bytes per element).
DATA_TYPES = {
    "fp32": ("CUDNN_DATA_FLOAT", 4),
    "fp64": ("CUDNN_DATA_DOUBLE", 8),
    "fp16": ("CUDNN_DATA_HALF", 2),
    "bf16": ("CUDNN_DATA_BFLOAT16", 2),
    "int8": ("CUDNN_DATA_INT8", 1),
    "uint8": ("CUDNN_DATA_UINT8", 1),
    "int32": ("CUDNN_DATA_INT32", 4),
    "int64": ("CUDNN_DATA_INT64", 8),
    "fp8_e4m3": ("CUDNN_DATA_FP8_E4M3", 1),
    "fp8_e5m2": ("CUDNN_DATA_FP8_E5M2", 1),
}

#: Logical dimension order by rank: cuDNN's dims are always given in this order, whatever the layout.
LOGICAL = {4: "NCHW", 5: "NCDHW"}

#: The formats cuDNN's documentation names, by rank: letters from the largest stride to the smallest.
FORMATS = {4: ("NCHW", "NHWC", "CHWN"), 5: ("NCDHW", "NDHWC", "CDHWN")}

#: The most elements :func:`layout_grid` computes one by one.
LAYOUT_GRID_LIMIT = 1 << 16

#: Above this many elements, :func:`overlapping` does not enumerate addresses (see its docstring).
ENUMERATE_LIMIT = 1 << 22


class DescriptorError(ValueError):
    """A descriptor cuDNN would refuse. ``rule`` is the id of the broken rule (an entry of the facts file)."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{message} [rule {rule}]")
        self.rule = rule


#: cuDNN takes dims and strides as C ``int`` arrays (``cudnnSetTensorNdDescriptor(..., const int dimA[], const int
#: strideA[])``, https://docs.nvidia.com/deeplearning/cudnn/backend/latest/api/cudnn-graph-library.html): each at
#: most 2^31 - 1.
INT32_MAX = 2**31 - 1


def _ints(name: str, values: object, maximum: int | None = None) -> tuple[int, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a sequence of ints; got {given(values)}")
    if len(values) > 64:  # far past CUDNN_DIM_MAX: refused before each entry is read
        raise ValueError(f"{name} has {len(values):,} entries; a cuDNN descriptor has at most {MAX_DIMS}")
    return tuple(integer(f"{name}[{i}]", v, maximum=maximum) for i, v in enumerate(values))


def dims_of(name: str, values: object) -> tuple[int, ...]:
    """Sizes or strides as cuDNN takes them: a sequence of ints, each within a C ``int`` (≤ 2^31 − 1).

    Raises:
        TypeError: For a string, a non-sequence or an entry that is not an int (a bool or float included).
        ValueError: For an entry above 2^31 − 1, or more than 64 entries.
    """
    try:
        return _ints(name, values, maximum=INT32_MAX)
    except ValueError as err:
        raise ValueError(f"{err} (cuDNN takes dims and strides as C ints)" if "≤" in str(err) else str(err)) from None


def check_rank(dims: Sequence[int]) -> None:
    """Refuse a number of dimensions outside 3 to 8.

    Raises:
        DescriptorError: Rule ``dims-3-to-8``.
    """
    if not MIN_DIMS <= len(dims) <= MAX_DIMS:
        raise DescriptorError(
            "dims-3-to-8",
            f"a cuDNN tensor descriptor has {MIN_DIMS} to {MAX_DIMS} dimensions (CUDNN_DIM_MAX = {MAX_DIMS}); "
            f"got {len(dims)}: {tuple(dims)}",
        )


def logical_letters(rank: int) -> str:
    """The letters of the logical order for 4 or 5 dimensions (``NCHW``, ``NCDHW``).

    Raises:
        ValueError: For another rank (formats are named for 4-D and 5-D tensors only).
    """
    if rank not in LOGICAL:
        raise ValueError(f"format names cover 4-D (NCHW) and 5-D (NCDHW) tensors; got {rank} dimensions")
    return LOGICAL[rank]


def check_format(fmt: str, rank: int) -> str:
    """A format name for this rank in upper case: a permutation of the logical letters.

    Raises:
        TypeError: If it is not a string.
        ValueError: If it is not a permutation of ``NCHW`` (4-D) or ``NCDHW`` (5-D).
    """
    if not isinstance(fmt, str):
        raise TypeError(f"format must be a string such as 'NHWC'; got {given(fmt)}")
    letters = logical_letters(rank)
    upper = fmt.upper()
    if sorted(upper) != sorted(letters):
        raise ValueError(
            f"format {fmt!r} is not an ordering of {letters} for a {rank}-D tensor; named formats: "
            f"{', '.join(FORMATS[rank])}"
        )
    return upper


# --8<-- [start:packed-strides]
def packed_strides(dims: Sequence[int], fmt: str) -> tuple[int, ...]:
    """The strides of a fully packed tensor laid out as ``fmt``, in logical order.

    ``fmt`` lists the letters from the outermost (largest stride) to the innermost (stride 1); each stride is the
    next inner letter's stride times its size. The result is in logical order (N, C, [D,] H, W), the order cuDNN
    takes dims and strides in.

    >>> packed_strides((1, 64, 5, 4), "NCHW")
    (1280, 20, 4, 1)
    >>> packed_strides((1, 64, 5, 4), "NHWC")
    (1280, 1, 256, 64)
    """
    dims = dims_of("dims", dims)
    check_rank(dims)
    fmt = check_format(fmt, len(dims))
    logical = logical_letters(len(dims))
    size = dict(zip(logical, dims, strict=True))
    stride, running = {}, 1
    for letter in reversed(fmt):  # innermost first
        stride[letter] = running
        running *= size[letter]
    return tuple(stride[letter] for letter in logical)
    # --8<-- [end:packed-strides]


def offset(index: Sequence[int], strides: Sequence[int]) -> int:
    """The element offset of ``index`` (logical order): the sum of each index times its stride."""
    index, strides = _ints("index", index), _ints("strides", strides)
    if len(index) != len(strides):
        raise ValueError(f"index has {len(index)} entries and strides {len(strides)}")
    return sum(i * s for i, s in zip(index, strides, strict=True))


def fix_size_one_strides(dims: Sequence[int], strides: Sequence[int], fmt: str) -> tuple[int, ...]:
    """The strides with every size-1 dimension's stride replaced by its packed value in ``fmt``.

    A size-1 dimension is never stepped along, so its stride changes no address and any value is correct; but a
    layout is read from the order of the strides, so an arbitrary one makes it ambiguous. PyTorch therefore
    rewrites these strides before it describes a tensor to cuDNN (``fixSizeOneDimStride`` in
    ``aten/src/ATen/cudnn/Descriptors.h``), and so does this function, walking the format from the innermost letter.
    """
    dims, strides = dims_of("dims", dims), dims_of("strides", strides)
    if len(dims) != len(strides):
        raise ValueError(f"dims has {len(dims)} entries and strides {len(strides)}")
    check_rank(dims)
    fmt = check_format(fmt, len(dims))
    logical = logical_letters(len(dims))
    out = list(strides)
    running = 1
    for letter in reversed(fmt):
        d = logical.index(letter)
        if dims[d] == 1:
            out[d] = running
        else:
            running = strides[d] * dims[d]
    return tuple(out)


def overlapping(dims: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether two different indices reach the same element (the tensor's dimensions overlap).

    Dimensions of size 1 are ignored (they are never stepped along). Ordering the rest by stride, the tensor
    cannot overlap when every stride is at least the next smaller stride times its dimension (the smallest at
    least 1): that is the test cuDNN's documentation gives. A tensor that fails it may still not overlap (strides
    ``(3, 2)`` for dims ``(2, 2)`` reach 0, 2, 3, 5); such tensors are decided by listing every address when they
    have at most :data:`ENUMERATE_LIMIT` elements, and counted as overlapping above that.

    Raises:
        TypeError: For dims or strides that are not sequences of ints.
        ValueError: For an entry above 2^31 − 1, or dims and strides of different lengths.
    """
    dims, strides = dims_of("dims", dims), dims_of("strides", strides)
    if len(dims) != len(strides):  # zip's own error would not say which was short
        raise ValueError(f"dims has {len(dims)} entries and strides {len(strides)}")
    moving = sorted((abs(s), d) for d, s in zip(dims, strides, strict=True) if d > 1)
    if not moving:
        return False
    if all(s >= 1 for s, _ in moving) and all(big >= small * size for (small, size), (big, _) in pairwise(moving)):
        return False
    count = math.prod(d for _, d in moving)
    if count > ENUMERATE_LIMIT:
        return True
    addresses = np.zeros(1, dtype=np.int64)
    for stride, size in moving:
        addresses = (addresses[:, None] + stride * np.arange(size, dtype=np.int64)[None, :]).ravel()
    return len(np.unique(addresses)) < count


@dataclass(frozen=True)
class TensorDescriptor:
    """What ``cudnnSetTensorNdDescriptor`` is given: data type, dims in logical order, strides.

    Build one with :func:`tensor` (which checks the rules); the format it is in is :meth:`layout`.
    """

    dtype: str
    dims: tuple[int, ...]
    strides: tuple[int, ...]

    @property
    def element_bytes(self) -> int:
        """Bytes per element."""
        return DATA_TYPES[self.dtype][1]

    @property
    def elements(self) -> int:
        """Logical elements, the product of the dims."""
        return math.prod(self.dims)

    @property
    def span(self) -> int:
        """Elements from the first to the last one addressed, inclusive: the allocation the tensor needs."""
        return 1 + sum((d - 1) * s for d, s in zip(self.dims, self.strides, strict=True))

    def offset(self, index: Sequence[int]) -> int:
        """Element offset of a logical index.

        Raises:
            IndexError: If the index is outside the dims.
        """
        index = _ints("index", index)
        if len(index) != len(self.dims) or any(not 0 <= i < d for i, d in zip(index, self.dims, strict=True)):
            raise IndexError(f"index {index} is outside dims {self.dims}")
        return offset(index, self.strides)

    def overlaps(self) -> bool:
        """Whether two indices share an element (see :func:`overlapping`)."""
        return overlapping(self.dims, self.strides)

    def layout(self) -> str | None:
        """The named format whose packed strides these are (after the size-1 rule), or ``None``.

        Where several formats fit (a tensor with C = 1 is both NCHW and NHWC), the first of :data:`FORMATS`
        wins.
        """
        if len(self.dims) not in FORMATS:
            return None
        for fmt in FORMATS[len(self.dims)]:
            fixed = fix_size_one_strides(self.dims, self.strides, fmt)
            if fixed == packed_strides(self.dims, fmt):
                return fmt
        return None

    def check_output(self) -> TensorDescriptor:
        """This descriptor, if it can be a convolution's output: its dimensions must not overlap.

        Raises:
            DescriptorError: Rule ``no-overlapping-outputs``.
        """
        if self.overlaps():
            raise DescriptorError(
                "no-overlapping-outputs",
                f"an output tensor's dimensions cannot overlap (inputs may); dims {self.dims} with strides "
                f"{self.strides} reach some element twice",
            )
        return self


def tensor(dims: Sequence[int], strides: Sequence[int] | None = None, dtype: str = "fp32",
           fmt: str | None = None) -> TensorDescriptor:  # fmt: skip
    """A checked tensor descriptor.

    Args:
        dims: 3 to 8 sizes in logical order (N, C, then spatial), each at least 1.
        strides: One non-negative stride per dim, in the same order; or ``None`` with ``fmt``.
        dtype: A key of :data:`DATA_TYPES`.
        fmt: A format (``"NHWC"``) whose packed strides to use when ``strides`` is ``None``.

    Raises:
        DescriptorError: For a broken rule: ``dims-3-to-8``, ``dims-positive``, ``no-negative-strides``
            (and ``strides-match-dims`` for a length mismatch).
        TypeError: For a non-integer size or stride, or an unknown argument type.
        ValueError: For an unknown data type or format.
    """
    dims = dims_of("dims", dims)
    check_rank(dims)
    if dtype not in DATA_TYPES:
        raise ValueError(f"unknown data type {dtype!r}; known: {sorted(DATA_TYPES)}")
    for i, d in enumerate(dims):
        if d < 1:
            raise DescriptorError("dims-positive", f"every dimension must be at least 1; got dims[{i}] = {d}")
    if strides is None:
        if fmt is None:
            raise ValueError("give strides or a format (fmt='NCHW') to pack them")
        strides = packed_strides(dims, fmt)
    strides = dims_of("strides", strides)
    if len(strides) != len(dims):
        raise DescriptorError(
            "strides-match-dims", f"one stride per dimension: {len(dims)} dims {dims}, {len(strides)} strides"
        )
    for i, s in enumerate(strides):
        if s < 0:
            raise DescriptorError(
                "no-negative-strides",
                f"cuDNN routines do not accept negative strides unless a routine says otherwise; got "
                f"strides[{i}] = {s}",
            )
    return TensorDescriptor(dtype, dims, strides)


def layout_grid(dims: Sequence[int], fmt: str) -> np.ndarray:
    """The offset of every element of a 4-D tensor packed as ``fmt``, as an array indexed ``[n, c, h, w]``.

    This is the figure of NVIDIA's documentation: write each element's offset in its place.

    Raises:
        ValueError: As :func:`tensor` does, and for more than :data:`LAYOUT_GRID_LIMIT` elements (each is
            computed one by one).
    """
    desc = tensor(dims, fmt=fmt)
    if desc.elements > LAYOUT_GRID_LIMIT:
        raise ValueError(
            f"layout_grid computes every element's offset; keep the tensor at {LAYOUT_GRID_LIMIT:,} elements or "
            f"fewer; dims {desc.dims} have {desc.elements:,}"
        )
    grid = np.zeros(desc.dims, dtype=np.int64)
    for index in product(*(range(d) for d in desc.dims)):
        grid[index] = desc.offset(index)
    return grid
