"""The page “Convolution descriptors” (docs/cudnn/convolution.md): its tables, figures and text."""

from __future__ import annotations

import numpy as np

from gpukb.cudnn import cnn, layers
from gpukb.cudnn import figures as cudnn_figures
from gpukb.cudnn.convolution import conv2d_direct, conv_descriptor, output_dims
from gpukb.cudnn.pages import _bound_us, _tuple
from gpukb.figures import to_svg
from gpukb.performance.ceilings import h100_ceilings
from gpukb.tables import markdown_table

#: Convolutions whose output size the page computes: (label, input NCHW, filter KCRS, pad, stride, dilation, groups).
OUTPUT_CASES = (
    ("ResNet-50 stem", (32, 3, 224, 224), (64, 3, 7, 7), 3, 2, 1, 1),
    ("3×3, same padding", (32, 64, 56, 56), (64, 64, 3, 3), 1, 1, 1, 1),
    ("3×3, stride 2", (32, 128, 56, 56), (128, 128, 3, 3), 1, 2, 1, 1),
    ("3×3, dilation 2, groups 2", (2, 6, 11, 9), (4, 3, 3, 3), 1, 2, 2, 2),
    ("depthwise 3×3", (8, 32, 28, 28), (32, 1, 3, 3), 1, 1, 1, 32),
    ("5×5 on 2×2, no padding", (1, 1, 2, 2), (1, 1, 5, 5), 0, 1, 1, 1),
)


def output_sizes() -> str:
    """Output dims of a few convolutions by the formula, and the error a filter that does not fit gets."""
    rows = []
    for label, x, w, pad, stride, dilation, groups in OUTPUT_CASES:
        conv = conv_descriptor(pad, stride, dilation, groups)
        try:
            out = f"`{_tuple(output_dims(x, w, conv))}`"
        except ValueError as err:
            out = str(err)
        rows.append([label, f"`{_tuple(x)}`", f"`{_tuple(w)}`", str(pad), str(stride), str(dilation), str(groups), out])
    return markdown_table(["case", "input N, C, H, W", "filter K, C/G, R, S", "pad", "stride", "dilation", "groups",
                           "output N, K, H, W"], rows)  # fmt: skip


#: The page's small example of the two modes: a 4×4 input and an asymmetric 3×3 filter.
MODE_INPUT = np.array([[1.0, 0, 2, 1], [3, 1, 0, 2], [0, 2, 1, 3], [2, 1, 3, 0]]).reshape(1, 1, 4, 4)


MODE_FILTER = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]).reshape(1, 1, 3, 3)


def mode_example() -> str:
    """Cross-correlation and convolution of the same input and filter, side by side."""
    out = {mode: conv2d_direct(MODE_INPUT, MODE_FILTER, conv_descriptor(mode=mode))[0, 0]
           for mode in ("cross_correlation", "convolution")}  # fmt: skip
    rows = []
    for i in range(out["convolution"].shape[0]):
        for j in range(out["convolution"].shape[1]):
            cc, cv = out["cross_correlation"][i, j], out["convolution"][i, j]
            rows.append([f"({i}, {j})", f"{cc:g}", f"{cv:g}", f"{cv - cc:g}"])
    return markdown_table(["output (h, w)", "CUDNN_CROSS_CORRELATION", "CUDNN_CONVOLUTION", "difference"], rows)


def layer_bounds(dtype: str = "fp16") -> str:
    """The timed ResNet-50 layers: output, work, bytes, intensity and the bound on the measured H100 ceilings."""
    ceilings = h100_ceilings()
    rows = []
    table = layers.load()
    for layer in table.layers:
        c = layers.counts(layer)
        us, limiter, flops, nbytes = _bound_us(layer, dtype, ceilings)
        rows.append([layer.name, f"{layer.c}→{layer.k}, {layer.kernel}×{layer.kernel}/{layer.stride}, {layer.hw}²",
                     f"`{_tuple(c.output_shape)}`", f"{flops / 1e9:.2f}", f"{nbytes / 2**20:.1f}",
                     f"{flops / nbytes:.0f}", f"{us:.1f}", limiter])  # fmt: skip
    return markdown_table(["layer", "C→K, filter/stride, input", "output", "GFLOP", f"MiB moved ({dtype})",
                           "FLOP/byte", "bound (µs)", "limited by"], rows)  # fmt: skip


def small_cnn() -> str:
    """The small CNN's stages: shape after each and trainable parameters, with the total."""
    rows = [[name, f"`{_tuple(shape)}`", str(params)] for name, shape, params in cnn.stages()]
    rows.append(["**total**", "", f"**{cnn.parameters()}**"])
    return markdown_table(["stage", "shape (N, H, W, C)", "parameters"], rows)


def small_cnn_example() -> str:
    """The small CNN example's numbers recomputed from its convolution output."""
    s = cnn.example_stages()
    data = cnn.load()

    def nhwc(a: np.ndarray) -> str:
        return "; ".join(f"c={ch}: {a[0, :, :, ch].astype(int).tolist()}" for ch in range(a.shape[3]))

    rows = [
        ["convolution output (given)", nhwc(s["conv"])],
        ["after ReLU", nhwc(s["relu"])],
        ["after 2×2 max pooling, stride 1", nhwc(s["pool"])],
        ["flattened in memory order (N, H, W, C)", str(s["flat_nhwc"][0].astype(int).tolist())],
        ["flattened channel by channel (N, C, H, W)", str(s["flat_nchw"][0].astype(int).tolist())],
        ["softmax of the channel-by-channel vector", ", ".join(f"{v:.4g}" for v in s["softmax_of_flat"])],
        ["the example's softmax", ", ".join(f"{v:.4g}" for v in data.claimed_softmax)],
        ["parameters with 2 dense units / with 10", f"{cnn.parameters()} / {cnn.parameters(dense_units=10)}"],
    ]
    return markdown_table(["stage", "values"], rows)


def algorithms_figure() -> str:
    """Inline SVG: direct, GEMM, Winograd and FFT convolution, with a ResNet-50 layer's numbers."""
    return to_svg(cudnn_figures.algorithms_figure())
