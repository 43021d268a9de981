"""The small CNN of a lecture example: shapes and parameter count by the library, checked by torch itself."""

# --8<-- [start:example]
import torch
from torch import nn

from gpukb.cudnn.cnn import parameters, stages

for name, shape, params in stages():
    print(f"{name:<32} {shape!s:<16} {params:>3} parameters")
print(f"total: {parameters()} parameters")

# The same network in torch (NCHW): conv 3x3/2 with bias, ReLU, 2x2 max pool stride 1, flatten, dense 2, softmax.
model = nn.Sequential(nn.Conv2d(3, 2, 3, stride=2), nn.ReLU(), nn.MaxPool2d(2, stride=1), nn.Flatten(),
                      nn.Linear(8, 2), nn.Softmax(dim=1))  # fmt: skip
out = model(torch.randn(1, 3, 7, 7))
print(f"torch: output {tuple(out.shape)}, {sum(p.numel() for p in model.parameters())} parameters")
print(f"with 10 dense units instead of 2: {parameters(dense_units=10)} parameters")
# --8<-- [end:example]
