"""The MX page's block with an outlier, in NVFP4 and in MXFP4: the scales each gets, and what each keeps."""

# --8<-- [start:example]
import numpy as np

from gpukb.formats import mx, nvfp4
from gpukb.tables import text_table

rng = np.random.default_rng(1)
block = (rng.standard_normal(32) * 0.02).astype(np.float32)  # the same 32 weights as above ...
block[5] = 0.9  # ... with the same outlier

q = nvfp4.quantize(block)  # two blocks of 16, one E4M3 scale each, and one FP32 scale for both
print(f"per-tensor scale g = amax / 2688 = {q.global_scale:.6g}")
scales, codes = [float(s) for s in q.block_scales], [f"0x{s:02X}" for s in q.scales]
print(f"block scales (E4M3): {scales}, codes {codes}")

nv = nvfp4.dequantize(q)
mx4 = mx.dequantize(mx.quantize(block, "e2m1"))
others = np.arange(32) != 5


def error(restored, where):
    """Relative RMS error of the values at ``where``."""
    return np.linalg.norm((restored - block)[where]) / np.linalg.norm(block[where])


rows = []
for name, restored, bits in [
    ("MXFP4", mx4, mx.bits_per_element("e2m1")),
    ("NVFP4", nv, q.bits_per_element),
]:
    zeroed = int(np.sum((restored == 0) & (block != 0)))  # values that became zero
    second_half = np.arange(32) >= 16  # the block of 16 without the outlier
    errors = [f"{error(restored, others):.3f}", f"{error(restored, second_half):.3f}"]
    rows.append([name, f"{bits:g}", f"{restored[5]:.4g}", zeroed, *errors])
headers = ["format", "bits per value", "outlier back", "zeroed"]
print(text_table([*headers, "error, others", "error, 2nd half"], rows))
# --8<-- [end:example]
