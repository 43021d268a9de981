"""Every table the formats pages render, read back from the rendered Markdown by header and checked cell by cell
against an independent computation: ml_dtypes' and numpy's own format parameters and casts, and torch's.

The calls are the ones the pages make (read from their render blocks), so a swapped column, a mislabelled row or a
wrong number on a page fails here, not only in the library's own tests.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from gpukb.formats import pages
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


def check_reinterpretation(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert table
    for row in table:
        bits = int(row["bits"], 16)
        for name, cell in row.items():
            if name != "bits":
                assert _same(cell, _decode(bits, name)), (row["bits"], name, cell)


def check_names(markdown: str, kwargs: dict[str, Any]) -> None:
    import torch

    table = markdown_tables(markdown)[0]
    _check_name_sources(markdown)
    assert [row["format"] for row in table] == list(_raw_formats())
    for row in table:
        name = row["format"]
        if row["ml_dtypes"] != "-":
            assert np.dtype(getattr(ml_dtypes, row["ml_dtypes"])) == np.dtype(DTYPES[name]), row
        if row["torch"] != "-":
            info = torch.finfo(getattr(torch, row["torch"]))
            ref = _reference(name)
            # eps is left out: torch's finfo gives 0.125 for float8_e5m2fnuz, whose step above 1 is 0.25
            assert (info.bits, info.max, info.tiny) == (ref["bits"], ref["max"], ref["min normal"]), row
        raw = _raw_formats()[name]
        libraries = ("torch", "ml_dtypes", "hip", "cuda")
        assert [row[lib] for lib in libraries] == [raw[lib] or "-" for lib in libraries], row
        fnuz = name.endswith("fnuz")
        assert row["hip"] == "-" or row["hip"].endswith("_FNUZ") == fnuz, row
        assert row["cuda"] == "-" or (not fnuz and "FNUZ" not in row["cuda"]), row


def _check_name_sources(markdown: str) -> None:
    import tomllib

    from tests.helpers import ROOT

    raw = tomllib.loads((ROOT / "src" / "gpukb" / "data" / "formats.toml").read_text(encoding="utf-8"))
    lines = [line for line in markdown.splitlines() if line.startswith("- ")]
    expected = []
    for library, source in raw["name_sources"].items():
        title, _, url = source.rpartition(": ")
        expected.append(f"- {library}: [{title}]({url})" if url.startswith("https://") else f"- {library}: {source}")
    assert lines == expected


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


def check_casts(markdown: str, kwargs: dict[str, Any]) -> None:
    import torch

    (table,) = markdown_tables(markdown)
    name = kwargs["args"][0]
    ml_col = next(h for h in table[0] if h.startswith("ml_dtypes "))
    torch_col = next(h for h in table[0] if h.startswith("torch "))
    assert list(table[0]) == ["float32 input", "format rules", "rules, saturating", ml_col, torch_col]
    assert ml_col == f"ml_dtypes {ml_dtypes.__version__}"
    assert torch_col.startswith(f"torch {torch.__version__}")
    torch_dtype = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2, "e4m3fnuz": torch.float8_e4m3fnuz,
                   "e5m2fnuz": torch.float8_e5m2fnuz, "e8m0": getattr(torch, "float8_e8m0fnu", None)}  # fmt: skip
    inputs = [float(np.float32(v)) for v in kwargs["args"][1]]
    assert len(table) == len(inputs)
    top = float(ml_dtypes.finfo(DTYPES[name]).max)
    for row, x in zip(table, inputs, strict=True):
        assert _same(row["float32 input"], x), (row, x)
        cast = float(np.array([x], np.float32).astype(DTYPES[name])[0])
        assert _same(row[ml_col], cast), (name, x, row)
        if name == "e8m0":
            # E8M0 holds the powers of two 2^-127 ... 2^127 and NaN: a positive input goes to the nearer of the two
            # powers around it (a tie to the larger), anything else is NaN. ml_dtypes differs below 2^-126, where it
            # goes to 2^-126 (float32's subnormals), as tests/formats/test_encode.py documents.
            rules = math.nan
            if x > 0 and math.isfinite(x):
                low = 2.0 ** math.floor(math.log2(x))
                rules = low if x - low < 2 * low - x else 2 * low
            assert _same(row["format rules"], rules), (x, row)
            assert _same(row["rules, saturating"], rules), (x, row)
        else:
            # the format's rules are ml_dtypes' cast; saturating rounds the same and clamps at the largest value
            assert _same(row["format rules"], cast), (name, x, row)
            saturated = cast if math.isnan(x) or abs(cast) <= top else math.copysign(top, x)
            assert _same(row["rules, saturating"], saturated), (name, x, row)
        if torch_dtype.get(name) is not None:
            cast = torch.tensor([x], dtype=torch.float32).to(torch_dtype[name]).float().item()
            assert _same(row[torch_col], cast), (name, x, row)


def check_autocast(markdown: str, kwargs: dict[str, Any]) -> None:
    """The op lists against autocast.toml read with tomllib, and every op a name torch really has."""
    import tomllib

    import torch
    from torch.nn import functional

    from tests.helpers import ROOT

    (table,) = markdown_tables(markdown)
    raw = tomllib.loads((ROOT / "src" / "gpukb" / "data" / "autocast.toml").read_text(encoding="utf-8"))
    lists = {entry["id"]: entry["ops"] for entry in raw["list"]}
    runs_in = {"float16 / bfloat16": "lower-precision", "float32": "float32", "the widest input type": "widest"}
    assert list(table[0]) == ["autocast runs them in", "ops (CUDA)", "why"]
    assert [row["autocast runs them in"] for row in table] == list(runs_in)
    assert all(row["why"] for row in table)
    for row in table:
        ops = [op.strip().strip("`") for op in row["ops (CUDA)"].split(", ")]
        assert ops == lists[runs_in[row["autocast runs them in"]]], row
        namespaces = (torch, functional, torch.Tensor, torch.nn, torch.linalg)
        assert all(any(hasattr(ns, op) for ns in namespaces) for op in ops), [
            op for op in ops if not any(hasattr(ns, op) for ns in namespaces)
        ]


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


def check_cuda_casts(markdown: str, kwargs: dict[str, Any]) -> None:
    import ml_dtypes

    casts, probe = markdown_tables(markdown)
    raw = _raw_record("formats/h100-gpu-checks")
    assert [row["format"] for row in casts] == [c["format"] for c in raw["casts"]]
    columns = {"inputs": "inputs", "CUDA = format rules": "cuda_matches_rules",
               "CUDA = saturating rules": "cuda_matches_saturating", "CUDA = CPU": "cuda_matches_cpu"}  # fmt: skip
    for row, c in zip(casts, raw["casts"], strict=True):
        assert {h: int(row[h]) for h in columns} == {h: c[k] for h, k in columns.items()}, row
        assert all(int(row[h]) <= c["inputs"] for h in columns), row
    cuda, cpu = raw["e4m3_overflow"]["cuda"], raw["e4m3_overflow"]["cpu"]
    assert [row["float32 input"] for row in probe] == list(cuda)
    for row in probe:
        assert (row["E4M3 on CUDA"], row["E4M3 on CPU"]) == (str(cuda[row["float32 input"]]),
                                                             str(cpu[row["float32 input"]]))  # fmt: skip
        # the format's rules (ml_dtypes): round to nearest even, NaN past the largest value plus half a step
        rules = float(np.array([float(row["float32 input"])], np.float32).astype(ml_dtypes.float8_e4m3fn)[0])
        assert _same(row["E4M3 on CUDA"], rules), row
    _measured_on(markdown, raw["run"])


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


# --- the MX and NVFP4 error tables, recomputed with ml_dtypes casts on the same data -------------------------
#: MX element formats by the label the tables print.
MX_LABELS = {"MXFP8 (E4M3)": "e4m3", "MXFP8 (E5M2)": "e5m2", "MXFP6 (E3M2)": "e3m2", "MXFP6 (E2M3)": "e2m3",
             "MXFP4 (E2M1)": "e2m1"}  # fmt: skip


def _cast(values: np.ndarray, name: str) -> np.ndarray:
    """Round to nearest even in a format with ml_dtypes, saturating at its largest value."""
    top = float(ml_dtypes.finfo(DTYPES[name]).max)
    return np.clip(values, -top, top).astype(DTYPES[name]).astype(np.float64)


def _mx(x: np.ndarray, name: str, ceil: bool = False, block: int = 32) -> np.ndarray:
    """OCP MX: per block of 32 along the rows, a power-of-two scale 2^(floor(log2 amax) - emax of the element)
    (or the smallest power of two that maps amax to at most the element's largest value)."""
    top = float(ml_dtypes.finfo(DTYPES[name]).max)
    blocks = x.reshape(*x.shape[:-1], -1, block)
    amax = np.abs(blocks).max(axis=-1, keepdims=True)
    safe = np.where(amax > 0, amax, 1.0)
    if ceil:
        exponent = np.ceil(np.log2(safe / top))
    else:
        exponent = np.floor(np.log2(safe)) - math.floor(math.log2(top))
    scale = 2.0**exponent
    return (_cast(blocks / scale, name) * scale).reshape(x.shape)


def _per_tensor(x: np.ndarray, name: str) -> np.ndarray:
    scale = float(np.float32(np.abs(x).max() / float(ml_dtypes.finfo(DTYPES[name]).max)))
    return _cast(x / scale, name) * scale


def _nvfp4(x: np.ndarray) -> np.ndarray:
    """NVFP4: E2M1 elements, an E4M3 scale per block of 16 (amax / 6 over the tensor scale), an FP32 tensor scale
    amax / (6 · 448)."""
    g = float(np.float32(np.abs(x).max() / (6 * 448)))
    blocks = x.reshape(*x.shape[:-1], -1, 16)
    amax = np.abs(blocks).max(axis=-1, keepdims=True)
    scale = _cast(amax / (6 * g), "e4m3") * g
    safe = np.where(scale > 0, scale, 1.0)
    return np.where(scale > 0, _cast(blocks / safe, "e2m1") * safe, 0.0).reshape(x.shape)


def _errors(restored: np.ndarray, x: np.ndarray, ordinary: np.ndarray) -> tuple[float, float, float]:
    def rel(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.linalg.norm(a - b) / np.linalg.norm(b))

    return rel(restored, x), rel(restored[:, ordinary], x[:, ordinary]), float(np.abs(restored - x).max())


@functools.cache
def _weights() -> tuple[np.ndarray, np.ndarray]:
    """The MX page's weight-like data (the generator the page describes) and its ordinary columns."""
    from gpukb.formats.mx import OutlierModel

    x, outliers = OutlierModel().sample()
    ordinary = np.ones(x.shape[-1], dtype=bool)
    ordinary[outliers] = False
    return x.astype(np.float64), ordinary


@functools.cache
def _expected_error_row(label: str, scaling: str) -> tuple[float, tuple[float, float, float]]:
    x, ordinary = _weights()
    if scaling == "none (cast)":
        assert label == "BF16"
        return 16.0, _errors(x.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64), x, ordinary)
    if scaling == "per tensor (FP32)":
        name = {"FP8 E4M3": "e4m3", "FP8 E5M2": "e5m2", "FP4 E2M1": "e2m1"}[label]
        bits = ml_dtypes.finfo(DTYPES[name]).bits + 32 / x.size
        return bits, _errors(_per_tensor(x, name), x, ordinary)
    if scaling.startswith("per block of 32 (E8M0)"):
        name = MX_LABELS[label]
        ceil = scaling.endswith("rounded up")
        return ml_dtypes.finfo(DTYPES[name]).bits + 8 / 32, _errors(_mx(x, name, ceil), x, ordinary)
    assert (label, scaling) == ("NVFP4 (E2M1)", "per block of 16 (E4M3) and per tensor (FP32)")
    return 4 + 8 / 16 + 32 / x.size, _errors(_nvfp4(x), x, ordinary)


def _check_error_table(markdown: str, expected_rows: list[tuple[str, str]]) -> None:
    (table,) = markdown_tables(markdown)
    assert [(row["format"], row["scaling"]) for row in table] == expected_rows
    ordinary_header = next(h for h in table[0] if h.endswith("ordinary columns"))
    for row in table:
        scaling = row["scaling"].replace("rounded up", "scale rounded up").replace("scale scale", "scale")
        bits, (rms, rms_ordinary, max_abs) = _expected_error_row(row["format"], scaling)
        assert row["bits per value"] == f"{bits:.2f}", row
        for header, value in (("relative RMS error", rms), (ordinary_header, rms_ordinary), ("max abs error", max_abs)):
            assert float(row[header]) == pytest.approx(value, rel=5e-3), (row, header, value)


def check_mx_errors(markdown: str, kwargs: dict[str, Any]) -> None:
    block = "per block of 32 (E8M0)"
    _check_error_table(markdown, [
        ("BF16", "none (cast)"), ("FP8 E4M3", "per tensor (FP32)"), ("FP8 E5M2", "per tensor (FP32)"),
        ("FP4 E2M1", "per tensor (FP32)"), *((label, block) for label in MX_LABELS),
        ("MXFP8 (E4M3)", f"{block}, scale rounded up"), ("MXFP4 (E2M1)", f"{block}, scale rounded up"),
    ])  # fmt: skip


def check_nvfp4_errors(markdown: str, kwargs: dict[str, Any]) -> None:
    _check_error_table(markdown, [
        ("FP4 E2M1", "per tensor (FP32)"), ("MXFP4 (E2M1)", "per block of 32 (E8M0)"),
        ("MXFP4 (E2M1)", "per block of 32 (E8M0), rounded up"),
        ("NVFP4 (E2M1)", "per block of 16 (E4M3) and per tensor (FP32)"),
    ])  # fmt: skip


#: Each formats page function that renders a table, and the check of its cells.
CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "properties_table": check_properties,
    "reinterpretation_table": check_reinterpretation,
    "names_table": check_names,
    "value_table": check_value,
    "cast_table": check_casts,
    "autocast_table": check_autocast,
    "tf32_check": check_tf32,
    "cuda_casts": check_cuda_casts,
    "codec_speed": check_codec_speed,
    "mx_error_table": check_mx_errors,
    "nvfp4_error_table": check_nvfp4_errors,
}


def test_a_swapped_column_fails_the_check() -> None:
    """The check reads cells by header: swapping two columns of the properties table is caught."""
    markdown = pages.properties_table(["e4m3", "e5m2"])
    header, rule, *rows = markdown.splitlines()

    def swap(line: str) -> str:
        cells = line.split("|")
        cells[7], cells[8] = cells[8], cells[7]  # max <-> min normal, cells only
        return "|".join(cells)

    with pytest.raises(AssertionError):
        check_properties("\n".join([header, rule, *map(swap, rows)]), {})


def test_a_mislabelled_fnuz_row_fails_the_check() -> None:
    markdown = pages.reinterpretation_table([0x80, 0x63], ["e4m3", "e4m3fnuz"])
    with pytest.raises(AssertionError):
        check_reinterpretation(markdown.replace("| e4m3 | e4m3fnuz |", "| e4m3fnuz | e4m3 |"), {})


def test_a_halved_fp8_scale_fails_the_snippet_check() -> None:
    """The snippet check compares the scale the page prints with its own recomputation, so halving it fails."""
    import re

    from gpukb.site.snippets import run_snippet
    from tests.formats.test_snippets import check_fp8_scaling
    from tests.helpers import ROOT

    out = run_snippet(ROOT / "snippets" / "formats" / "fp8_scaling.py")
    check_fp8_scaling(out)
    halved = re.sub(r"scale (\S+)", lambda m: f"scale {float(m.group(1)) / 2:.3g}", out, count=1)
    assert halved != out
    with pytest.raises(AssertionError):
        check_fp8_scaling(halved)
