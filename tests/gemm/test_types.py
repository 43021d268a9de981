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


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["group"][0]["rows"][0].update(a="float16"),
            r"a = 'float16' is not a canonical name \(use 'fp16'\)",
        ),
        (lambda d: d["group"][0]["rows"][0].update(a="fp7"), "unknown format 'fp7'"),
        (lambda d: d["group"][0]["rows"].append(dict(d["group"][0]["rows"][0])), "is listed twice"),
        (lambda d: d["group"][0]["rows"][0].update(colour="red"), r"unknown keys \['colour'\]"),
        (lambda d: d["group"][0]["rows"][0].update(default_bias="fp32"), "default bias 'fp32' is not among"),
        (lambda d: d["group"][0]["rows"][0].update(source=["nowhere"]), "source 'nowhere' is not one of"),
        (lambda d: d["group"][0]["rows"][0].update(compute="fp128"), "compute 'fp128' is not one of"),
        (lambda d: d["group"][0]["rows"][0].update(arch=["sm_75"]), "architecture 'sm_75' is not one of"),
        (lambda d: d["group"][0]["rows"][0].update(confirmed=False), "needs `unconfirmed` fields"),
        (lambda d: d["group"][0]["rows"][0].update(layout="NT"), "layout 'NT' is not"),
        (lambda d: d.update(library="rocblas"), "unknown library 'rocblas'"),
    ],
)
def test_malformed_tables_are_refused(change, message) -> None:
    parse(_minimal())  # the unbroken table parses
    with pytest.raises(ValueError, match=message):
        parse(_broken(change))


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


def test_notes_a_and_b_need_not_match() -> None:
    hip = table("hipblaslt").rows
    mixed = {(r.a, r.b) for r in hip if r.a != r.b and r.scaling.id == "tensor"}
    assert mixed == {("e4m3", "e5m2"), ("e5m2", "e4m3"), ("e4m3fnuz", "e5m2fnuz"), ("e5m2fnuz", "e4m3fnuz")}
    for d in ("fp16", "bf16", "fp32", "e4m3", "e5m2"):
        assert check("hipblaslt", a="e4m3", b="e5m2", d=d, arch="gfx950", compute="fp32")
    assert len({(r.a, r.b) for r in hip if r.scaling.id == "mx"}) == 25  # any of five types for A and for B
    assert {(r.a, r.b) for r in table("cublaslt").rows if r.a != r.b} >= {("e4m3", "e5m2"), ("e5m2", "e4m3")}
    same = {r.a for r in hip if r.a == r.b and r.scaling.id == "none"}
    assert same == {"fp32", "fp16", "bf16", "int8"}


def test_notes_c_follows_d_not_a_and_b() -> None:
    hip = table("hipblaslt").rows
    assert all(r.c == r.d for r in hip)  # C always has D's type ...
    differs = {(r.a, r.c) for r in hip if r.c != r.a}
    assert {("fp16", "fp32"), ("int8", "int32")} <= differs  # ... so it differs from A when D does
    assert {r.c for r in hip if r.a == "e4m3"} == {"fp16", "bf16", "fp32", "e4m3", "e5m2"}
    cu_c_not_d = {(r.c, r.d) for r in table("cublaslt").rows if r.c != r.d}
    assert {d for _, d in cu_c_not_d} == {"e4m3", "e5m2", "e2m1"}
    assert {c for c, _ in cu_c_not_d} == {"bf16", "fp16"}


def test_notes_fp16_inputs_with_fp32_output_need_fp32_c() -> None:
    for library in LIBRARIES:
        with pytest.raises(ValueError, match="has no combination A=fp16, B=fp16, C=fp16, D=fp32") as info:
            check(library, a="fp16", b="fp16", c="fp16", d="fp32")
        assert "C=fp32  D=fp32" in str(info.value)  # the nearest combination is the one with an FP32 C
        (row,) = check(library, a="fp16", b="fp16", c="fp32", d="fp32", compute="fp32")
        assert row.confirmed


def test_notes_fp32_compute_is_not_always_fp32_arithmetic() -> None:
    (xf32,) = check("hipblaslt", a="fp32", b="fp32", d="fp32", compute="HIPBLAS_COMPUTE_32F_FAST_TF32")
    assert xf32.confirmed
    assert xf32.compute.accumulate == "fp32"
    assert get_format(xf32.compute.input_rounding).mantissa_bits == 10  # inputs lose 13 of FP32's 23 bits
    cu = {r.compute.id for r in check("cublaslt", a="fp32", b="fp32", d="fp32")}
    assert cu == {"fp32", "fast_16f", "fast_16bf", "fast_tf32", "emulated_16bfx9"}
    (half,) = check("cublaslt", a="fp16", b="fp16", d="fp16", compute="CUBLAS_COMPUTE_16F")
    assert half.compute.accumulate == "fp16"


def test_notes_all_fp8_gemm_is_hipblaslt_only() -> None:
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


def test_every_gemm_erratum_of_the_notes_is_on_the_page() -> None:
    entries = [e for e in load_errata() if e.topic == "gemm" and e.seed.startswith(type_tables.NOTES_SECTION)]
    # Five are decided by the type tables (this file); the FP8 accumulator one by the H100 record.
    assert len([e for e in entries if e.test.startswith("tests/gemm/test_types.py::")]) == 5
    rendered = type_tables.notes_errata_markdown()
    for e in entries:
        assert f"../about/errata.md#{e.id}" in rendered
        assert f"Decided by `{e.test}`" in rendered


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
    library = kwargs.pop("library")
    with pytest.raises(ValueError, match=message):
        check(library, **kwargs)


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
    text = type_tables.answers_markdown()
    lines = {line.split(" | ")[0].strip("| "): line.split(" | ")[1:] for line in text.splitlines()[2:]}
    mi300, mi355, h100 = lines["A E4M3, B E5M2, D BF16"]
    assert mi300.startswith("yes: e4m3fnuz × e5m2fnuz → bf16 (unconfirmed")
    assert mi355 == "yes: e4m3 × e5m2 → bf16"
    assert h100.startswith("yes: e4m3 × e5m2 → bf16 (A transposed, B not)")
    assert lines["A E5M2, B E5M2, D BF16"][2].strip(" |") == "no"
    assert [c.strip(" |") for c in lines["A, B FP16, C FP16, D FP32"]] == ["no", "no", "no"]


def test_comparison_counts_add_up() -> None:
    pairs = type_tables.comparison()
    summary = type_tables.comparison_markdown().splitlines()[0]
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
        text = type_tables.library_markdown(library)
        counts = map(int, re.findall(r"^\*\*.+?\*\* \((\d+) combinations\)", text, re.M))
        assert sum(counts) == len(table(library).rows)
    with pytest.raises(ValueError, match=r"unknown group\(s\) \['fp9'\] of cuBLASLt; groups: general, fp8"):
        type_tables.library_markdown("cublaslt", ["fp9"])


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
    with pytest.raises(ValueError, match="limit must be at least 1, got 0"):
        nearest("hipblaslt", limit=0, a="fp16")
