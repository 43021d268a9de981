"""Filter and convolution descriptors, the output-size formula, and reference convolutions in numpy.

A cuDNN convolution is described by a filter descriptor (K output channels, C / groups input channels per group,
then the filter's spatial sizes) and a convolution descriptor (padding, stride and dilation per spatial dimension,
the mode, the compute type, the group count). The output size along each spatial dimension is

    out = (in + 2·pad − ((filter − 1)·dilation + 1)) // stride + 1

The two modes differ in one thing: ``convolution`` flips the filter in every spatial dimension before the sum,
``cross_correlation`` does not (and is what deep-learning frameworks call convolution). Two references compute
it: :func:`conv2d_direct` sums over the filter's taps, :func:`conv2d_im2col` unrolls the input into a matrix and
does one product per group; both equal ``torch.nn.functional.conv2d``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from gpukb.arguments import given, integer
from gpukb.cudnn.descriptors import INT32_MAX, DescriptorError, check_rank, dims_of
from gpukb.measuring.counting import Conv2dCounts, conv2d_counts

Mode = Literal["cross_correlation", "convolution"]
MODES = ("cross_correlation", "convolution")
#: ``cudnnConvolutionMode_t`` enumerators (cudnn_graph.h of cuDNN 9).
MODE_ENUMS = {"convolution": ("CUDNN_CONVOLUTION", 0), "cross_correlation": ("CUDNN_CROSS_CORRELATION", 1)}


def _per_dim(name: str, value: int | Sequence[int], spatial: int, minimum: int) -> tuple[int, ...]:
    values = (value,) * spatial if isinstance(value, int) and not isinstance(value, bool) else value
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be an int or one int per spatial dimension; got {given(value)}")
    values = tuple(integer(f"{name}", v, maximum=INT32_MAX) for v in values)
    if len(values) != spatial:
        raise ValueError(f"{name} needs one value per spatial dimension ({spatial}); got {values}")
    for v in values:
        if v < minimum:
            raise DescriptorError(
                "conv-parameters", f"{name} must be at least {minimum} in every dimension; got {name} = {values}"
            )
    return values


@dataclass(frozen=True)
class ConvDescriptor:
    """What ``cudnnSetConvolutionNdDescriptor`` and ``cudnnSetConvolutionGroupCount`` are given.

    Attributes:
        pad: Zero padding on both sides, per spatial dimension (≥ 0).
        stride: Filter stride per spatial dimension (≥ 1).
        dilation: Filter dilation per spatial dimension (≥ 1): taps are ``dilation`` elements apart.
        groups: Channel groups (≥ 1); input and output channels split evenly among them.
        mode: ``"cross_correlation"`` or ``"convolution"`` (flips the filter).
        compute: The compute (accumulation) type, ``"fp32"`` for every storage type on this site.
    """

    pad: tuple[int, ...]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    groups: int = 1
    mode: Mode = "cross_correlation"
    compute: str = "fp32"


def conv_descriptor(pad: int | Sequence[int] = 0, stride: int | Sequence[int] = 1, dilation: int | Sequence[int] = 1,
                    groups: int = 1, mode: Mode = "cross_correlation", compute: str = "fp32",
                    spatial: int = 2) -> ConvDescriptor:  # fmt: skip
    """A checked convolution descriptor for ``spatial`` spatial dimensions (1 to 6: the tensor has 3 to 8).

    Raises:
        DescriptorError: Rule ``conv-parameters`` for a negative pad, a stride or dilation below 1, or groups
            below 1.
        ValueError: For an unknown mode or compute type.
    """
    spatial = integer("spatial", spatial, minimum=1, maximum=6)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    if compute not in ("fp32", "fp16", "fp64", "int32"):
        raise ValueError(f"compute must be 'fp32', 'fp16', 'fp64' or 'int32'; got {compute!r}")
    groups = integer("groups", groups, maximum=INT32_MAX)
    if groups < 1:
        raise DescriptorError("conv-parameters", f"groups must be at least 1; got groups = {groups}")
    return ConvDescriptor(
        pad=_per_dim("pad", pad, spatial, 0),
        stride=_per_dim("stride", stride, spatial, 1),
        dilation=_per_dim("dilation", dilation, spatial, 1),
        groups=groups,
        mode=mode,
        compute=compute,
    )


# --8<-- [start:output-size]
def output_size(size: int, filter_size: int, pad: int = 0, stride: int = 1, dilation: int = 1) -> int:
    """One spatial dimension of a convolution's output: ``(size + 2 pad - ((filter - 1) dilation + 1)) // stride + 1``.

    The dilated filter spans ``(filter - 1) · dilation + 1`` input elements; it fits ``size + 2 pad - span`` times
    past its first position, of which every ``stride``-th is kept.

    >>> output_size(224, 7, pad=3, stride=2)
    112
    >>> output_size(11, 3, pad=1, stride=2, dilation=2)
    5

    Raises:
        TypeError: For an argument that is not an int (a bool or a float included).
        ValueError: For ``size`` or ``filter_size`` below 1, a negative ``pad``, a ``stride`` or ``dilation``
            below 1, or a filter that does not fit the padded input (the output would have no element).
    """
    size, filter_size = (integer(n, v, 1, INT32_MAX) for n, v in (("size", size), ("filter_size", filter_size)))
    pad = integer("pad", pad, 0, INT32_MAX)  # cuDNN takes every one of these as a C int
    stride, dilation = (integer(n, v, 1, INT32_MAX) for n, v in (("stride", stride), ("dilation", dilation)))
    span = (filter_size - 1) * dilation + 1
    if span > size + 2 * pad:
        raise ValueError(
            f"a filter spanning {span} does not fit an input of {size} padded by {pad} on each side "
            f"(output size {(size + 2 * pad - span) // stride + 1})"
        )
    return (size + 2 * pad - span) // stride + 1
    # --8<-- [end:output-size]


def output_dims(x_dims: Sequence[int], w_dims: Sequence[int], conv: ConvDescriptor) -> tuple[int, ...]:
    """The output dims of a forward convolution, as ``cudnnGetConvolutionNdForwardOutputDim`` computes them.

    Args:
        x_dims: Input (N, C, spatial...).
        w_dims: Filter (K, C / groups, spatial...).
        conv: The convolution descriptor.

    Raises:
        DescriptorError: ``dims-3-to-8``; ``filter-rank`` (filter and input ranks differ); ``groups-divide-channels``
            (C or K not divisible by the groups, or the filter's channels times the groups not C);
            ``output-at-least-1`` (the filter does not fit the padded input).
    """
    x_dims, w_dims = dims_of("x_dims", x_dims), dims_of("w_dims", w_dims)
    check_rank(x_dims)
    if len(w_dims) != len(x_dims) or len(conv.pad) != len(x_dims) - 2:
        raise DescriptorError(
            "filter-rank",
            f"input, filter and convolution must agree on the spatial dimensions: input {x_dims}, filter {w_dims}, "
            f"{len(conv.pad)} spatial in the convolution",
        )
    n, c, *spatial = x_dims
    k, cg, *taps = w_dims
    g = conv.groups
    if c % g or k % g:
        raise DescriptorError(
            "groups-divide-channels", f"input channels C = {c} and output channels K = {k} must divide by groups = {g}"
        )
    if cg * g != c:
        raise DescriptorError(
            "groups-divide-channels",
            f"the filter has {cg} channels per group; times groups = {g} that is {cg * g}, not the input's C = {c}",
        )
    out = []
    for d, (size, tap) in enumerate(zip(spatial, taps, strict=True)):
        span = (tap - 1) * conv.dilation[d] + 1
        if span > size + 2 * conv.pad[d]:
            o = (size + 2 * conv.pad[d] - span) // conv.stride[d] + 1
            raise DescriptorError(
                "output-at-least-1",
                f"spatial dimension {d}: a filter spanning {span} does not fit an input of {size} padded by "
                f"{conv.pad[d]} on each side (output size {o})",
            )
        out.append(output_size(size, tap, conv.pad[d], conv.stride[d], conv.dilation[d]))
    return (n, k, *out)


def _pad_input(x: np.ndarray, pad: tuple[int, int]) -> np.ndarray:
    return np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))


def _checked(x: np.ndarray, w: np.ndarray, conv: ConvDescriptor) -> tuple[int, int, int, int]:
    x, w = np.asarray(x), np.asarray(w)
    if x.ndim != 4 or w.ndim != 4 or len(conv.pad) != 2:
        raise ValueError(f"these references are 2-D: input (N, C, H, W), filter (K, C/groups, R, S); got "
                         f"{x.shape}, {w.shape}")  # fmt: skip
    return output_dims(x.shape, w.shape, conv)


# --8<-- [start:direct]
def conv2d_direct(x: np.ndarray, w: np.ndarray, conv: ConvDescriptor) -> np.ndarray:
    """A 2-D convolution as a sum over the filter's taps (NCHW in, NCHW out, float64 accumulation).

    For each tap (r, s) the strided window of the padded input it touches is multiplied by that tap's weights and
    added in; a ``convolution`` mode flips the filter first.
    """
    n, k, ho, wo = _checked(x, w, conv)
    g, cg, kg = conv.groups, w.shape[1], k // conv.groups
    if conv.mode == "convolution":
        w = w[:, :, ::-1, ::-1]
    xp = _pad_input(np.asarray(x, dtype=np.float64), conv.pad)
    (sh, sw), (dh, dw) = conv.stride, conv.dilation
    y = np.zeros((n, k, ho, wo))
    for group in range(g):
        xs = xp[:, group * cg : (group + 1) * cg]
        ws = np.asarray(w[group * kg : (group + 1) * kg], dtype=np.float64)
        for r in range(w.shape[2]):
            for s in range(w.shape[3]):
                window = xs[:, :, r * dh : r * dh + sh * (ho - 1) + 1 : sh, s * dw : s * dw + sw * (wo - 1) + 1 : sw]
                y[:, group * kg : (group + 1) * kg] += np.einsum("nchw,kc->nkhw", window, ws[:, :, r, s])
    return y
    # --8<-- [end:direct]


def im2col(x: np.ndarray, taps: tuple[int, int], conv: ConvDescriptor, out_hw: tuple[int, int]) -> np.ndarray:
    """Unroll a padded NCHW input into columns: shape (N, C·R·S, Ho·Wo), the input every output sees."""
    n, c = x.shape[:2]
    (r_taps, s_taps), (ho, wo) = taps, out_hw
    (sh, sw), (dh, dw) = conv.stride, conv.dilation
    xp = _pad_input(np.asarray(x, dtype=np.float64), conv.pad)
    cols = np.empty((n, c, r_taps, s_taps, ho, wo))
    for r in range(r_taps):
        for s in range(s_taps):
            rows = slice(r * dh, r * dh + sh * (ho - 1) + 1, sh)
            columns = slice(s * dw, s * dw + sw * (wo - 1) + 1, sw)
            cols[:, :, r, s] = xp[:, :, rows, columns]
    return cols.reshape(n, c * r_taps * s_taps, ho * wo)


# --8<-- [start:im2col]
def conv2d_im2col(x: np.ndarray, w: np.ndarray, conv: ConvDescriptor) -> np.ndarray:
    """The same convolution as one matrix product per group: filter (K/g, C/g·R·S) times im2col columns."""
    n, k, ho, wo = _checked(x, w, conv)
    g, cg, kg = conv.groups, w.shape[1], k // conv.groups
    if conv.mode == "convolution":
        w = w[:, :, ::-1, ::-1]
    y = np.empty((n, k, ho * wo))
    for group in range(g):
        cols = im2col(np.asarray(x)[:, group * cg : (group + 1) * cg], w.shape[2:], conv, (ho, wo))
        weights = np.asarray(w[group * kg : (group + 1) * kg], dtype=np.float64).reshape(kg, -1)
        y[:, group * kg : (group + 1) * kg] = weights @ cols  # (K/g, C/g·R·S) @ (N, C/g·R·S, Ho·Wo)
    return y.reshape(n, k, ho, wo)
    # --8<-- [end:im2col]


def counts(x_dims: Sequence[int], w_dims: Sequence[int], conv: ConvDescriptor, bias: bool = False) -> Conv2dCounts:
    """FLOPs, parameters and elements of a 2-D convolution, counted by the performance chapter's
    :func:`gpukb.measuring.counting.conv2d_counts` (per group, then summed).

    Raises:
        ValueError: For a dilation other than 1, or a padding or stride that differs between H and W (the counter
            takes one of each).
    """
    n, k, ho, wo = output_dims(x_dims, w_dims, conv)
    if conv.dilation != (1, 1) or len(set(conv.pad)) != 1 or len(set(conv.stride)) != 1:
        raise ValueError(
            f"the counter takes one padding and one stride and no dilation; got pad {conv.pad}, stride "
            f"{conv.stride}, dilation {conv.dilation}"
        )
    g = conv.groups
    _, c, h, w = x_dims
    one = conv2d_counts((n, c // g, h, w), k // g, tuple(w_dims[2:]), conv.stride[0], conv.pad[0], bias=bias)
    assert one.output_shape == (n, k // g, ho, wo)
    return Conv2dCounts(
        output_shape=(n, k, ho, wo),
        macs=g * one.macs,
        flops=g * one.flops,
        params=g * one.params,
        input_elems=g * one.input_elems,
        output_elems=g * one.output_elems,
    )


# Winograd F(2×2, 3×3) (Lavin and Gray, 2016): a 2×2 output tile of a 3×3 filter from a 4×4 input tile.
WINOGRAD_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], dtype=np.float64)
WINOGRAD_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], dtype=np.float64)
WINOGRAD_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], dtype=np.float64)


def winograd_tile(d: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, int]:
    """One output tile of F(2×2, 3×3): ``Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A``, and the multiplications of the elementwise
    product (16; the transforms use additions and multiplications by constants that a filter can absorb ahead of
    time). The direct sum needs 2·2·3·3 = 36.

    Args:
        d: A 4×4 input tile.
        g: A 3×3 filter (cross-correlation, as frameworks use it).
    """
    d, g = np.asarray(d, dtype=np.float64), np.asarray(g, dtype=np.float64)
    if d.shape != (4, 4) or g.shape != (3, 3):
        raise ValueError(f"F(2x2, 3x3) takes a 4x4 tile and a 3x3 filter; got {d.shape} and {g.shape}")
    u = WINOGRAD_G @ g @ WINOGRAD_G.T
    v = WINOGRAD_BT @ d @ WINOGRAD_BT.T
    m = u * v
    return WINOGRAD_AT @ m @ WINOGRAD_AT.T, m.size


def cross_correlate_fft(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A single-channel 2-D cross-correlation without padding, through the FFT: the product of the transforms of
    the input and of the flipped filter, both zero-padded to the input's size, keeping the outputs the filter
    covered entirely."""
    x, w = np.asarray(x, dtype=np.float64), np.asarray(w, dtype=np.float64)
    (h, wd), (r, s) = x.shape, w.shape
    full = np.fft.irfft2(np.fft.rfft2(x) * np.fft.rfft2(w[::-1, ::-1], s=x.shape), s=x.shape)
    return full[r - 1 : h, s - 1 : wd]
