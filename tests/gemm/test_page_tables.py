"""Every type table the GEMM pages render, read back by header and checked against the data files themselves
(the TOML read with ``tomllib``, not through gpukb's models) and against which FP8 each architecture really has."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import statistics
import tomllib
from collections.abc import Callable
from functools import cache
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from gpukb.gemm import pages
from gpukb.gemm.triton import configs
from tests.helpers import ROOT, h100_ceilings_json, markdown_tables

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
        # a library has the row's combination (any architecture, no block scaling) exactly when its cell is not "-"
        family = lambda t: t.removesuffix("fnuz").upper() if t.startswith(("e4m3", "e5m2")) else t  # noqa: E731
        for title, library in _titles().items():
            computes = _raw(library)["compute"]

            def arithmetic(compute: str, computes: dict[str, Any] = computes) -> str:  # the column's words
                ct = computes[compute]
                if "label" in ct:
                    return ct["label"]
                return ct["accumulate"] + (f" ({ct['input_rounding']} inputs)" if ct.get("input_rounding") else "")

            listed = {(family(x[0]), family(x[1]), family(x[2]), family(x[3]), arithmetic(x[4]), x[6])
                      for group in _raw(library)["group"] if group.get("scaling") in ("none", "tensor")
                      for x in _raw_combinations(group)}  # fmt: skip
            key = (row["C"], row["D"], row["arithmetic"], row["scale"])
            present = [(x, y, *key) in listed for x, y in _pairs(row["A × B"])]
            assert all(present) if row[title] != "-" else not any(present), (title, row)
            if row[title] != "-":
                _check_marks(library, row[title], {(x, y, *key) for x, y in _pairs(row["A × B"])}, arithmetic)


def _check_marks(library: str, cell: str, keys: set[tuple], arithmetic: Callable[[str], str]) -> None:
    """Each part of a library's cell in the comparison (architectures and marks) against the data file's rows of
    that combination on those architectures: ``TN`` or ``TN on ...`` where their layout is TN, ``partly
    unconfirmed`` where one of them is not confirmed."""
    family = lambda t: t.removesuffix("fnuz").upper() if t.startswith(("e4m3", "e5m2")) else t  # noqa: E731
    entries = []
    for group in _raw(library)["group"]:
        if group.get("scaling") not in ("none", "tensor"):
            continue
        for row in group["rows"]:
            field = {**{k: v for k, v in group.items() if k != "rows"}, **row}
            for x in _raw_combinations({**group, "rows": [row]}):
                k = (family(x[0]), family(x[1]), family(x[2]), family(x[3]), arithmetic(x[4]), x[6])
                if k in keys:
                    entries.append(field)
    for part in re.findall(r"[^;(]+(?:\([^)]*\))?", cell):
        part = part.strip()
        if not part:
            continue
        arches = set(re.match(r"^([^(]+)", part).group(1).strip().split(", "))
        marks = re.findall(r"\(([^)]*)\)", part)
        marks = marks[0].split("; ") if marks else []
        mine = [e for e in entries if set(e.get("arch", ["any"])) == arches]
        assert mine, (library, part)
        assert ("partly unconfirmed" in marks) == any(not e.get("confirmed", True) for e in mine), (library, part)
        tn = [e for e in mine if e.get("layout") == "TN"]
        if tn and len(tn) == len(mine):
            layout_arch = tn[0].get("layout_arch")
            want = f"TN on {', '.join(layout_arch)}" if layout_arch and set(layout_arch) != arches else "TN"
            assert want in marks, (library, part, want)
        else:
            assert not any(m == "TN" or m.startswith("TN on ") for m in marks), (library, part)


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


def _raw_combinations(group: dict[str, Any]) -> list[tuple[str, str, str, str, str, tuple[str, ...], str]]:
    """Every (A, B, C, D, compute, bias types, scale type) a group of a type-table file lists: row fields over
    group defaults, ``ab`` pairs or the product of ``a`` and ``b`` lists."""
    out = []
    for row in group["rows"]:
        field = {**{k: v for k, v in group.items() if k != "rows"}, **row}
        if "ab" in field:
            pairs = [tuple(p) for p in field["ab"]]
        else:
            a, b = field["a"], field["b"]
            pairs = [(x, y) for x in ([a] if isinstance(a, str) else a) for y in ([b] if isinstance(b, str) else b)]
        out += [
            (x, y, field["c"], field["d"], field["compute"], tuple(field["bias"]), field["scale"]) for x, y in pairs
        ]
    return out


def _pairs(cell: str) -> list[tuple[str, str]]:
    """An ``A × B`` cell as pairs: ``x × y; z × w`` or ``(x or y) × (z or w)``."""
    if cell.startswith("("):
        left, right = re.fullmatch(r"\((.*)\) × \((.*)\)", cell).groups()
        return [(x, y) for x in left.split(" or ") for y in right.split(" or ")]
    return [tuple(part.split(" × ")) for part in cell.split("; ")]


def check_type_library(markdown: str, kwargs: dict[str, Any]) -> None:
    """Each vendor table (group) of a library, read back with its caption's constant columns, against the group's
    rows in the data file: every combination once, with its compute type and bias types, and the count."""
    library, groups = kwargs["args"][0], kwargs["args"][1] if len(kwargs["args"]) > 1 else None
    raw_groups = {g["id"]: g for g in _raw(library)["group"]}
    wanted = list(groups) if groups is not None else list(raw_groups)
    sections = re.split(r"^(?=\*\*)", markdown, flags=re.M)[1:]
    assert len(sections) == len(wanted)
    for section, gid in zip(sections, wanted, strict=True):
        group = raw_groups[gid]
        title, count, caption = re.match(r"\*\*(.*)\*\* \((\d+) combinations\)(?:: (.*))?\.\n", section).groups()
        expected = [x[:6] for x in _raw_combinations(group)]
        assert title == group["title"], (gid, title)
        assert int(count) == len(expected), (gid, count)
        constant = dict(item.split(": ", 1) for item in (caption or "").split("; ") if item)
        (table,) = markdown_tables(section)
        shown = []
        for row in table:
            cells = {**constant, **row}
            pairs = _pairs(cells["A × B"]) if "A × B" in cells else [(cells["A"], cells["B"])]
            bias = re.sub(r" \(default \w+\)", "", cells["bias"])
            bias_types = () if bias == "-" else tuple(bias.split(", "))
            shown += [(a, b, cells["C"], cells["D"], cells["compute"], bias_types) for a, b in pairs]
        assert sorted(shown) == sorted(expected), (gid, set(shown) ^ set(expected))
        for row in group["rows"]:  # a default bias type is the one the page puts in parentheses
            if "default_bias" in row:
                assert f"(default {row['default_bias']})" in section, (gid, row)


#: The FP8 question rows of the quick answers, and the architectures' columns.
_FP8_QUESTION = re.compile(r"E4M3|E5M2")


def _question(label: str) -> tuple[str, str, str | None, str | None, bool]:
    """A quick-answer row's combination in words, as (A, B, C or None, D or None, TF32 compute)."""
    t = re.findall(r"\b(E4M3|E5M2|BF16|FP16|FP32|INT8|INT32)\b", label)
    low = [x.lower() for x in t]
    if label.startswith("A, B, C, D all "):
        return low[0], low[0], low[0], low[0], False
    if label.startswith("A, B "):
        tf32 = label.endswith("with TF32 compute")
        c = low[1] if ", C " in label else None
        d = low[-1] if ", D " in label else (low[0] if tf32 else None)
        return low[0], low[0], c, d, tf32
    a, b, d = low
    return a, b, None, d, False


def _arch_combinations(library: str, arch: str) -> list[tuple[str, str, str, str, str]]:
    """(A, B, C, D, compute) of every row of a library's data file that runs on an architecture."""
    out = []
    for group in _raw(library)["group"]:
        for row in group["rows"]:
            arches = row.get("arch", group.get("arch", ["any"]))
            if "any" in arches or arch in arches:
                out += [c[:5] for c in _raw_combinations({**group, "rows": [row]})]
    return out


def check_answers(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    for row in table:  # each answer against the rows of the data file for that library and architecture
        a, b, c, d, tf32 = _question(row["combination"])
        for column, cell in row.items():
            if column == "combination":
                continue
            title, arch = re.fullmatch(r"(\w+), .*\((\w+)\)", column).groups()
            library = _titles()[title]
            fnuz = arch in FNUZ_ARCHITECTURES

            def named(t: str | None, fnuz: bool = fnuz) -> str | None:
                return f"{t}fnuz" if fnuz and t in ("e4m3", "e5m2") else t

            found = [x for x in _arch_combinations(library, arch)
                     if (x[0], x[1]) == (named(a), named(b)) and (c is None or x[2] == named(c))
                     and (d is None or x[3] == named(d)) and (not tf32 or x[4] in ("xf32", "fast_tf32"))]  # fmt: skip
            assert cell.startswith("yes: ") == bool(found), (row["combination"], column, cell)
            if found:
                assert cell.startswith(f"yes: {named(a)} × {named(b)} → {named(d or found[0][3])}"), (column, cell)
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


# === the ground-up, timing and accuracy pages: recorded results read raw, library tables recomputed ============

DASH = "–"


@cache
def _record(record_id: str) -> dict[str, Any]:
    """A committed results file, read with json (not through gpukb's models)."""
    return json.loads((ROOT / "src" / "gpukb" / "data" / "results" / f"{record_id}.json").read_text(encoding="utf-8"))


def _ground() -> dict[str, Any]:
    return _record("gemm/ground-up-h100")


def _fp8() -> dict[str, Any]:
    return _record("gemm/fp8-h100")


def _num(cell: str) -> float:
    return float(cell.replace(",", "").rstrip("×%"))


def _rounds(cell: str, value: float, digits: int) -> bool:
    """``cell`` is ``value`` printed with ``digits`` decimals."""
    return abs(_num(cell) - value) <= 0.5 * 10**-digits * (1 + 1e-9) + 1e-12


def _sig(cell: str, value: float, digits: int) -> bool:
    """``cell`` is ``value`` printed with ``digits`` significant digits."""
    if value == 0:
        return _num(cell) == 0
    return abs(_num(cell) - value) <= 0.5 * 10 ** (math.floor(math.log10(abs(value))) - digits + 1) * (1 + 1e-6)


def _gflops(n: int, ms: float) -> float:
    """The lab's formula: 2n³ over the time."""
    return 2 * n**3 / (ms * 1e-3) / 1e9


#: Each timing method and the words its label must carry.
TIMING_WORDS = {
    "lab_first_call": ("lab: first call", "no synchronize"),
    "first_call_synchronized": ("first call", "synchronized"),
    "warm_call_no_sync": ("warm call,", "no synchronize"),
    "warm_calls_no_sync": ("warm calls", "no synchronize (median)"),
    "warm_call_synchronized": ("warm call,", "synchronized (one run)"),
    "warm_calls_synchronized": ("warm calls", "synchronized (median)"),
    "warm_calls_events": ("warm calls", "CUDA events (median)"),
    "back_to_back": ("calls back to back", "(mean)"),
    "do_bench": ("do_bench", "median"),
    "numpy_first_call": ("numpy", "(first call)"),
    "numpy_after_first": ("numpy", "after it"),
}


def _timing_label(label: str, t: dict[str, Any]) -> None:
    assert all(w in label for w in TIMING_WORDS[t["method"]]), (label, t["method"])
    if t["method"] == "back_to_back":
        assert label.startswith(f"{t['calls']} calls"), label
    if t["method"] == "numpy_after_first":
        assert f"median of {t['ms']['n']}" in label, label


def check_timing_table(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    dtype, n = kwargs.get("dtype", "fp32"), kwargs.get("n", 6000)
    entries = [t for t in _ground()["timing"] if t["dtype"] == dtype and t["n"] == n]
    assert len(table) == len(entries) > 0
    for row, t in zip(table, entries, strict=True):
        _timing_label(row["how it was timed"], t)
        assert _sig(row["median ms"], t["ms"]["median"], 4), row
        assert _rounds(row["2n³ / time (GFLOP/s)"], _gflops(n, t["ms"]["median"]), 0), row
        assert int(row["samples"]) == t["ms"]["n"]


def _gpu_cases() -> list[tuple[str, int]]:
    return list(dict.fromkeys((t["dtype"], t["n"]) for t in _ground()["timing"] if t["device"] == "cuda"))


def _by_method(dtype: str, n: int) -> dict[str, dict[str, Any]]:
    return {t["method"]: t for t in _ground()["timing"] if (t["dtype"], t["n"]) == (dtype, n)}


def check_timing_summary(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    cases = _gpu_cases()
    assert [row["product"] for row in table] == [f"{d}, n = {n:,}" for d, n in cases]
    columns = {"lab's method, first call (GFLOP/s)": "lab_first_call", "no sync, warm (GFLOP/s)": "warm_calls_no_sync",
               "CUDA events, median (GFLOP/s)": "warm_calls_events"}  # fmt: skip
    for row, (dtype, n) in zip(table, cases, strict=True):
        by = _by_method(dtype, n)
        for header, method in columns.items():
            if method not in by:
                assert row[header] == DASH
            else:
                assert _rounds(row[header], _gflops(n, by[method]["ms"]["median"]), 0), (row, header)
        errors = [t["rel_error_vs_fp64"] for t in by.values() if t["rel_error_vs_fp64"] is not None]
        assert (row["relative error vs fp64"] == DASH) if not errors else _sig(row["relative error vs fp64"],
                                                                                errors[0], 2), row  # fmt: skip


def check_first_call(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    needed = {"lab_first_call", "first_call_synchronized", "warm_calls_events"}
    cases = [(d, n) for d, n in _gpu_cases() if needed <= set(_by_method(d, n))]
    assert [row["product (in the order run)"] for row in table] == [f"{d}, n = {n:,}" for d, n in cases]
    for row, (dtype, n) in zip(table, cases, strict=True):
        by = _by_method(dtype, n)
        lab, first, warm = (by[m]["ms"]["median"] for m in ("lab_first_call", "first_call_synchronized",
                                                           "warm_calls_events"))  # fmt: skip
        assert _sig(row["first call, no sync (ms)"], lab, 3)
        assert _sig(row["first call, synchronized (ms)"], first, 3)
        assert _sig(row["warm, events median (ms)"], warm, 3)
        assert row["first / warm"].endswith("×"), row
        assert _rounds(row["first / warm"], first / warm, 1), row


def check_cpu_lab(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    entries = [t for t in _ground()["timing"] if t["device"] == "cpu"]
    assert len(table) == len(entries) > 0
    for row, t in zip(table, entries, strict=True):
        assert int(row["n"].replace(",", "")) == t["n"]
        _timing_label(row["how it was timed"], t)
        assert _rounds(row["median ms"], t["ms"]["median"], 1)
        assert _rounds(row["GFLOP/s"], _gflops(t["n"], t["ms"]["median"]), 0), row


def check_batched(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = _ground()["batched"]
    cases = sorted({(r["m"], r["batch"]) for r in records})
    assert [(row["m = n = k"], row["batch"]) for row in table] == [(f"{m}³", f"{b:,}") for m, b in cases]
    columns = {"loop": "loop of torch.mm (µs)", "loop_graph": "same loop, CUDA graph (µs)", "bmm": "torch.bmm (µs)",
               "one_gemm": "one torch.mm (shared B) (µs)"}  # fmt: skip
    for row, (m, batch) in zip(table, cases, strict=True):
        by = {r["variant"]: r for r in records if (r["m"], r["batch"]) == (m, batch)}
        for variant, header in columns.items():
            if variant not in by:
                assert row[header] == DASH
                continue
            r = by[variant]
            assert (r["m"], r["n"], r["k"]) == (m, m, m)
            us = r["ms"]["median"] * 1e3
            total, extra = re.fullmatch(r"([\d,.]+) \((.*)\)", row[header]).groups()
            if variant.startswith("loop"):
                assert _rounds(total, us, 0), row
                assert extra.endswith(" per product"), row
                assert _rounds(extra.removesuffix(" per product"), us / batch, 1), row
            else:
                assert _rounds(total, us, 1), row
                assert extra.endswith(" TFLOP/s"), row
                assert _sig(extra.removesuffix(" TFLOP/s"), 2 * m**3 * batch / (us * 1e-6) / 1e12, 3), row
        ratio = row["loop time / bmm time"]
        if "loop" in by and "bmm" in by:
            assert _rounds(ratio, by["loop"]["ms"]["median"] / by["bmm"]["ms"]["median"], 0), row
        else:
            assert ratio == DASH


def _spread_cell(cell: str, rates: list[float]) -> None:
    if not rates:
        assert cell == DASH
    elif len(rates) == 1:
        assert _rounds(cell, rates[0], 0)
    else:
        middle, low, high = re.fullmatch(r"(\d+) \((\d+)–(\d+)\)", cell).groups()
        assert _rounds(middle, statistics.median(rates), 0), (cell, rates)
        assert _rounds(low, min(rates), 0), (cell, rates)
        assert _rounds(high, max(rates), 0), (cell, rates)


def check_cublaslt_speed(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    c = _ground()["cublaslt"]
    snippet: dict[tuple[int, int, int], list[float]] = {}
    for run in c["runs"][1:]:  # the first run is the check at the default size
        shape = tuple(int(x) for x in re.search(r"M=(\d+) N=(\d+) K=(\d+)", run["stdout"]).groups())
        ms = float(re.search(r"median ([\d.]+) ms", run["stdout"]).group(1))
        rate = float(re.search(r"([\d.]+) TFLOP/s", run["stdout"]).group(1))
        assert rate == pytest.approx(2 * math.prod(shape) / (ms * 1e-3) / 1e12, rel=1e-2)  # the snippet's own sum
        snippet.setdefault(shape, []).append(rate)
    assert [row["bf16 M×N×K"] for row in table] == [f"{m}×{n}×{k}" for m, n, k in sorted(snippet)]
    for row, shape in zip(table, sorted(snippet), strict=True):
        assert int(row["rounds"]) == len(snippet[shape])
        _spread_cell(row["snippet (cublasLtMatmul), TFLOP/s"], snippet[shape])
        for library, header in (("cublas", "torch.mm, cuBLAS preferred"), ("cublaslt", "torch.mm, cuBLASLt preferred")):
            rates = [2 * math.prod(shape) / (r["ms"]["median"] * 1e-3) / 1e12 for r in c["torch_mm"]
                     if (r["m"], r["n"], r["k"]) == shape and r["library"] == library]  # fmt: skip
            _spread_cell(row[header], rates)


# --- BLAS levels and blocking: counted here from each operation's definition -----------------------------------
#: Per routine: (FLOPs, elements read or written) at size n, from each operation's definition.
BLAS_COUNTS = {
    "axpy": (lambda n: 2 * n, lambda n: 3 * n),  # y ← αx + y: read x and y, write y
    "dot": (lambda n: 2 * n, lambda n: 2 * n + 1),  # xᵀy: read x and y, write one scalar
    "gemv": (lambda n: 2 * n * n, lambda n: n * n + 3 * n),  # y ← αAx + βy: read A, x, y, write y
    "gemm": (lambda n: 2 * n**3, lambda n: 4 * n * n),  # C ← αAB + βC: read A, B, C, write C
    "trsm": (lambda n: n**3, lambda n: n * (n + 1) // 2 + 2 * n * n),  # X ← αT⁻¹X: read T's triangle, read and write X
}
ELEMENT_BYTES = {"fp32": 4, "fp64": 8, "fp16": 2, "bf16": 2}


def _routine(name: str, dtype: str) -> str:
    """BLAS's name for a routine of a type it has (``sgemm``), else the operation and the type."""
    prefix = {"fp32": "s", "fp64": "d"}.get(dtype)
    return f"`{prefix}{name}`" if prefix else f"`{name} ({dtype})`"


def check_blas_examples(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    n, dtype = kwargs["args"][0], kwargs["args"][1] if len(kwargs["args"]) > 1 else "fp32"
    size = ELEMENT_BYTES[dtype]
    assert [row["routine"] for row in table] == [_routine(r, dtype) for r in BLAS_COUNTS]
    levels = {"axpy": 1, "dot": 1, "gemv": 2, "gemm": 3, "trsm": 3}
    for row, (routine, (flops, elements)) in zip(table, BLAS_COUNTS.items(), strict=True):
        assert int(row["level"]) == levels[routine]
        assert int(row["FLOPs"].replace(",", "")) == flops(n), row
        assert int(row["bytes"].replace(",", "")) == elements(n) * size, row
        assert _rounds(row["FLOP/element"], flops(n) / elements(n), 2), row
        assert _rounds(row["FLOP/byte"], flops(n) / (elements(n) * size), 2), row
        growth = (flops(2 * n) / elements(2 * n)) / (flops(n) / elements(n))
        assert _rounds(row["× when n doubles"], growth, 2), row


def check_blas_roofline(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    sizes, dtype = kwargs["args"][0], kwargs["args"][1]
    sweep = _record("performance/h100-sweep")
    peak = max(r["tflops"] for r in sweep["gemm"] if r["dtype"] == dtype and r["tflops"] is not None) * 1e12
    bandwidth = max(r["gbps"] for r in sweep["copy"] if r["bytes"] >= 2**28) * 1e9
    expected = [(n, routine) for n in sizes for routine in BLAS_COUNTS]
    assert [(int(row["n"].replace(",", "")), row["routine"]) for row in table] == [
        (n, _routine(routine, dtype)) for n, routine in expected
    ]
    for row, (n, routine) in zip(table, expected, strict=True):
        flops, nbytes = BLAS_COUNTS[routine][0](n), BLAS_COUNTS[routine][1](n) * ELEMENT_BYTES[dtype]
        compute, memory = flops / peak, nbytes / bandwidth
        floor = max(compute, memory)
        assert _rounds(row["FLOP/byte"], flops / nbytes, 2), row
        assert _sig(row["floor (µs)"], floor * 1e6, 3), (row, floor)
        assert _rounds(row["at most TFLOP/s"], flops / floor / 1e12, 2), row
        assert row["limited by"] == ("compute" if compute > memory else "memory"), row
    assert f"ridge point {peak / bandwidth:.0f} FLOP/byte" in markdown


def check_blocking_traffic(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    n, sizes = kwargs["args"]
    assert [int(row["block size b"]) for row in table] == list(sizes)
    for row, b in zip(table, sizes, strict=True):
        blocks = n // b
        moves = 0  # the explicit scheme: per C tile, load it, load a row of A tiles and a column of B tiles, store it
        for _ in range(blocks * blocks):
            moves += b * b + blocks * 2 * b * b + b * b
        assert int(row["blocks per side N"]) == blocks
        assert int(row["moves counted"].replace(",", "")) == moves == int(row["(2N+2)·n²"].replace(",", ""))
        assert moves == (2 * blocks + 2) * n * n
        assert int(row["fast memory 3b²"].replace(",", "")) == 3 * b * b
        assert _rounds(row["q = 2n³ / moves"], 2 * n**3 / moves, 2), row


def check_blocking_levels(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    m, n, k, tiles = kwargs["args"]
    outer_bk = k
    assert len(table) == len(tiles)
    for level, (row, (bm, bn, bk)) in enumerate(zip(table, tiles, strict=True), start=1):
        # A is read once per column of C tiles, B once per row of them; the C tile stays while the enclosing
        # level's k step runs, so C is read and written once per step of the level above (once in all at level 1)
        a_loads, b_loads = m * k * (n // bn), k * n * (m // bm)
        c_moves = m * n * (k // outer_bk)
        assert row["level"] == str(level)
        assert row["tile bm×bn×bk"] == f"{bm}×{bn}×{bk}"
        assert row["A loads (counted / formula)"] == f"{a_loads:,} / {a_loads:,}", row
        assert row["B loads"] == f"{b_loads:,} / {b_loads:,}", row
        assert row["C loads + stores"] == f"{c_moves:,} + {c_moves:,} / {c_moves:,} + {c_moves:,}", row
        assert int(row["held"].replace(",", "")) == bm * bk + bk * bn + bm * bn
        assert _rounds(row["q"], 2 * m * n * k / (a_loads + b_loads + 2 * c_moves), 1), row
        outer_bk = bk


def _lru_moves(n: int, b: int, capacity: int) -> int:
    """Loads plus stores of the blocked n×n×n product (b×b×b tiles, ``p, i, j`` inside a tile) through a fully
    associative LRU cache of ``capacity`` elements, write-back."""
    from collections import OrderedDict

    cache_: OrderedDict[tuple[str, int, int], bool] = OrderedDict()
    moves = 0

    def touch(key: tuple[str, int, int], write: bool) -> None:
        nonlocal moves
        if key in cache_:
            cache_.move_to_end(key)
            cache_[key] = cache_[key] or write
            return
        moves += 1
        cache_[key] = write
        if len(cache_) > capacity:
            _, dirty = cache_.popitem(last=False)
            moves += dirty

    for i0 in range(0, n, b):
        for j0 in range(0, n, b):
            for p0 in range(0, n, b):
                for p in range(p0, p0 + b):
                    for i in range(i0, i0 + b):
                        for j in range(j0, j0 + b):
                            touch(("A", i, p), False)
                            touch(("B", p, j), False)
                            touch(("C", i, j), True)
    return moves + sum(cache_.values())


def check_blocking_capacity(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    (sizes,) = kwargs["args"]
    assert [int(row["block size b"]) for row in table] == list(sizes)
    for row in table:
        b = int(row["block size b"])
        need = int(row["LRU cache needs"].replace(",", ""))
        assert int(row["three tiles, 3b²"].replace(",", "")) == 3 * b * b
        assert _rounds(row["LRU need / one tile b²"], need / (b * b), 2)
        if b <= 8:  # replayed here on a 2b × 2b × 2b product: the smallest cache that moves what the formula says
            n, blocks = 2 * b, 2
            target = (2 * blocks + 2) * n * n
            assert _lru_moves(n, b, need) <= target < _lru_moves(n, b, need - 1), (b, need)


# --- the emulator's error table, recomputed with ml_dtypes and torch ---------------------------------------------
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
    assert "A is 256×1024 and B is 1024×256" in markdown


# --- FP8 on the H100 (record gemm/fp8-h100, read raw) ----------------------------------------------------------
def _documented_fp8() -> set[tuple[str, str, str]]:
    """(A, B, D) combinations of cuBLASLt's per-tensor FP8 table, from cublaslt.toml read with tomllib."""
    (group,) = [g for g in _raw("cublaslt")["group"] if g["id"] == "fp8"]
    return {(a, b, row["d"]) for row in group["rows"] for a, b in row["ab"]}


def _first_line(text: str | None) -> str:
    line = (text or "").strip().splitlines()[0] if text else ""
    return line if len(line) <= 140 else line[:139] + "…"


def _code_text(cell: str) -> str:
    return cell.strip("`").strip()


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
    records = _fp8()["layout"]
    assert [(row["A"], row["B"]) for row in table] == [(r["a_layout"], r["b_layout"]) for r in records]
    for row, r in zip(table, records, strict=True):
        assert row["accepted"] == ("yes" if r["accepted"] else "refused")
        assert _code_text(row["error"]) == _first_line(r["error"]), row


def _combination(r: dict[str, Any]) -> str:
    return f"{r['a']} × {r['b']} → {r['out']}" + ("" if r["bias"] == "none" else f" + {r['bias']} bias")


def check_fp8_agreement(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = [r for r in _fp8()["agreement"] if r["out"] not in ("e4m3", "e5m2")]
    assert [(row["combination"], row["fast accumulation"]) for row in table] == [
        (_combination(r), "on" if r["fast_accum"] else "off") for r in records
    ]
    for row, r in zip(table, records, strict=True):
        assert _sig(row["GPU vs FP64"], r["hw_vs_fp64"], 3)
        if not r["emulated"]:
            assert row["GPU vs emulator"] == "not in cuBLASLt's table"
            continue
        assert _sig(row["GPU vs emulator"], r["hw_vs_emulator"], 2)
        assert _sig(row["FP32 bound"], r["bound"], 2)
        assert _rounds(row["identical elements"], 100 * r["identical_fraction"], 1), row
        assert _sig(row["emulator vs FP64"], r["emulator_vs_fp64"], 3)
        # the GPU and the emulator differ by less than two FP32 accumulations may
        assert r["hw_vs_emulator"] <= r["bound"], row
    first = records[0]
    assert f"A is {first['m']}×{first['k']} and B {first['k']}×{first['n']}" in markdown


def check_fp8_output(markdown: str, kwargs: dict[str, Any]) -> None:
    """The GPU column against the record; the verdict against the printed errors: the nearer emulation wins."""
    (table,) = markdown_tables(markdown)
    records = [r for r in _fp8()["agreement"]
               if r["out"] in ("e4m3", "e5m2") and not r["fast_accum"] and r["bias"] == "none"]  # fmt: skip
    assert [row["combination"] for row in table] == [_combination(r) for r in records]
    for row, r in zip(table, records, strict=True):
        gpu = r["hw_over_requested_vs_fp64"]
        assert _rounds(row["GPU"], gpu, 4), (row, gpu)
        applied, ignored = float(row["emulator, scale_result applied"]), float(row["emulator, scale_result ignored"])
        assert row["scale_result was"] == ("ignored" if abs(gpu - ignored) < abs(gpu - applied) else "applied"), row


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
    data = _fp8()
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
            next(rows)
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
        assert int(row["wrap (two's complement)"]) == (exact + 2**31) % 2**32 - 2**31, row
        assert int(row["saturate"]) == min(exact, 2**31 - 1), row


def _same_number(cell: str, value: float) -> bool:
    got = float(cell.replace("NaN", "nan"))
    return (math.isnan(got) and math.isnan(value)) or got == value


def check_fp8_scale_result(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = _fp8()["scale_result"]
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


# --- the Triton GEMM's shape sweep (docs/gemm/triton.md), read back against the JSON files read with json ---

_SHORT = {"bfloat16": "bf16", "float16": "fp16", "float8_e4m3fn": "FP8 E4M3"}


@cache
def _sweep_raw(name: str = "triton-gemm-sweep-h100-issue29") -> dict[str, Any]:
    path = ROOT / "src" / "gpukb" / "data" / "results" / "gemm" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def _tuning_raw(record_id: str = "gemm/triton-gemm-tuning-h100") -> dict[str, Any]:
    path = ROOT / "src" / "gpukb" / "data" / "results" / f"{record_id}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _kwarg(kwargs: dict[str, Any], name: str, position: int, default: Any) -> Any:
    """A render call's argument, given by name or by position."""
    if name in kwargs:
        return kwargs[name]
    args = kwargs.get("args") or ()
    return args[position] if len(args) > position else default


def _label(config: dict[str, Any]) -> str:
    """A configuration's label, rebuilt from its JSON fields (not through gpukb's Config)."""
    flags = (("ws", config["warp_specialize"]), ("sub", config["epilogue_subtile"]), ("pad", config.get("pad_rows")))
    extras = [f for f, on in flags if on]
    if config["kernel"] == "tma" and not config["flatten"]:
        extras.append("noflat")
    if config["fp8_imprecise_acc"] is not None:
        extras.append(f"acc{config['fp8_imprecise_acc']}")
    if config["kernel"] == "splitk":
        extras.append("split auto" if config.get("split_k") is None else f"split {config['split_k']}")
    shape = f"{config['block_m']}x{config['block_n']}x{config['block_k']}"
    parts = [config["kernel"], shape, f"g{config['group_m']}", f"s{config['num_stages']}", f"w{config['num_warps']}"]
    return " ".join(parts + extras)


def check_triton_sweep_table(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    dtype = _kwarg(kwargs, "dtype", 0, "bfloat16")
    sweep = _kwarg(kwargs, "sweep", 1, "first")
    raw = [r for r in _sweep_raw()["rows"] if r["dtype"] == dtype and r.get("sweep", "first") == sweep]
    assert len(table) == len(raw) > 0
    peer = "_scaled_mm" if dtype == "float8_e4m3fn" else "cuBLAS"
    for row, r in zip(table, raw, strict=True):
        assert row["M×N×K"] == f"{r['m']}×{r['n']}×{r['k']}", row
        assert row["layout"] == r["layout"], row
        assert row["shape"] == (f"{r['label']} (tuned)" if r["tuned_on"] else r["label"])
        assert row["group"] == r["group"]
        if r["ratio"] is None:
            assert row[f"Triton / {peer}"] == "–"
            continue
        k_ms = statistics.median(r["kernel_ms"])  # the middle round (the mean of two, in older records)
        p_ms = statistics.median(r["peer_ms"])
        assert float(row[f"Triton / {peer}"]) == pytest.approx(p_ms / k_ms, abs=6e-4), row
        flops = 2 * r["m"] * r["n"] * r["k"]
        assert float(row["Triton TFLOP/s"]) == pytest.approx(flops / (k_ms * 1e-3) / 1e12, abs=0.51), row
        assert float(row[f"{peer} TFLOP/s"]) == pytest.approx(flops / (p_ms * 1e-3) / 1e12, abs=0.51), row
        ours, theirs = row[f"error, Triton / {peer}"].split(" / ")
        assert float(ours) == pytest.approx(r["rel_error"], rel=5e-3)
        assert float(theirs) == pytest.approx(r["peer_rel_error"], rel=5e-3)
        label = _label(r["config"])
        if r["config"]["kernel"] == "splitk" and r["config"].get("split_k") is None:
            label = label.replace("split auto", f"split {r['split_k']}")
        assert row["configuration (split, copies)"].startswith(f"`{label}`"), row
        assert ("copied: " + ", ".join(r["staged"]) in row["configuration (split, copies)"]) == bool(r["staged"])


def check_triton_sweep_goal(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    rows = _sweep_raw()["rows"]
    names = {"first sweep": "first", "random sweep": "random", "tiny": "tiny"}
    expected = [("first sweep", "bf16"), ("first sweep", "fp16"), ("random sweep", "bf16"), ("random sweep", "fp16"),
                ("first sweep", "FP8 E4M3"), ("tiny", "bf16"), ("tiny", "fp16")]  # fmt: skip
    assert [(row["shapes"], row["type"]) for row in table] == expected
    for row in table:
        dtype = {v: k for k, v in _SHORT.items()}[row["type"]]
        sweep = names[row["shapes"]]
        typed = [r for r in rows if r["dtype"] == dtype and r["sweep"] == sweep]
        counted = [r for r in typed if r["ratio"] is not None]
        if dtype == "float8_e4m3fn":
            counted = [r for r in counted if min(r["m"], r["n"], r["k"]) >= 1024]
        ratios = [r["ratio"] for r in counted]
        assert int(row["count"]) == len(counted)
        geomean = statistics.geometric_mean(ratios)
        assert float(row["geometric mean of Triton / peer"]) == pytest.approx(geomean, abs=6e-4)
        assert float(row["lowest (M×N×K)"].split(" ")[0]) == pytest.approx(min(ratios), abs=6e-4)
        large = [r["ratio"] for r in counted if r["m"] * r["n"] * r["k"] >= 2**30]
        if dtype == "float8_e4m3fn":
            met = min(ratios) >= 0.95
        elif sweep == "tiny":
            met = min(ratios) >= 0.5  # within twice cuBLAS's time
        else:
            assert float(row["lowest with M·N·K ≥ 2^30"].split(" ")[0]) == pytest.approx(min(large), abs=6e-4)
            met = geomean >= 0.95 and min(large) >= 0.80
        assert row["speed"] == ("met" if met else "**not met**"), row
        errors = [
            r["rel_error"] / r["peer_rel_error"] for r in typed if r["rel_error"] is not None and r["peer_rel_error"]
        ]
        assert float(row["largest error / peer's error"]) == pytest.approx(max(errors), abs=6e-3)
        assert row["error goal ≤ 2×"] == ("met" if max(errors) <= 2 else "**not met**")


def check_triton_host_path(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    host = _sweep_raw()["tiny_host" if _kwarg(kwargs, "tiny", 0, False) else "host"]
    m, n, k = host["shape"]
    first = f"call ({host['calls']} back to back, {_SHORT[host['dtype']]} {m}×{n}×{k})"
    assert list(table[0]) == [first, "wall µs per call", "µs per call until the last returned", "device µs per call",
                              "wall − device, µs"]  # fmt: skip
    assert len(table) == len(host["rows"])
    for row, h in zip(table, host["rows"], strict=True):
        assert row[first] == f"`{h['what']}`"
        assert float(row["wall µs per call"]) == pytest.approx(h["wall_us"], abs=0.051)
        assert float(row["µs per call until the last returned"]) == pytest.approx(h["enqueue_us"], abs=0.051)
        assert float(row["device µs per call"]) == pytest.approx(h["kernel_us"], abs=0.051)
        assert float(row["wall − device, µs"]) == pytest.approx(h["wall_us"] - h["kernel_us"], abs=0.051)


def _class_holds(label: str, c: dict[str, Any]) -> None:
    """A class label (``bfloat16 NN, M 65–256, N ≤ 1024, K ≤ 1024``, maybe ``, rows not 128-byte aligned``) names
    the class's type, layout and alignment, and ranges of M, N and K that hold its representative shape."""
    tiny = re.fullmatch(r"(\w+) (NN|NT|TN|TT), tiny \(M·N·K < 2\^20\)", label)
    if tiny:
        assert tiny.groups() == (c["dtype"], c["layout"]), label
        assert c["shape"][0] * c["shape"][1] * c["shape"][2] < 2**20, label
        return
    match = re.fullmatch(r"(\w+) (NN|NT|TN|TT), M ([^,]+), N ([^,]+), K ([^,]+)(, rows not 128-byte aligned)?", label)
    assert match, label
    dtype, layout, *ranges, unaligned = match.groups()
    assert (dtype, layout, unaligned is None) == (c["dtype"], c["layout"], c["aligned"]), label
    for text, size in zip(ranges, c["shape"], strict=True):
        if text.startswith("≤ "):
            assert size <= int(text[2:]), label
        elif text.startswith("> "):
            assert size > int(text[2:]), label
        else:
            low, high = map(int, text.split("–"))
            assert low <= size <= high, label


def check_triton_tuning_table(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    classes = _tuning_raw(_kwarg(kwargs, "record_id", 0, "gemm/triton-gemm-tuning-h100"))["classes"]
    assert len(table) == len(classes)
    for row, c in zip(table, classes, strict=True):
        assert row["tuned on"] == "×".join(str(x) for x in c["shape"])
        _class_holds(row["class"], c)
        timed = sorted((t for t in c["trials"] if t["ms"] is not None), key=lambda t: t["ms"])
        assert row["fastest"].startswith(f"`{_label(c['config'])}`")
        assert timed[0]["config"] == c["config"]
        assert float(row["ms"]) == pytest.approx(timed[0]["ms"], abs=6e-5)
        assert int(row["candidates"]) == len(c["trials"])
        if len(timed) > 1:
            assert row["runner-up, ms"] == f"`{_label(timed[1]['config'])}` {timed[1]['ms']:.4f}"


def check_triton_layout_checks(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    checks = _sweep_raw()["checks"]
    assert [row["product"] for row in table] == [c["what"] for c in checks]
    for row, c in zip(table, checks, strict=True):
        if c["error"] is not None:
            assert row["note"] == c["error"]
            continue
        assert row["every element written"] == ("yes" if c["all_written"] else "**no**")
        assert float(row["error"]) == pytest.approx(c["rel_error"], rel=5e-3)
        assert float(row["peer error"]) == pytest.approx(c["peer_rel_error"], rel=5e-3)
        assert row["copied"] == (", ".join(c["staged"]) or "none")


def check_triton_sweep_kernels(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    profiled = [r for r in _sweep_raw()["rows"] if r.get("kernels") is not None or r.get("peer_kernels") is not None]
    assert len(table) == len(profiled) > 0
    for row, r in zip(table, profiled, strict=True):
        assert (row["shape"], row["M×N×K"]) == (r["label"], f"{r['m']}×{r['n']}×{r['k']}")
        if r["ratio"] is None:
            assert row["Triton / cuBLAS"] == "–"
        else:
            ratio = statistics.median(r["peer_ms"]) / statistics.median(r["kernel_ms"])
            assert float(row["Triton / cuBLAS"]) == pytest.approx(ratio, abs=6e-4), row
        assert row["Triton's kernels"] == (", ".join(f"`{k}`" for k in r["kernels"] or []) or "–")
        peer = [k.split("<")[0] for k in r["peer_kernels"] or [] if not k.startswith("Memset")]
        assert row["cuBLAS's kernels"] == (", ".join(f"`{k}`" for k in peer) or "–")


def check_triton_trials(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    layout, *shape = (_kwarg(kwargs, name, i, None) for i, name in enumerate(("layout", "m", "n", "k")))
    (c,) = [c for c in _tuning_raw("gemm/triton-gemm-tuning-h100-issue29")["classes"]
            if c["layout"] == layout and c["shape"] == shape]  # fmt: skip
    timed = sorted((t for t in c["trials"] if t["ms"] is not None), key=lambda t: t["ms"])
    assert len(table) == len(timed) > 0
    m, n, _ = shape
    for row, t in zip(table, timed, strict=True):
        config = t["config"]
        assert row["configuration"].startswith(f"`{_label(config)}`"), row
        reads = (
            "pointers" if config["kernel"] == "blocked" else ("padded copy" if config.get("pad_rows") else "in place")
        )
        assert row["reads A and B"] == reads
        units = -(-m // config["block_m"]) * -(-n // config["block_n"]) * (t["split_k"] or 1)
        assert int(row["tiles × slices"]) == units
        assert int(row["rounds on 132 SMs"]) == -(-units // 132)
        assert float(row["µs"]) == pytest.approx(t["ms"] * 1e3, abs=0.051)
        assert float(row["cuBLAS / Triton"]) == pytest.approx(c["cublas_ms"] / t["ms"], abs=6e-4)


def check_triton_sweep_changes(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    before = {
        (r["dtype"], r["layout"], r["m"], r["n"], r["k"]): r for r in _sweep_raw("triton-gemm-sweep-h100")["rows"]
    }
    changed = []
    for r in _sweep_raw()["rows"]:
        old = before.get((r["dtype"], r["layout"], r["m"], r["n"], r["k"]))
        if r["sweep"] != "first" or old is None or r["ratio"] is None or old["ratio"] is None:
            continue
        if not _same_config(old["config"], r["config"]) or abs(r["ratio"] - old["ratio"]) > 0.05:
            changed.append((old, r))
    assert len(table) == len(changed)
    for row, (old, new) in zip(table, changed, strict=True):
        assert (row["shape"], row["layout"], row["type"]) == (new["label"], new["layout"], _SHORT[new["dtype"]])
        assert float(row["before"]) == pytest.approx(old["ratio"], abs=6e-4)
        assert float(row["after"]) == pytest.approx(new["ratio"], abs=6e-4)
        for side, r in (("before", old), ("after", new)):
            label = _label(r["config"])
            if r["config"]["kernel"] == "splitk" and r["config"].get("split_k") is None:
                label = label.replace("split auto", f"split {r['split_k']}")
            assert row[f"{side}: configuration"].startswith(f"`{label}`"), row


@cache
def _triton_raw() -> dict[str, Any]:
    """The Triton GEMM tuning run (sweep of candidates, comparison, FP8 phase), read with json."""
    path = ROOT / "src" / "gpukb" / "data" / "results" / "gemm" / "triton-gemm-h100.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _paired(cell_ratio: str, cell_kernel: str, cell_peer: str, r: dict[str, Any]) -> None:
    """A ratio and two rates printed from one paired case: the ratio of the median times (peer / kernel) and each
    side's 2mnk over its median time, in TFLOP/s."""
    k_ms, p_ms = r["kernel_ms"]["median"], r["cublas_ms"]["median"]
    assert float(cell_ratio) == pytest.approx(p_ms / k_ms, abs=6e-4), (cell_ratio, r)
    flops = 2 * r["m"] * r["n"] * r["k"]
    assert float(cell_kernel) == pytest.approx(flops / (k_ms * 1e-3) / 1e12, abs=0.51), (cell_kernel, r)
    assert float(cell_peer) == pytest.approx(flops / (p_ms * 1e-3) / 1e12, abs=0.51), (cell_peer, r)


def _same_config(x: dict[str, Any], y: dict[str, Any]) -> bool:
    """Two configurations as JSON, equal once the fields added later (``pad_rows``) take their defaults."""
    return {**x, "pad_rows": x.get("pad_rows", False)} == {**y, "pad_rows": y.get("pad_rows", False)}


def _code_label(config: Any) -> str:
    """The label of a configuration the code holds (a dataclass), rebuilt from its fields."""
    return _label(dataclasses.asdict(config))


def _sweep_case(config: dict[str, Any], size: int) -> dict[str, Any]:
    (entry,) = [e for e in _triton_raw()["sweep"]["configs"] if _same_config(e["config"], config)]
    (case,) = [r for r in entry["results"] if r["m"] == size]
    return case


def _bf16_ceiling() -> float:
    """The H100's bf16 ceiling every page quotes (the median of the interleaved ceilings run's rounds)."""
    return h100_ceilings_json()["bf16"]


def check_triton_goal(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _triton_raw()
    config = raw["chosen"]["large"]["config"]
    ceiling = _bf16_ceiling()
    assert list(table[0])[5] == f"of the measured ceiling ({ceiling:.0f} TFLOP/s)"
    assert list(table[0])[6] == "goal ≥ 0.95"  # the issue's goal: 0.95 of cuBLAS at bf16 4096³ and 8192³
    assert [row["bf16 size"] for row in table] == ["4096³", "8192³"]
    for row, size in zip(table, (4096, 8192), strict=True):
        case = _sweep_case(config, size)
        assert row["configuration"] == f"`{_label(config)}`"
        _paired(row["Triton / cuBLAS"], row["Triton TFLOP/s"], row["cuBLAS TFLOP/s"], case)
        assert row[list(row)[5]] == f"{100 * case['tflops'] / ceiling:.0f}%"
        met = case["cublas_ms"]["median"] / case["kernel_ms"]["median"] >= 0.95
        assert row["goal ≥ 0.95"] == ("met" if met else "**not met**")


def check_triton_sweep(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _triton_raw()
    sizes = raw["sweep"]["sizes"]
    assert list(table[0]) == ["configuration", "error / floor", *[f"{s}³ TFLOP/s (÷ cuBLAS)" for s in sizes], "note"]
    chosen = {name: raw["chosen"][name]["config"] for name in ("large", "small") if raw["chosen"].get(name)}
    assert len(table) == len(raw["sweep"]["configs"])
    for row, entry in zip(table, raw["sweep"]["configs"], strict=True):
        marks = [name for name, config in chosen.items() if config == entry["config"]]
        assert row["configuration"] == f"`{_label(entry['config'])}`" + (f" (chosen: {marks[0]})" if marks else "")
        if entry["error"]:
            assert row["error / floor"] == "–"
            assert row["note"] == entry["error"].split(". ")[0]
            assert all(row[f"{s}³ TFLOP/s (÷ cuBLAS)"] == "–" for s in sizes)
            continue
        check = entry["check"]
        ours, floor = row["error / floor"].split(" / ")
        assert float(ours) == pytest.approx(check["rel_error"], rel=5e-3)
        assert float(floor) == pytest.approx(check["rel_error_of_rounded_reference"], rel=5e-3)
        for size in sizes:
            cell = row[f"{size}³ TFLOP/s (÷ cuBLAS)"]
            case = next((r for r in entry["results"] if r["m"] == size), None)
            if case is None:
                assert cell == "–"
                continue
            match = re.fullmatch(r"(\d+) \((\d\.\d{3})\)", cell)
            assert match, cell
            rate, ratio = match.groups()
            _paired(ratio, rate, f"{case['cublas_tflops']:.0f}", case)


SIDES = ("kernel_ms", "cublas_ms")


def check_triton_compare(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _triton_raw()
    records = raw["compare"]["records"]
    sms = raw["run"]["gpu"]["sm_count"]
    assert len(table) == len(records)
    for row, r in zip(table, records, strict=True):
        assert (row["type"], row["B"], row["size"]) == (r["dtype"], r["layout"], f"{r['m']}³")
        assert r["m"] == r["n"] == r["k"]
        if r["error"] or r["config"] is None:
            assert row["note"] == (r["error"] or "")
            continue
        now = _code_label(configs.current_choice(r["m"], sms))
        measured = _label(r["config"])
        assert row["configuration measured"] == f"`{measured}`" + ("" if now == measured else f" (now: `{now}`)")
        # Three rounds each, eager and graph replays: the times are the middle of the rounds' medians.
        eager, graph = (
            {side: {"median": statistics.median(x[side]["median"] for x in rounds)} for side in SIDES}
            for rounds in (r["rounds"], r["graph_rounds"])
        )
        _paired(row["Triton / cuBLAS"], row["Triton TFLOP/s"], row["cuBLAS TFLOP/s"], {**r, **eager})
        ratio = graph["cublas_ms"]["median"] / graph["kernel_ms"]["median"]
        assert float(row["same, graph replays"]) == pytest.approx(ratio, abs=6e-4), r
        assert row["output identical to cuBLAS's"] == ("yes" if r["identical_to_cublas"] else "no")
        assert r["identical_to_cublas"] == (r["diff_vs_cublas"] == 0)


def check_triton_fp8(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _triton_raw()
    fp8 = raw["fp8"]
    chosen = raw["chosen"]["fp8"]["config"] if raw["chosen"].get("fp8") else None
    default = dataclasses.asdict(configs.DEFAULT_CONFIGS["float8_e4m3fn"])
    expected = []
    for entry in fp8["configs"]:
        named = (("chosen by this run", chosen), ("the code's default", default))
        marks = [m for m, c in named if c is not None and _same_config(entry["config"], c)]
        label = f"`{_label(entry['config'])}`" + (f" ({', '.join(marks)})" if marks else "")
        acc = entry["config"]["fp8_imprecise_acc"]
        mode = "fast" if acc is None else f"promoted every {acc}"
        for r in [None] if entry["error"] else entry["results"]:
            expected.append((label, mode, r))
    assert len(table) == len(expected)
    for row, (label, mode, r) in zip(table, expected, strict=True):
        assert (row["configuration"], row["accumulation"]) == (label, mode)
        if r is None:
            assert row["size"] == "–"
            continue
        assert row["size"] == f"{r['m']}³"
        # The peer ran in the kernel's own accumulation mode: fast accumulation against fast, promoted against not.
        assert r["peer_use_fast_accum"] == (mode == "fast")
        _paired(row["Triton / _scaled_mm"], row["Triton TFLOP/s"], row["_scaled_mm TFLOP/s"], r)  # peer: cublas_ms
        assert float(row["Triton error"]) == pytest.approx(r["rel_error"], rel=5e-3)
        (peer,) = [p for p in fp8["peer"] if p["m"] == r["m"] and p["use_fast_accum"] == r["peer_use_fast_accum"]]
        match = re.fullmatch(r"(\S+) \(floor (\S+)\)", row["_scaled_mm error, same mode"])
        assert match, row
        error, floor = match.groups()
        assert float(error) == pytest.approx(peer["rel_error"], rel=5e-3)
        assert float(floor) == pytest.approx(peer["rel_error_of_rounded_reference"], rel=5e-3)


def check_triton_compiled(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    compiled = _triton_raw()["compare"]["compiled"]
    assert len(table) == len(compiled)
    for row, c in zip(table, compiled, strict=True):
        assert (row["type"], row["size"]) == (c["dtype"], f"{c['m']}³")
        if c["error"] or c["config"] is None or c["ptx"] is None or c["shared_bytes"] is None:
            assert row["configuration"] == "–"
            continue
        assert row["configuration"] == f"`{_label(c['config'])}`"
        assert (int(row["registers / thread"]), int(row["spills"])) == (c["registers"], c["spills"])
        assert int(row["shared KiB"]) == round(c["shared_bytes"] / 1024)
        assert int(row["`wgmma.mma_async` in PTX"]) == c["ptx"]["wgmma.mma_async"]
        assert int(row["`cp.async.bulk.tensor` in PTX"]) == c["ptx"]["cp.async.bulk.tensor"]
        assert row["warp-specialized IR"] == ("yes" if c["warp_specialized"] else "no")


def check_triton_overhead(markdown: str, kwargs: dict[str, Any]) -> None:
    compare = _triton_raw()["compare"]
    h = compare["host_overhead"]
    if h is None:
        assert markdown == f"The host time was not measured: {compare['host_overhead_error']}."
        return
    (table,) = markdown_tables(markdown)
    keys = ["matmul", "checks_and_config", "descriptors", "triton_launch_tma", "triton_launch_blocked", "torch_matmul"]
    assert [row["host work per call"] for row in table] == [
        "`matmul` (whole call)",
        "checks and picking a configuration",
        "building three tensor descriptors",
        "Triton launch, TMA kernel, descriptors prebuilt",
        "Triton launch, blocked kernel",
        "`torch.matmul` (cuBLAS)",
    ]
    assert [float(row["µs"]) for row in table] == pytest.approx([h[k] for k in keys], abs=0.051)


def _clock_words(c: dict[str, Any]) -> str:
    return (
        f"SM {c['sm_mhz']:.0f}/{c['max_sm_mhz']:.0f} MHz, memory {c['mem_mhz']:.0f} MHz, "
        f"{c['power_w']:.0f} W of {c['power_limit_w']:.0f} W, {c['temperature_c']:.0f} °C, {c['pstate']}"
    )


def check_triton_run(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _triton_raw()
    run, gpu, v = raw["run"], raw["run"]["gpu"], raw["run"]["versions"]
    cells = [tuple(row.values()) for row in table]
    assert cells == list(
        {
            "GPU": f"{gpu['name']} ({gpu['sm_count']} SMs, compute capability {gpu['compute_capability']})",
            "driver": gpu["driver"],
            "torch / CUDA": f"{v['torch']} / {v['torch_cuda']}",
            "triton": v["triton"],
            "python": v["python"],
            "date (UTC)": run["started"].replace("Z", "+00:00"),
            "command": f"`{run['command']}`",
            "timing": raw["timing"],
            "inputs": raw["inputs"],
            "clocks, start of sweep": _clock_words(run["clocks"]["sweep_start"]),
            "clocks, end of comparison": _clock_words(run["clocks"]["compare_end"]),
        }.items()
    )


def check_triton_shared_memory(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _triton_raw()
    limits = {int(m) for e in raw["sweep"]["configs"] for m in re.findall(r"Hardware limit: (\d+)", e["error"] or "")}
    (limit,) = limits
    assert list(table[0])[3] == f"fits ({limit:,} bytes)"
    reported = {}
    for e in raw["sweep"]["configs"]:
        for m in re.findall(r"Required: (\d+)", e["error"] or ""):
            reported[_label(e["config"])] = int(m)
    for c in raw["compare"]["compiled"]:
        if c["config"] is not None and c["shared_bytes"] is not None and c["dtype"] != "float8_e4m3fn":
            reported[_label(c["config"])] = c["shared_bytes"]
    # The rows are the code's TMA candidates, which must be the ones the run swept.
    tma = [c for c in raw["candidates"] if c["kernel"] == "tma"]
    assert [_code_label(c) for c in configs.CANDIDATES if c.kernel == "tma"] == [_label(c) for c in tma]
    assert len(table) == len(tma)
    for row, c in zip(table, tma, strict=True):
        label = _label(c)
        assert row["configuration"] == f"`{label}`"
        # num_stages buffers of an A tile and a B tile, and the output tile (half of it with a subtiled epilogue)
        count = 2 * (c["num_stages"] * (c["block_m"] + c["block_n"]) * c["block_k"])
        count += 2 * c["block_m"] * (c["block_n"] // 2 if c["epilogue_subtile"] else c["block_n"])
        assert row["bytes by count"] == f"{count:,}"
        assert row["bytes the compiler reported"] == (f"{reported[label]:,}" if label in reported else "–")
        assert row[list(row)[3]] == ("yes" if count <= limit else "no")
        if label in reported:  # the count is the compiler's figure to within its barriers (under 64 bytes)
            assert 0 <= reported[label] - count < 64, label


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "type_architectures": check_architectures,
    "type_comparison": check_comparison,
    "type_compute": check_compute,
    "type_names": check_type_names,
    "type_answers": check_answers,
    "type_library": check_type_library,
    "timing_table": check_timing_table,
    "timing_summary": check_timing_summary,
    "first_call_table": check_first_call,
    "cpu_lab_table": check_cpu_lab,
    "batched_table": check_batched,
    "cublaslt_speed": check_cublaslt_speed,
    "blas_examples": check_blas_examples,
    "blas_roofline": check_blas_roofline,
    "blocking_traffic": check_blocking_traffic,
    "blocking_levels": check_blocking_levels,
    "blocking_capacity": check_blocking_capacity,
    "emulator_errors": check_emulator_errors,
    "fp8_acceptance": check_fp8_acceptance,
    "fp8_layout": check_fp8_layout,
    "fp8_agreement": check_fp8_agreement,
    "fp8_output": check_fp8_output,
    "fp8_accumulation": check_fp8_accumulation,
    "fp8_overflow": check_fp8_overflow,
    "fp8_scale_result": check_fp8_scale_result,
    "fp8_tf32": check_fp8_tf32,
    "triton_sweep_table": check_triton_sweep_table,
    "triton_sweep_goal": check_triton_sweep_goal,
    "triton_host_path": check_triton_host_path,
    "triton_tuning_table": check_triton_tuning_table,
    "triton_layout_checks": check_triton_layout_checks,
    "triton_sweep_kernels": check_triton_sweep_kernels,
    "triton_trials": check_triton_trials,
    "triton_sweep_changes": check_triton_sweep_changes,
    "triton_goal": check_triton_goal,
    "triton_sweep": check_triton_sweep,
    "triton_compare": check_triton_compare,
    "triton_fp8": check_triton_fp8,
    "triton_compiled": check_triton_compiled,
    "triton_overhead": check_triton_overhead,
    "triton_run": check_triton_run,
    "triton_shared_memory": check_triton_shared_memory,
}


def test_mislabelled_fnuz_architectures_fail_the_check() -> None:
    markdown = pages.type_architectures()
    swapped = markdown.replace("e4m3fnuz and e5m2fnuz", "@").replace("e4m3 and e5m2", "e4m3fnuz and e5m2fnuz")
    with pytest.raises(AssertionError):
        check_architectures(swapped.replace("@", "e4m3 and e5m2"), {})


def test_swapped_c_and_d_columns_fail_the_type_library_check() -> None:
    markdown = pages.type_library("cublaslt")
    assert "| A × B | C | D | bias |" in markdown
    swapped = markdown.replace("| A × B | C | D | bias |", "| A × B | D | C | bias |")
    with pytest.raises(AssertionError):
        check_type_library(swapped, {"args": ("cublaslt",)})


def test_a_rate_that_does_not_follow_from_its_time_fails_the_check() -> None:
    markdown = pages.timing_table(dtype="fp32", n=6000)
    row = next(line for line in markdown.splitlines() if "CUDA events" in line)
    cells = row.split(" | ")
    cells[2] = f"{int(cells[2].replace(',', '')) * 2:,}"
    with pytest.raises(AssertionError):
        check_timing_table(markdown.replace(row, " | ".join(cells)), {"dtype": "fp32", "n": 6000})


def test_the_notes_errata_are_the_gemm_claims_of_the_notes() -> None:
    """type_notes_errata (collapsed notes, not a table) shows exactly the errata of errata.toml, read with tomllib,
    that are GEMM claims met in the widely shared explanation of hipBLASLt's type table, each linked to its entry."""
    from gpukb.gemm.type_tables import NOTES_SECTION

    raw = tomllib.loads((ROOT / "src" / "gpukb" / "data" / "errata.toml").read_text(encoding="utf-8"))["erratum"]
    wanted = [e for e in raw if e["topic"] == "gemm" and e["claimed_in"].startswith(NOTES_SECTION)]
    assert wanted
    markdown = pages.type_notes_errata()
    assert re.findall(r"errata/#([\w-]+)\)", markdown) == [e["id"] for e in wanted]
    for e in wanted:
        assert f"A claim you may meet: {e['claim']}" in markdown, e["id"]


def _trials(layout: str, shape: list[int]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A class of the issue-29 tuning record (read with json) and its timed trials, fastest first."""
    (c,) = [c for c in _tuning_raw("gemm/triton-gemm-tuning-h100-issue29")["classes"]
            if c["layout"] == layout and c["shape"] == shape]  # fmt: skip
    return c, sorted((t for t in c["trials"] if t["ms"] is not None), key=lambda t: t["ms"])


def test_the_triton_page_prose_matches_the_issue_29_records() -> None:
    """What docs/gemm/triton.md says in words about the issue-29 runs, checked against the records."""
    # Tiny products: the blocked kernel won on 3×5×7.
    assert _trials("NN", [3, 5, 7])[1][0]["config"]["kernel"] == "blocked"
    # Under-filled waves: 128×128 tiles won in both layouts; every split-K candidate lost.
    for layout in ("NN", "NT"):
        _, timed = _trials(layout, [2304, 768, 3072])
        assert (timed[0]["config"]["block_m"], timed[0]["config"]["block_n"]) == (128, 128)
        assert timed[0]["config"]["kernel"] == "tma"
    # Rows off 128-byte lines: in place fastest at 2000³, the pointer kernel next among the other two ways, both
    # near cuBLAS; the padded copy wins at 5000³, every option well short of cuBLAS there.
    c, timed = _trials("NN", [2000, 2000, 2000])
    ways = [("blocked" if t["config"]["kernel"] == "blocked" else "pad" if t["config"].get("pad_rows") else "in place")
            for t in timed]  # fmt: skip
    assert ways[0] == "in place"
    assert ways.index("blocked") < ways.index("pad")
    assert c["cublas_ms"] / timed[0]["ms"] > 0.95
    assert c["cublas_ms"] / next(t for t, w in zip(timed, ways, strict=True) if w == "blocked")["ms"] > 0.9
    c, timed = _trials("NN", [5000, 5000, 5000])
    assert timed[0]["config"].get("pad_rows")
    assert c["cublas_ms"] / timed[0]["ms"] < 0.8
    assert (4000 % 32, 6000 % 32, 6000 % 16) == (0, 16, 0)  # 2000 and 3000 bf16 columns
    # Transposed operands: 128×128 won both; Triton ran NT and TN at the same rate (within 2 %), cuBLAS NT faster.
    (nt, nt_timed), (tn, tn_timed) = _trials("NT", [512, 11008, 4096]), _trials("TN", [512, 11008, 4096])
    assert nt_timed[0]["config"] == tn_timed[0]["config"]
    assert (nt_timed[0]["config"]["block_m"], nt_timed[0]["config"]["block_n"]) == (128, 128)
    assert abs(nt_timed[0]["ms"] / tn_timed[0]["ms"] - 1) < 0.02
    assert nt["cublas_ms"] < tn["cublas_ms"]
    # The goals: the first sweep's geometric means hold and 3000³ is under the floor; the random sweep misses both.
    rows = _sweep_raw()["rows"]
    for dtype in ("bfloat16", "float16"):
        first = [r for r in rows if r["sweep"] == "first" and r["dtype"] == dtype]
        random = [r for r in rows if r["sweep"] == "random" and r["dtype"] == dtype]
        assert statistics.geometric_mean([r["ratio"] for r in first]) >= 0.95
        under = [r for r in first if r["m"] * r["n"] * r["k"] >= 2**30 and r["ratio"] < 0.8]
        assert [(r["m"], r["n"], r["k"]) for r in under] == [(3000, 3000, 3000)]
        assert statistics.geometric_mean([r["ratio"] for r in random]) < 0.95
        assert min(r["ratio"] for r in random if r["m"] * r["n"] * r["k"] >= 2**30) < 0.8
        # Forward products at about ten thousand tokens, and weight gradients of large layers, near cuBLAS.
        near = [r for r in random if (r["label"].endswith(" tokens") and ("forward" in r["label"] and r["m"] > 8000))
                or ("weight-grad" in r["label"] and r["m"] >= 8192)]  # fmt: skip
        assert near
        assert all(r["ratio"] > 0.94 for r in near), [(r["label"], r["ratio"]) for r in near]
        # 1481×13824×5120 ran under the floor with the split-K tiling of its class; BERT-large's weight gradient
        # took the small tiles.
        (big,) = [r for r in random if (r["m"], r["n"], r["k"]) == (1481, 13824, 5120)]
        assert big["ratio"] < 0.8
        assert big["config"]["kernel"] == "splitk"
        (bert,) = [r for r in random if r["label"].startswith("BERT-large attention out, weight-grad")]
        assert (bert["config"]["block_m"], bert["config"]["block_n"]) == (64, 128)
    # 3000³ got slower than in the first run.
    before = {(r["dtype"], r["m"]): r for r in _sweep_raw("triton-gemm-sweep-h100")["rows"] if r["m"] == 3000}
    for r in rows:
        if r["m"] == 3000 and r["sweep"] == "first":
            assert r["ratio"] < before[(r["dtype"], 3000)]["ratio"]
