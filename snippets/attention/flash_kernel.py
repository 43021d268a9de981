"""Run the project's Triton flash-attention kernel and compare it with attention formed in float64 and with
torch's ``scaled_dot_product_attention``.

Without a CUDA GPU the kernel runs in Triton's interpreter (numpy on the CPU, one program at a time), which is
why the shapes are small.
"""

# --8<-- [start:example]
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # run Triton kernels on the CPU; set before the first launch

from torch.nn.functional import scaled_dot_product_attention as sdpa

from gpukb.attention.kernel import default_config, flash_attention

device = "cuda" if torch.cuda.is_available() else "cpu"
gen = torch.Generator().manual_seed(0)
q = torch.randn(1, 4, 50, 64, generator=gen).half().to(device)  # 4 query heads, 50 tokens: not a block multiple
k = torch.randn(1, 2, 50, 64, generator=gen).half().to(device)  # 2 key/value heads: grouped-query attention
v = torch.randn(1, 2, 50, 64, generator=gen).half().to(device)
o = flash_attention(q, k, v, causal=True)

exact = sdpa(q.double(), k.double(), v.double(), is_causal=True, enable_gqa=True)
peer = sdpa(q, k, v, is_causal=True, enable_gqa=True)
print(f"device: {device}, tiling: {default_config(64, True).label}")
print(f"output: {tuple(o.shape)} {str(o.dtype).removeprefix('torch.')}")
print(f"max |O - exact|: {(o.double() - exact).abs().max().item():.2e}")
print(f"max |SDPA - exact|: {(peer.double() - exact).abs().max().item():.2e}")
# --8<-- [end:example]
