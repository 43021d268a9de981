"""One MX block with an outlier: the shared scale it gets, and what each element format keeps of it."""

# --8<-- [start:example]
import numpy as np

from gpukb.formats.arrays import decode_array
from gpukb.formats.mx import dequantize, quantize
from gpukb.formats.spec import get_format
from gpukb.tables import text_table

rng = np.random.default_rng(1)
block = (rng.standard_normal(32) * 0.02).astype(np.float32)  # 32 weights of typical size 0.02 ...
block[5] = 0.9  # ... and one outlier, 45 times larger
print(f"amax = {np.abs(block).max():.4g}, floor(log2(amax)) = {int(np.floor(np.log2(np.abs(block).max())))}")

others = np.arange(32) != 5  # the 31 ordinary values
rows, kept = [], {}
for fmt in ["e4m3", "e5m2", "e3m2", "e2m3", "e2m1"]:
    q = quantize(block, fmt)  # one block: one E8M0 scale and 32 elements
    x = int(q.scale_exponents[0])  # the scale is 2**x
    elements = decode_array(q.elements, fmt)  # element values, before the scale
    restored = dequantize(q)  # elements * 2**x
    fmt_max = float(get_format(fmt).max_value)
    rows.append(
        [
            q.name,
            get_format(fmt).max_exponent,
            x,
            f"0x{q.scales[0]:02X}",
            f"{elements[5]:g}",
            f"{restored[5]:g}",
            int(np.sum(np.abs(block) > fmt_max * 2.0**x)),  # clamped to the element max
            int(np.sum((elements == 0) & (block != 0))),  # too small for the element format
            f"{np.linalg.norm((restored - block)[others]) / np.linalg.norm(block[others]):.3f}",
        ]
    )
    kept[q.name] = restored
headers = ["format", "emax", "X", "scale", "outlier element", "outlier back", "saturated", "zeroed", "error, others"]
print(text_table(headers, rows))

print("\nThe first four ordinary values:")
first = [[f"{v:.5f}", *(f"{r[i]:.5f}" for r in kept.values())] for i, v in enumerate(block[:4])]
print(text_table(["value", *kept], first))
# --8<-- [end:example]
