"""Two reference convolutions in numpy, equal to torch.nn.functional.conv2d, and the two cuDNN modes."""

# --8<-- [start:example]
import numpy as np
import torch
from torch.nn.functional import conv2d

from gpukb.cudnn.convolution import conv2d_direct, conv2d_im2col, conv_descriptor, counts

rng = np.random.default_rng(0)
# (N, C, H, W), (K, C/groups, R, S), padding, stride, dilation, groups
cases = [
    ((2, 6, 11, 9), (4, 3, 3, 3), 1, 2, 2, 2),
    ((1, 3, 7, 7), (2, 3, 3, 3), 0, 2, 1, 1),
    ((2, 8, 10, 12), (8, 2, 3, 5), (1, 2), (2, 1), (1, 2), 4),
    ((1, 4, 5, 5), (4, 1, 5, 5), 2, 1, 1, 4),  # depthwise
]
for x_dims, w_dims, pad, stride, dilation, groups in cases:
    x, w = rng.standard_normal(x_dims), rng.standard_normal(w_dims)
    conv = conv_descriptor(pad, stride, dilation, groups)
    want = conv2d(torch.from_numpy(x), torch.from_numpy(w), stride=conv.stride, padding=conv.pad,
                  dilation=conv.dilation, groups=groups).numpy()  # fmt: skip
    direct, unrolled = conv2d_direct(x, w, conv), conv2d_im2col(x, w, conv)
    print(f"{x_dims} * {w_dims} -> {want.shape}: direct {np.abs(direct - want).max():.1e}, "
          f"im2col {np.abs(unrolled - want).max():.1e}")  # fmt: skip

# CUDNN_CONVOLUTION flips the filter; CUDNN_CROSS_CORRELATION (what frameworks call convolution) does not.
x, w = rng.standard_normal((1, 1, 5, 5)), rng.standard_normal((1, 1, 3, 3))
cross = conv2d_direct(x, w, conv_descriptor(mode="cross_correlation"))
true_conv = conv2d_direct(x, w, conv_descriptor(mode="convolution"))
flipped = conv2d_direct(x, w[:, :, ::-1, ::-1], conv_descriptor(mode="cross_correlation"))
print(f"modes differ by up to {np.abs(true_conv - cross).max():.2f}; "
      f"convolution = cross-correlation with a flipped filter: {np.allclose(true_conv, flipped)}")  # fmt: skip

# Work and bytes of a ResNet-50 3x3 layer, counted by the performance chapter's counter (fp16: 2 bytes).
layer = counts((32, 64, 56, 56), (64, 64, 3, 3), conv_descriptor(pad=1))
print(f"3x3 layer: {layer.flops:,} FLOP, {layer.bytes(2):,} bytes, {layer.flops / layer.bytes(2):.0f} FLOP/byte")
# --8<-- [end:example]
