"""Every type table the type tables page renders, read back by header and checked against the data files themselves
(the TOML read with ``tomllib``, not through gpukb's models) and against which FP8 each architecture really has.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from typing import Any

import pytest

from gpukb.gemm.pages import type_tables as page
from tests.gemm.pages import _raw
from tests.helpers import ROOT, markdown_tables

#: The FP8 encoding of each architecture, as the vendors document it: AMD's MI300 (gfx942) has the FNUZ
#: variants; MI355X (gfx950) and NVIDIA's Ada, Hopper and Blackwell have OCP E4M3/E5M2.
FNUZ_ARCHITECTURES = {"gfx942"}


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
    every: dict[str, set[tuple]] = {}  # each library's combinations without block scaling, from its data file
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
            every[library] = listed
            key = (row["C"], row["D"], row["arithmetic"], row["scale"])
            present = [(x, y, *key) in listed for x, y in _pairs(row["A × B"])]
            assert all(present) if row[title] != "-" else not any(present), (title, row)
            if row[title] != "-":
                _check_marks(library, row[title], {(x, y, *key) for x, y in _pairs(row["A × B"])}, arithmetic)
    # every combination once; E4M3/E5M2 rows alike but for A and B merged, as "(x or y) × (z or w)" when they are
    # every pairing of their A and B types
    shown = [((x, y, row["C"], row["D"], row["arithmetic"], row["scale"]), row) for row in table
             for x, y in _pairs(row["A × B"])]  # fmt: skip
    assert len({key for key, _ in shown}) == len(shown)
    assert {key for key, _ in shown} == set().union(*every.values())
    merged = [tuple(v for h, v in row.items() if h != "A × B") for row in table
              if any(f in row["A × B"] for f in ("E4M3", "E5M2"))]  # fmt: skip
    assert len(set(merged)) == len(merged)
    for row in table:
        pairs = _pairs(row["A × B"])
        full = len(pairs) == len({x for x, _ in pairs}) * len({y for _, y in pairs})
        assert row["A × B"].startswith("(") == (full and len(pairs) > 1), row
    titles = list(_titles())
    counts = [sum(row[t] != "-" and all(row[o] == "-" for o in titles if o != t) for _, row in shown) for t in titles]
    both = sum(all(row[t] != "-" for t in titles) for _, row in shown)
    assert markdown.startswith(
        f"{len(shown)} combinations without block scaling: {both} in both libraries, "
        + ", ".join(f"{n} only in {t}" for t, n in zip(titles, counts, strict=True))
        + ".\n\n|"
    )


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
            assert row["HIP / CUDA name"] == ", ".join(f"`{n}`" for n in names), row
            continue
        fmt = formats[name]
        assert row["type"] == fmt["title"], row
        assert names == [n for n in (fmt["hip"], fmt["cuda"]) if n], row
        assert row["HIP / CUDA name"] == (", ".join(f"`{n}`" for n in names) or "-"), row
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
        # the types stay in the table; any other column with one value on every row (of two or more) is in the caption
        assert not set(constant) & {"A", "B", "C", "D", "A × B"}, (gid, constant)
        assert not constant if len(table) == 1 else all(len({row[h] for row in table}) > 1 for h in table[0]
                                                       if h not in ("A", "B", "C", "D", "A × B")), gid  # fmt: skip
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
        # caption, blank line, table, blank line, then one line: conditions, the group's note, the rows' own notes
        # and the sources (each once, in order of first appearance), and a blank line before the next group
        assert caption != "", gid
        end = "\n\n" if section is not sections[-1] else "\n"  # the page ends on one line break
        assert section.endswith(end), gid
        assert not section.endswith(end + "\n"), gid
        lines = section.removesuffix(end).split("\n")
        assert lines[1] == lines[-2] == "", gid
        assert all(x.startswith("|") for x in lines[2:-2]), gid
        fields = [{**{k: v for k, v in group.items() if k != "rows"}, **row} for row in group["rows"]]
        note = group.get("note")
        sources = _raw(library)["sources"]
        cited = list(dict.fromkeys(s for f in fields for s in f["source"]))
        said = [*(f"Conditions: {c}." for c in sorted({f["constraints"] for f in fields if f.get("constraints")})),
                *([note] if note else []), *sorted({f["note"] for f in fields if f.get("note") and f["note"] != note}),
                "Sources: " + ", ".join(f"[{s}]({sources[s]['url']})" for s in cited) + "."]  # fmt: skip
        assert lines[-1] == " ".join(said), gid


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
    for row in table:  # what follows a "yes": the layout, a block scaling the row needs, the fields not confirmed
        for column, cell in row.items():
            if column == "combination" or not cell.startswith("yes: "):
                continue
            library = _titles()[column.split(",")[0]]
            unconfirmed = {", ".join(f.replace("_", " ") for f in {**g, **r}.get("unconfirmed", []))
                           for g in _raw(library)["group"] for r in g["rows"]}  # fmt: skip
            for extra in re.findall(r" \(([^()]*)\)", cell):
                scaling = re.fullmatch(r"(\w+) scaling only", extra)
                fields = re.fullmatch(r"unconfirmed: (.+)", extra)
                assert (re.fullmatch(r"C \w+", extra) or extra == "A transposed, B not"
                        or (scaling and scaling[1] not in ("none", "tensor"))
                        or (fields and fields[1] in unconfirmed)), (column, cell)  # fmt: skip


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "type_architectures": check_architectures,
    "type_comparison": check_comparison,
    "type_compute": check_compute,
    "type_names": check_type_names,
    "type_answers": check_answers,
    "type_library": check_type_library,
}


def test_mislabelled_fnuz_architectures_fail_the_check() -> None:
    markdown = page.type_architectures()
    swapped = markdown.replace("e4m3fnuz and e5m2fnuz", "@").replace("e4m3 and e5m2", "e4m3fnuz and e5m2fnuz")
    with pytest.raises(AssertionError):
        check_architectures(swapped.replace("@", "e4m3 and e5m2"), {})


def test_swapped_c_and_d_columns_fail_the_type_library_check() -> None:
    markdown = page.type_library("cublaslt")
    assert "| A × B | C | D | bias |" in markdown
    swapped = markdown.replace("| A × B | C | D | bias |", "| A × B | D | C | bias |")
    with pytest.raises(AssertionError):
        check_type_library(swapped, {"args": ("cublaslt",)})


def test_the_notes_errata_are_the_gemm_claims_of_the_notes() -> None:
    """type_notes_errata (collapsed notes, not a table) shows exactly the errata of errata.toml, read with tomllib,
    that are GEMM claims met in the widely shared explanation of hipBLASLt's type table, each linked to its entry."""
    from gpukb.gemm.type_tables import NOTES_SECTION

    raw = tomllib.loads((ROOT / "src" / "gpukb" / "data" / "errata.toml").read_text(encoding="utf-8"))["erratum"]
    wanted = [e for e in raw if e["topic"] == "gemm" and e["claimed_in"].startswith(NOTES_SECTION)]
    assert wanted
    markdown = page.type_notes_errata()
    assert re.findall(r"errata/#([\w-]+)\)", markdown) == [e["id"] for e in wanted]
    for e in wanted:
        assert f"A claim you may meet: {e['claim']}" in markdown, e["id"]
    lines = []
    for e in wanted:  # each a collapsed note: the claim as its title, the truth, then the deciding test and the link
        lines += [f'??? note "A claim you may meet: {e["claim"]}"', f"    {e['truth']}", "",
                  f"    Decided by `{e['test']}`; [errata entry](../../about/errata/#{e['id']}).", ""]  # fmt: skip
    assert markdown == "\n".join(lines)


@pytest.mark.parametrize("library", ["hipblaslt", "cublaslt"])
def test_the_sources_list_is_the_data_files_sources(library: str) -> None:
    """type_sources: one item per source of the data file (read with tomllib), in its order: id, title linked to
    its URL, version, the repository path at the first 12 digits of its commit where it has both, the date the
    table was checked."""
    raw = _raw(library)
    lines = []
    for sid, s in raw["sources"].items():
        where = f" `{s['path']}` at `{s['commit'][:12]}`." if s["path"] and s["commit"] else ""
        lines.append(f"- **{sid}**: [{s['title']}]({s['url']}). {s['version']}.{where} Checked {raw['checked']}.")
    assert any(s["path"] and s["commit"] for s in raw["sources"].values()) == (library == "hipblaslt")
    assert page.type_sources(library) == "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("library", "arch", "types"),
    [("cublaslt", "sm_90", ("e2m1", "e2m1", "bf16")), ("cublaslt", "sm_100", ("e2m1", "e2m1", "bf16")),
     ("hipblaslt", "gfx950", ("bf16", "bf16", "fp32")), ("hipblaslt", "gfx950", ("e2m1", "e2m1", "bf16"))],
)  # fmt: skip
def test_an_answer_is_its_architectures_one_row_with_every_condition(library: str, arch: str, types: tuple) -> None:
    """Quick answers beyond the page's questions, each with at most one row in the data file (read with tomllib) on
    that architecture: ``no`` without one (FP4 before Blackwell, BF16 in and FP32 out only on gfx942), else the
    row's types and all its conditions: A transposed where its layout rule holds there, its block scaling, the
    fields not confirmed."""
    from gpukb.gemm import type_tables

    a, b, d = types
    rows = []
    for group in _raw(library)["group"]:
        for row in group["rows"]:
            f = {**{k: v for k, v in group.items() if k != "rows"}, **row}
            listed = {(x[0], x[1], x[3]) for x in _raw_combinations({**group, "rows": [row]})}
            arches = f.get("arch", ["any"])
            if (a, b, d) in listed and ("any" in arches or arch in arches):
                rows.append(f)
    answer = type_tables.answer(library, arch, {"a": a, "b": b, "d": d})
    if not rows:
        assert answer == "no"
        return
    (f,) = rows
    extras = []
    if f.get("layout") == "TN" and ("layout_arch" not in f or arch in f["layout_arch"]):
        extras.append("A transposed, B not")
    if f["scaling"] not in ("none", "tensor"):
        extras.append(f"{f['scaling']} scaling only")
    if f.get("confirmed", True) is False:
        extras.append("unconfirmed: " + ", ".join(x.replace("_", " ") for x in f["unconfirmed"]))
    assert len(extras) >= 2
    assert answer == f"yes: {a} × {b} → {d} ({'; '.join(extras)})"
