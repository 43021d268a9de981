"""Every type table the GEMM pages render, read back by header and checked against the data files themselves
(the TOML read with ``tomllib``, not through gpukb's models) and against which FP8 each architecture really has."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from typing import Any

import pytest

from gpukb.gemm import pages
from tests.helpers import ROOT, markdown_tables
from tests.site.test_page_tables import page_calls

#: The FP8 encoding of each architecture, as the vendors document it: AMD's MI300 (gfx942) has the FNUZ
#: variants; MI355X (gfx950) and NVIDIA's Ada, Hopper and Blackwell have OCP E4M3/E5M2.
FNUZ_ARCHITECTURES = {"gfx942"}


def _raw(library: str) -> dict[str, Any]:
    return tomllib.loads((ROOT / "src" / "gpukb" / "data" / "gemm" / f"{library}.toml").read_text(encoding="utf-8"))


def _titles() -> dict[str, str]:
    return {_raw(lib)["title"]: lib for lib in ("hipblaslt", "cublaslt")}


def _arches(library: str) -> dict[str, dict[str, Any]]:
    raw = _raw(library)["arch"]
    return raw if isinstance(raw, dict) else {a["id"]: a for a in raw}


def check_architectures(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    titles = _titles()
    seen = set()
    for row in table:
        library = titles[row["library"]]
        arch = _arches(library)[row["architecture"]]
        fp8 = row["E4M3 and E5M2 there"].split(" and ")
        assert fp8 == list(arch["fp8"]), row
        fnuz = row["architecture"] in FNUZ_ARCHITECTURES
        assert fp8 == (["e4m3fnuz", "e5m2fnuz"] if fnuz else ["e4m3", "e5m2"]), row
        assert row["what it is"] == arch["title"], row
        assert row["also accepted as"] == (", ".join(arch.get("aliases", [])) or "-"), row
        seen.add((library, row["architecture"]))
    assert seen == {(lib, a) for lib in ("hipblaslt", "cublaslt") for a in _arches(lib)}


def _type_names(library: str) -> set[str]:
    """The type names a library's data file uses in its groups (read with tomllib)."""
    raw = str(_raw(library)["group"])
    return set(re.findall(r"\b(e\dm\d\w*|fp\d+|bf16|int\d+|tf32)\b", raw)) - set(_raw(library).get("aliases", {}))


def check_comparison(markdown: str, kwargs: dict[str, Any]) -> None:
    table = markdown_tables(markdown)[0]
    fnuz_arches = {a for lib in ("hipblaslt", "cublaslt") for a, v in _arches(lib).items() if "fnuz" in v["fp8"][0]}
    assert fnuz_arches == FNUZ_ARCHITECTURES
    assert list(table[0]) == ["A × B", "C", "D", "arithmetic", "scale", *_titles()]
    for row in table:
        known = {"E4M3", "E5M2"} | {n for lib in ("hipblaslt", "cublaslt") for n in _type_names(lib)}
        words = set(re.findall(r"\w+", row["A × B"] + " " + row["C"] + " " + row["D"])) - {"or"}
        assert words <= known, (row, words - known)
        fp8_ab = any(f in row["A × B"] for f in ("E4M3", "E5M2"))
        if not fp8_ab:  # only E4M3/E5M2 rows are merged into "(x or y) × (x or y)"
            assert re.fullmatch(r"\w+ × \w+", row["A × B"]), row
        for title in _titles():
            for part in re.findall(r"[^;(]+(?:\([^)]*\))?", row[title]):
                part = part.strip()
                if part == "-" or not part:
                    continue
                arches = re.match(r"^([^(]+)", part).group(1).strip().split(", ")
                marks = re.findall(r"\(([^)]*)\)", part)
                marks = marks[0].split("; ") if marks else []
                assert all(m in ("FNUZ", "partly unconfirmed", "TN") or m.startswith("TN on ") for m in marks), part
                for m in marks:  # "TN on sm_89, sm_90": a layout rule on some of the part's architectures
                    assert not m.startswith("TN on ") or set(m[6:].split(", ")) <= set(arches), part
                fp8 = any(f in row[h] for h in ("A × B", "C", "D") for f in ("E4M3", "E5M2"))
                if "FNUZ" in marks:
                    assert set(arches) <= FNUZ_ARCHITECTURES, (title, part)
                    assert fp8, (title, part)
                elif fp8:
                    assert not set(arches) & FNUZ_ARCHITECTURES, (title, part)
        assert not re.search(r"e[45]m[23]", row["A × B"] + row["C"] + row["D"]), row  # families, not encodings


def check_compute(markdown: str, kwargs: dict[str, Any]) -> None:
    (library,) = kwargs["args"]
    (table,) = markdown_tables(markdown)
    raw = _raw(library)["compute"]
    assert [row["compute"] for row in table] == list(raw)
    for row in table:
        ct = raw[row["compute"]]
        assert row["enumerator"] == f"`{ct['enum']}`", row
        assert row["accumulates in"] == ct["accumulate"], row
        assert row["A, B rounded to"] == (ct.get("input_rounding") or "as stored"), row
        assert row["note"] == (ct.get("note") or "-").replace("\n", " ").strip() or row["note"].startswith("cuBLAS")


def _formats() -> dict[str, dict[str, Any]]:
    raw = tomllib.loads((ROOT / "src" / "gpukb" / "data" / "formats.toml").read_text(encoding="utf-8"))
    return {f["name"]: f for f in raw["format"]}


def check_type_names(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    formats = _formats()
    for row in table:
        name = row["name"]
        names = re.findall(r"`([^`]+)`", row["HIP / CUDA name"])
        if name.startswith("int"):
            bits = name[3:]
            assert row["type"] == f"{bits}-bit signed integer", row
            assert names == [f"HIP_R_{bits}I", f"CUDA_R_{bits}I"], row
            continue
        fmt = formats[name]
        assert row["type"] == fmt["title"], row
        assert names == [n for n in (fmt["hip"], fmt["cuda"]) if n], row
    used = {v for lib in ("hipblaslt", "cublaslt") for v in re.findall(r"\b(e\dm\d\w*|fp\d+|bf16|int\d+)\b",
                                                                         str(_raw(lib)["group"]))}  # fmt: skip
    aliases = {a for lib in ("hipblaslt", "cublaslt") for a in _raw(lib).get("aliases", {})}
    assert used - aliases <= {row["name"] for row in table}


#: The FP8 question rows of the quick answers, and the architectures' columns.
_FP8_QUESTION = re.compile(r"E4M3|E5M2")


def check_answers(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    for row in table:
        for column, cell in row.items():
            if column == "combination" or not cell.startswith("yes: ") or not _FP8_QUESTION.search(row["combination"]):
                continue
            types = re.findall(r"\b(e[45]m[23]\w*)", cell)
            fnuz = "gfx942" in column
            assert types, (column, cell)
            assert all(t.endswith("fnuz") == fnuz for t in types), (column, cell)
            if "sm_90" in column:
                assert "A transposed, B not" in cell, cell  # Hopper's FP8 GEMM takes A transposed only


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "type_architectures": check_architectures,
    "type_comparison": check_comparison,
    "type_compute": check_compute,
    "type_names": check_type_names,
    "type_answers": check_answers,
}

CALLS = [c for c in page_calls() if c.module == "gpukb.gemm.pages" and c.function in CHECKS]


@pytest.mark.parametrize("call", CALLS, ids=lambda c: f"{c.page}:{c.line}:{c.function}")
def test_page_table_cells_match_the_data_files(call: Any) -> None:
    markdown = getattr(pages, call.function)(*call.args, **call.kwargs)
    CHECKS[call.function](markdown, {**call.kwargs, "args": call.args})


def test_mislabelled_fnuz_architectures_fail_the_check() -> None:
    markdown = pages.type_architectures()
    swapped = markdown.replace("e4m3fnuz and e5m2fnuz", "@").replace("e4m3 and e5m2", "e4m3fnuz and e5m2fnuz")
    with pytest.raises(AssertionError):
        check_architectures(swapped.replace("@", "e4m3 and e5m2"), {})
