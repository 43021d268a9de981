"""Bound the time of a convolution layer from its operations and bytes (a common lecture example)."""

# --8<-- [start:example]
from gpukb.measuring.counting import conv2d_counts
from gpukb.performance.roofline import bound

# A 3×3 convolution with bias, stride 2, padding 1: 1×3×416×480 in, 1×16×208×240 out, FP32.
layer = conv2d_counts((1, 3, 416, 480), out_channels=16, kernel=(3, 3), stride=2, padding=1)
nbytes = layer.bytes(elem_bytes=4)  # input and weights read once, output written once

# The example's assumed machine: 1 TFLOP/s of compute, 1000 GB/s of memory bandwidth.
floor = bound(layer.flops, nbytes, peak_flops=1e12, bandwidth=1000e9)

print(f"output shape     {layer.output_shape}")
print(f"parameters       {layer.params}")
print(f"FLOPs            {layer.flops:,}")
print(f"bytes            {nbytes:,}")
print(f"compute bound    {floor.compute_s * 1e6:.2f} µs")
print(f"memory bound     {floor.memory_s * 1e6:.2f} µs")
print(f"limited by       {floor.limiter}")
# --8<-- [end:example]
