"""TF32 is a math mode: FP32 tensors in memory, inputs rounded to 10 mantissa bits inside the matmul."""

# ruff: noqa: E402  (each section is shown on the page on its own, so it imports what it uses)

# --8<-- [start:defaults]
import torch

print(f"torch {torch.__version__}")
print(f"torch.backends.cuda.matmul.allow_tf32 = {torch.backends.cuda.matmul.allow_tf32}")
print(f"torch.get_float32_matmul_precision() = {torch.get_float32_matmul_precision()!r}")
print(f"torch.backends.cudnn.allow_tf32 = {torch.backends.cudnn.allow_tf32}")
# --8<-- [end:defaults]

# --8<-- [start:error]
import numpy as np
import torch

from gpukb.formats.mixed_precision import quantize

rng = np.random.default_rng(0)
a, b = rng.standard_normal((2, 512, 512), dtype=np.float32)
exact = a.astype(np.float64) @ b.astype(np.float64)
scale = np.abs(exact).mean()


def error(inputs: str, rounding: str = "nearest-even") -> float:
    """Round both inputs to `inputs`, multiply in FP32 (every product is exact), compare with float64."""
    qa, qb = (torch.from_numpy(quantize(m, inputs, rounding).astype(np.float32)) for m in (a, b))
    return float(np.abs((qa @ qb).double().numpy() - exact).max() / scale)


print("inputs rounded to        max |error| / mean |C|")
for inputs in ["fp32", "tf32", "bf16", "fp16"]:
    print(f"{inputs:<24} {error(inputs):.2e}")
print(f"{'tf32, truncated':<24} {error('tf32', 'toward-zero'):.2e}")
# --8<-- [end:error]
