"""The page “Number formats” (docs/formats/index.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.formats.problems import problems as chapter_problems
from gpukb.formats.results import CODEC_SPEED_ID, CodecSpeed
from gpukb.problems import markdown as problems_markdown
from gpukb.records import load, measured_table


def codec_speed(record_id: str = CODEC_SPEED_ID) -> str:
    """The recorded codec timing as a table: gpukb's numpy code against ml_dtypes' C++ casts."""
    record = load(record_id, expect=CodecSpeed)
    rows = [
        [
            r.format,
            f"{r.gpukb_encode_s * 1e3:.1f}",
            f"{r.ml_dtypes_encode_s * 1e3:.1f}",
            f"{r.gpukb_decode_s * 1e3:.1f}",
            f"{r.ml_dtypes_decode_s * 1e3:.1f}",
            f"{r.round_trip_ratio:.1f}×",
        ]
        for r in record.rows
    ]
    headers = ["format", "encode, gpukb (ms)", "encode, ml_dtypes (ms)", "decode, gpukb (ms)", "decode, ml_dtypes (ms)",
               "round trip, gpukb / ml_dtypes"]  # fmt: skip
    n = record.rows[0].n if record.rows else 0
    return measured_table(
        headers,
        rows,
        record.run,
        f"{n:,} float32 values, medians of {record.repeats} runs after a warm-up, one CPU core "
        f"({record.run.cpu_count} present). ",
    )


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.formats.problems`)."""
    return problems_markdown(chapter_problems())
