"""Scaled dot-product attention in numpy, with a causal and a padding mask, checked against torch's
``scaled_dot_product_attention`` on the same random inputs."""

# --8<-- [start:example]
import numpy as np
import torch
from torch.nn.functional import scaled_dot_product_attention as sdpa

from gpukb.attention.reference import causal_mask, padding_mask, scaled_dot_product_attention

rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal((2, 4, 6, 8)) for _ in range(3))  # (batch, heads, length, head_dim)

keep = padding_mask(np.array([6, 4]), 6) & causal_mask(6)  # True = may attend
ours = scaled_dot_product_attention(q, k, v, mask=keep)
theirs = sdpa(*(torch.from_numpy(a) for a in (q, k, v)), attn_mask=torch.from_numpy(keep))

print("output:", ours.shape)
print("keys seen by query 5 of sequence 1:", int(keep[1, 0, 5].sum()))
print(f"max |numpy - torch|: {np.abs(ours - theirs.numpy()).max():.1e}")
# --8<-- [end:example]
