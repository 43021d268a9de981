"""The bit-layout figure's fields are ml_dtypes' own: exponent and mantissa widths and bias of every format drawn."""

from __future__ import annotations

import ml_dtypes
import pytest

from gpukb.formats.figures import LAYOUT_FORMATS, bit_fields

DTYPES = {
    "fp16": ml_dtypes.finfo("float16"),
    "bf16": ml_dtypes.finfo(ml_dtypes.bfloat16),
    "e5m2": ml_dtypes.finfo(ml_dtypes.float8_e5m2),
    "e4m3": ml_dtypes.finfo(ml_dtypes.float8_e4m3fn),
    "e3m2": ml_dtypes.finfo(ml_dtypes.float6_e3m2fn),
    "e2m1": ml_dtypes.finfo(ml_dtypes.float4_e2m1fn),
    "e8m0": ml_dtypes.finfo(ml_dtypes.float8_e8m0fnu),
    "fp32": ml_dtypes.finfo("float32"),
}


@pytest.mark.parametrize("row", bit_fields(), ids=lambda r: r[0])
def test_fields_are_ml_dtypes(row: tuple[str, int, int, int, int]) -> None:
    name, sign, exponent, mantissa, bias = row
    if name == "tf32":  # no dtype: NVIDIA's 19-bit format, FP32's exponent and FP16's mantissa
        assert (sign, exponent, mantissa, bias) == (1, 8, 10, 127)
        return
    info = DTYPES[name]
    assert (exponent, mantissa) == (int(info.nexp), int(info.nmant))
    assert sign + exponent + mantissa == int(info.bits)
    assert bias == (-int(info.minexp) if name == "e8m0" else 1 - int(info.minexp))


def test_every_drawn_format_is_checked() -> None:
    assert {r[0] for r in bit_fields()} == set(LAYOUT_FORMATS) == set(DTYPES) | {"tf32"}
