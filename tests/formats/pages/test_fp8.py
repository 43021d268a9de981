"""The cell checks of docs/formats/fp8.md (``gpukb.formats.pages.fp8``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from gpukb.formats.pages import fp8 as page
from tests.formats.pages import DTYPES, _decode, _measured_on, _raw_formats, _raw_record, _reference, _same
from tests.helpers import markdown_tables


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


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "reinterpretation_table": check_reinterpretation,
    "names_table": check_names,
    "cast_table": check_casts,
    "cuda_casts": check_cuda_casts,
}


def test_a_mislabelled_fnuz_row_fails_the_check() -> None:
    markdown = page.reinterpretation_table([0x80, 0x63], ["e4m3", "e4m3fnuz"])
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
