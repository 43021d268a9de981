"""The formats chapter's recorded results: what ``bench/formats_gpu.py`` and ``bench/formats_codec_speed.py`` write.

Both are :class:`gpukb.records.Record` kinds, written with :func:`gpukb.records.write` and read back by id with
:func:`gpukb.records.load`: ``"formats/h100-gpu-checks"`` (TF32 rounding and CUDA casts on an H100) and
``"formats/codec-speed"`` (the vectorized codec against ml_dtypes on one CPU core). ``gpukb.formats.pages``
renders them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpukb.records import Record
from gpukb.schema import StrictModel

#: Ids of the committed files the pages render.
GPU_CHECKS_ID = "formats/h100-gpu-checks"
CODEC_SPEED_ID = "formats/codec-speed"


class Tf32Check(StrictModel):
    """A float32 matmul with TF32 on, against products of inputs rounded to TF32 two ways
    (:func:`gpukb.formats.gpu_checks.tf32_matmul_check`). Errors are relative Frobenius norms."""

    n: int = Field(gt=0)
    seed: int
    inputs: str
    tf32_vs_nearest_even_inputs: float
    tf32_vs_truncated_inputs: float
    tf32_vs_exact: float
    fp32_vs_exact: float


class CastCheck(StrictModel):
    """Probe inputs of one format cast on the GPU and the CPU (:func:`gpukb.formats.gpu_checks.cuda_cast_check`):
    how many of ``inputs`` gave the same value as each reference."""

    format: str
    inputs: int = Field(gt=0)
    cuda_matches_rules: int = Field(ge=0)
    cuda_matches_saturating: int = Field(ge=0)
    cuda_matches_cpu: int = Field(ge=0)
    cpu_matches_rules: int = Field(ge=0)


#: A stored value from :func:`gpukb.formats.gpu_checks.overflow_probe`: a number, or ``"NaN"``.
ProbeValue = float | Literal["NaN"]


class OverflowProbe(StrictModel):
    """What torch's E4M3 cast makes of a few overflowing float32 inputs (keyed by the input as ``f"{v:g}"``),
    on the GPU and on the CPU."""

    cuda: dict[str, ProbeValue]
    cpu: dict[str, ProbeValue]


class GpuChecks(Record):
    """The formats chapter's checks on a CUDA GPU: TF32 rounding, casts to every format torch has, E4M3 overflow."""

    kind: Literal["formats.gpu-checks"] = "formats.gpu-checks"
    schema_version: Literal[1] = 1
    tf32: Tf32Check
    casts: list[CastCheck]
    e4m3_overflow: OverflowProbe


class CodecTiming(StrictModel):
    """One format's encode and decode of ``n`` float32 values: medians in seconds, gpukb against ml_dtypes."""

    format: str
    n: int = Field(gt=0)
    gpukb_encode_s: float = Field(gt=0)
    gpukb_encode_spread_s: float = Field(ge=0)
    ml_dtypes_encode_s: float = Field(gt=0)
    gpukb_decode_s: float = Field(gt=0)
    ml_dtypes_decode_s: float = Field(gt=0)
    encode_ratio: float = Field(gt=0)
    decode_ratio: float = Field(gt=0)
    round_trip_ratio: float = Field(gt=0)


# --8<-- [start:codec-speed]
class CodecSpeed(Record):
    """gpukb's vectorized numpy codec against ml_dtypes' C++ casts, on one CPU core.

    Attributes:
        repeats: Timed calls per median (after one untimed warm-up call).
        rows: One timing per format.
    """

    kind: Literal["formats.codec-speed"] = "formats.codec-speed"
    schema_version: Literal[1] = 1
    repeats: int = Field(gt=0)
    rows: list[CodecTiming]
    # --8<-- [end:codec-speed]
