"""Why sums and weight updates stay in FP32: a 16-bit accumulator stalls, and small updates vanish."""

# ruff: noqa: E402  (each section is shown on the page on its own, so it imports what it uses)

# --8<-- [start:sum]
import torch

from gpukb.formats.mixed_precision import accumulate, stagnation_point

n, x = 10_000, 1e-4  # the true sum is 1
print(f"{'format':<9}{'addend stored':>24}{'running sum':>20}{'predicted stall':>17}{'torch .sum()':>14}")
for dtype, name in [(torch.float16, "fp16"), (torch.bfloat16, "bf16"), (torch.float32, "fp32")]:
    values = torch.full((n,), x, dtype=dtype)
    running = torch.zeros((), dtype=dtype)
    for v in values:  # an accumulator in the values' own format: every partial sum is rounded
        running += v
    stall = stagnation_point(x, name)
    print(
        f"{name:<9}{values[0].item():>24.17g}{running.item():>20.8g}{float(stall):>17g}"
        f"{values.sum().item():>14.8g}"  # torch sums 16-bit tensors in an FP32 accumulator
    )
    assert running.item() == accumulate(x, n, name).total  # the exact model agrees with torch

long = accumulate(x, 10**9, "fp32")
print(f"an FP32 accumulator stalls too: at {long.total:g}, after {long.stalled_after:,} additions")
# --8<-- [end:sum]

# --8<-- [start:master]
import torch

from gpukb.formats.mixed_precision import update_threshold

lr, steps = 1e-3, 1000
grad = torch.tensor(0.1, dtype=torch.float16)  # from an FP16 backward pass; each step subtracts lr * grad ≈ 1e-4
print(f"{'weights in':<11}{'updates lost below':>20}{'w after 1000 steps':>20}")
for dtype, name in [(torch.float16, "fp16"), (torch.bfloat16, "bf16"), (torch.float32, "fp32")]:
    w = torch.ones((), dtype=dtype)  # a weight of 1
    for _ in range(steps):
        w.add_(grad.to(dtype), alpha=-lr)
    print(f"{name:<11}{float(update_threshold(1, name)):>20.3g}{w.item():>20.8g}")

# Mixed precision keeps the FP32 weight (the master copy) and casts it to 16 bits for the next forward pass.
print(f"16-bit copies of the FP32 master weight: fp16 {w.half().item():.8g}, bf16 {w.bfloat16().item():.8g}")
# --8<-- [end:master]
