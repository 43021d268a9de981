"""Worked problems of the formats chapter, every answer computed by its library (see :mod:`gpukb.problems`)."""

from __future__ import annotations

from fractions import Fraction

from gpukb.formats import mixed_precision, mx, nvfp4
from gpukb.formats.codec import decode, encode, floor_log2, nan_bits
from gpukb.formats.spec import get_format
from gpukb.problems import Problem


def _hex(bits: int, width: int) -> str:
    return f"0x{bits:0{(width + 3) // 4}X}"


def _bin(bits: int, fmt_name: str) -> str:
    """The pattern as sign, exponent and mantissa fields: ``0 11111 11``."""
    fmt = get_format(fmt_name)
    text = f"{bits:0{fmt.bits}b}"
    e = fmt.exponent_bits
    return f"{text[0]} {text[1 : 1 + e]} {text[1 + e :]}"


def _log2(x: float) -> int:
    return floor_log2(Fraction(x))


def largest_fnuz() -> Problem:
    fnuz, ocp = get_format("e5m2fnuz"), get_format("e5m2")
    bits, ocp_bits = fnuz.max_magnitude_bits, ocp.max_magnitude_bits
    d = decode(bits, fnuz)
    value = int(d.value)
    significand = 1 + Fraction(d.mantissa_field, 1 << fnuz.mantissa_bits)
    return Problem(
        id="e5m2fnuz-max",
        title="The largest finite E5M2FNUZ value",
        question="A kernel on an MI300X stores gradients in E5M2FNUZ (BF8). What is the largest finite value, what "
        "are its bits, and how do they differ from OCP E5M2's?",
        answer=f"{value:,}, stored as {_hex(bits, fnuz.bits)} ({_bin(bits, 'e5m2fnuz')}). OCP E5M2 has the same "
        f"largest value, {int(ocp.max_value):,}, at {_hex(ocp_bits, ocp.bits)}.",
        working=(
            f"E5M2FNUZ: {fnuz.exponent_bits} exponent bits, {fnuz.mantissa_bits} mantissa bits, bias {fnuz.bias}; "
            f"its only special pattern is {_hex(nan_bits(fnuz), fnuz.bits)} (NaN, in negative zero's place), so the "
            "all-ones magnitude is a number.",
            f"Exponent field {d.exponent_field} − bias {fnuz.bias} = {d.exponent_field - fnuz.bias}; mantissa "
            f"1.{d.mantissa_field:0{fnuz.mantissa_bits}b}₂ = {float(significand)}; "
            f"{float(significand)} × 2^{d.exponent_field - fnuz.bias} = {value:,}.",
            f"OCP E5M2 has bias {ocp.bias} and keeps IEEE's all-ones exponent for infinity and NaN, so its largest "
            f"pattern is {_hex(ocp_bits, ocp.bits)}: exponent {ocp_bits >> ocp.mantissa_bits} − {ocp.bias} = "
            f"{ocp.max_exponent}, the same {int(ocp.max_value):,}: FNUZ's larger bias costs the binade that its "
            "all-ones exponent gains.",
        ),
    )


def cast_42_5() -> Problem:
    fmt = get_format("e4m3")
    bits = encode(42.5, fmt)
    d = decode(bits, fmt)
    gap = mixed_precision.ulp(42.5, fmt)
    low = d.value - gap
    binade = floor_log2(Fraction(85, 2))
    return Problem(
        id="e4m3-cast",
        title="42.5 in E4M3",
        question="An activation of 42.5 is cast to OCP E4M3 with round-to-nearest-even. What is stored, and how "
        "large is the error?",
        answer=f"{float(d.value):g} ({_hex(bits, 8)}); the error is {float(d.value - Fraction(85, 2)):g}, "
        f"{float((d.value - Fraction(85, 2)) / Fraction(85, 2)):.1%} of the value.",
        working=(
            f"42.5 lies in the binade [{2**binade}, {2 ** (binade + 1)}), where E4M3's {fmt.mantissa_bits} mantissa "
            f"bits leave a gap of 2^{binade} / 2^{fmt.mantissa_bits} = {float(gap):g}.",
            f"Its neighbours are {float(low):g} and {float(d.value):g}; 42.5 is {float(Fraction(85, 2) - low):g} "
            f"above {float(low):g} and {float(d.value - Fraction(85, 2)):g} below {float(d.value):g}, so it rounds "
            f"up to {float(d.value):g}.",
            f"Stored bits: sign 0, exponent field {d.exponent_field} (2^{d.exponent_field - fmt.bias}), mantissa "
            f"{d.mantissa_field:0{fmt.mantissa_bits}b} ({_bin(bits, 'e4m3')} = {_hex(bits, 8)}).",
        ),
    )


def sum_of_ones() -> Problem:
    bf16 = mixed_precision.accumulate(1, 10**6, "bf16")
    fp16 = mixed_precision.accumulate(1, 10**6, "fp16")
    fp32 = mixed_precision.accumulate(1, 2**25, "fp32")
    return Problem(
        id="sum-of-ones",
        title="Counting in a 16-bit accumulator",
        question="A loss is summed one token at a time, each adding 1.0, into an accumulator. Where does the sum "
        "stop growing in bf16, in fp16 and in fp32?",
        answer=f"bf16 stops at {bf16.total:,.0f} (after {bf16.stalled_after:,} additions), fp16 at "
        f"{fp16.total:,.0f}, fp32 at {fp32.total:,.0f}: accumulate in fp32, as GEMMs do.",
        working=(
            f"bf16 keeps {get_format('bf16').mantissa_bits} mantissa bits, so from {bf16.total:,.0f} = "
            f"2^{_log2(bf16.total)} the gap between values is {mixed_precision.ulp(bf16.total, 'bf16')}: "
            f"{bf16.total:,.0f} + 1 lies exactly halfway and rounds to even, back to {bf16.total:,.0f}.",
            f"fp16 keeps {get_format('fp16').mantissa_bits} bits: the same tie happens at 2^{_log2(fp16.total)} = "
            f"{fp16.total:,.0f}; fp32 keeps {get_format('fp32').mantissa_bits}: at 2^{_log2(fp32.total)} = "
            f"{fp32.total:,.0f}.",
            "Each sum was run addition by addition in the format (`gpukb.formats.mixed_precision.accumulate`).",
        ),
    )


def microscaling_storage() -> Problem:
    n = 4096 * 4096
    mxfp8, mxfp4 = mx.bits_per_element("e4m3"), mx.bits_per_element("e2m1")
    nv = nvfp4.bits_per_element(n)

    def mib(bits: float) -> float:
        return bits * n / 8 / 2**20

    return Problem(
        id="microscaling-storage",
        title="A weight matrix in MXFP8, MXFP4 and NVFP4",
        question="How many bits per value, scales included, and how many MiB does a 4096 × 4096 weight take in "
        "bf16, MXFP8 (E4M3), MXFP4 and NVFP4?",
        answer=f"bf16 16 bits ({mib(16):.1f} MiB); MXFP8 {mxfp8:g} bits ({mib(mxfp8):.2f} MiB); MXFP4 {mxfp4:g} "
        f"bits ({mib(mxfp4):.2f} MiB); NVFP4 {nv:.6g} bits ({mib(nv):.2f} MiB).",
        working=(
            f"MX formats add one 8-bit E8M0 scale per block of {mx.BLOCK_SIZE} values: 8 + 8/{mx.BLOCK_SIZE} = "
            f"{mxfp8:g} and 4 + 8/{mx.BLOCK_SIZE} = {mxfp4:g} bits per value.",
            f"NVFP4 adds one 8-bit E4M3 scale per block of {nvfp4.BLOCK_SIZE} values and one fp32 scale per "
            f"tensor: 4 + 8/{nvfp4.BLOCK_SIZE} + 32/{n:,} = {nv:.6g} bits per value.",
            f"{n:,} values × bits / 8 / 2^20 gives the MiB.",
        ),
        sources=(
            (
                "OCP Microscaling Formats (MX) v1.0",
                "https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf",
            ),
            (
                "NVIDIA, Pretraining Large Language Models with NVFP4 (arXiv:2509.25149)",
                "https://arxiv.org/abs/2509.25149",
            ),
        ),
    )


def gradient_underflow() -> Problem:
    g = Fraction(1, 10**8)
    fp16 = get_format("fp16")
    stored = decode(encode(g, "fp16"), "fp16")
    scale = mixed_precision.rescue_scale(g, "fp16")
    threshold = mixed_precision.underflow_threshold("fp16")
    scaled = decode(encode(g * scale, "fp16"), "fp16")
    return Problem(
        id="fp16-underflow",
        title="A gradient that fp16 flushes to zero",
        question="A weight's gradient is 1e-8. What does fp16 store, and what power-of-two loss scale brings it "
        "into fp16's normal range?",
        answer=f"fp16 stores {float(stored.value):g}: the gradient is lost. A loss scale of {scale:,} lifts it to "
        f"{float(scaled.value):.4g}, a normal fp16 value.",
        working=(
            f"fp16's smallest positive value is 2^{floor_log2(fp16.min_subnormal)} ≈ {float(fp16.min_subnormal):.3g}; "
            f"anything at or below half of it, {float(threshold):.3g}, rounds to zero, and 1e-8 is below.",
            f"The smallest normal is 2^{fp16.min_exponent} ≈ {float(fp16.min_normal):.3g}; 1e-8 × 2^k reaches it first "
            f"at k = {scale.bit_length() - 1}, a scale of {scale:,}.",
            f"Scaled: 1e-8 × {scale:,} = {float(g * scale):.4g}, stored as {float(scaled.value):.4g}. The optimizer "
            "divides the scale out in fp32.",
        ),
    )


def problems() -> list[Problem]:
    """The chapter's worked problems, computed now."""
    return [largest_fnuz(), cast_42_5(), sum_of_ones(), microscaling_storage(), gradient_underflow()]
