"""The cell checks of docs/formats/index.md (``gpukb.formats.pages.opening``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.formats.pages import _measured_on, _raw_record
from tests.helpers import markdown_tables


def check_codec_speed(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw_record("formats/codec-speed")
    assert [row["format"] for row in table] == [r["format"] for r in raw["rows"]]
    cells = {"encode, gpukb (ms)": "gpukb_encode_s", "encode, ml_dtypes (ms)": "ml_dtypes_encode_s",
             "decode, gpukb (ms)": "gpukb_decode_s", "decode, ml_dtypes (ms)": "ml_dtypes_decode_s"}  # fmt: skip
    for row, r in zip(table, raw["rows"], strict=True):
        for header, key in cells.items():
            assert abs(float(row[header]) - r[key] * 1e3) <= 0.05 + 1e-9, (row, header)
        # the round trip: gpukb's encode plus decode over ml_dtypes' encode plus decode
        ratio = (r["gpukb_encode_s"] + r["gpukb_decode_s"]) / (r["ml_dtypes_encode_s"] + r["ml_dtypes_decode_s"])
        assert row["round trip, gpukb / ml_dtypes"].endswith("×")
        assert abs(float(row["round trip, gpukb / ml_dtypes"][:-1]) - ratio) <= 0.05 + 1e-9, (row, ratio)
    assert f"{raw['rows'][0]['n']:,} float32 values, medians of {raw['repeats']} runs" in markdown
    _measured_on(markdown, raw["run"], command=True)


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "codec_speed": check_codec_speed,
}
