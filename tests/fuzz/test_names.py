"""Fuzz: any name (random text, a near miss of a real one, not a string at all) is found or refused clearly."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpukb.datasets import catalog
from gpukb.datasets import tables as dataset_tables
from gpukb.formats import mx
from gpukb.formats.spec import formats, get_format
from gpukb.gemm import emulator, types
from gpukb.measuring import counting
from gpukb.performance import specs
from tests.fuzz.common import attempt, fuzz_settings, junk, near_misses

SETTINGS = fuzz_settings("test_names.py")
FORMAT_NAMES = list(formats()) + [n for f in formats().values() for n in f.library_names.values()]
TYPE_NAMES = ["fp8", "bf8", "fp16", "bf16", "fp32", "int8", "int32", "e4m3", "e5m2", "HIP_R_8F_E4M3_FNUZ"]
DEVICES = ["NVIDIA H100 80GB HBM3", "NVIDIA H200", "H100", "A100"]
ARCHS = ["gfx942", "gfx950", "MI300X", "sm_90", "H100", "sm_100", "B200"]


def names_like(real: list[str]) -> st.SearchStrategy:
    return st.one_of(st.sampled_from(real), near_misses(real), st.text(max_size=30), junk)


@SETTINGS
@given(names_like(FORMAT_NAMES))
def test_format_names(name) -> None:
    fmt, err = attempt(get_format, name)
    if err is None:
        assert name.strip().lower() in {n.lower() for n in FORMAT_NAMES} | {f"torch.{n}".lower() for n in FORMAT_NAMES}
        assert fmt.name in formats()
    elif isinstance(name, str) and len(name) < 100:
        assert "known formats" in str(err)  # an unknown name is answered with the list of known ones


@SETTINGS
@given(names_like(list(mx.ELEMENT_FORMATS) + FORMAT_NAMES), st.one_of(st.integers(-64, 64), junk))
def test_mx_element_formats_and_block_sizes(name, block_size) -> None:
    bits, err = attempt(mx.bits_per_element, name, block_size)
    if err is None:
        assert type(block_size) is int
        assert block_size >= 1
        assert bits >= get_format(name).bits


@SETTINGS
@given(
    st.one_of(st.sampled_from(["hipblaslt", "cublaslt"]), near_misses(["hipblaslt", "cublaslt"]), junk),
    names_like(TYPE_NAMES),
    names_like(TYPE_NAMES),
    st.one_of(st.none(), names_like(ARCHS)),
)
def test_gemm_type_checks(library, a, b, arch) -> None:
    rows, err = attempt(types.check, library, a=a, b=b, arch=arch)
    if err is None:
        assert rows  # check refuses a combination the table lacks, naming the nearest ones


@SETTINGS
@given(names_like(TYPE_NAMES + FORMAT_NAMES))
def test_gemm_type_names(name) -> None:
    attempt(types.canonical_type, name)
    attempt(types.describe_type, name)
    attempt(emulator.unit_roundoff, name)
    attempt(counting.element_bytes, name)


@SETTINGS
@given(
    names_like(["eeg", "people"]),
    st.one_of(st.none(), names_like(["verified", "partly-verified", "unverified"])),
    st.one_of(st.none(), st.text(max_size=20), junk),
    st.one_of(st.none(), st.integers(-5, 500), junk),
)
def test_dataset_catalog_filters(domain, status, text, min_subjects) -> None:
    cat, err = attempt(catalog.load, domain)
    if err is None:
        chosen, err = attempt(dataset_tables.select, cat, status=status, text=text, min_subjects=min_subjects)
        if err is None:
            assert all(e in cat.datasets for e in chosen)


@SETTINGS
@given(names_like(DEVICES), names_like(["bf16", "fp16", "fp8", "tf32"]))
def test_gpu_spec_lookups(device, dtype) -> None:
    gpu, err = attempt(specs.datasheet_for, device)
    if err is None:
        attempt(specs.datasheet_peak, gpu, dtype)
        attempt(specs.datasheet_ridge, gpu, dtype)
