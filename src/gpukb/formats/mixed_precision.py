"""The arithmetic behind mixed-precision training: what 16-bit formats lose, and what FP32 and loss scaling keep.

Three things go wrong when training runs in FP16 or BF16, and each has a number that says when:

* **Accumulation stalls.** A running sum ``s = round(s + a)`` stops growing once half the gap between
  neighbouring values at ``s`` exceeds ``a`` (``stagnation_point``, ``accumulate``).
* **Updates vanish.** ``w - lr * g`` rounds back to ``w`` when the update is smaller than half the gap next to
  ``w`` (``update_threshold``): the reason for FP32 master weights.
* **Gradients underflow.** Magnitudes at or below half the smallest positive value round to zero
  (``underflow_threshold``); multiplying the loss by a scale moves them up, until the largest ones overflow
  (``overflow_threshold``, ``lognormal_fractions``). ``DynamicLossScaler`` is the rule ``torch.amp.GradScaler``
  follows to pick that scale while training.

Everything here is exact (``Fraction``) and computed from a format's parameters, so it holds for any format of
``gpukb.formats.spec``, the 8-bit ones included.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Literal

import numpy as np
from pydantic import Field

from gpukb.arguments import flag, positive_int, real
from gpukb.data import data_text
from gpukb.formats.arrays import decode_array, encode_array
from gpukb.formats.codec import decode, encode, floor_log2, to_fraction
from gpukb.formats.spec import FloatFormat, get_format
from gpukb.schema import StrictModel, parse_toml, validate_document, validate_entries

#: The data file of PyTorch's CUDA autocast op lists, inside the package ``gpukb.data``.
AUTOCAST_FILE = "autocast.toml"

#: The autocast lists by id: ops that run in 16 bits, in float32, and in the widest input type.
AutocastListId = Literal["lower-precision", "float32", "widest"]


class AutocastList(StrictModel):
    """One of PyTorch's CUDA autocast op lists.

    Attributes:
        id: Which list.
        section: The heading it has in the source.
        ops: The ops, in the source's order.
    """

    id: AutocastListId
    section: str = Field(min_length=1)
    ops: list[str] = Field(min_length=1)


class AutocastLists(StrictModel):
    """The autocast data file: where the lists were read, when, and the lists."""

    source: str = Field(min_length=1)
    checked: dt.date
    list: list[AutocastList]


def parse_autocast(text: str, file: str = AUTOCAST_FILE) -> AutocastLists:
    """Read the autocast data file's text into its model.

    Raises:
        ValueError: Naming the file, the list and the field: a TOML error, an unknown key, a missing or mistyped
            field, or a list id used twice.
    """
    data = parse_toml(text, file, ("source", "checked", "list"))
    lists = validate_entries(AutocastList, data.get("list", []), file, "list", key="id")
    return validate_document(AutocastLists, {**data, "list": lists}, file)


@cache
def autocast_lists() -> AutocastLists:
    """PyTorch's CUDA autocast op lists, from ``gpukb/data/autocast.toml`` (validated)."""
    return parse_autocast(data_text(AUTOCAST_FILE))


def autocast_ops(list_id: AutocastListId) -> tuple[str, ...]:
    """The ops of one CUDA autocast list: ``"lower-precision"`` (float16 or bfloat16), ``"float32"`` or
    ``"widest"`` (the widest input type).

    Raises:
        ValueError: For another id (the message lists the ids).
    """
    lists = {entry.id: entry for entry in autocast_lists().list}
    if list_id not in lists:
        raise ValueError(f"unknown autocast list {list_id!r}; lists are {sorted(lists)}")
    return tuple(lists[list_id].ops)


#: ``torch.amp.GradScaler``'s defaults (torch/amp/grad_scaler.py); a test checks them against the installed torch.
GRADSCALER_DEFAULTS = {"init_scale": 2.0**16, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000}


def _exact(value: object, what: str) -> Fraction:
    sign, magnitude, kind = to_fraction(value)
    if kind != "finite":
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    return -magnitude if sign else magnitude


def stored(value: object, fmt: str | FloatFormat) -> Fraction:
    """The value ``fmt`` stores for ``value`` (round to nearest, ties to even), exactly.

    Raises:
        ValueError: For an unknown format, a non-finite value, or one that overflows ``fmt``.
    """
    fmt = get_format(fmt)
    exact = _exact(value, "value")
    d = decode(encode(exact, fmt), fmt)
    if d.signed_value is None:
        raise ValueError(f"{value!r} overflows {fmt.name} (largest finite value {float(fmt.max_value):.6g})")
    return d.signed_value


def ulp(value: object, fmt: str | FloatFormat) -> Fraction:
    """The gap between consecutive values of ``fmt`` in the binade of ``|value|``.

    For a value of the format that is the distance to the next larger magnitude. It is ``epsilon`` times the
    binade's power of two, and constant (the smallest positive value) below the smallest normal: precision is
    relative, so the gap grows with the magnitude.

    Raises:
        ValueError: For an unknown format, a non-finite value, or one beyond the largest finite value.

    Example:
        >>> ulp(1, "fp16"), ulp(1000, "fp16")
        (Fraction(1, 1024), Fraction(1, 2))
    """
    fmt = get_format(fmt)
    magnitude = abs(_exact(value, "value"))
    if magnitude > fmt.max_value:
        raise ValueError(f"{value!r} is beyond the largest finite {fmt.name} ({float(fmt.max_value):.6g})")
    exponent = fmt.min_exponent if magnitude == 0 else max(floor_log2(magnitude), fmt.min_exponent)
    return Fraction(2) ** (exponent - fmt.mantissa_bits)


def update_threshold(weight: object, fmt: str | FloatFormat, decrease: bool = True) -> Fraction:
    """Half the gap from ``weight`` to its neighbour in the update's direction.

    An update ``weight - u`` (``decrease``) or ``weight + u`` with ``0 < u`` below this bound rounds back to
    ``weight``: the step is lost. At exactly the bound, ties to even decide. Below a power of two the gap is
    half the gap above, so a decrease is lost sooner there.

    Args:
        weight: A value of ``fmt`` (it is rounded to ``fmt`` first).
        fmt: The format the weight is stored in.
        decrease: Whether the update moves the weight toward zero.

    Raises:
        ValueError: For an unknown format or a weight that is zero, non-finite or overflows.
    """
    fmt = get_format(fmt)
    decrease = flag("decrease", decrease)
    w = stored(weight, fmt)
    if w == 0:
        raise ValueError("the weight is zero: any update larger than half the smallest positive value survives")
    gap = ulp(w, fmt)
    toward_zero = decrease == (w > 0)
    power_of_two = abs(w) == Fraction(2) ** floor_log2(abs(w))
    if toward_zero and power_of_two and floor_log2(abs(w)) > fmt.min_exponent:
        gap /= 2  # the binade below has half the spacing
    return gap / 2


def stagnation_point(addend: object, fmt: str | FloatFormat) -> Fraction | None:
    """The smallest power of two from which a running sum in ``fmt`` can no longer grow by ``addend``.

    Every ``s >= B`` has ``ulp(s) > 2 * addend``, so ``round(s + addend) == s``. A sum of copies of ``addend``
    reaches ``B`` and stays there (for an ``addend`` that is not a power of two it never stops earlier).
    ``B`` is about ``addend * 2 / epsilon``: FP16 stalls after about 2**11 additions, FP32 after about 2**24.

    Args:
        addend: A positive number; it is rounded to ``fmt`` first, as the values being summed are.
        fmt: The accumulator's format.

    Returns:
        ``B``, or ``None`` when the sum overflows before it could stall.

    Raises:
        ValueError: For an unknown format or an addend that is not positive.
    """
    fmt = get_format(fmt)
    a = stored(addend, fmt)
    if a <= 0:
        raise ValueError(f"the addend must be positive, got {addend!r} (stored as {a})")
    exponent = max(floor_log2(a), fmt.min_exponent)
    while Fraction(2) ** (max(exponent, fmt.min_exponent) - fmt.mantissa_bits) <= 2 * a:
        exponent += 1
    point = Fraction(2) ** exponent
    return point if point <= fmt.max_value else None


@dataclass(frozen=True)
class Accumulation:
    """The result of adding one value to a ``fmt`` accumulator many times.

    Attributes:
        total: The final sum (``inf`` if it overflowed).
        stalled_after: How many additions changed the sum before it stopped changing, or ``None`` if every
            addition changed it.
    """

    total: float
    stalled_after: int | None


def accumulate(addend: object, count: int, fmt: str | FloatFormat) -> Accumulation:
    """Add ``addend`` to an accumulator ``count`` times, rounding to ``fmt`` after every addition.

    Exact, and fast even for ``count`` in the billions: within one binade every addition moves the sum by the
    same number of gaps, so whole runs of additions are taken at once and only the steps near a binade's edge
    (and ties) are rounded one by one.

    Args:
        addend: A positive number; it is rounded to ``fmt`` first.
        count: How many times to add it.
        fmt: The accumulator's format (and the addend's).

    Raises:
        ValueError: For an unknown format, a non-positive addend, or a negative count.
    """
    fmt = get_format(fmt)
    a = stored(addend, fmt)
    if a <= 0:
        raise ValueError(f"the addend must be positive, got {addend!r} (stored as {a})")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"count must be a non-negative integer, got {count!r}")
    s, done = Fraction(0), 0
    while done < count:
        d = decode(encode(s + a, fmt), fmt)
        if d.value is None:
            return Accumulation(math.inf, None)
        if d.value == s:
            return Accumulation(float(s), done)
        s, done = d.value, done + 1
        gap = ulp(s, fmt)
        top = Fraction(2) ** (max(floor_log2(s), fmt.min_exponent) + 1)
        q = a / gap
        if q - math.floor(q) == Fraction(1, 2):
            continue  # a tie: the parity of s decides, so round this step on its own
        step = round(q) * gap
        room = top - gap - a - s  # while s + a <= top - gap, the sum rounds within this binade
        if step == 0 or room < 0:
            continue
        run = min(int(room // step) + 1, count - done)
        s, done = s + run * step, done + run
    return Accumulation(float(s), None)


def underflow_threshold(fmt: str | FloatFormat) -> Fraction:
    """Magnitudes at or below this round to zero in ``fmt``: half its smallest positive value (the tie goes to 0)."""
    fmt = get_format(fmt)
    return fmt.min_subnormal / 2


def overflow_threshold(fmt: str | FloatFormat) -> Fraction:
    """Magnitudes at or above this round past the largest finite value (to infinity, or NaN in FN formats).

    It is the largest value plus half its gap; the largest value's mantissa is odd, so the tie rounds up too.
    """
    fmt = get_format(fmt)
    return fmt.max_value + ulp(fmt.max_value, fmt) / 2


def rescue_scale(gradient: object, fmt: str | FloatFormat) -> int:
    """The smallest power-of-two loss scale that lifts ``|gradient|`` into the normal range of ``fmt``.

    Raises:
        ValueError: For an unknown format or a zero or non-finite gradient.
    """
    fmt = get_format(fmt)
    g = abs(_exact(gradient, "gradient"))
    if g == 0:
        raise ValueError("a zero gradient stays zero at any scale")
    k = 0
    while g * 2**k < fmt.min_normal:
        k += 1
    return 2**k


def _normal_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


@dataclass(frozen=True)
class GradientFractions:
    """What fraction of gradients a format loses at one loss scale.

    Attributes:
        scale: The loss scale.
        zero: Fraction that rounds to zero.
        subnormal: Fraction stored below the smallest normal, but not as zero (with fewer significant bits).
        overflow: Fraction that rounds to infinity (or NaN).
    """

    scale: float
    zero: float
    subnormal: float
    overflow: float

    def step_overflows(self, count: int) -> float:
        """Probability that at least one of ``count`` independent gradients overflows in one step."""
        return -math.expm1(count * math.log1p(-self.overflow)) if self.overflow < 1 else 1.0


def lognormal_fractions(median: float, sigma_log2: float, scale: float, fmt: str | FloatFormat) -> GradientFractions:
    """Fractions of log-normally distributed gradient magnitudes that ``fmt`` loses after multiplying by ``scale``.

    The model: ``log2 |g|`` is normal with mean ``log2(median)`` and standard deviation ``sigma_log2``.

    Raises:
        ValueError: For an unknown format, or a non-positive median, spread or scale.
    """
    fmt = get_format(fmt)
    median, sigma_log2, scale = real("median", median), real("sigma_log2", sigma_log2), real("scale", scale)
    if median <= 0 or sigma_log2 <= 0 or scale <= 0:
        raise ValueError(f"median, sigma_log2 and scale must be positive, got {median}, {sigma_log2}, {scale}")
    mu = math.log2(median) + math.log2(scale)

    def below(x: Fraction) -> float:
        return _normal_cdf((math.log2(x) - mu) / sigma_log2)

    zero = below(underflow_threshold(fmt))
    normal_from = fmt.min_normal - fmt.min_subnormal / 2  # rounds up to the smallest normal from here
    subnormal = max(below(normal_from) - zero, 0.0)
    overflow = 0.5 * math.erfc((math.log2(overflow_threshold(fmt)) - mu) / (sigma_log2 * math.sqrt(2)))
    return GradientFractions(float(scale), zero, subnormal, overflow)


@dataclass
class DynamicLossScaler:
    """The loss-scale rule of ``torch.amp.GradScaler``, as plain Python.

    After each step: if any gradient was infinite or NaN, the step is skipped and the scale is multiplied by
    ``backoff_factor``; otherwise, after ``growth_interval`` clean steps in a row, it is multiplied by
    ``growth_factor`` (unless that would overflow float32). The defaults are GradScaler's.
    """

    scale: float = GRADSCALER_DEFAULTS["init_scale"]
    growth_factor: float = GRADSCALER_DEFAULTS["growth_factor"]
    backoff_factor: float = GRADSCALER_DEFAULTS["backoff_factor"]
    growth_interval: int = GRADSCALER_DEFAULTS["growth_interval"]
    clean_steps: int = 0

    def update(self, found_inf: bool) -> bool:
        """Record one step; return whether the optimizer step was taken (``False``: skipped)."""
        if found_inf:
            self.scale = float(np.float32(self.scale * self.backoff_factor))
            self.clean_steps = 0
            return False
        self.clean_steps += 1
        if self.clean_steps == self.growth_interval:
            with np.errstate(over="ignore"):  # an infinite scale is refused just below
                grown = np.float32(self.scale) * np.float32(self.growth_factor)
            if np.isfinite(grown):
                self.scale = float(grown)
            self.clean_steps = 0
        return True


def quantize(x: np.ndarray, fmt: str | FloatFormat, rounding: str = "nearest-even") -> np.ndarray:
    """Round every element of a float array to ``fmt`` and return the stored values as float64.

    This is what a tensor core does to FP32 inputs in TF32 mode (``fmt="tf32"``), or a cast to FP16/BF16.

    Raises:
        TypeError: If ``x`` is not a float16/float32/float64 array.
        ValueError: For an unknown format or rounding mode.
    """
    fmt, x = get_format(fmt), np.asarray(x)
    if x.dtype == np.float32 and fmt == get_format("fp32"):
        return x.astype(np.float64)  # already stored in the format: nothing to round
    return decode_array(encode_array(x, fmt, rounding=rounding), fmt)


def fractions_table(
    median: float, sigma_log2: float, scales: Sequence[float], fmt: str | FloatFormat, count: int
) -> tuple[list[str], list[list[str]]]:
    """``lognormal_fractions`` for several loss scales, as rows, with the risk that a step of ``count`` overflows."""
    count = positive_int("count", count)
    headers = ["loss scale", "zero", "subnormal", "overflow", f"P(one of {count:,} gradients overflows)"]
    rows = []
    for scale in scales:
        f = lognormal_fractions(median, sigma_log2, scale, fmt)
        exponent = math.log2(scale)
        label = f"2^{exponent:.0f}" if exponent == int(exponent) else f"{scale:g}"
        rows.append(
            [label, f"{f.zero:.3g}", f"{f.subnormal:.3g}", f"{f.overflow:.3g}", f"{f.step_overflows(count):.3g}"]
        )
    return headers, rows
