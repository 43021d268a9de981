"""A batch of small products three ways: a loop of GEMMs, one batched GEMM, one big GEMM (shared B)."""

# --8<-- [start:example]
import torch

from gpukb.gemm.batched import agreement, counts, make_batch, variant

device = "cuda" if torch.cuda.is_available() else "cpu"
batch = make_batch(torch, batch=64, m=32, n=32, k=32, dtype=torch.float32, device=device)
print("device:", device)
print("A:", tuple(batch.a.shape), " B:", tuple(batch.b.shape), " shared B:", tuple(batch.b_shared.shape))

loop = variant(torch, batch, "loop")  # 64 calls of torch.mm, one per product
bmm = variant(torch, batch, "bmm")  # one call of torch.bmm for the whole batch
one_gemm = variant(torch, batch, "one_gemm")  # shared B: a (64·32)×32 by 32×32 product
print("loop out:", tuple(loop().shape), " bmm out:", tuple(bmm().shape), " one GEMM out:", tuple(one_gemm().shape))

for name, diff in agreement(torch, batch).items():
    print(f"largest difference from torch.bmm, {name}: {diff:.2e}")
flops, nbytes = counts(batch, "fp32")
print(f"work: {flops:,} FLOPs over {nbytes:,} bytes ({flops / nbytes:.1f} FLOP/byte)")
# --8<-- [end:example]
