"""Train a small causal transformer block with the project's flash-attention kernel and with torch's
``scaled_dot_product_attention``, from the same seed on the same batches, and compare the losses; SDPA's math
backend trained the same way shows how long two correct bf16 implementations stay equal.

On a CUDA GPU: 300 steps. Without one, the kernel runs in Triton's interpreter (numpy on the CPU), so the model is
tiny and trains for 2 steps: enough to show the two losses agree, not that the model learns.
"""

# --8<-- [start:example]
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # run Triton kernels on the CPU; set before the first launch

from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention as sdpa

from gpukb.attention.kernel import flash_attention
from gpukb.attention.training import steps_in_agreement, train_losses

gpu = torch.cuda.is_available()
size = {"device": "cuda" if gpu else "cpu", "steps": 300 if gpu else 2, "seq": 256 if gpu else 16,
        "d_model": 256 if gpu else 32, "heads": 4 if gpu else 2, "kv_heads": 2 if gpu else 1,
        "batch": 16 if gpu else 1}  # fmt: skip


def kernel(q, k, v):
    return flash_attention(q, k, v, causal=True)


def peer(q, k, v):
    return sdpa(q, k, v, is_causal=True, enable_gqa=True)


ours = train_losses(kernel, seed=0, **size)
theirs = train_losses(peer, seed=0, **size)
with sdpa_kernel([SDPBackend.MATH]):  # a second correct implementation: how far two of them drift apart
    control = train_losses(peer, seed=0, **size)
print(f"{size['steps']} steps on {size['device']}: first loss {ours[0]:.4f} (SDPA {theirs[0]:.4f}), "
      f"last {ours[-1]:.4f} (SDPA {theirs[-1]:.4f})")  # fmt: skip
print(f"steps equal to within bf16 rounding: kernel and SDPA {steps_in_agreement(ours, theirs)}, "
      f"SDPA math and SDPA {steps_in_agreement(control, theirs)}")  # fmt: skip
# --8<-- [end:example]
