"""Model-state memory per GPU of a 7-billion-parameter model on 8 GPUs, and a block's activations."""

# --8<-- [start:example]
from gpukb.distributed.memory import block_activation_bytes, checkpointed_block_bytes, state_bytes_per_param

params, gpus = 7e9, 8
for scheme in ("ddp", "zero1", "zero2", "zero3", "fsdp2"):
    per_param = state_bytes_per_param(scheme, gpus)["total"]
    print(f"{scheme:<6} {per_param:6.2f} B/param  {per_param * params / 2**30:7.1f} GiB per GPU")

# one block of width 4096, 32 heads, batch 1 x 4096 tokens, bfloat16 activations
full = block_activation_bytes(batch=1, seq=4096, hidden=4096, heads=32, element_bytes=2)
kept = checkpointed_block_bytes(batch=1, seq=4096, hidden=4096, element_bytes=2)
print(f"block activations: {full / 2**30:.2f} GiB, checkpointed: {kept / 2**30:.3f} GiB")
# the same block with scaled_dot_product_attention: no softmax output kept, one log-sum-exp per row instead
fused = block_activation_bytes(batch=1, seq=4096, hidden=4096, heads=32, element_bytes=2, attention="fused")
print(f"with fused attention: {fused / 2**30:.2f} GiB")
# --8<-- [end:example]
