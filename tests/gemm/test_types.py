"""The GEMM type tables: the data is well formed and sourced, the facts the pages state hold, and check() and
``gpukb gemm-types`` answer and fail as documented."""

from __future__ import annotations

import copy
import re
import tomllib
from importlib import resources

import pytest

from gpukb.cli import main
from gpukb.errata import load as load_errata
from gpukb.formats.spec import get_format
from gpukb.gemm import type_tables
from gpukb.gemm.pages import type_tables as type_tables_page
from gpukb.gemm.types import INTEGER_TYPES, LIBRARIES, canonical_type, check, nearest, parse, table

CHECKED = "2026-11-22"


def _raw(library: str) -> dict:
    return tomllib.loads(resources.files("gpukb.data.gemm").joinpath(f"{library}.toml").read_text(encoding="utf-8"))


def _rows(library: str, **where):
    return [r for r in table(library).rows if all(r.value(k) == v for k, v in where.items())]


# --- the data ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("library", LIBRARIES)
def test_every_name_in_the_table_resolves(library) -> None:
    tab = table(library)
    assert tab.rows
    for row in tab.rows:
        for name in (row.a, row.b, row.c, row.d, row.scale, *row.bias):
            assert canonical_type(name) == name, (row, name)
            if name not in INTEGER_TYPES:
                assert get_format(name).name == name
    for ct in tab.compute.values():
        assert canonical_type(ct.accumulate) == ct.accumulate
        if ct.input_rounding:
            assert get_format(ct.input_rounding).name == ct.input_rounding
    for arch in tab.arch.values():
        e4m3, e5m2 = (get_format(t) for t in arch.fp8)
        assert (e4m3.exponent_bits, e4m3.mantissa_bits, e5m2.exponent_bits, e5m2.mantissa_bits) == (4, 3, 5, 2)
    for aliases in tab.aliases.values():
        assert all(canonical_type(t) == t for t in aliases)


@pytest.mark.parametrize("library", LIBRARIES)
def test_no_combination_is_listed_twice(library) -> None:
    keys = [row.key for row in table(library).rows]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("library", LIBRARIES)
def test_every_row_has_a_dated_versioned_source(library) -> None:
    tab = table(library)
    assert tab.checked == CHECKED
    for row in tab.rows:
        assert row.sources, row
        for src in row.sources:
            assert src.url.startswith("https://"), src
            assert src.version, src
            assert src.checked == CHECKED, src
            if src.commit:
                assert re.fullmatch(r"[0-9a-f]{40}", src.commit), src
                assert ":" in src.path, src
    for arch in tab.arch.values():
        assert arch.sources


@pytest.mark.parametrize("library", LIBRARIES)
def test_unconfirmed_rows_say_what_is_unconfirmed(library) -> None:
    for row in table(library).rows:
        assert row.confirmed == (not row.unconfirmed)
        if not row.confirmed:
            assert row.note, row


def _minimal() -> dict:
    data = copy.deepcopy(_raw("cublaslt"))
    data["group"] = [g for g in data["group"] if g["id"] == "general"]
    data["group"][0]["rows"] = data["group"][0]["rows"][:2]
    data.pop("refused")
    return data


def _broken(change) -> dict:
    data = _minimal()
    change(data)
    return data


ROW = re.escape("cublaslt.toml: group general row 1: ")  # the file, the group and the row
GROUP = re.escape("cublaslt.toml: group entry 1 (general): ")


def _row(**fields):
    return lambda d: d["group"][0]["rows"][0].update(**fields)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_row(a="float16"), ROW + r"a: a = 'float16' is not a canonical name \(use 'fp16'\)"),
        (_row(a="fp7"), ROW + "a: unknown format 'fp7'"),
        (lambda d: d["group"][0]["rows"].append(dict(d["group"][0]["rows"][0])),
         re.escape("group general row 3: the combination fp16 x fp16 -> fp16 (fp16, ('any',)) is listed twice "
                   "(first in group general row 1)")),
        (_row(default_bias="fp32"), ROW + "default_bias: .*default bias 'fp32' is not among"),
        (_row(source=["nowhere"]), ROW + "source: source 'nowhere' is not one of"),
        (_row(compute="fp128"), ROW + "compute: compute 'fp128' is not one of"),
        (_row(arch=["sm_75"]), ROW + "arch: architecture 'sm_75' is not one of"),
        (_row(confirmed=False), ROW + "unconfirmed: .*needs `unconfirmed` fields"),
        (_row(confirmed=False, unconfirmed=["colour"], note="x"), ROW + r"unconfirmed\[0\]: Input should be 'a'"),
        (lambda d: d.update(library="rocblas"), re.escape("rocblas.toml: library: Input should be 'hipblaslt' or")),
        # A corrupted copy: an unknown key, a wrong type, a missing field, a repeated id.
        (_row(colour="red"), GROUP + re.escape("rows[0].colour: Extra inputs are not permitted (got 'red')")),
        (_row(layout="NT"), GROUP + re.escape("rows[0].layout: Input should be 'any' or 'TN' (got 'NT')")),
        (_row(confirmed="yes"), GROUP + re.escape("rows[0].confirmed: Input should be a valid boolean (got 'yes')")),
        (lambda d: d["group"][0]["rows"][0].pop("compute"), ROW + "compute: Field required"),
        (lambda d: d["group"][0].pop("scaling"), ROW + "scaling: Field required"),
        (lambda d: d["compute"]["fp32"].pop("enum"), re.escape("cublaslt.toml: compute.fp32.enum: Field required")),
        (lambda d: d["group"].append(copy.deepcopy(d["group"][0])),
         re.escape("cublaslt.toml: group entry 2 (general): id 'general' repeats entry 1")),
        (lambda d: d.update(colour=1), re.escape("cublaslt.toml: unknown top-level keys ['colour']")),
    ],
)  # fmt: skip
def test_malformed_tables_are_refused(change, message) -> None:
    parse(_minimal())  # the unbroken table parses
    with pytest.raises(ValueError, match=message):
        parse(_broken(change))


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda g: g["rows"][0].update(colour="red"), "rows[0].colour: Extra inputs are not permitted (got 'red')"),
        (lambda g: g["rows"][0].update(compute=16), "rows[0].compute: Input should be a valid string (got 16)"),
        (lambda g: g.pop("title"), "title: Field required"),
    ],
)  # fmt: skip
def test_each_data_file_names_the_file_group_and_field(library, change, message) -> None:
    data = _raw(library)
    first = data["group"][0]
    change(first)
    with pytest.raises(ValueError, match=re.escape(f"{library}.toml: group entry 1 ({first['id']}): {message}")):
        parse(data)
    data = _raw(library)
    data["group"].append(copy.deepcopy(data["group"][0]))
    again = len(data["group"])
    with pytest.raises(ValueError, match=re.escape(f"group entry {again} ({data['group'][0]['id']}): id ")):
        parse(data)


def test_a_corrupted_file_names_the_file_group_row_and_field(tmp_path, monkeypatch) -> None:
    text = resources.files("gpukb.data.gemm").joinpath("cublaslt.toml").read_text(encoding="utf-8")
    broken = text.replace('compute = "fp16", scale = "fp16"', 'compute = 16, scale = "fp16"', 1)
    assert broken != text
    folder = tmp_path / "gemm"
    folder.mkdir()
    (folder / "cublaslt.toml").write_text(broken, encoding="utf-8")
    import gpukb.gemm.types as types_module

    real = types_module.data_text
    monkeypatch.setattr(
        types_module,
        "data_text",
        lambda path: (tmp_path / path).read_text(encoding="utf-8") if path.startswith("gemm/") else real(path),
    )
    types_module.table.cache_clear()
    try:
        with pytest.raises(ValueError, match=re.escape(
            "gpukb/data/gemm/cublaslt.toml: group entry 1 (general): rows[0].compute: Input should be a valid string "
            "(got 16)"
        )):  # fmt: skip
            table("cublaslt")
    finally:
        types_module.table.cache_clear()


# --- the facts the pages state ----------------------------------------------------------------------------------


def test_hipblaslt_fp8_is_fnuz_on_gfx942_and_ocp_on_gfx950() -> None:
    mi300 = check("hipblaslt", a="fp8", b="bf8", d="bf16", arch="MI300X")
    assert [(r.a, r.b, r.c, r.d, r.arch) for r in mi300] == [("e4m3fnuz", "e5m2fnuz", "bf16", "bf16", ("gfx942",))]
    mi355 = check("hipblaslt", a="fp8", b="bf8", d="bf16", arch="MI355X")
    assert {(r.a, r.b, r.scaling.id) for r in mi355} == {("e4m3", "e5m2", "tensor"), ("e4m3", "e5m2", "mx")}
    assert get_format(mi300[0].a).encoding == "fnuz"
    assert get_format(mi355[0].a).encoding == "fn"
    # Without an architecture, "fp8" matches both encodings, and every row says which one it is.
    both = check("hipblaslt", a="fp8", b="bf8", d="bf16", compute="fp32")
    assert {(r.a, r.arch) for r in both if r.scaling.id == "tensor"} == {
        ("e4m3fnuz", ("gfx942",)),
        ("e4m3", ("gfx950", "gfx12")),
    }
    assert [line.split(" on ")[-1] for line in table("hipblaslt").meanings("fp8")] == ["gfx950, gfx12", "gfx942"]
    # On gfx942 there is no OCP FP8 at all, and the error says which types it has.
    with pytest.raises(ValueError, match="On gfx942 hipBLASLt's FP8 types are e4m3fnuz and e5m2fnuz, not e4m3"):
        check("hipblaslt", a="e4m3", b="e5m2", arch="gfx942")


def test_h100_has_e4m3_x_e5m2_to_bf16_but_only_transposed_a() -> None:
    (row,) = check("cublaslt", a="e4m3", b="e5m2", d="bf16", arch="H100")
    assert (row.c, row.compute.enum, row.scale, row.bias) == ("bf16", "CUBLAS_COMPUTE_32F", "fp32", ("bf16",))
    assert row.layout_on("sm_90") == "TN"
    assert row.layout_on("sm_89") == "TN"
    assert row.layout_on("sm_120") == "TN"
    assert row.layout_on("sm_100") == "any"  # the TN rule names Ada, Hopper and Blackwell GeForce only
    # cuBLAS's own "FP8" means either type, so "fp8" x "fp8" finds the same-type and the mixed pairs.
    pairs = {(r.a, r.b) for r in check("cublaslt", a="fp8", b="fp8", d="bf16", arch="sm_90")}
    assert pairs == {("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3")}


def test_cublaslt_refuses_e5m2_x_e5m2() -> None:
    assert not [r for r in table("cublaslt").rows if (r.a, r.b) == ("e5m2", "e5m2")]
    with pytest.raises(ValueError, match=r"cuBLASLt refuses A=e5m2 x B=e5m2"):
        check("cublaslt", a="e5m2", b="e5m2")
    assert check("hipblaslt", a="e5m2", b="e5m2", d="bf16", arch="gfx950")  # hipBLASLt lists BF8 x BF8


def test_cublaslt_fp8_rows_compute_in_fp32_with_fp32_scales() -> None:
    fp8 = [r for r in table("cublaslt").rows if r.a in ("e4m3", "e5m2")]
    assert fp8
    assert all(r.compute.enum == "CUBLAS_COMPUTE_32F" and r.scale == "fp32" for r in fp8)
    assert {r.d for r in fp8} == {"bf16", "fp16", "fp32", "e4m3", "e5m2"}
    assert all(r.c in ("bf16", "fp16", "fp32") for r in fp8)  # never an FP8 C


def test_block_scaling_modes() -> None:
    for library in LIBRARIES:
        mx = table(library).scaling["mx"]
        assert mx.block == 32
        assert get_format(mx.scale_format).encoding == "e8m0"
    nvfp4 = table("cublaslt").scaling["nvfp4"]
    assert nvfp4.block == 16
    assert get_format(nvfp4.scale_format).name == "e4m3"
    hip_mx = _rows("hipblaslt", group="mx")
    assert {r.arch for r in hip_mx} == {("gfx950",)}
    assert {r.layout for r in hip_mx} == {"TN"}
    assert {r.a for r in hip_mx} == {"e4m3", "e5m2", "e2m3", "e3m2", "e2m1"}
    assert all(r.c == r.d for r in hip_mx)
    assert {r.d for r in hip_mx} == {"fp32", "fp16", "bf16"}
    assert "k % 128 = 0" in hip_mx[0].constraints
    cu_mx = _rows("cublaslt", group="mxfp8")
    assert {r.arch for r in cu_mx} == {("sm_100", "sm_120")}
    # MXFP8 has the per-tensor FP8 table's combinations, on Blackwell only.
    assert {r.types() for r in cu_mx} == {r.types() for r in _rows("cublaslt", group="fp8")}
    assert {(r.a, r.b) for r in _rows("cublaslt", group="nvfp4")} == {("e2m1", "e2m1")}


def test_compute_types_that_round_the_inputs() -> None:
    xf32 = table("hipblaslt").compute["xf32"]
    assert xf32.enum == "HIPBLAS_COMPUTE_32F_FAST_TF32"
    assert xf32.input_rounding == "tf32"
    assert get_format("tf32").mantissa_bits == 10 < get_format("fp32").mantissa_bits == 23
    rounding = {ct.enum: ct.input_rounding for ct in table("cublaslt").compute.values()}
    assert rounding["CUBLAS_COMPUTE_32F_FAST_16F"] == "fp16"
    assert rounding["CUBLAS_COMPUTE_32F_FAST_TF32"] == "tf32"
    assert table("hipblaslt").resolve_compute("tf32") == "xf32" == table("hipblaslt").resolve_compute("32f_fast_tf32")


# --- the notes' claims (errata) ---------------------------------------------------------------------------------


def test_claim_a_and_b_need_not_match() -> None:
    hip = table("hipblaslt").rows
    mixed = {(r.a, r.b) for r in hip if r.a != r.b and r.scaling.id == "tensor"}
    assert mixed == {("e4m3", "e5m2"), ("e5m2", "e4m3"), ("e4m3fnuz", "e5m2fnuz"), ("e5m2fnuz", "e4m3fnuz")}
    for d in ("fp16", "bf16", "fp32", "e4m3", "e5m2"):
        assert check("hipblaslt", a="e4m3", b="e5m2", d=d, arch="gfx950", compute="fp32")
    assert len({(r.a, r.b) for r in hip if r.scaling.id == "mx"}) == 25  # any of five types for A and for B
    assert {(r.a, r.b) for r in table("cublaslt").rows if r.a != r.b} >= {("e4m3", "e5m2"), ("e5m2", "e4m3")}
    same = {r.a for r in hip if r.a == r.b and r.scaling.id == "none"}
    assert same == {"fp32", "fp16", "bf16", "int8"}


def test_claim_c_follows_d_not_a_and_b() -> None:
    hip = table("hipblaslt").rows
    assert all(r.c == r.d for r in hip)  # C always has D's type ...
    differs = {(r.a, r.c) for r in hip if r.c != r.a}
    assert {("fp16", "fp32"), ("int8", "int32")} <= differs  # ... so it differs from A when D does
    assert {r.c for r in hip if r.a == "e4m3"} == {"fp16", "bf16", "fp32", "e4m3", "e5m2"}
    cu_c_not_d = {(r.c, r.d) for r in table("cublaslt").rows if r.c != r.d}
    assert {d for _, d in cu_c_not_d} == {"e4m3", "e5m2", "e2m1"}
    assert {c for c, _ in cu_c_not_d} == {"bf16", "fp16"}


def test_claim_fp16_inputs_with_fp32_output_need_fp32_c() -> None:
    for library in LIBRARIES:
        with pytest.raises(ValueError, match="has no combination A=fp16, B=fp16, C=fp16, D=fp32") as info:
            check(library, a="fp16", b="fp16", c="fp16", d="fp32")
        assert "C=fp32  D=fp32" in str(info.value)  # the nearest combination is the one with an FP32 C
        (row,) = check(library, a="fp16", b="fp16", c="fp32", d="fp32", compute="fp32")
        assert row.confirmed


def test_claim_fp32_compute_is_not_always_fp32_arithmetic() -> None:
    (xf32,) = check("hipblaslt", a="fp32", b="fp32", d="fp32", compute="HIPBLAS_COMPUTE_32F_FAST_TF32")
    assert xf32.confirmed
    assert xf32.compute.accumulate == "fp32"
    assert get_format(xf32.compute.input_rounding).mantissa_bits == 10  # inputs lose 13 of FP32's 23 bits
    cu = {r.compute.id for r in check("cublaslt", a="fp32", b="fp32", d="fp32")}
    assert cu == {"fp32", "fast_16f", "fast_16bf", "fast_tf32", "emulated_16bfx9"}
    (half,) = check("cublaslt", a="fp16", b="fp16", d="fp16", compute="CUBLAS_COMPUTE_16F")
    assert half.compute.accumulate == "fp16"


def test_claim_all_fp8_gemm_is_hipblaslt_only() -> None:
    rows = check("hipblaslt", a="fp8", b="fp8", c="fp8", d="fp8")
    assert {(r.a, r.d, r.arch) for r in rows} == {
        ("e4m3fnuz", "e4m3fnuz", ("gfx942",)),
        ("e4m3", "e4m3", ("gfx950", "gfx12")),
    }
    assert all(set(r.scaled) == {"a", "b", "c", "d"} for r in rows)  # the rows where C and D take scales
    ocp = next(r for r in rows if r.a == "e4m3")
    assert ocp.confirmed
    assert set(check("hipblaslt", a="fp16", b="fp16", d="fp16")[0].scaled) == set()
    with pytest.raises(ValueError, match="has no combination A=e4m3, B=e4m3, C=e4m3, D=e4m3"):
        check("cublaslt", a="e4m3", b="e4m3", c="e4m3", d="e4m3")
    assert check("cublaslt", a="e4m3", b="e4m3", c="bf16", d="e4m3", arch="H100")  # an FP8 D needs a 16-bit C


def test_every_gemm_type_erratum_is_on_the_page() -> None:
    entries = [e for e in load_errata() if e.topic == "gemm" and e.claimed_in.startswith(type_tables.NOTES_SECTION)]
    # Five are decided by the type tables (this file); the FP8 accumulator one by the H100 record.
    assert len([e for e in entries if e.test.startswith("tests/gemm/test_types.py::")]) == 5
    rendered = type_tables_page.type_notes_errata()
    for e in entries:
        # a render block's output is not rewritten by MkDocs: the link is the URL as the built page resolves it
        assert f"(../../about/errata/#{e.id})" in rendered
        assert f"Decided by `{e.test}`" in rendered


# --- corrections to earlier versions of the type-tables page (errata claimed in "an earlier version of this page") --

ROCM_6_2_0 = "500158158f48332c80bc35edaec1335ad328a5f6"  # ROCm/hipBLASLt tag rocm-6.2.0 (hipBLASLt 0.8.0)


def test_page_hipblaslt_fnuz_fp8_group_is_confirmed_by_the_rocm62_reference() -> None:
    fnuz = _rows("hipblaslt", group="fp8-fnuz")
    assert len(fnuz) == 20  # four A, B pairs x five C = D types
    assert {(r.a, r.b) for r in fnuz} == {(a, b) for a in ("e4m3fnuz", "e5m2fnuz") for b in ("e4m3fnuz", "e5m2fnuz")}
    assert all(r.confirmed and not r.unconfirmed for r in fnuz)
    reference = table("hipblaslt").sources["api-reference-rocm62"]
    assert (reference.path, reference.commit) == ("ROCm/hipBLASLt:docs/api-reference.rst", ROCM_6_2_0)
    assert "HIP_R_8F_E4M3_FNUZ" in reference.title
    assert all(reference in r.sources for r in fnuz)
    # The reference's bias, default bias and scaleA,B / scaleC,D columns, and "all tranpose types".
    by_d = {r.d: (r.bias, r.default_bias, r.scaled) for r in fnuz}
    assert by_d == {
        "fp16": (("fp32", "fp16"), "fp16", ("a", "b")),
        "bf16": (("fp32", "bf16"), "bf16", ("a", "b")),
        "fp32": (("fp32", "bf16"), "bf16", ("a", "b")),
        "e4m3fnuz": (("fp32", "fp16"), "fp16", ("a", "b", "c", "d")),
        "e5m2fnuz": (("fp32", "fp16"), "fp16", ("a", "b", "c", "d")),
    }
    assert {(r.layout, r.compute.id, r.scale, r.arch) for r in fnuz} == {("any", "fp32", "fp32", ("gfx942",))}


def test_page_readme_lists_the_full_fp8_set_only_from_rocm62() -> None:
    readme = table("hipblaslt").sources["readme-fp8"]
    assert readme.commit == ROCM_6_2_0  # an exact revision, the first whose README has every pair and output
    assert "rocm-6.2.0" in readme.version
    assert "rocm-6.0.0" in readme.version  # which lists fewer, as does ...
    assert "rocm-6.1.0" in readme.version
    assert "fp32 or fp16 only" in readme.version
    # BF8 x BF8 and the BF16 and FP8 outputs, absent from those READMEs, rest on the ROCm 6.2 reference.
    (row,) = check("hipblaslt", a="e5m2fnuz", b="e5m2fnuz", d="bf16")
    assert "api-reference-rocm62" in {s.id for s in row.sources}


def test_page_the_122_reference_also_defines_fnuz_names() -> None:
    note = table("hipblaslt").groups["fp8-fnuz"][2]
    assert "FP8_FNUZ and BF8_FNUZ" in note
    assert "names only the OCP" not in note
    assert not any("names only the OCP" in r.note for r in table("hipblaslt").rows)


def test_page_mx_kernels_are_not_gfx950_only() -> None:
    mx = _rows("hipblaslt", group="mx")
    note = table("hipblaslt").groups["mx"][2]
    assert "gfx1250" in note  # changelog 1.5.0: a fix for MX-FP8 and MX-FP4 results on gfx1250
    assert "gfx950 only" not in note
    assert all("arch" in r.unconfirmed for r in mx)  # gfx950 is listed, but not every architecture with the mode
    assert "gfx1250" in table("hipblaslt").sources["changelog"].title


def test_page_hipblaslt_has_bf16_in_fp32_out() -> None:
    (row,) = check("hipblaslt", a="bf16", b="bf16", c="fp32", d="fp32")
    assert (row.compute.id, row.scale, row.arch, row.scaling.id) == ("fp32", "fp32", ("gfx942",), "none")
    assert not row.confirmed
    assert set(row.unconfirmed) == {"arch", "layout", "bias"}
    assert {"client-dispatch", "kernel-logic", "changelog"} <= {s.id for s in row.sources}
    assert "gfx90a" in row.note  # changelog 1.2.0: "BF16 input with FP32 output ... for gfx90a"
    assert table("hipblaslt").sources["client-dispatch"].commit == ROCM_6_2_0
    side_by_side = type_tables.comparison()[("bf16", "bf16", "fp32", "fp32", "fp32", "fp32")]
    assert side_by_side["hipblaslt"]  # no longer "-" for hipBLASLt
    assert side_by_side["cublaslt"]


def test_page_cublaslt_fast16_accumulator_and_int8_fp32_layout_are_unconfirmed() -> None:
    for mode in ("fast_16f", "fast_16bf"):
        (row,) = check("cublaslt", a="fp32", b="fp32", d="fp32", compute=mode)
        assert not row.confirmed
        assert row.unconfirmed == ("compute",)  # the documented mode is, its accumulator is not
        assert "not stated" in row.note
        assert "unconfirmed" in table("cublaslt").compute[mode].note
    (row,) = check("cublaslt", a="int8", b="int8", c="fp32", d="fp32")
    assert (row.layout, row.unconfirmed) == ("any", ("layout",))
    (tf32,) = check("cublaslt", a="fp32", b="fp32", d="fp32", compute="fast_tf32")
    assert tf32.confirmed


# --- check(): bad input and the nearest combinations ------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(library="rocblas"), r"unknown library 'rocblas'; libraries with a type table: hipblaslt, cublaslt"),
        (dict(library="hipblaslt", a="fp7"), r"unknown type 'fp7' for hipBLASLt; its table uses fp32, "),
        (dict(library="hipblaslt", a="e4m3", arch="H100"), r"H100 is an architecture of cuBLASLt's table"),
        (dict(library="cublaslt", arch="gfx1"), r"unknown architecture 'gfx1' for cuBLASLt.*sm_90 \(Hopper, H100"),
        (dict(library="cublaslt", compute="fp8"), r"unknown compute type 'fp8' for cuBLASLt; compute types: fp16 "),
    ],
)
def test_unknown_names_list_what_is_allowed(kwargs, message) -> None:
    names = {key: value for key, value in kwargs.items() if key != "library"}  # the parameter is shared: no pop
    with pytest.raises(ValueError, match=message):
        check(kwargs["library"], **names)


def test_names_must_be_strings() -> None:
    with pytest.raises(TypeError, match="a type is named by a string, got int"):
        check("hipblaslt", a=8)
    with pytest.raises(TypeError, match="a library is named by a string"):
        check(None)


def test_library_names_from_every_vocabulary() -> None:
    by_canonical = check("hipblaslt", a="e4m3fnuz", b="e5m2fnuz", d="bf16")
    for a, b in [("HIP_R_8F_E4M3_FNUZ", "HIP_R_8F_E5M2_FNUZ"), ("float8_e4m3fnuz", "torch.float8_e5m2fnuz"),
                 ("hipblaslt_f8_fnuz", "hipblaslt_bf8_fnuz")]:  # fmt: skip
        assert check("hipBLASLt", a=a, b=b, d="HIP_R_16BF") == by_canonical
    assert check("cublaslt", a="int8", b="CUDA_R_8I", d="int32_t", arch="Hopper") == check(
        "cublaslt", a="int8", d="int32"
    )


def test_no_match_names_the_query_and_ranks_the_nearest() -> None:
    with pytest.raises(ValueError, match="Nearest supported combinations") as info:
        check("cublaslt", a="e4m3", b="e4m3", c="fp16", d="bf16", arch="sm_90")
    message = str(info.value)
    assert message.startswith(
        "cuBLASLt (cublasLtMatmul) has no combination A=e4m3, B=e4m3, C=fp16, D=bf16, arch=sm_90."
    )
    ranked = re.findall(r"^  (\d)/5  A=", message, re.M)
    assert 1 <= len(ranked) <= 5
    assert ranked == sorted(ranked, reverse=True)
    assert ranked[0] == "4"


# --- the command line -------------------------------------------------------------------------------------------


def test_cli_prints_the_matching_rows(capsys) -> None:
    assert (
        main(["gemm-types", "--lib", "hipblaslt", "--a", "fp8", "--b", "bf8", "--d", "bf16", "--arch", "MI300X"]) == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("hipBLASLt hipblasLtMatmul: 1 combination\nA ")  # on gfx942 fp8 means one type only
    assert re.search(
        r"^e4m3fnuz\s+e5m2fnuz\s+bf16\s+bf16\s+fp32\s+fp32\s+fp32, bf16 \(default bf16\)\s+gfx942", out, re.M
    )
    assert "[readme-fp8]" in out
    assert "checked 2026-11-22" in out


def test_cli_says_what_an_ambiguous_name_means(capsys) -> None:
    assert main(["gemm-types", "--lib", "hipblaslt", "--a", "fp8", "--b", "bf8", "--d", "bf16"]) == 0
    out = capsys.readouterr().out
    assert "fp8 = e4m3fnuz (" in out
    assert "on gfx942" in out
    assert "fp8 = e4m3 (" in out


def test_cli_lists_a_whole_table(capsys) -> None:
    assert main(["gemm-types", "--lib", "cublaslt", "--list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"cuBLASLt cublasLtMatmul: {len(table('cublaslt').rows)} combinations\n")
    assert "CUBLAS" not in out.split("sources:")[0]  # the table shows canonical names; enumerators are on the page


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--lib", "cublaslt", "--a", "e5m2", "--b", "e5m2"], "cuBLASLt refuses A=e5m2 x B=e5m2"),
        (["--lib", "hipblaslt", "--a", "fp7"], "unknown type 'fp7'"),
        (["--lib", "cublaslt", "--list", "--a", "e4m3"], "--list prints the whole table"),
        (["--lib", "mkl"], "invalid choice: 'mkl'"),
        (["--a", "e4m3"], "the following arguments are required: --lib"),
    ],
)
def test_cli_errors_exit_2(argv, message, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["gemm-types", *argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: gpukb gemm-types" in err
    assert message in err


# --- the rendered tables ----------------------------------------------------------------------------------------


def test_quick_answers_come_from_check() -> None:
    text = type_tables_page.type_answers()
    lines = {line.split(" | ")[0].strip("| "): line.split(" | ")[1:] for line in text.splitlines()[2:]}
    mi300, mi355, h100 = lines["A E4M3, B E5M2, D BF16"]
    assert mi300 == "yes: e4m3fnuz × e5m2fnuz → bf16"  # the ROCm 6.2 API reference states every field
    assert mi355 == "yes: e4m3 × e5m2 → bf16"
    assert h100.startswith("yes: e4m3 × e5m2 → bf16 (A transposed, B not)")
    assert lines["A E5M2, B E5M2, D BF16"][2].strip(" |") == "no"
    assert [c.strip(" |") for c in lines["A, B FP16, C FP16, D FP32"]] == ["no", "no", "no"]


def test_comparison_counts_add_up() -> None:
    pairs = type_tables.comparison()
    summary = type_tables_page.type_comparison().splitlines()[0]
    total, both, hip_only, cu_only = map(int, re.findall(r"\d+", summary))
    assert total == len(pairs) == both + hip_only + cu_only
    assert both == sum(all(libs.values()) for libs in pairs.values())
    key = ("E5M2", "E5M2", "bf16", "bf16", "fp32", "fp32")
    assert pairs[key]["hipblaslt"]
    assert not pairs[key]["cublaslt"]


def test_merge_ab_writes_products_and_pairs() -> None:
    _, product = type_tables.merge_ab(
        ["A", "B", "C"], [["x", "x", "1"], ["x", "y", "1"], ["y", "x", "1"], ["y", "y", "1"]]
    )
    assert product == [["(x or y) × (x or y)", "1"]]
    _, pairs = type_tables.merge_ab(["A", "B", "C"], [["x", "x", "1"], ["x", "y", "1"], ["y", "x", "1"]])
    assert pairs == [["x × x; x × y; y × x", "1"]]
    _, kept = type_tables.merge_ab(["A", "B", "C"], [["x", "x", "1"], ["z", "z", "1"]], only=("x",))
    assert kept == [["x × x", "1"], ["z × z", "1"]]


def test_library_tables_render_every_row() -> None:
    for library in LIBRARIES:
        text = type_tables_page.type_library(library)
        counts = map(int, re.findall(r"^\*\*.+?\*\* \((\d+) combinations\)", text, re.M))
        assert sum(counts) == len(table(library).rows)
    with pytest.raises(ValueError, match=r"unknown group\(s\) \['fp9'\] of cuBLASLt; groups: general, fp8"):
        type_tables_page.type_library("cublaslt", ["fp9"])


def test_what_the_notes_get_right_and_the_page_says() -> None:
    hip = [r for r in table("hipblaslt").rows if r.scaling.id != "mx"]
    assert {r.d for r in hip} >= {"fp32", "fp16", "bf16", "e4m3", "e5m2", "int8"}  # D is not only FP32 or INT32
    assert {r.compute.accumulate for r in hip if r.a == "int8"} == {"int32"}
    assert {r.layout for r in _rows("hipblaslt", group="fp8-ocp")} == {"any"}  # every transpose combination


def test_nearest_ranks_by_fields_matched() -> None:
    ranked = nearest("hipblaslt", limit=3, a="fp16", b="fp16", c="fp16", d="fp32")
    assert [score for score, _ in ranked] == [3, 3, 1]
    assert {(row.c, row.d) for _, row in ranked[:2]} == {("fp16", "fp16"), ("fp32", "fp32")}
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['e'\]; fields: a, b, c, d, compute"):
        nearest("hipblaslt", e="fp16")
    with pytest.raises(ValueError, match="limit must be an int ≥ 1; got 0"):
        nearest("hipblaslt", limit=0, a="fp16")
