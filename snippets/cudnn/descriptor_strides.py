"""cuDNN's packed strides for each layout, checked against the strides PyTorch gives the same tensors."""

# --8<-- [start:example]
import torch

from gpukb.cudnn.descriptors import fix_size_one_strides, packed_strides, tensor

# Dims are always in logical order (N, C, H, W); the layout is carried by the strides alone.
for dims in [(1, 64, 5, 4), (8, 3, 7, 5)]:
    x = torch.empty(dims)
    nchw, nhwc = packed_strides(dims, "NCHW"), packed_strides(dims, "NHWC")
    assert nchw == x.stride()  # torch's default (contiguous) is NCHW
    assert nhwc == x.to(memory_format=torch.channels_last).stride()  # channels_last is NHWC
    print(f"{dims}: NCHW {nchw}, NHWC {nhwc}, CHWN {packed_strides(dims, 'CHWN')}")

# 5-D: channels_last_3d is NDHWC.
dims = (2, 8, 3, 5, 4)
assert packed_strides(dims, "NDHWC") == torch.empty(dims).to(memory_format=torch.channels_last_3d).stride()
print(f"{dims}: NCDHW {packed_strides(dims, 'NCDHW')}, NDHWC {packed_strides(dims, 'NDHWC')}")

# Where element (n, c, h, w) = (0, 1, 2, 3) of the 1x64x5x4 tensor lies: the sum of index times stride.
for fmt in ("NCHW", "NHWC"):
    print(f"offset of (0, 1, 2, 3) in {fmt}: {tensor((1, 64, 5, 4), fmt=fmt).offset((0, 1, 2, 3))}")

# A size-1 dimension's stride is never used, so torch may report any value; cuDNN reads the layout from the
# strides' order, so it must be the packed one. This view is channels_last to torch, but its N stride is 64.
view = torch.empty(5, 4, 1, 64).permute(2, 3, 0, 1)  # dims (1, 64, 5, 4)
assert view.is_contiguous(memory_format=torch.channels_last)
fixed = fix_size_one_strides(view.shape, view.stride(), "NHWC")
print(f"size-1 rule: torch strides {view.stride()} -> {fixed}, layout {tensor(view.shape, fixed).layout()}")
# --8<-- [end:example]
