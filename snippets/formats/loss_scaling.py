"""Loss scaling: small FP16 gradients underflow, a loss scale lifts them, and GradScaler picks the scale."""

# ruff: noqa: E402  (each section is shown on the page on its own, so it imports what it uses)

# --8<-- [start:underflow]
import torch

from gpukb.formats.explain import explain
from gpukb.formats.mixed_precision import rescue_scale

scale = 2.0**16
print("gradient  | in fp16      error  outcome            | x 2^16 in fp16, / 2^16   error  | smallest rescue")
for g in [3e-5, 1e-6, 5e-8, 2e-8, 1e-8]:
    plain = torch.tensor(g).half()  # the gradient as an FP16 backward pass holds it
    scaled = torch.tensor(g * scale).half()  # the same gradient, from a loss multiplied by 2^16
    unscaled = scaled.float() / scale  # GradScaler unscales in FP32 before the optimizer step
    print(
        f"{g:<9.0e} | {plain.item():<11.6g} {abs(plain.item() - g) / g:>6.1%}  {explain(g, 'fp16').outcome:<18} | "
        f"{unscaled.item():<22.6g} {abs(unscaled.item() - g) / g:>6.3%} | 2^{rescue_scale(g, 'fp16').bit_length() - 1}"
    )
# --8<-- [end:underflow]

# --8<-- [start:distribution]
import torch

from gpukb.formats.mixed_precision import fractions_table
from gpukb.tables import text_table

# Assumed, not measured: log2|g| is normal with mean -20 (median 2^-20 ≈ 9.5e-7) and standard deviation 4.
median, sigma = 2.0**-20, 4.0
scales = [2.0**k for k in (0, 4, 8, 12, 16, 20, 24)]
print(text_table(*fractions_table(median, sigma, scales, "fp16", count=10**8)))

# The model, checked against a million sampled gradients cast by torch:
z = torch.randn(10**6, generator=torch.Generator().manual_seed(0))
g = torch.exp2(torch.log2(torch.tensor(median)) + sigma * z)
for k in (0, 8, 16):
    print(f"sampled, scale 2^{k}: fraction zero in fp16 {((g * 2.0**k).half() == 0).double().mean().item():.3g}")
print(f"sampled, scale 1: zeros in bf16 {(g.bfloat16() == 0).sum().item()}, smallest |g| {g.min().item():.3g}")
# --8<-- [end:distribution]

# --8<-- [start:dynamic]
import torch

from gpukb.formats.mixed_precision import DynamicLossScaler

scaler = torch.amp.GradScaler("cpu")  # the same rule runs on CUDA
print(
    f"torch {torch.__version__} GradScaler defaults: init_scale={scaler.get_scale():g}, "
    f"growth_factor={scaler.get_growth_factor()}, backoff_factor={scaler.get_backoff_factor()}, "
    f"growth_interval={scaler.get_growth_interval()}"
)

# A short run with growth_interval=3 so that growth shows; steps 3 and 4 produce an infinite gradient.
w = torch.nn.Parameter(torch.ones(1))
opt = torch.optim.SGD([w], lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0**16, growth_interval=3)
reference = DynamicLossScaler(scale=2.0**16, growth_interval=3)
for step in range(10):
    overflow = step in (3, 4)
    opt.zero_grad()
    loss = (w * 0.5).sum() * (float("inf") if overflow else 1.0)
    scaler.scale(loss).backward()
    before = w.item()
    scaler.step(opt)  # skipped when the unscaled gradients hold inf or NaN
    scaler.update()
    taken = reference.update(found_inf=overflow)
    assert scaler.get_scale() == reference.scale  # the plain-Python rule agrees with torch
    assert taken == (w.item() != before)
    print(f"step {step}: overflow={overflow!s:<5}  step taken={taken!s:<5}  scale -> {scaler.get_scale():g}")
# --8<-- [end:dynamic]
