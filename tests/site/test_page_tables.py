"""Every table a page renders has a test that checks its cells: the inventory.

The render blocks of docs/ are read with the fence lint (``gpukb.site.fences.render_calls``: page-layer functions
called by name with literal arguments), each call is rendered, and every call that prints a Markdown table must
have a cell check in its chapter's ``tests/<topic>/test_page_tables.py`` (``CHECKS``), or be listed in
:data:`NOT_CHECKED_YET` with the reason. The list may only shrink: an entry that is now checked, or that renders
no table, fails here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from gpukb.site.fences import classify, iter_fences, page_files, render_calls
from tests.helpers import ROOT, markdown_tables


@dataclass(frozen=True)
class PageCall:
    """One call of a render block: where, which page-layer function, with which literal arguments."""

    page: str
    line: int
    module: str
    function: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def __hash__(self) -> int:
        return hash((self.page, self.line, self.function, repr(self.args), repr(self.kwargs)))


@cache
def page_calls() -> tuple[PageCall, ...]:
    """Every page-layer call of every render block under docs/, in page order."""
    found = []
    for page in page_files(ROOT / "docs"):
        if page.suffix != ".md":
            continue
        for fence in iter_fences(page):
            if classify(fence) != "render":
                continue
            rel = page.relative_to(ROOT).as_posix()
            found += [PageCall(rel, fence.line, c.module, c.function, c.args, c.kwargs) for c in render_calls(fence)]
    return tuple(found)


#: Chapters with a cell-checking test module, by page layer.
CHECK_MODULES = {
    "gpukb.formats.pages": "tests.formats.test_page_tables",
    "gpukb.gemm.pages": "tests.gemm.test_page_tables",
}

# --8<-- [start:not-checked]
#: Page functions whose tables have no cell check yet, and why. The list may only shrink.
NOT_CHECKED_YET = {
    "gpukb.formats.pages": {
        "autocast_table": "a list of op names from the data file, checked against the file in test_mixed_precision",
        "mx_error_table": "errors of storage schemes on generated data; test_mx checks the library's rows",
        "tf32_check": "a recorded GPU result printed as stored; the record is validated on load",
        "cuda_casts": "a recorded GPU result printed as stored; the record is validated on load",
        "codec_speed": "a recorded timing printed as stored; the record is validated on load",
        "nvfp4_error_table": "new on the MX page this hour; tests/formats/test_nvfp4.py checks the library's rows",
    },
    "gpukb.gemm.pages": {
        "type_library": "vendor groups from the data file; test_types checks the rows",
        "batched_table": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "blas_examples": "computed by the gemm library, whose tests check the rows; no cell check of the page yet",
        "blas_roofline": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "blocking_capacity": "computed by the gemm library, whose tests check the rows; no cell check of the page yet",
        "blocking_levels": "computed by the gemm library, whose tests check the rows; no cell check of the page yet",
        "blocking_traffic": "computed by the gemm library, whose tests check the rows; no cell check of the page yet",
        "cpu_lab_table": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "cublaslt_speed": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "emulator_errors": "computed by the gemm library, whose tests check the rows; no cell check of the page yet",
        "first_call_table": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "fp8_acceptance": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "fp8_accumulation": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "fp8_agreement": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "fp8_layout": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "fp8_output": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "fp8_overflow": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "fp8_scale_result": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "fp8_tf32": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "timing_summary": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "timing_table": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "triton_compare": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "triton_compiled": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "triton_fp8": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "triton_goal": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "triton_overhead": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "triton_run": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "triton_shared_memory": "a recorded GPU or CPU result printed from its record, which is validated on load",
        "triton_sweep": "a recorded GPU or CPU result printed from its record, which is validated on load",
    },
}
# --8<-- [end:not-checked]


def _renders_a_table(call: PageCall) -> bool:
    module = importlib.import_module(call.module)
    return bool(markdown_tables(getattr(module, call.function)(*call.args, **call.kwargs)))


def _checked(module: str) -> set[str]:
    name = CHECK_MODULES.get(module)
    return set(importlib.import_module(name).CHECKS) if name else set()


def test_render_blocks_are_found() -> None:
    calls = page_calls()
    assert len(calls) > 100
    assert {"properties_table", "type_architectures", "type_comparison"} <= {c.function for c in calls}


@pytest.mark.parametrize("module", sorted(CHECK_MODULES))
def test_every_table_of_a_checked_chapter_has_a_cell_check(module: str) -> None:
    functions = {c.function for c in page_calls() if c.module == module and _renders_a_table(c)}
    waived = set(NOT_CHECKED_YET.get(module, {}))
    checked = _checked(module)
    assert sorted(functions - checked - waived) == [], "tables without a cell check"
    assert sorted(waived & checked) == [], "checked now: remove them from NOT_CHECKED_YET"
    assert sorted(waived - functions) == [], "render no table on any page: remove them from NOT_CHECKED_YET"


def test_checked_chapters_cover_what_they_claim() -> None:
    """Chapters without a check module yet are named on the "How we try to break this site" page."""
    layers = {c.module for c in page_calls()}
    assert set(CHECK_MODULES) <= layers
