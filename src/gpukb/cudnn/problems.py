"""Worked problems of the cuDNN chapter, every answer computed by the library (see :mod:`gpukb.problems`).

Layer shapes come from ``cudnn/resnet50_layers.toml`` (:mod:`gpukb.cudnn.layers`, from the ResNet paper and
torchvision), ceilings the H100 pages quote (:func:`gpukb.performance.ceilings.h100_ceilings`).
"""

from __future__ import annotations

import numpy as np

from gpukb.cudnn import convolution, descriptors, layers
from gpukb.performance.ceilings import h100_ceilings
from gpukb.performance.roofline import bound
from gpukb.problems import Problem

RESNET = ("He et al., Deep Residual Learning for Image Recognition, table 1 (arXiv:1512.03385)",
          "https://arxiv.org/abs/1512.03385")  # fmt: skip


def _layer(name: str) -> layers.Layer:
    return next(layer for layer in layers.load().layers if layer.name == name)


def stem_output() -> Problem:
    layer = _layer("conv1")
    batch = layers.load().batch
    conv = convolution.conv_descriptor(pad=layer.pad, stride=layer.stride)
    dims = convolution.output_dims((batch, layer.c, layer.hw, layer.hw), (layer.k, layer.c, layer.kernel, layer.kernel),
                                   conv)  # fmt: skip
    c = layers.counts(layer)
    span = layer.kernel
    return Problem(
        id="stem-output",
        title="The output of ResNet-50's first convolution",
        question=f"ResNet-50's stem convolves a {layer.hw} × {layer.hw} RGB image with {layer.k} filters of "
        f"{layer.kernel} × {layer.kernel}, stride {layer.stride}, padding {layer.pad}. What output shape does "
        f"cuDNN report for a batch of {batch}, and how many FLOPs is it?",
        answer=f"({', '.join(map(str, dims))}) in NCHW order; {c.flops / 1e9:.1f} GFLOP ({c.macs / 1e9:.2f} billion "
        "multiply-adds, no bias).",
        working=(
            f"Each spatial side: ({layer.hw} + 2·{layer.pad} − {span}) // {layer.stride} + 1 = "
            f"{convolution.output_size(layer.hw, layer.kernel, layer.pad, layer.stride)} "
            "(`cudnnGetConvolutionNdForwardOutputDim`'s rule).",
            f"Multiply-adds: every output element ({c.output_elems:,}) sums C·R·S = {layer.c}·{layer.kernel}·"
            f"{layer.kernel} = {layer.c * layer.kernel**2} products: {c.macs:,}; FLOPs twice that.",
        ),
        sources=(RESNET,),
    )


def nhwc_offset() -> Problem:
    dims = (32, 64, 56, 56)
    index = (1, 3, 2, 5)
    nchw, nhwc = descriptors.packed_strides(dims, "NCHW"), descriptors.packed_strides(dims, "NHWC")
    return Problem(
        id="nhwc-offset",
        title="Where an element lies in NHWC",
        question=f"A tensor of N, C, H, W = {', '.join(map(str, dims))} is stored NHWC (PyTorch's channels_last). What "
        "strides does its cuDNN descriptor take, and at what element offset is n = 1, c = 3, h = 2, w = 5?",
        answer=f"Strides ({', '.join(f'{s:,}' for s in nhwc)}) in logical N, C, H, W order; offset "
        f"{descriptors.offset(index, nhwc):,} (NCHW would put it at {descriptors.offset(index, nchw):,}).",
        working=(
            f"NHWC packs C innermost: stride_C = 1, stride_W = C = {dims[1]}, stride_H = W·C = {nhwc[2]:,}, "
            f"stride_N = H·W·C = {nhwc[0]:,}.",
            "cuDNN takes dims and strides in logical order (N, C, H, W) whatever the layout; the order of the strides "
            "says the layout.",
            f"Offset Σ index·stride = 1·{nhwc[0]:,} + 3·{nhwc[1]} + 2·{nhwc[2]:,} + 5·{nhwc[3]} = "
            f"{descriptors.offset(index, nhwc):,}.",
        ),
    )


def winograd_saving() -> Problem:
    rng = np.random.default_rng(0)
    d, g = rng.standard_normal((4, 4)), rng.standard_normal((3, 3))
    tile, mults = convolution.winograd_tile(d, g)
    direct = tile.size * g.size
    reference = np.array([[np.sum(d[i : i + 3, j : j + 3] * g) for j in range(2)] for i in range(2)])
    error = float(np.max(np.abs(tile - reference)))
    return Problem(
        id="winograd",
        title="What Winograd saves on a 3 × 3 filter",
        question="cuDNN's WINOGRAD algorithms compute a 3 × 3 convolution in 2 × 2 output tiles, F(2×2, 3×3). How "
        "many multiplications does one tile take, against the direct sum?",
        answer=f"{mults} instead of {direct}: {direct / mults:.2f}× fewer, the transforms costing only additions "
        "and multiplications by constants.",
        working=(
            f"Direct: {tile.size} outputs × {g.size} taps = {direct} multiplications.",
            f"Winograd: transform the 4 × 4 input tile (Bᵀ d B) and the filter (G g Gᵀ, once per filter), multiply "
            f"elementwise: {mults} products, then transform back (Aᵀ m A).",
            f"`winograd_tile` on a random tile (float64) matches the direct sum to {error:.1e}.",
        ),
        sources=(
            (
                "Lavin and Gray, Fast Algorithms for Convolutional Neural Networks (arXiv:1509.09308)",
                "https://arxiv.org/abs/1509.09308",
            ),
        ),
    )


def layer_floor() -> Problem:
    layer = _layer("res2-3x3")
    ceilings = h100_ceilings()
    c = layers.counts(layer)
    nbytes = c.bytes(2)
    b = bound(c.flops, nbytes, ceilings["fp16"] * 1e12, ceilings["bandwidth"] * 1e9)
    return Problem(
        id="layer-floor",
        title="A floor under a ResNet-50 layer on an H100",
        question=f"How fast could cuDNN possibly run ResNet-50's {layer.kernel} × {layer.kernel} convolution of "
        f"stage 2 ({layer.c} → {layer.k} channels, {layer.hw} × {layer.hw}) at batch {layers.load().batch} in fp16 "
        "on an H100?",
        answer=f"No faster than {b.time_s * 1e6:.1f} µs, set by {b.limiter}: {c.flops / 1e9:.2f} GFLOP against "
        f"{nbytes / 2**20:.1f} MiB moved.",
        working=(
            f"Work: {c.flops:,} FLOP; fewest bytes (input, weights, output once, 2 B each): {nbytes:,}; intensity "
            f"{c.flops / nbytes:,.0f} FLOP/B.",
            f"Measured H100 ceilings: {ceilings['fp16']:,.1f} TFLOP/s (best fp16 product), "
            f"{ceilings['bandwidth']:,.1f} GB/s (fastest large copy).",
            f"Compute {b.compute_s * 1e6:.1f} µs, memory {b.memory_s * 1e6:.1f} µs; the floor is the larger.",
        ),
        sources=(RESNET,),
    )


def problems() -> list[Problem]:
    """The chapter's worked problems, computed now."""
    return [stem_output(), nhwc_offset(), winograd_saving(), layer_floor()]
