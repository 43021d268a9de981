"""The online softmax and FlashAttention's tiled loop in numpy: equal to the plain formulas."""

# --8<-- [start:example]
import numpy as np

from gpukb.attention.flash import flash_forward, online_softmax
from gpukb.attention.reference import scaled_dot_product_attention, softmax

rng = np.random.default_rng(0)
x = rng.standard_normal(10) * 4
x[7] = 30.0  # the maximum arrives late: the running sum is rescaled when it does
p, m, total = online_softmax(x, block=3)  # one pass, three entries at a time
print(f"running max {m:.1f}, sum {total:.6f}; max |online - softmax| = {np.abs(p - softmax(x)).max():.1e}")

q, k, v = (rng.standard_normal((2, 100, 16)) for _ in range(3))
out, lse = flash_forward(q, k, v, block_m=32, block_n=16, causal=True)  # tiles of 32 × 16 scores
naive = scaled_dot_product_attention(q, k, v, causal=True)  # the whole 100 × 100 score matrix
print(f"tiled vs naive attention: max difference {np.abs(out - naive).max():.1e}")
# --8<-- [end:example]
