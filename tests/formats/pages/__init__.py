"""The cell checks of the formats pages, one module per page (``test_<page>.py`` checks ``gpukb.formats.pages.<page>``);
this package holds what several of them read, and the checks of what the pages share (``gpukb.formats.pages``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from tests.helpers import markdown_tables

#: Each format and the numpy/ml_dtypes dtype that implements it; tf32 has none (see :func:`_reference`).
DTYPES: dict[str, Any] = {
    "fp64": np.float64,
    "fp32": np.float32,
    "fp16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e5m2": ml_dtypes.float8_e5m2,
    "e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "e4m3ieee": ml_dtypes.float8_e4m3,
    "e8m0": ml_dtypes.float8_e8m0fnu,
    "e2m3": ml_dtypes.float6_e2m3fn,
    "e3m2": ml_dtypes.float6_e3m2fn,
    "e2m1": ml_dtypes.float4_e2m1fn,
}


def _patterns(name: str) -> np.ndarray:
    """Every bit pattern of a format of at most 16 bits, as values of its dtype."""
    dtype = DTYPES[name]
    bits = ml_dtypes.finfo(dtype).bits
    storage = np.uint8 if np.dtype(dtype).itemsize == 1 else np.uint16
    with np.errstate(invalid="ignore"):
        return np.arange(2**bits, dtype=np.uint32).astype(storage).view(dtype).astype(np.float64)


def _reference(name: str) -> dict[str, Any]:
    """A format's properties from ml_dtypes/numpy (tf32: IEEE rules with 8 exponent and 10 mantissa bits)."""
    if name == "tf32":
        e, m, bias = 8, 10, 127
        return {"bits": 19, "E": e, "M": m, "bias": bias, "max": (2 - 2.0**-m) * 2.0**bias,
                "min normal": 2.0 ** (1 - bias), "min subnormal": 2.0 ** (1 - bias - m), "epsilon": 2.0**-m,
                "finite values": 2**19 - 2 ** (m + 1), "specials": "inf, NaN"}  # fmt: skip
    info = ml_dtypes.finfo(DTYPES[name])
    e, m = int(info.nexp), int(info.nmant)
    bits = int(info.bits)
    bias = -int(info.minexp) if name == "e8m0" else 1 - int(info.minexp)
    if bits <= 16:
        values = _patterns(name)
        finite = int(np.isfinite(values).sum())
        has_inf, has_nan = bool(np.isinf(values).any()), bool(np.isnan(values).any())
        no_negative_zero = not any(v == 0 and math.copysign(1, v) < 0 for v in values)
    else:
        finite, has_inf, has_nan, no_negative_zero = 2**bits - 2 ** (m + 1), True, True, False
    specials = "inf, NaN" if has_inf else ("NaN" if has_nan else "none")
    if no_negative_zero and has_nan and name != "e8m0":
        specials = "NaN (0x80), no -0"
    return {"bits": bits, "E": e, "M": m, "bias": bias, "max": float(info.max),
            "min normal": float(info.smallest_normal), "min subnormal": float(info.smallest_subnormal),
            "epsilon": float(info.eps), "finite values": finite, "specials": specials}  # fmt: skip


def _raw_formats() -> dict[str, dict[str, Any]]:
    """formats.toml read with tomllib, by name, in file order."""
    import tomllib

    from tests.helpers import ROOT

    raw = tomllib.loads((ROOT / "src" / "gpukb" / "data" / "formats.toml").read_text(encoding="utf-8"))
    return {f["name"]: f for f in raw["format"]}


def _records(table: list[dict[str, str]], transposed: bool) -> list[dict[str, str]]:
    """The rows of a properties table, one dict per format, whichever way round it is printed."""
    if not transposed:
        return table
    names = [h for h in table[0] if h != "format"]
    return [{"format": n, **{row["format"]: row[n] for row in table}} for n in names]


def _close(cell: str, value: float, rel: float = 5e-4) -> bool:
    from decimal import Decimal

    printed, exact = Decimal(cell.replace(",", "")), Decimal(value)
    return abs(printed - exact) <= Decimal(rel) * abs(exact)


def check_properties(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    rows = _records(table, kwargs.get("transpose", False))
    names = kwargs["args"][0] if kwargs.get("args") else kwargs.get("names")
    expected = list(names) if names is not None else list(_raw_formats())
    assert [row["format"] for row in rows] == expected + (["int8"] if kwargs.get("int8") else [])
    columns = kwargs.get("columns")
    if columns:
        assert list(rows[0]) == ["format", *columns]
    for row in rows:
        name = row["format"]
        if name == "int8":
            info = np.iinfo(np.int8)
            ref = {"bits": str(info.bits), "E": "-", "M": "-", "bias": "-", "specials": "none", "max": str(info.max),
                   "min normal": "1", "min subnormal": "1", "epsilon": "1",
                   "decimal digits": f"{math.log10(2**info.bits):.2f}",
                   "range (decades)": f"{math.log10(info.max):.1f}",
                   "finite values": f"{info.max - info.min + 1:,}"}  # fmt: skip
            assert all(row[k] == v for k, v in ref.items() if k in row), row
            continue
        ref = _reference(name)
        ref["decimal digits"] = f"{-math.log10(ref['epsilon'] / 2):.2f}"
        ref["range (decades)"] = f"{math.log10(ref['max']) - math.log10(ref['min subnormal']):.1f}"
        checks = {
            **dict.fromkeys(("bits", "E", "M", "bias"), lambda cell, want: int(cell) == want),
            **dict.fromkeys(("max", "min normal", "min subnormal", "epsilon"), _printed),
            **dict.fromkeys(("specials", "decimal digits", "range (decades)"), lambda cell, want: cell == want),
            "finite values": lambda cell, want: int(cell.replace(",", "")) == want,
        }
        unknown = set(row) - set(checks) - {"format"}
        assert not unknown, f"columns without a check: {unknown}"
        for key, ok in checks.items():
            if key in row:
                assert ok(row[key], ref[key]), (name, key, row[key], ref[key])


def _printed(cell: str, value: float) -> bool:
    """A printed property: six significant digits, or four for integers of a million and more (``1.701e+38``)."""
    big_integer = value >= 1e6 and float(value).is_integer()
    return _close(cell, value, rel=5e-4 if big_integer else 5e-6) and (("e+" in cell) == big_integer)


def _value(cell: str) -> float:
    return {"NaN": math.nan, "inf": math.inf, "-inf": -math.inf, "-0": -0.0}.get(cell) or float(cell)


def _same(cell: str, value: float) -> bool:
    got = _value(cell)
    if math.isnan(value):
        return math.isnan(got)
    return got == value and math.copysign(1, got) == math.copysign(1, value)


def _decode(bits: int, name: str) -> float:
    dtype = DTYPES[name]
    storage = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]
    return float(np.array([bits], dtype=storage).view(dtype)[0])


def _raw_record(record_id: str) -> dict[str, Any]:
    import json

    from tests.helpers import ROOT

    return json.loads((ROOT / "src" / "gpukb" / "data" / "results" / f"{record_id}.json").read_text(encoding="utf-8"))


def _measured_on(markdown: str, run: dict[str, Any], command: bool = False) -> None:
    """The sentence saying where a record was measured names its GPU (or CPU), torch and date as the file has them,
    and the command only where the page shows it (the codec timing's)."""
    assert (f"`{run['command']}`" in markdown) == command
    if run.get("gpu"):
        assert f"{run['gpu']['name']} ({run['gpu']['sm_count']} SMs, driver {run['gpu']['driver']})" in markdown
    assert f"torch {run['versions']['torch']}" in markdown
    assert f"on {run['date']}" in markdown


#: Each formats page function that renders a table, and the check of its cells.


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "properties_table": check_properties,
}
