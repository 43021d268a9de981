"""The cell checks of docs/formats/anatomy.md (``gpukb.formats.pages.anatomy``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from tests.formats.pages import DTYPES, _decode, _measured_on, _raw_formats, _raw_record, _same
from tests.helpers import ROOT, calculator_fields, markdown_tables


def check_value(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    number = float(kwargs["args"][0])
    names = kwargs["args"][1] if len(kwargs["args"]) > 1 else kwargs.get("names")
    assert [row["format"] for row in table] == (list(names) if names is not None else list(_raw_formats()))
    for row in table:
        name = row["format"]
        if name == "tf32":
            continue  # no ml_dtypes type; tests/formats/test_tables.py and the codec's tests hold it
        dtype = DTYPES[name]
        bits = int(row["bits"], 16)
        assert "".join(row["sign exponent mantissa"].split()) == format(bits, f"0{ml_dtypes.finfo(dtype).bits}b")
        stored = _decode(bits, name)
        assert _same(row["stored value"], stored), (name, row["stored value"], stored)
        cast = float(np.array([number], np.float64).astype(dtype)[0])
        if row["outcome"] == "saturated":
            top = float(ml_dtypes.finfo(dtype).max)
            assert abs(stored) == top, row
            assert abs(number) > top, row
        else:
            assert stored == cast, (name, stored, cast)
        assert row["relative error"] == f"{abs(stored - number) / abs(number):.3g}", row
        assert row["outcome"] == ("exact" if stored == number else row["outcome"]), row
        assert (stored == number) == (row["outcome"] == "exact"), row


def check_tf32(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw_record("formats/h100-gpu-checks")
    t = raw["tf32"]
    #: What each row compares, in the page's words, and the record's field that holds it.
    compared = {
        "TF32 matmul vs inputs rounded to TF32 (nearest-even), product in float64": "tf32_vs_nearest_even_inputs",
        "TF32 matmul vs inputs truncated to TF32, product in float64": "tf32_vs_truncated_inputs",
        "TF32 matmul vs exact product of the FP32 inputs": "tf32_vs_exact",
        "FP32 matmul (TF32 off) vs exact product": "fp32_vs_exact",
    }
    assert [row["comparison"] for row in table] == list(compared)
    for row in table:
        key = compared[row["comparison"]]
        assert float(row["relative error (Frobenius)"]) == pytest.approx(t[key], rel=5e-3), (row, key)
    # TF32 keeps 10 mantissa bits: the TF32 product is far closer to the product of TF32-rounded inputs than to
    # the exact one, and FP32 is closer to the exact product than TF32 is
    assert t["tf32_vs_nearest_even_inputs"] < t["tf32_vs_exact"] < t["tf32_vs_truncated_inputs"]
    assert t["fp32_vs_exact"] < 2.0**-10 * 1e-2 < t["tf32_vs_exact"] < 2.0**-10
    assert f"{t['n']}×{t['n']} matrices, {t['inputs']} inputs." in markdown
    _measured_on(markdown, raw["run"])


def check_calculator(html: str, kwargs: dict[str, Any]) -> None:
    """The form carries every field docs/javascripts/calculators/formats.js reads, of the kind it reads, opening on
    the page's example (42.5, and 0x63 read as e4m3); the rounding choices are the ones the script implements (not
    stochastic), the formats to read a pattern as are formats.toml's, and the data island holds every format's
    parameters as formats.toml has them."""
    fields = {name: {**f, "options": [v for v, _ in f["options"]]} for name, f in calculator_fields(html).items()}
    script = (ROOT / "docs/javascripts/calculators/formats.js").read_text(encoding="utf-8")
    read = set(re.findall(r"raw\(boxes\.(\w+)\)", script))
    assert set(fields) == read == {"value", "rounding", "saturate", "bits", "as_format"}
    assert {n: f["kind"] for n, f in fields.items()} == {
        "value": "text", "rounding": "select", "saturate": "checkbox", "bits": "text", "as_format": "select"
    }  # fmt: skip
    assert {n: f["default"] for n, f in fields.items()} == {
        "value": "42.5", "rounding": "nearest-even", "saturate": "", "bits": "0x63", "as_format": "e4m3"
    }  # fmt: skip
    assert fields["rounding"]["options"] == ["nearest-even", "toward-zero"]
    assert 'rounding === "toward-zero"' in script
    assert '"stochastic"' not in script
    raw = _raw_formats()
    assert fields["as_format"]["options"] == list(raw)
    island = re.search(r'<script type="application/json" class="gpukb-calc-data">(.*?)</script>', html).group(1)
    data = json.loads(island)
    assert set(data) == {"formats"}
    assert "data.formats" in script
    keys = ("name", "exponent_bits", "mantissa_bits", "bias", "encoding")
    assert [{k: f[k] for k in keys} for f in data["formats"]] == [{k: r[k] for k in keys} for r in raw.values()]


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "value_table": check_value,
    "tf32_check": check_tf32,
    "format_calculator": check_calculator,
}
