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


# --- cells the page tables never print (the formats chapter's mutation run, 2026-11-27) --------------------------


def test_value_table_passes_its_rounding_options() -> None:
    # 1.15 in fp16: 1 + 0.15, and 0.15 * 2**10 = 153.6 mantissa units: 154 to nearest, 153 toward zero
    assert tables.value_table("1.15", ["fp16"])[1][0][1] == "0x3C9A"
    assert tables.value_table("1.15", ["fp16"], rounding="toward-zero")[1][0][1] == "0x3C99"


def test_value_table_signed_specials_and_empty_cells() -> None:
    _, rows = tables.value_table("-inf", ["fp16"])
    assert rows[0][1:5] == ["0xFC00", "1 11111 0000000000", "-inf", "-"]  # no relative error for infinity
    assert tables.value_table("-0", ["fp16"])[1][0][1:4] == ["0x8000", "1 00000 0000000000", "-0"]
    assert tables.value_table("nan", ["e2m1"])[1] == [["e2m1", "-", "-", "-", "-", "no NaN in this format"]]


def test_pattern_table_exponent_of_infinity_and_subnormals() -> None:
    # infinity has no exponent; a subnormal's is the minimum exponent, 1 - bias = -14 for fp16 (not 0 - bias)
    assert tables.pattern_table(0x7C00, "fp16")[1] == [["fp16", "0x7C00", "0 11111 0000000000", "inf", "-", "inf"]]
    assert tables.pattern_table(0xFC00, "fp16")[1][0][4:] == ["-", "-inf"]
    assert tables.pattern_table(0x0001, "fp16")[1] == [
        ["fp16", "0x0001", "0 00000 0000000001", "subnormal", "-14", repr(2.0**-24)]
    ]


def test_format_value_integers_past_1e16_are_written_as_floats() -> None:
    assert tables.format_value(Fraction(2**53)) == "9007199254740992"
    assert tables.format_value(Fraction(10**16)) == "1e+16"
    assert tables.format_value(Fraction(2**54)) == "1.8014398509481984e+16"
    assert (tables.format_value(None, "inf"), tables.format_value(None, "inf", 1)) == ("inf", "-inf")


def test_hex_bits_has_one_digit_per_four_bits() -> None:
    from gpukb.formats.spec import get_format

    assert tables.hex_bits(0x7, get_format("e2m1")) == "0x7"
    assert tables.hex_bits(1, get_format("fp32")) == "0x00000001"
    assert tables.hex_bits(1, get_format("fp64")) == "0x" + "0" * 15 + "1"


def test_a_format_named_twice_shows_both_names() -> None:
    with pytest.raises(ValueError, match=r"format fp16 is named twice \('fp16' and 'float16'\)"):
        tables.value_table(1, ["fp16", "float16"])


def test_properties_table_defaults_and_large_maxima() -> None:
    headers, rows = tables.properties_table(["fp32", "fp16"])
    assert len(rows) == 2  # no INT8 row unless asked
    cells = [dict(zip(headers, row, strict=True)) for row in rows]
    # (2 - 2**-23) * 2**127 = 3.4028e38: four significant digits for integers of a million and more
    assert (cells[0]["max"], cells[1]["max"]) == ("3.403e+38", "65504")
    with pytest.raises(TypeError, match=r"^int8 must be True or False; got 'yes' \(str\)"):
        tables.properties_table(int8="yes")


def test_properties_page_table_refuses_unknown_columns() -> None:
    from gpukb.formats import pages

    with pytest.raises(ValueError, match=r"unknown properties \['nope'\]"):
        pages.properties_table(["fp16"], columns=["max", "nope"])


def test_reinterpretation_table_shows_the_bad_patterns() -> None:
    with pytest.raises(TypeError, match=r"got 'x' \(str\)"):
        tables.reinterpretation_table("x", ["e4m3"])


def test_cast_table_infinite_cells() -> None:
    pytest.importorskip("ml_dtypes")
    _, rows = tables.cast_table("e5m2", [1e6, -1e6])  # e5m2 overflows to infinity; its largest value is 57344
    assert [row[:4] for row in rows] == [["1000000", "inf", "57344", "inf"], ["-1000000", "-inf", "-57344", "-inf"]]
