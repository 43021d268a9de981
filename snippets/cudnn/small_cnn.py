"""The small worked CNN example: the shape after each stage and the parameter count, computed."""

# --8<-- [start:example]
from gpukb.cudnn.cnn import parameters, stages

for name, shape, params in stages():
    print(f"{name:<32} {shape!s:<16} {params:>3} parameters")
print(f"total: {parameters()} parameters")
print(f"with 10 dense units instead of 2: {parameters(dense_units=10)} parameters")
# --8<-- [end:example]
