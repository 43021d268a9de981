"""gpukb.calculators: how a calculator's field reaches the library, and the form a page layer renders."""

from __future__ import annotations

import json
import re

import pytest

from gpukb.calculators import FIELD_MAX, Field, calculator_html, field_value


@pytest.mark.parametrize(
    ("text", "value"),
    [("", None), ("  ", None), (" 42 ", 42), ("1_024", 1024), ("-3", -3), ("1.5", 1.5), ("1e3", 1000.0),
     ("inf", float("inf")), ("abc", "abc"), (" 4 2 ", "4 2"), ("١٢", "١٢"), ("9" * (FIELD_MAX + 1), "9" * 101)],
)  # fmt: skip
def test_field_value(text: str, value: object) -> None:
    got = field_value(text)
    assert got == value
    assert type(got) is type(value)


def test_field_value_reads_nan_and_refuses_non_text() -> None:
    assert field_value("nan") != field_value("nan")  # a float NaN, which the library then refuses
    with pytest.raises(TypeError, match="a field's text is a string"):
        field_value(3)


def test_the_form_carries_its_fields_and_a_safe_data_island() -> None:
    html = calculator_html("demo", "A demo", [Field("n", "n", default="3"), Field("on", "on", "checkbox", "on")],
                           {"text": "</script><b>&"})  # fmt: skip
    assert 'data-calc="demo"' in html
    assert 'name="n" type="text" value="3"' in html
    assert 'type="checkbox" checked' in html
    island = re.search(r'<script type="application/json" class="gpukb-calc-data">(.*?)</script>', html).group(1)
    assert "</script>" not in island
    assert json.loads(island) == {"text": "</script><b>&"}


def test_the_form_refuses_bad_names() -> None:
    with pytest.raises(ValueError, match="lowercase word"):
        calculator_html("Bad-Name", "t", [], {})
    with pytest.raises(ValueError, match="names a field twice"):
        calculator_html("demo", "t", [Field("n", "n"), Field("n", "m")], {})
