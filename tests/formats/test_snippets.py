"""The formats chapter's snippets (``snippets/formats/``): each is run as a reader runs it, and what it prints is
asserted value by value, recomputed with ml_dtypes and torch where it can be (FastAPI's one test per tutorial).

``tests/test_snippets.py`` collects ``CHECKS`` from every ``tests/<topic>/test_snippets.py`` and fails for a snippet
that has no check.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest


def check_float32_fields(out: str) -> None:
    rows = {}
    for line in out.splitlines():
        match = re.match(
            r"\s*(\S+)\s+sign=(\d)\s+exponent=([01]{8})\s+mantissa=([01]{23})\s+(.+?)\s+stored=(\S+)$", line
        )
        assert match, f"unexpected line {line!r}"
        rows[match.group(1)] = match.groups()[1:]
    assert list(rows) == ["42.5", "0.1", "-2", "1e-45", "3.5e38"]
    # Every row's fields must be the bits numpy stores for that float32.
    for label, (sign, exponent, mantissa, _outcome, _stored) in rows.items():
        with np.errstate(over="ignore"):  # 3.5e38 overflows to inf, as the snippet shows
            bits = int(np.array(float(label), dtype=np.float32).view(np.uint32))
        assert int(sign + exponent + mantissa, 2) == bits, label
    assert rows["42.5"] == ("0", "10000100", "01010100000000000000000", "exact", "42.5")
    assert rows["0.1"][3:] == ("rounded", "0.10000000149011612")
    assert Fraction(rows["0.1"][4]) != Fraction("0.1")
    assert rows["1e-45"][3:] == ("subnormal, rounded", repr(2.0**-149))
    assert rows["3.5e38"][3:] == ("overflow", "inf")


def check_fp8_scaling(out: str) -> None:
    import ml_dtypes

    rows = re.findall(
        r"^(e4m3|e5m2)\s+(no scale|scale \S+)\s+became zero:\s+(\S+)%\s+relative RMS error: (\S+)$", out, re.M
    )
    assert len(rows) == 4
    # Recompute every row with ml_dtypes' casts instead of gpukb's encoder.
    grads = (np.random.default_rng(0).standard_normal(100_000) * 1e-4).astype(np.float32)
    targets = {"e4m3": (ml_dtypes.float8_e4m3fn, 448.0), "e5m2": (ml_dtypes.float8_e5m2, 57344.0)}
    for fmt, label, zeros, rel_rms in rows:
        dtype, fmt_max = targets[fmt]
        scale = 1.0 if label == "no scale" else fmt_max / float(np.abs(grads).max())
        assert label == ("no scale" if scale == 1.0 else f"scale {scale:.3g}")  # the scale the page prints
        y = (grads * np.float32(scale)).astype(dtype).astype(np.float64) / scale
        assert float(zeros) == pytest.approx(100 * np.mean(y == 0), abs=0.05)
        assert float(rel_rms) == pytest.approx(np.sqrt(np.mean((y - grads) ** 2) / np.mean(grads**2)), abs=1e-4)
    by_key = {(fmt, label.split()[0]): float(err) for fmt, label, _, err in rows}
    assert by_key[("e4m3", "no")] == 1.0  # every value underflows to zero without a scale
    assert by_key[("e4m3", "scale")] < by_key[("e5m2", "scale")]  # scaled, E4M3's extra mantissa bit wins


def check_mx_quantize(out: str) -> None:
    import ml_dtypes

    lines = out.splitlines()
    assert lines[0] == "amax = 0.9, floor(log2(amax)) = -1"
    pattern = r"^(MXFP\d \(E\dM\d\))\s+(\d+)\s+(-?\d+)\s+0x([0-9A-F]{2})\s+(\S+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\S+)$"
    rows = {m[0]: m[1:] for m in re.findall(pattern, out, re.M)}
    # Recompute the block with ml_dtypes' casts and the spec's numbers (emax, max), not with gpukb.
    block = (np.random.default_rng(1).standard_normal(32) * 0.02).astype(np.float32)
    block[5] = 0.9
    others = np.arange(32) != 5
    spec = {  # element format: (ml_dtypes type, emax, max), OCP MX v1.0
        "MXFP8 (E4M3)": (ml_dtypes.float8_e4m3fn, 8, 448.0),
        "MXFP8 (E5M2)": (ml_dtypes.float8_e5m2, 15, 57344.0),
        "MXFP6 (E3M2)": (ml_dtypes.float6_e3m2fn, 4, 28.0),
        "MXFP6 (E2M3)": (ml_dtypes.float6_e2m3fn, 2, 7.5),
        "MXFP4 (E2M1)": (ml_dtypes.float4_e2m1fn, 2, 6.0),
    }
    assert list(rows) == list(spec)
    errors = {}
    for name, (dtype, emax, fmt_max) in spec.items():
        x = -1 - emax  # floor(log2(0.9)) - emax
        scaled = np.clip(block.astype(np.float64) * 2.0**-x, -fmt_max, fmt_max)  # saturating, as the spec says
        elements = scaled.astype(dtype).astype(np.float64)
        restored = elements * 2.0**x
        error = np.linalg.norm((restored - block)[others]) / np.linalg.norm(block[others])
        emax_out, x_out, scale, elem5, back5, saturated, zeroed, err = rows[name]
        assert (int(emax_out), int(x_out), int(scale, 16)) == (emax, x, 127 + x)
        assert (float(elem5), float(back5)) == (elements[5], restored[5])
        assert int(saturated) == int(np.sum(np.abs(block) > fmt_max * 2.0**x))
        assert int(zeroed) == int(np.sum((elements == 0) & (block != 0)))
        assert float(err) == pytest.approx(error, abs=5e-4)
        errors[name] = float(err)
    assert rows["MXFP4 (E2M1)"][3:6] == ("6", "0.75", "1")  # the outlier saturates: 0.9 / 2**-3 = 7.2 > 6
    assert rows["MXFP6 (E2M3)"][5] == "0"  # 7.2 fits under E2M3's 7.5
    assert errors["MXFP8 (E4M3)"] < errors["MXFP6 (E2M3)"] < errors["MXFP4 (E2M1)"]
    first = [line.split() for line in lines[lines.index("The first four ordinary values:") + 3 :]]
    assert [float(r[0]) for r in first] == pytest.approx(block[:4].tolist(), abs=5e-6)
    assert all(float(r[-1]) == 0.0 for r in first)  # MXFP4 flushes all four to zero


def check_nvfp4_quantize(out: str) -> None:
    import ml_dtypes

    # Recompute with ml_dtypes' casts and NVIDIA's rule (g = amax / (6 * 448) in FP32, block scale E4M3 of
    # block amax / (6 g), elements E2M1 of x / (s g), both saturating), not with gpukb.
    block = (np.random.default_rng(1).standard_normal(32) * 0.02).astype(np.float32)
    block[5] = 0.9
    x = block.astype(np.float64)
    g = float(np.float32(np.abs(x).max() / 2688))
    amax = np.abs(x.reshape(2, 16)).max(axis=1)
    scales = np.clip(amax / (6 * g), 0, 448).astype(ml_dtypes.float8_e4m3fn)
    step = np.repeat(scales.astype(np.float64) * g, 16)
    nv = np.clip(x / step, -6, 6).astype(ml_dtypes.float4_e2m1fn).astype(np.float64) * step
    assert f"per-tensor scale g = amax / 2688 = {g:.6g}\n" in out
    codes = [f"0x{int(c):02X}" for c in scales.view(np.uint8)]
    assert f"block scales (E4M3): {[float(s) for s in scales.astype(np.float64)]}, codes {codes}" in out
    assert codes[0] == "0x7E"  # the block holding the tensor's amax gets E4M3's largest scale, 448
    rows = {m[0]: m[1:] for m in re.findall(r"^(MXFP4|NVFP4)\s+(\S+)\s+(\S+)\s+(\d+)\s+(\S+)\s+(\S+)$", out, re.M)}
    mx4 = np.clip(x * 2.0**3, -6, 6).astype(ml_dtypes.float4_e2m1fn).astype(np.float64) * 2.0**-3  # X = -1 - 2
    others = np.arange(32) != 5
    for name, restored, bits in (("MXFP4", mx4, 4.25), ("NVFP4", nv, 4 + 8 / 16 + 32 / 32)):
        bits_out, outlier, zeroed, err_others, err_half = rows[name]
        assert float(bits_out) == bits
        assert float(outlier) == pytest.approx(restored[5], rel=5e-4)
        assert int(zeroed) == int(np.sum((restored == 0) & (x != 0)))
        err = np.linalg.norm((restored - x)[others]) / np.linalg.norm(x[others])
        assert float(err_others) == pytest.approx(err, abs=5e-4)
        half = np.linalg.norm((restored - x)[16:]) / np.linalg.norm(x[16:])
        assert float(err_half) == pytest.approx(half, abs=5e-4)
    assert rows["NVFP4"][1] == "0.9"  # the outlier maps to 6 * 448 * g: kept, where MXFP4 saturates it to 0.75
    assert rows["MXFP4"][1] == "0.75"
    assert int(rows["NVFP4"][2]) < int(rows["MXFP4"][2])
    assert float(rows["NVFP4"][4]) < float(rows["MXFP4"][4]) / 4  # the block without the outlier gets its own scale


def check_mp_accumulation(out: str) -> None:
    import torch

    from gpukb.formats.mixed_precision import accumulate, stagnation_point, update_threshold

    sums = dict(
        (m[0], m[1:])
        for m in re.findall(r"^(fp16|bf16|fp32)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$", out, flags=re.MULTILINE)
    )
    assert list(sums) == ["fp16", "bf16", "fp32"]
    for fmt, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16), ("fp32", torch.float32)):
        stored, running, stall, torch_sum = map(float, sums[fmt])
        assert stored == torch.tensor(1e-4, dtype=dtype).item()
        assert running == pytest.approx(accumulate(1e-4, 10_000, fmt).total, rel=1e-7)
        assert stall == float(stagnation_point(1e-4, fmt))
        assert torch_sum == pytest.approx(1.0, abs=1e-6)  # an FP32 accumulator inside torch
    assert float(sums["fp16"][1]) == 0.25 == float(sums["fp16"][2])  # the page's numbers
    assert float(sums["bf16"][1]) == 0.03125
    long = accumulate(1e-4, 10**9, "fp32")
    assert f"stalls too: at 2048, after {long.stalled_after:,} additions" in out
    assert long.total == 2048
    rows = re.findall(r"^(fp16|bf16|fp32)\s+(\S+)\s+(\S+)$", out, flags=re.MULTILINE)
    lost = {fmt: float(threshold) for fmt, threshold, _ in rows}
    weights = {fmt: w for fmt, _, w in rows}
    assert list(weights) == ["fp16", "bf16", "fp32"]
    for fmt in lost:
        assert lost[fmt] == pytest.approx(float(update_threshold(1, fmt)), rel=2e-3)
    assert float(weights["fp16"]) == 1.0
    assert float(weights["bf16"]) == 1.0
    w = float(weights["fp32"])
    assert w == pytest.approx(1 - 1000 * 1e-3 * torch.tensor(0.1, dtype=torch.float16).item(), abs=1e-4)
    copies = re.search(r"fp16 (\S+), bf16 (\S+)$", out, flags=re.MULTILINE)
    assert copies is not None
    assert copies.group(1) == f"{torch.tensor(w).half().item():.8g}"
    assert copies.group(2) == f"{torch.tensor(w).bfloat16().item():.8g}"


def check_loss_scaling(out: str) -> None:
    from gpukb.formats.mixed_precision import GRADSCALER_DEFAULTS, lognormal_fractions, rescue_scale

    rows = re.findall(r"^(\S+)\s+\| (\S+)\s+(\S+)%\s+(.+?)\s+\| (\S+)\s+(\S+)% \| 2\^(\d+)$", out, flags=re.MULTILINE)
    assert [r[0] for r in rows] == ["3e-05", "1e-06", "5e-08", "2e-08", "1e-08"]
    for label, plain, error, outcome, unscaled, scaled_error, rescue in rows:
        g = float(label)
        assert 2 ** int(rescue) == rescue_scale(g, "fp16")
        assert float(scaled_error) < 0.05  # scaled by 2^16, every one of them survives to within 0.05 %
        assert float(unscaled) == pytest.approx(g, rel=5e-4)
        if g < 2.0**-25:
            assert (plain, error, outcome) == ("0", "100.0", "underflow")
        else:
            assert outcome == "subnormal, rounded"
            assert float(plain) != 0
    assert rows[2][1] == f"{2.0**-24:.6g}"  # 5e-8 becomes the smallest subnormal, 2^-24
    assert rows[2][2] == "19.2"
    table = re.findall(r"^2\^(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$", out, flags=re.MULTILINE)
    assert [int(t[0]) for t in table] == [0, 4, 8, 12, 16, 20, 24]
    for k, zero, subnormal, overflow, step in table:
        f = lognormal_fractions(2.0**-20, 4.0, 2.0 ** int(k), "fp16")
        assert float(zero) == pytest.approx(f.zero, rel=1e-2)
        assert float(subnormal) == pytest.approx(f.subnormal, rel=1e-2)
        assert float(overflow) == pytest.approx(f.overflow, rel=1e-2)
        assert float(step) == pytest.approx(f.step_overflows(10**8), rel=1e-2)
        if int(k) >= 16:
            assert float(step) > 0.99  # "from 2^16 on, a step almost surely holds an infinity"
    sampled = dict(re.findall(r"^sampled, scale 2\^(\d+): fraction zero in fp16 (\S+)$", out, flags=re.MULTILINE))
    assert float(sampled["0"]) == pytest.approx(lognormal_fractions(2.0**-20, 4.0, 1, "fp16").zero, abs=0.002)
    assert float(sampled["16"]) == 0
    assert "zeros in bf16 0," in out
    defaults = re.search(
        r"init_scale=(\S+), growth_factor=(\S+), backoff_factor=(\S+), growth_interval=(\d+)$", out, re.MULTILINE
    )
    assert defaults is not None
    assert dict(zip(GRADSCALER_DEFAULTS, map(float, defaults.groups()), strict=True)) == GRADSCALER_DEFAULTS
    steps = re.findall(r"^step (\d): overflow=(\w+)\s+step taken=(\w+)\s+scale -> (\d+)$", out, flags=re.MULTILINE)
    assert [float(s[3]) for s in steps] == [2.0**k for k in (16, 16, 17, 16, 15, 15, 15, 16, 16, 16)]
    assert [s[2] == "False" for s in steps] == [s[1] == "True" for s in steps]  # overflow steps are skipped


def check_mp_tf32(out: str) -> None:
    import torch

    assert f"torch {torch.__version__}\n" in out
    assert "torch.backends.cuda.matmul.allow_tf32 = False" in out
    assert "torch.get_float32_matmul_precision() = 'highest'" in out
    assert "torch.backends.cudnn.allow_tf32 = True" in out
    errors = {k.strip(): float(v) for k, v in re.findall(r"^(fp32|tf32|bf16|fp16|tf32, truncated)\s+(\S+)$", out, re.M)}
    assert errors["fp32"] < 1e-5
    assert 5e-4 < errors["tf32"] < 5e-3  # about 2^-11 per input, summed over 512 products
    assert errors["fp16"] == errors["tf32"]  # same 10 mantissa bits; these values need no more range
    assert errors["tf32"] > 100 * errors["fp32"]  # "about three orders of magnitude above full FP32"
    assert 5 < errors["bf16"] / errors["tf32"] < 12  # 3 fewer bits: about 8 times coarser
    assert 1.5 < errors["tf32, truncated"] / errors["tf32"] < 3.5  # "roughly double to triple"


CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/formats/float32_fields.py": check_float32_fields,
    "snippets/formats/fp8_scaling.py": check_fp8_scaling,
    "snippets/formats/loss_scaling.py": check_loss_scaling,
    "snippets/formats/mp_accumulation.py": check_mp_accumulation,
    "snippets/formats/mp_tf32.py": check_mp_tf32,
    "snippets/formats/mx_quantize.py": check_mx_quantize,
    "snippets/formats/nvfp4_quantize.py": check_nvfp4_quantize,
}
