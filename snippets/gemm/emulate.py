"""Emulate an FP8 GEMM in numpy: the same activations and weights, stored in E4M3 or E5M2, with and without scales."""

# --8<-- [start:example]
import numpy as np

from gpukb.gemm.emulator import amax_scale, emulate, relative_errors

rng = np.random.default_rng(0)
x = rng.standard_normal((64, 512)) * 1e-3  # activations of typical size 0.001
w = rng.standard_normal((512, 32))  # weights of typical size 1
exact = x @ w  # float64

for a_type in ("e4m3", "e5m2"):
    # Without scales: x is stored as it is, and many of its values are below E4M3's smallest normal (2**-6).
    plain = emulate(x, w, a_type=a_type, b_type="e4m3", d_type="bf16")
    # With per-tensor scales: store x * sx and w * sw, and pass 1/sx, 1/sw for cuBLASLt to multiply back in.
    sx, sw = amax_scale(x, a_type), amax_scale(w, "e4m3")
    scaled = emulate(x * sx, w * sw, a_type=a_type, b_type="e4m3", d_type="bf16", scale_a=1 / sx, scale_b=1 / sw)
    for label, d in (("no scales", plain), (f"scales {sx:.4g}, {sw:.4g}", scaled)):
        frobenius, max_abs = relative_errors(d, exact)
        print(f"A {a_type}, B e4m3, D bf16, {label:<24} relative error {frobenius:.4f} (max abs {max_abs:.4f})")
# --8<-- [end:example]
