"""Checks of the formats library against a real GPU: TF32 matrix products and CUDA casts to FP8.

Both return plain dictionaries, so the GPU tests assert on them and ``bench/formats_gpu.py`` records them (as a
``gpukb.formats.results.GpuChecks``) for the pages. They need torch with CUDA; call them only where
``torch.cuda.is_available()``.
"""

from __future__ import annotations

import numpy as np

from gpukb.formats.arrays import decode_array, encode_array
from gpukb.formats.library_casts import probe_inputs, same_values, torch_bits, torch_dtype
from gpukb.formats.spec import formats
from gpukb.numerics import relative_error


def tf32_matmul_check(n: int = 2048, seed: int = 0) -> dict[str, float | int | str]:
    """Compare a float32 matmul with TF32 enabled against products of inputs rounded to TF32 on the CPU.

    If the tensor cores round each FP32 input to TF32 (nearest-even) and accumulate in FP32, the TF32 result is
    within FP32 accumulation error of ``round_tf32(A) @ round_tf32(B)`` computed in float64, and about a thousand
    times further from the exact product of the unrounded inputs. Truncation (toward zero) is measured as the
    alternative hypothesis.

    Returns:
        Relative Frobenius errors of the TF32 and the plain FP32 products against each reference, and the setup.
    """
    import torch

    generator = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.randn(n, n, generator=generator, dtype=torch.float32)
    b = torch.randn(n, n, generator=generator, dtype=torch.float32)

    def rounded(x: torch.Tensor, rounding: str) -> torch.Tensor:
        bits = encode_array(x.numpy(), "tf32", rounding=rounding)
        return torch.from_numpy(decode_array(bits, "tf32")).cuda()

    a_gpu, b_gpu = a.cuda(), b.cuda()
    saved = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = True
        tf32 = a_gpu @ b_gpu
        torch.backends.cuda.matmul.allow_tf32 = False
        fp32 = a_gpu @ b_gpu
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    exact = a_gpu.double() @ b_gpu.double()
    nearest = rounded(a, "nearest-even") @ rounded(b, "nearest-even")
    truncated = rounded(a, "toward-zero") @ rounded(b, "toward-zero")
    return {
        "n": n,
        "seed": seed,
        "inputs": "standard normal float32",
        "tf32_vs_nearest_even_inputs": relative_error(tf32, nearest),
        "tf32_vs_truncated_inputs": relative_error(tf32, truncated),
        "tf32_vs_exact": relative_error(tf32, exact),
        "fp32_vs_exact": relative_error(fp32, exact),
    }


def cuda_cast_check() -> list[dict[str, object]]:
    """Cast the probe inputs of every format torch has to it on the GPU and on the CPU, and compare with the rules.

    Returns:
        One record per format: how many inputs, whether the CUDA cast matches the format's rules, the saturating
        rules, and the CPU cast (value for value, any NaN equal to any NaN).
    """
    records = []
    for name, fmt in formats().items():
        if torch_dtype(fmt) is None or fmt.bits > 16:
            continue
        x = probe_inputs(fmt)
        if name == "e8m0":
            # torch's sign and zero handling for E8M0, and its rounding of float32 subnormal inputs, are
            # documented separately (see the FP8 page): compare normal positive inputs.
            x = x[x >= 2.0**-126]
        cuda, cpu = torch_bits(x, fmt, device="cuda"), torch_bits(x, fmt, device="cpu")
        rules, saturating = encode_array(x, fmt), encode_array(x, fmt, saturate=True)
        records.append(
            {
                "format": name,
                "inputs": int(x.size),
                "cuda_matches_rules": int(same_values(cuda, rules, fmt).sum()),
                "cuda_matches_saturating": int(same_values(cuda, saturating, fmt).sum()),
                "cuda_matches_cpu": int(same_values(cuda, cpu, fmt).sum()),
                "cpu_matches_rules": int(same_values(cpu, rules, fmt).sum()),
            }
        )
    return records


def overflow_probe(name: str = "e4m3", device: str = "cuda") -> dict[str, float]:
    """What torch's cast makes of a few overflowing inputs on one device (values as floats, NaN as 'NaN')."""
    values = np.array([448.0, 464.0, 465.0, 1e6, np.inf], dtype=np.float32)
    stored = decode_array(torch_bits(values, name, device=device), name)
    return {
        f"{v:g}": ("NaN" if np.isnan(s) else float(s)) for v, s in zip(values.tolist(), stored.tolist(), strict=True)
    }
