"""The ground-up page beyond its table checks (``test_ground_up.py``): the cuBLASLt build and output blocks and the
batched sentence read against record ``gemm/ground-up-h100`` read raw, the tables' defaults, another element type,
and what the tables print for a record that lacks a measurement (a run without nvcc, a variant that failed, one
round at a shape ``torch.mm`` did not run).
"""

from __future__ import annotations

import re

import pytest

from gpukb.gemm import results
from gpukb.gemm.pages import ground_up as page
from tests.gemm.pages import DASH, _ground, _rounds
from tests.gemm.pages.test_ground_up import check_blas_examples, check_blas_roofline, check_blocking_traffic
from tests.helpers import markdown_tables
from tests.page_calls import page_calls, rendered

#: What each BLAS example computes, from the routines' definitions (netlib BLAS).
OPERATIONS = {"axpy": "y ← αx + y", "dot": "xᵀy", "gemv": "y ← αAx + βy", "gemm": "C ← αAB + βC", "trsm": "X ← αT⁻¹X"}


def _on_page(function: str) -> str:
    """What the ground-up page's one render call of ``function`` prints (rendered once per session)."""
    (call,) = [c for c in page_calls() if c.page == "docs/gemm/ground-up.md" and c.function == function]
    return rendered(call)


@pytest.fixture
def record(monkeypatch: pytest.MonkeyPatch):
    """Set the record the page reads: ``record(**update)`` is the committed one with those fields replaced."""

    def use(**update):
        changed = results.ground_up_h100().model_copy(update=update)
        monkeypatch.setattr(page, "_ground_up", lambda record_id: changed)
        return changed

    return use


def test_the_build_block_is_nvccs_last_two_lines_and_the_compile_command() -> None:
    c = _ground()["cublaslt"]
    assert len(c["nvcc_version"].splitlines()) > 3  # so that tail -2 leaves lines out
    tail = c["nvcc_version"].splitlines()[-2:]
    compile_ = c["compile"]
    lines = ["$ nvcc --version | tail -2", *tail, f"$ {compile_['command']}", f"(exit status {compile_['returncode']})"]
    assert _on_page("cublaslt_build") == "```text\n" + "\n".join(lines) + "\n```"


def test_the_output_block_is_the_first_run_the_check_at_the_default_size() -> None:
    first = _ground()["cublaslt"]["runs"][0]
    assert first["round"] is None  # the check, run with no size arguments
    assert first["command"] == "./cublaslt_matmul"
    expected = f"```text\n$ ./cublaslt_matmul\n{first['stdout'].rstrip()}\n(exit status {first['returncode']})\n```"
    assert _on_page("cublaslt_output") == expected


def test_a_run_without_nvcc_says_so_in_both_blocks(record) -> None:
    record(cublaslt=results.Cublaslt(error="nvcc: command not found"))
    assert page.cublaslt_build() == "```text\n$ nvcc --version | tail -2\nnvcc not found\n```"
    assert page.cublaslt_output() == "The snippet did not compile on the GPU machine, so it did not run."


def test_one_round_at_a_shape_torch_did_not_run_is_one_rate_and_dashes(record) -> None:
    # the check run (768×512×1024) recorded a second time as a timed round, and no torch.mm timings
    check = results.ground_up_h100().cublaslt.runs[0]
    record(cublaslt=results.Cublaslt(runs=[check, check.model_copy(update={"round": 0})]))
    stdout = _ground()["cublaslt"]["runs"][0]["stdout"]
    shape = re.search(r"M=(\d+) N=(\d+) K=(\d+)", stdout).groups()
    assert shape == ("768", "512", "1024")  # not square: a swapped dimension shows
    rate = float(re.search(r"([\d.]+) TFLOP/s", stdout).group(1))
    (table,) = markdown_tables(page.cublaslt_speed())
    (row,) = table
    assert row["bf16 M×N×K"] == "768×512×1024"
    assert row["rounds"] == "1"
    assert row["snippet (cublasLtMatmul), TFLOP/s"] == f"{round(rate)}"  # one round: its rate, no range
    assert row["torch.mm, cuBLAS preferred"] == row["torch.mm, cuBLASLt preferred"] == DASH


def test_a_variant_that_was_not_timed_is_a_dash_and_so_is_its_ratio(record) -> None:
    kept = [r for r in results.ground_up_h100().batched if (r.m, r.batch) == (16, 16) and r.variant != "bmm"]
    failure = results.BatchedFailure(m=16, batch=16, variant="bmm", error="out of memory")
    record(batched=kept, batched_failures=[failure])
    (table,) = markdown_tables(page.batched_table())
    (row,) = table
    assert (row["m = n = k"], row["batch"]) == ("16³", "16")
    assert row["torch.bmm (µs)"] == row["loop time / bmm time"] == DASH
    loop = next(r for r in _ground()["batched"] if (r["m"], r["batch"], r["variant"]) == (16, 16, "loop"))
    assert _rounds(row["loop of torch.mm (µs)"].split(" ")[0], loop["ms"]["median"] * 1e3, 0)


def test_the_batched_sentence_reads_the_worst_difference_and_bf16s_step() -> None:
    worst = max(r["max_abs_diff"] / r["max_abs_out"] for r in _ground()["batched"] if r["max_abs_out"])
    sentence = _on_page("batched_agreement")
    assert f"relative to the largest output element, was {worst:.1e} (bf16" in sentence
    # bf16 has 8 significant bits: a relative step of 2^-8 = 1/256 = 0.0039
    assert sentence.endswith("bf16 outputs carry 8 significant bits, a relative step of 3.9e-03).")


@pytest.mark.parametrize(("n", "dtype"), [(4096, "fp32"), (8, "bf16")])
def test_blas_examples_of_each_type_say_what_each_computes(n: int, dtype: str) -> None:
    markdown = _on_page("blas_examples") if (n, dtype) == (4096, "fp32") else page.blas_examples(n, dtype)
    check_blas_examples(markdown, {"args": (n, dtype)})  # bytes of this type, its routine names
    (table,) = markdown_tables(markdown)
    assert [row["computes"] for row in table] == list(OPERATIONS.values())


def test_the_tables_defaults_are_the_documented_ones() -> None:
    check_blas_roofline(page.blas_roofline(), {"args": ((256, 4096), "fp32")})
    # n = 64 by default; one block size of 64, so that the blocked product runs once
    check_blocking_traffic(page.blocking_traffic(block_sizes=(64,)), {"args": (64, (64,))})
