"""Ceilings and bounds: the roofline model.

An operation that performs ``F`` operations and must move ``B`` bytes cannot finish faster than ``F / P`` (the
peak rate ``P`` of the unit doing the arithmetic) nor faster than ``B / W`` (memory bandwidth ``W``). The larger
of the two is its floor; which one is larger says what limits it. Equivalently, at arithmetic intensity
``I = F / B`` the attainable rate is ``min(P, W · I)``, and the intensity where the two meet, ``P / W``, is the
ridge point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gpukb.arguments import real
from gpukb.measuring.counting import attention_bytes, attention_flops, gemm_bytes, gemm_flops

if TYPE_CHECKING:
    from gpukb.performance.results import SweepRecord


def _check_rate(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number; got {value!r}")
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be positive and finite; got {value}")


def _count(name: str, value: float) -> float:
    """A count or a rate that may be zero: a finite real number ≥ 0."""
    return real(name, value, minimum=0)


def attainable(intensity: float, peak_flops: float, bandwidth: float) -> float:
    """The roofline: the highest rate (FLOP/s) an operation of this intensity (FLOP/byte) can reach.

    Args:
        intensity: FLOP per byte, ≥ 0.
        peak_flops: The compute ceiling, FLOP/s.
        bandwidth: The memory ceiling, bytes/s.
    """
    _check_rate("peak_flops", peak_flops)
    _check_rate("bandwidth", bandwidth)
    intensity = _count("intensity", intensity)
    return min(peak_flops, bandwidth * intensity)


def ridge_point(peak_flops: float, bandwidth: float) -> float:
    """The intensity (FLOP/byte) above which an operation can be compute-bound: ``peak / bandwidth``."""
    _check_rate("peak_flops", peak_flops)
    _check_rate("bandwidth", bandwidth)
    return peak_flops / bandwidth


@dataclass(frozen=True)
class Bound:
    """The two lower bounds on an operation's time, in seconds.

    Attributes:
        compute_s: Operations over the compute ceiling.
        memory_s: Bytes over the memory ceiling.
    """

    compute_s: float
    memory_s: float

    @property
    def time_s(self) -> float:
        """The floor: the larger of the two bounds."""
        return max(self.compute_s, self.memory_s)

    @property
    def limiter(self) -> str:
        """``"compute"`` or ``"memory"``: whichever bound is the floor."""
        return "compute" if self.compute_s >= self.memory_s else "memory"


def bound(flops: float, nbytes: float, peak_flops: float, bandwidth: float) -> Bound:
    """Lower bounds on the time of an operation that does ``flops`` operations and moves ``nbytes`` bytes.

    Raises:
        ValueError: If a count is negative or a ceiling is not positive.
    """
    _check_rate("peak_flops", peak_flops)
    _check_rate("bandwidth", bandwidth)
    flops, nbytes = _count("flops", flops), _count("nbytes", nbytes)
    return Bound(compute_s=flops / peak_flops, memory_s=nbytes / bandwidth)


def fraction(measured: float, ceiling: float) -> float:
    """How much of a ceiling a measured rate reaches (0.8 means 80%).

    Raises:
        ValueError: If the ceiling is not positive or the measurement is negative.
    """
    _check_rate("ceiling", ceiling)
    measured = _count("measured", measured)
    return measured / ceiling


@dataclass(frozen=True)
class Point:
    """A measured operation placed on a roofline.

    Attributes:
        group: ``"gemm"`` (a bf16 square product), ``"attention"`` (a flash-attention forward pass, head
            dimension 128, no mask) or ``"kernel"`` (a registered project kernel).
        case: The size (``"4096"``: N of the product, or the sequence length) or the kernel's name.
        intensity: FLOP per byte of device memory (counted by :mod:`gpukb.measuring.counting`).
        tflops: The measured rate.
    """

    group: Literal["gemm", "attention", "kernel"]
    case: str
    intensity: float
    tflops: float


def measured_points(record: SweepRecord) -> list[Point]:
    """The operations of a sweep that a roofline shows: bf16 square products, flash attention (d=128, no
    mask) and the project kernels, each at its arithmetic intensity."""
    points = []
    for r in record.gemm:
        if r.sweep == "square" and r.dtype == "bf16" and r.tflops is not None:
            intensity = gemm_flops(r.m, r.n, r.k) / gemm_bytes(r.m, r.n, r.k, 2)
            points.append(Point("gemm", str(r.m), intensity, r.tflops))
    for r in record.attention:
        if r.backend == "flash" and r.tflops is not None and r.head_dim == 128 and not r.causal:
            args = (r.batch, r.heads, r.seq, r.seq, r.head_dim)
            points.append(Point("attention", str(r.seq), attention_flops(*args) / attention_bytes(*args, 2), r.tflops))
    for r in record.kernels:
        if r.flops and r.bytes:
            points.append(Point("kernel", r.name, r.flops / r.bytes, r.flops / (r.kernel_ms.median * 1e-3) / 1e12))
    return points
