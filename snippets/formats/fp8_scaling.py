"""Why FP8 needs a scale: gradient-sized values in E4M3 and E5M2, with and without per-tensor scaling."""

# --8<-- [start:example]
import numpy as np

from gpukb.formats.arrays import decode_array, encode_array
from gpukb.formats.properties import properties

rng = np.random.default_rng(0)
grads = (rng.standard_normal(100_000) * 1e-4).astype(np.float32)  # gradient-like values, typical size 1e-4


def fp8_round_trip(x, fmt, scale=1.0):
    """Quantize x * scale to fmt and scale back, as a per-tensor-scaled FP8 tensor stores it."""
    return decode_array(encode_array(x * np.float32(scale), fmt), fmt) / scale


for fmt in ["e4m3", "e5m2"]:
    amax_scale = float(properties(fmt).max_value) / float(np.abs(grads).max())  # map amax to the format's max
    for label, scale in [("no scale", 1.0), (f"scale {amax_scale:.3g}", amax_scale)]:
        y = fp8_round_trip(grads, fmt, scale)
        zeros = np.mean(y == 0)
        rel_rms = np.sqrt(np.mean((y - grads) ** 2) / np.mean(grads**2))
        print(f"{fmt}  {label:<14}  became zero: {zeros:6.1%}  relative RMS error: {rel_rms:.4f}")
# --8<-- [end:example]
