"""The formats chapter's tables: the rows the pages and the CLI show."""

from __future__ import annotations

from fractions import Fraction

import pytest

from gpukb.formats import tables


def test_value_table_rows() -> None:
    headers, rows = tables.value_table("42.5", ["fp16", "e4m3", "e2m1"])
    assert headers[0] == "format"
    by_name = {row[0]: row for row in rows}
    assert by_name["fp16"][1:5] == ["0x5150", "0 10100 0101010000", "42.5", "0"]
    assert by_name["e4m3"][1:6] == ["0x63", "0 1100 011", "44", "0.0353", "rounded"]
    assert by_name["e2m1"][5] == "saturated"


def test_value_table_nan_in_a_format_without_nan() -> None:
    _, rows = tables.value_table("nan", ["e2m1", "fp16"])
    assert rows[0][-1] == "no NaN in this format"
    assert rows[1][1:4] == ["0x7E00", "0 11111 1000000000", "NaN"]


def test_pattern_table() -> None:
    assert tables.pattern_table(0x80, "e4m3fnuz")[1] == [["e4m3fnuz", "0x80", "1 0000 000", "nan", "-", "NaN"]]
    assert tables.pattern_table(0x80, "e4m3")[1] == [["e4m3", "0x80", "1 0000 000", "zero", "-6", "-0"]]


def test_properties_table_with_int8() -> None:
    headers, rows = tables.properties_table(["e4m3"], int8=True)
    e4m3, int8 = (dict(zip(headers, row, strict=True)) for row in rows)
    assert (e4m3["max"], e4m3["finite values"]) == ("448", "254")
    assert (int8["max"], int8["finite values"], int8["decimal digits"]) == (127, "256", "2.41")


def test_names_table_marks_missing_names() -> None:
    headers, rows = tables.names_table(["e4m3fnuz", "tf32"])
    assert headers == ["format", "torch", "ml_dtypes", "hip", "cuda"]
    assert rows[0] == ["e4m3fnuz", "float8_e4m3fnuz", "float8_e4m3fnuz", "HIP_R_8F_E4M3_FNUZ", "-"]
    assert rows[1] == ["tf32", "-", "-", "-", "-"]


def test_reinterpretation_table() -> None:
    _, rows = tables.reinterpretation_table([0x63, 0x80], ["e4m3", "e4m3fnuz"])
    assert rows == [["0x63", "44", "22"], ["0x80", "-0", "NaN"]]


def test_cast_table_rules_columns() -> None:
    pytest.importorskip("ml_dtypes")
    headers, rows = tables.cast_table("e4m3", [465.0, -0.0])
    assert headers[3].startswith("ml_dtypes ")
    assert rows[0][:4] == ["465", "NaN", "448", "NaN"]
    assert rows[1][:4] == ["-0", "-0", "-0", "-0"]


@pytest.mark.parametrize(
    ("value", "kind", "sign", "text"),
    [
        (Fraction(85, 2), "normal", 0, "42.5"),
        (Fraction(-44), "normal", 1, "-44"),
        (None, "inf", 1, "-inf"),
        (None, "nan", 0, "NaN"),
        (Fraction(1, 2**149), "subnormal", 0, "1.401298464324817e-45"),
    ],
)
def test_format_value(value, kind: str, sign: int, text: str) -> None:
    assert tables.format_value(value, kind, sign) == text
