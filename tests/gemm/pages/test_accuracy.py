"""The accuracy page's tables checked: the emulator's errors recomputed, and the FP8 results of record
``gemm/fp8-h100`` read raw.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import cache
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from tests.gemm.pages import _raw, _record, _rounds, _sig
from tests.helpers import markdown_tables


def _fp8(kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The FP8 record a check reads: a variant's changed JSON (``kwargs["raw"]``), else the committed one."""
    return kwargs["raw"] if kwargs and "raw" in kwargs else _record("gemm/fp8-h100")


def _tf32(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to TF32 (10 mantissa bits), to nearest even, by bit arithmetic."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0xFFF + ((bits >> 13) & 1)) & ~np.uint64(0x1FFF)
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def _as(x: np.ndarray, name: str, saturate: bool = False) -> np.ndarray:
    dtype = {"fp32": np.float32, "fp16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
             "e5m2": ml_dtypes.float8_e5m2}[name]  # fmt: skip
    if saturate:
        top = float(ml_dtypes.finfo(dtype).max)
        x = np.clip(x, -top, top)
    with np.errstate(over="ignore"):
        return x.astype(dtype).astype(np.float64)


@cache
def _emulated_errors(a_t: str, b_t: str, d_t: str, compute: str) -> tuple[float, float]:
    import torch

    m, n, k, seed = 256, 256, 1024, 0
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    reference = x @ w
    if a_t == "int8":
        sx, sw = 127 / np.abs(x).max(), 127 / np.abs(w).max()
        qx, qw = np.clip(np.rint(x * sx), -127, 127), np.clip(np.rint(w * sw), -127, 127)
        d = (torch.tensor(qx, dtype=torch.int64) @ torch.tensor(qw, dtype=torch.int64)).numpy() / (sx * sw)
    else:
        sa = sb = sd = 1.0
        if a_t in ("e4m3", "e5m2"):
            sa = float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn if a_t == "e4m3" else ml_dtypes.float8_e5m2).max)
            sb = float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn if b_t == "e4m3" else ml_dtypes.float8_e5m2).max)
            sa, sb = sa / np.abs(x).max(), sb / np.abs(w).max()
        qa, qb = _as(x * sa, a_t), _as(w * sb, b_t)
        if compute.startswith("fp32 (tf32"):
            qa, qb = _tf32(qa), _tf32(qb)
        acc = (torch.tensor(qa, dtype=torch.float32) @ torch.tensor(qb, dtype=torch.float32)).double().numpy()
        t = (acc / (sa * sb)).astype(np.float32).astype(np.float64)
        if d_t in ("e4m3", "e5m2"):
            sd = 448.0 / np.abs(reference).max()
        d = _as(t * sd, d_t, saturate=d_t in ("e4m3", "e5m2")) / sd
    diff = d - reference
    return float(np.linalg.norm(diff) / np.linalg.norm(reference)), float(np.abs(diff).max() / np.abs(reference).max())


def check_emulator_errors(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    families = {"FP32": "fp32", "TF32 (FP32 data)": "fp32", "FP16": "fp16", "BF16": "bf16", "INT8": "int8", "FP8": None}
    assert set(row["family"] for row in table) == set(families)
    for row in table:
        if families[row["family"]]:
            assert row["A"] == row["B"] == families[row["family"]], row
        frobenius, max_abs = _emulated_errors(row["A"], row["B"], row["D"], row["compute"])
        printed = float(row["relative error (Frobenius)"]), float(row["relative error (max abs)"])
        if row["family"] == "FP32":
            # FP32 data: the error is the FP32 accumulation's own, which depends on the order of the sum (torch's
            # product here, numpy's in the emulator): the same order of magnitude, and inside γ(K) = Ku/(1 − Ku)
            gamma = 1024 * 2.0**-24 / (1 - 1024 * 2.0**-24)
            assert all(
                v / 3 <= p <= 3 * v and p < gamma for p, v in zip(printed, (frobenius, max_abs), strict=False)
            ), row
            continue
        assert printed[0] == pytest.approx(frobenius, rel=5e-3), (row, frobenius)
        assert printed[1] == pytest.approx(max_abs, rel=0.02), (row, max_abs)
    assert markdown.endswith(
        "|\n\nA is 256×1024 and B is 1024×256, both standard normal (numpy `default_rng(0)`), compared with their "
        "float64 product before any rounding. Computed by `gpukb.gemm.emulator.error_rows` when this page was built."
    )


def _documented_fp8() -> set[tuple[str, str, str]]:
    """(A, B, D) combinations of cuBLASLt's per-tensor FP8 table, from cublaslt.toml read with tomllib."""
    (group,) = [g for g in _raw("cublaslt")["group"] if g["id"] == "fp8"]
    return {(a, b, row["d"]) for row in group["rows"] for a, b in row["ab"]}


def _first_line(text: str | None) -> str:
    line = (text or "").strip().splitlines()[0] if text else ""
    return line if len(line) <= 140 else line[:139] + "…"


def _code_text(cell: str) -> str:
    """The text of a code span cell, which is in single backticks unless it holds one (then doubled, padded)."""
    text = cell.strip("`").strip()
    assert cell == (f"`` {text} ``" if "`" in text else f"`{text}`" if text else ""), cell
    return text


def check_fp8_acceptance(markdown: str, kwargs: dict[str, Any]) -> None:
    table, refusals = markdown_tables(markdown)
    records = _fp8()["acceptance"]
    keys = list(dict.fromkeys((r["a"], r["b"], r["out"]) for r in records))
    assert [(row["A"], row["B"], row["D"]) for row in table] == keys
    documented = _documented_fp8()
    bias = {"none": "no bias", "bf16": "bf16 bias", "fp16": "fp16 bias", "fp32": "fp32 bias"}
    for row in table:
        key = (row["A"], row["B"], row["D"])
        assert row["in cuBLASLt's table"] == ("yes" if key in documented else "no"), row
        for r in records:
            if (r["a"], r["b"], r["out"]) == key:
                assert row[bias[r["bias"]]] == ("yes" if r["accepted"] else "refused"), (row, r)
    expected: dict[str, list[str]] = {}
    for r in records:
        if not r["accepted"]:
            b = "" if r["bias"] == "none" else f" + {r['bias']} bias"
            expected.setdefault(f"{r['error_type']}: {_first_line(r['error'])}", []).append(
                f"{r['a']}×{r['b']}→{r['out']}{b}"
            )
    assert [(_code_text(row["refused with"]), row["combinations"]) for row in refusals] == [
        (message, ", ".join(cases)) for message, cases in expected.items()
    ]


def check_fp8_layout(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = _fp8(kwargs)["layout"]
    assert [(row["A"], row["B"]) for row in table] == [(r["a_layout"], r["b_layout"]) for r in records]
    for row, r in zip(table, records, strict=True):
        assert row["accepted"] == ("yes" if r["accepted"] else "refused")
        assert _code_text(row["error"]) == _first_line(r["error"]), row
        assert bool(row["error"]) == bool(r["error"]), row


def _combination(r: dict[str, Any]) -> str:
    return f"{r['a']} × {r['b']} → {r['out']}" + ("" if r["bias"] == "none" else f" + {r['bias']} bias")


def check_fp8_agreement(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = [r for r in _fp8(kwargs)["agreement"] if r["out"] not in ("e4m3", "e5m2")]
    assert [(row["combination"], row["fast accumulation"]) for row in table] == [
        (_combination(r), "on" if r["fast_accum"] else "off") for r in records
    ]
    for row, r in zip(table, records, strict=True):
        assert _sig(row["GPU vs FP64"], r["hw_vs_fp64"], 3)
        if not r["emulated"]:
            assert list(row.values())[2:] == ["not in cuBLASLt's table", "", "", row["GPU vs FP64"], ""], row
            continue
        assert _sig(row["GPU vs emulator"], r["hw_vs_emulator"], 2)
        assert _sig(row["FP32 bound"], r["bound"], 2)
        assert _rounds(row["identical elements"], 100 * r["identical_fraction"], 1), row
        assert _sig(row["emulator vs FP64"], r["emulator_vs_fp64"], 3)
        # the GPU and the emulator differ by less than two FP32 accumulations may
        assert r["hw_vs_emulator"] <= r["bound"], row
    first = records[0]
    assert markdown.endswith(
        f"|\n\nA is {first['m']}×{first['k']} and B {first['k']}×{first['n']}, standard normal, quantized with "
        "per-tensor amax scales; all figures are relative Frobenius norms."
    )


def check_fp8_output(markdown: str, kwargs: dict[str, Any]) -> None:
    """The GPU column against the record; the verdict against the printed errors: the nearer emulation wins."""
    (table,) = markdown_tables(markdown)
    records = [r for r in _fp8()["agreement"]
               if r["out"] in ("e4m3", "e5m2") and not r["fast_accum"] and r["bias"] == "none"]  # fmt: skip
    assert [row["combination"] for row in table] == [_combination(r) for r in records]
    gaps = []
    for row, r in zip(table, records, strict=True):
        gpu = r["hw_over_requested_vs_fp64"]
        assert _rounds(row["GPU"], gpu, 4), (row, gpu)
        applied, ignored = float(row["emulator, scale_result applied"]), float(row["emulator, scale_result ignored"])
        assert row["scale_result was"] == ("ignored" if abs(gpu - ignored) < abs(gpu - applied) else "applied"), row
        gaps.append(abs(float(row["GPU"]) - (ignored if row["scale_result was"] == "ignored" else applied)))
    # the sentence under the table: how near the GPU came to the emulator under the verdict, within the printed cells'
    # rounding (four decimals each)
    found = re.fullmatch(
        r"Relative Frobenius error against FP64 of D divided by the requested `scale_result`; the GPU's figure is "
        r"within (\S+) of the emulator's under the verdict in every row\.",
        markdown.split("\n\n")[-1],
    )
    assert found, markdown
    assert abs(float(found[1]) - max(gaps)) <= 1e-4 + 1e-12


def check_fp8_accumulation(markdown: str, kwargs: dict[str, Any]) -> None:
    sweep, probe = markdown_tables(markdown)
    data = _fp8()
    u = 2.0**-24  # FP32's unit roundoff
    assert [(int(row["K"]), row["fast accumulation"]) for row in sweep] == [
        (r["k"], "on" if r["fast_accum"] else "off") for r in data["accumulation"]
    ]
    for row, r in zip(sweep, data["accumulation"], strict=True):
        for header, key in (("GPU vs exact", "hw_vs_exact"), ("emulator vs exact", "emulator_vs_exact"),
                            ("FP32 bound", "fp32_bound"), ("max error / Σ|a·b|", "max_error_per_abs_sum")):  # fmt: skip
            assert _sig(row[header], r[key], 2), (row, header)
        gamma = r["k"] * u / (1 - r["k"] * u)  # γ(K) = Ku / (1 − Ku)
        assert _sig(row["γ(K) for FP32"], gamma, 2), (row, gamma)
    k = data["accumulation_probe"][0]["k"]
    assert list(probe[0])[1] == f"exact 1 + {k - 1}δ"
    for row, r in zip(probe, data["accumulation_probe"], strict=True):
        assert row["δ"] == f"2^{round(math.log2(r['delta']))}"
        assert 2.0 ** round(math.log2(r["delta"])) == r["delta"]
        assert 1 + (r["k"] - 1) * r["delta"] == r["exact"], r
        assert _sig(row[f"exact 1 + {k - 1}δ"], r["exact"], 9), row
        for header, key in (("emulator", "emulator"), ("GPU, fast accumulation off", "fast_accum_off"),
                            ("GPU, fast accumulation on", "fast_accum_on")):  # fmt: skip
            assert _sig(row[header], r[key], 9), (row, header)


def _cell_value(value: Any) -> float:
    return float(value) if not isinstance(value, str) else {"nan": math.nan, "inf": math.inf}[value.lower()]


def check_fp8_overflow(markdown: str, kwargs: dict[str, Any]) -> None:
    table, ints = markdown_tables(markdown)
    data = _fp8(kwargs)
    expected = []
    for r in data["overflow"]:
        label = f"{r['a']} × {r['b']} → {r['out']}"
        if not r["accepted"] or r["hardware"] is None:
            expected.append((label, "refused"))
        else:
            expected += [(label, f"{s:g}") for s in r["sums"]]
    assert [(row["combination"], row["exact D"]) for row in table] == expected
    rows = iter(table)
    for r in data["overflow"]:
        if not r["accepted"] or r["hardware"] is None:
            assert list(next(rows).values())[2:] == ["", "", ""]
            continue
        for s, hw in zip(r["sums"], r["hardware"], strict=True):
            row = next(rows)
            rules = float(_as(np.array([s]), r["out"])[0])  # the format's own rounding: inf or NaN past the top
            top = float(_as(np.array([np.inf]), r["out"], saturate=True)[0])
            saturating = rules if math.isfinite(rules) else top
            assert _same_number(row["format rules"], rules), row
            assert _same_number(row["saturating"], saturating), row
            assert _same_number(row["GPU"], _cell_value(hw)), row
    assert [int(row["K"]) for row in ints] == [r["k"] for r in data["int32_overflow"]]
    for row, r in zip(ints, data["int32_overflow"], strict=True):
        exact = r["k"] * 128 * 128  # K products of −128 × −128
        assert int(row["exact"]) == exact == r["exact"], row
        assert row["GPU (torch._int_mm)"] == ("refused" if r["hardware"] is None else str(r["hardware"]))
        for column, key, value in (("wrap (two's complement)", "emulator_wrap", (exact + 2**31) % 2**32 - 2**31),
                                   ("saturate", "emulator_saturate", min(exact, 2**31 - 1))):  # fmt: skip
            assert row[column] == ("" if r[key] is None else str(value)), row
            assert r[key] in (None, value), r


def _same_number(cell: str, value: float) -> bool:
    got = float(cell.replace("NaN", "nan"))
    return (math.isnan(got) and math.isnan(value)) or got == value


def check_fp8_scale_result(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = _fp8(kwargs)["scale_result"]
    assert [row["D"] for row in table] == [r["out"] for r in records]
    header = "‖D(scale_result=0.5)‖ / ‖D(scale_result=1)‖"
    for row, r in zip(table, records, strict=True):
        if r["accepted"] and r["norm_ratio"] is not None:
            assert _sig(row[header], r["norm_ratio"], 4), row
            assert row["error"] == "", row
        else:
            assert row[header] == "refused", row
            assert _code_text(row["error"]) == _first_line(r["error"]), row


def check_fp8_tf32(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = _fp8()["tf32"]
    assert [int(row["n (n×n×n)"]) for row in table] == [r["n"] for r in records]
    for row, r in zip(table, records, strict=True):
        assert _sig(row["TF32 vs FP64"], r["tf32_vs_exact"], 3)
        assert _sig(row["FP32 vs FP64"], r["fp32_vs_exact"], 3)
        assert row["TF32 / FP32"].endswith("×"), row
        assert _rounds(row["TF32 / FP32"], r["tf32_vs_exact"] / r["fp32_vs_exact"], 0), row
        assert _sig(row["TF32 vs inputs rounded to TF32 in float64"], r["tf32_vs_nearest_even_inputs"], 2)


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "emulator_errors": check_emulator_errors,
    "fp8_acceptance": check_fp8_acceptance,
    "fp8_layout": check_fp8_layout,
    "fp8_agreement": check_fp8_agreement,
    "fp8_output": check_fp8_output,
    "fp8_accumulation": check_fp8_accumulation,
    "fp8_overflow": check_fp8_overflow,
    "fp8_scale_result": check_fp8_scale_result,
    "fp8_tf32": check_fp8_tf32,
}


def _unlike_the_committed_run(raw: dict[str, Any]) -> None:
    """A run with refusals and gaps the committed one lacks: an overflow case refused, one the GPU ran without a
    result, an INT32 case refused and not emulated, a 16-bit combination not emulated, scale_result refused for
    one D type and accepted without a ratio for another."""
    raw["overflow"][0].update(accepted=False, error_type="RuntimeError", error="CUBLAS_STATUS_NOT_SUPPORTED")
    raw["overflow"][1]["hardware"] = None
    raw["int32_overflow"][0].update(hardware=None, emulator_wrap=None, emulator_saturate=None)
    (first,) = [r for r in raw["agreement"] if r["out"] not in ("e4m3", "e5m2")][:1]
    first["emulated"] = False
    raw["scale_result"][0].update(accepted=False, error_type="RuntimeError", error="scale_result: not `supported`")
    raw["scale_result"][1]["norm_ratio"] = None


def test_the_fp8_tables_of_a_run_unlike_the_committed_one() -> None:
    import copy
    import json

    from gpukb.gemm.pages import accuracy as page
    from gpukb.gemm.results import Fp8Hardware

    raw = copy.deepcopy(_fp8())
    _unlike_the_committed_run(raw)
    record = Fp8Hardware.model_validate_json(json.dumps(raw))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(page, "_fp8", lambda record_id: record)
        for function in ("fp8_overflow", "fp8_agreement", "fp8_scale_result", "fp8_layout"):
            CHECKS[function](getattr(page, function)(), {"raw": raw})


@pytest.mark.parametrize("short", ["hardware", "emulator_saturating", "emulator_format_rules"])
def test_an_overflow_case_whose_columns_differ_in_length_is_refused(short: str) -> None:
    """A record with fewer GPU (or emulator) values than probed sums stops the page with zip's ValueError, rather
    than a table that silently drops the unmatched sums."""
    import copy
    import json

    from gpukb.gemm.pages import accuracy as page
    from gpukb.gemm.results import Fp8Hardware

    raw = copy.deepcopy(_fp8())
    case = next(r for r in raw["overflow"] if r["accepted"] and r["hardware"] is not None)
    assert len(case[short]) == len(case["sums"]) > 1  # the committed record: one value per sum
    case[short] = case[short][:-1]
    record = Fp8Hardware.model_validate_json(json.dumps(raw))
    argument = {"hardware": 2, "emulator_saturating": 3, "emulator_format_rules": 4}[short]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(page, "_fp8", lambda record_id: record)
        with pytest.raises(ValueError, match=rf"zip\(\) argument {argument} is shorter than argument"):
            page.fp8_overflow()
