"""Measured ceilings of a GPU: the best matrix-product rate per element type and the fastest large copy of a
``gpukb bench`` sweep, the numbers a roofline and a bound use in place of the datasheet's.

Other chapters bound their operations with these: ``measured_ceilings(H100_SWEEP)["bf16"]`` is the best bf16
rate cuBLAS reached on the H100, in TFLOP/s, and ``["bandwidth"]`` its fastest copy of at least 256 MiB, in GB/s.
"""

from __future__ import annotations

from gpukb.arguments import given, real, text
from gpukb.performance.results import H100_SWEEP, GemmRecord, SweepRecord
from gpukb.records import load

#: Below this size a copy is not used as the bandwidth ceiling (launch overhead dominates small copies).
CEILING_MIN_BYTES = 2**28


def sweep(record: SweepRecord | str) -> SweepRecord:
    """A sweep record itself, or the committed one of that id (``"performance/h200-sweep"``).

    Raises:
        TypeError: For anything but a :class:`SweepRecord` or a string.
        ValueError, FileNotFoundError: For an id that names no sweep record (as :func:`gpukb.records.load`).
    """
    if isinstance(record, str):
        return load(record, SweepRecord)
    if not isinstance(record, SweepRecord):
        raise TypeError(f"record must be a SweepRecord or a record id such as {H100_SWEEP!r}; got {given(record)}")
    return record


def gemm_best(record: SweepRecord | str) -> dict[str, GemmRecord]:
    """The fastest measured product per element type (the maximum achievable matmul rate), by dtype."""
    best: dict[str, GemmRecord] = {}
    for r in sweep(record).gemm:
        if r.tflops is None:
            continue
        if r.dtype not in best or r.tflops > best[r.dtype].tflops:
            best[r.dtype] = r
    return best


def copy_ceiling(record: SweepRecord | str) -> float | None:
    """The measured device-memory ceiling: the fastest copy of at least :data:`CEILING_MIN_BYTES`, in GB/s
    (bytes read plus written), or ``None`` if the sweep has none."""
    rates = [r.gbps for r in sweep(record).copies if r.bytes >= CEILING_MIN_BYTES]
    return max(rates) if rates else None


def measured_ceilings(record: SweepRecord | str) -> dict[str, float]:
    """Measured ceilings of a sweep: ``<dtype>`` in TFLOP/s (its best matrix product) and ``"bandwidth"`` in
    GB/s (its fastest large copy); a key is absent where the sweep measured nothing for it.

    Args:
        record: A sweep record, or the id of a committed one (e.g. ``gpukb.performance.results.H100_SWEEP``).
    """
    record = sweep(record)
    out = {dtype: best.tflops for dtype, best in gemm_best(record).items()}
    bandwidth = copy_ceiling(record)
    if bandwidth is not None:
        out["bandwidth"] = bandwidth
    return out


def measured_ridge(ceilings: dict[str, float], dtype: str) -> float | None:
    """The ridge point (FLOP per byte) of measured ceilings for ``dtype``: its rate over the bandwidth; ``None``
    where the ceilings lack either.

    Args:
        ceilings: As :func:`measured_ceilings` returns them: TFLOP/s by dtype and ``"bandwidth"`` in GB/s.
        dtype: The element type.

    Raises:
        TypeError: For ceilings that are not a dict, a dtype that is not a string, or a rate that is not a number.
        ValueError: For a rate (of ``dtype`` or the bandwidth) that is not positive and finite (a zero bandwidth
            divided by zero, a NaN gave a NaN ridge).
    """
    if not isinstance(ceilings, dict):
        raise TypeError(f"ceilings must be a dict of rates (as measured_ceilings returns); got {given(ceilings)}")
    text("dtype", dtype)
    if dtype not in ceilings or "bandwidth" not in ceilings:
        return None
    rate = real(f"ceilings[{dtype!r}]", ceilings[dtype], positive=True)
    return rate * 1e3 / real("ceilings['bandwidth']", ceilings["bandwidth"], positive=True)


#: The quantities (``gpukb.performance.quantities``) that give the H100's ceilings in place of a sweep's maxima.
H100_CEILING_QUANTITIES = {
    "bandwidth": "h100-copy-1gib",
    "fp16": "h100-cublas-fp16-ceiling",
    "bf16": "h100-cublas-bf16-ceiling",
}


def h100_ceilings() -> dict[str, float]:
    """The H100's ceilings as every page quotes them: the copy ceiling and the fp16 and bf16 product ceilings are
    the one figure of each quantity (the median of rounds interleaved in one run, :data:`H100_CEILING_QUANTITIES`),
    not the single fastest call of a sweep; fp32, tf32 and fp8 are the H100 sweep's best rates, which no other run
    measures."""
    from gpukb.performance.quantities import reconcile  # quantities reads the records this module's callers render

    out = measured_ceilings(H100_SWEEP)
    out.update({key: reconcile(quantity_id).value for key, quantity_id in H100_CEILING_QUANTITIES.items()})
    return out


def quoted_ceilings(record: SweepRecord | str) -> dict[str, float]:
    """The ceilings the pages quote for a sweep: for the committed H100 sweep (named by its id) the H100's one figure
    per ceiling (:func:`h100_ceilings`), for any other sweep its own best rates (:func:`measured_ceilings`)."""
    return h100_ceilings() if record == H100_SWEEP else measured_ceilings(record)
