"""FP8 GEMMs through torch._scaled_mm: the harness (on the CPU), and on a CUDA GPU the properties the page claims."""

from __future__ import annotations

import numpy as np
import pytest

from gpukb.gemm import fp8_hardware as hw
from gpukb.gemm.emulator import FP8_TYPES
from gpukb.gemm.pages import accuracy as accuracy_page
from gpukb.gemm.results import Fp8Hardware, fp8_h100

torch = pytest.importorskip("torch")


# --- the harness, run against PyTorch's CPU implementation ------------------------------------------------------


@pytest.mark.parametrize(("out", "bias"), [("bf16", None), ("fp32", None), ("bf16", "bf16"), ("fp16", "fp16")])
def test_harness_compares_gpu_and_emulator_on_the_cpu(out: str, bias: str | None) -> None:
    record = hw.compare("e4m3", "e5m2", out, bias, m=32, n=32, k=64, device="cpu")
    assert record.emulated is True
    assert record.hw_vs_emulator <= record.bound
    assert record.hw_nonfinite == 0
    assert record.hw_vs_fp64 == pytest.approx(record.emulator_vs_fp64, rel=0.05)
    assert record.emulator_scale is None  # not an FP8 D
    assert record.hw_over_requested_vs_fp64 is None


def test_harness_records_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise RuntimeError("CUBLAS_STATUS_NOT_SUPPORTED when calling cublasLtMatmul\nmore detail")

    monkeypatch.setattr(hw, "scaled_mm", refuse)
    record = hw.attempt("e4m3", "e4m3", "e5m2", device="cpu")
    assert record.accepted is False
    assert record.error_type == "RuntimeError"
    assert record.error.startswith("CUBLAS_STATUS_NOT_SUPPORTED")


def test_documented_follows_the_type_table() -> None:
    assert hw.documented("e4m3", "e5m2", "e5m2")
    assert not hw.documented("e4m3", "e4m3", "e5m2")
    assert not hw.documented("e5m2", "e5m2", "bf16")
    assert hw.documented("e4m3", "e4m3", "fp32", "bf16")
    assert not hw.documented("e4m3", "e4m3", "fp32", "fp16")


# --- on a CUDA GPU (recorded by bench/gemm_fp8_h100.py; these assert the same properties) --------------------


@pytest.mark.gpu
def test_scaled_mm_accepts_what_cublaslt_documents() -> None:
    grid = hw.acceptance_grid("cuda")
    for record in grid:
        print(record)
    for record in grid:
        if record.bias == "none":
            assert record.accepted == hw.documented(record.a, record.b, record.out), record
    # A bias never makes a refused combination work.
    plain = {(r.a, r.b, r.out): r.accepted for r in grid if r.bias == "none"}
    for record in grid:
        if record.accepted:
            assert plain[(record.a, record.b, record.out)], record


@pytest.mark.gpu
def test_gpu_agrees_with_the_emulator_within_the_fp32_bound() -> None:
    # For an FP8 D, compare() matches the GPU against the emulator with scale_result applied and ignored (torch 2.10
    # and 2.11 ignore it on CUDA) and keeps the closer; the recorded run of 2026-11-22 predates that and failed there.
    for a in FP8_TYPES:
        for b in FP8_TYPES:
            for out in hw.OUT_TYPES:
                if not hw.documented(a, b, out):
                    continue
                record = hw.compare(a, b, out, m=128, n=128, k=512, device="cuda")
                print(record)
                assert record.hw_vs_emulator <= record.bound, record


@pytest.mark.gpu
def test_fp8_output_saturates_like_the_emulator() -> None:
    for record in hw.overflow_probe("cuda"):
        print(record)
        assert record.accepted, record
        expected = record.emulator_saturating if record.out in FP8_TYPES else record.emulator_format_rules
        assert record.hardware == expected, record


@pytest.mark.gpu
def test_fast_accumulation_off_stays_within_the_fp32_bound() -> None:
    for record in hw.accumulation_study((1024, 4096), m=64, n=64, device="cuda"):
        print(record)
        if not record.fast_accum:
            assert record.hw_vs_exact <= record.fp32_bound, record
            assert record.max_error_per_abs_sum <= record.gamma_k, record


@pytest.mark.gpu
def test_tensor_wide_scales_are_applied_on_the_gpu() -> None:
    rng = np.random.default_rng(0)
    a = hw.round_to(rng.standard_normal((32, 64)), "e4m3")
    b = hw.round_to(rng.standard_normal((64, 32)), "e4m3")
    one = hw.scaled_mm(a, b, a_type="e4m3", b_type="e4m3", out_type="fp32")
    scaled = hw.scaled_mm(a, b, a_type="e4m3", b_type="e4m3", out_type="fp32", scale_a=0.5, scale_b=0.25)
    np.testing.assert_array_equal(scaled, one / 8)  # powers of two: exact


# --- the results recorded on the H100 (record gemm/fp8-h100), checked on any machine ----------------------------


@pytest.fixture(scope="module")
def recorded() -> Fp8Hardware:
    return fp8_h100()


def test_recorded_run_is_an_h100_with_torch_2_11(recorded: Fp8Hardware) -> None:
    run = recorded.run
    assert run.gpu is not None
    assert run.gpu.name.startswith("NVIDIA H100")
    assert run.versions.torch.startswith("2.11")
    assert run.versions.cublaslt == "13.1.0"
    assert run.command == "PYTHONPATH=src python3 bench/gemm_fp8_h100.py bench/results/gemm/fp8-h100.json"
    assert recorded.cublaslt_header is not None
    assert "will not periodically be promoted" in recorded.cublaslt_header.comments["CUBLASLT_MATMUL_DESC_FAST_ACCUM"]


def test_recorded_acceptance_without_bias_is_cublaslts_table(recorded: Fp8Hardware) -> None:
    plain = [r for r in recorded.acceptance if r.bias == "none"]
    assert len(plain) == 20
    for r in plain:
        assert r.accepted == hw.documented(r.a, r.b, r.out), r
    refused = {(r.a, r.b, r.out): r.error for r in plain if not r.accepted}
    assert refused[("e5m2", "e5m2", "bf16")] == "Multiplication of two Float8_e5m2 matrices is not supported"
    assert "CUBLAS_STATUS_NOT_SUPPORTED" in refused[("e4m3", "e4m3", "e5m2")]  # torch passes it on; cuBLASLt refuses


def test_recorded_mixed_fp8_inputs_run(recorded: Fp8Hardware) -> None:
    # The notes say A and B must have one type; both mixed FP8 pairs ran on the H100, with every 16/32-bit D.
    for a, b in (("e4m3", "e5m2"), ("e5m2", "e4m3")):
        for out in ("bf16", "fp16", "fp32", "e4m3", "e5m2"):
            (record,) = [r for r in recorded.acceptance if (r.a, r.b, r.out, r.bias) == (a, b, out, "none")]
            assert record.accepted, record
            assert record.finite, record


def test_recorded_bias_rules_are_torchs_and_stricter_than_cublaslt(recorded: Fp8Hardware) -> None:
    by_key = {(r.a, r.b, r.out, r.bias): r for r in recorded.acceptance}
    for a, b in (("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3")):
        assert by_key[(a, b, "bf16", "bf16")].accepted
        assert by_key[(a, b, "fp16", "fp16")].accepted
        assert by_key[(a, b, "e4m3", "bf16")].accepted
        assert by_key[(a, b, "e4m3", "fp16")].accepted
        # cuBLASLt's table lists a BF16 bias with an FP32 D; torch refuses any bias there.
        assert hw.documented(a, b, "fp32", "bf16")
        fp32_bias = by_key[(a, b, "fp32", "bf16")]
        assert not fp32_bias.accepted
        assert fp32_bias.error == "Bias is not supported when out_dtype is set to Float32"
        assert not any(by_key[(a, b, out, "fp32")].accepted for out in hw.OUT_TYPES)
    # Every accepted bias combination is in cuBLASLt's table.
    for r in recorded.acceptance:
        if r.accepted and r.bias != "none":
            assert hw.documented(r.a, r.b, r.out, r.bias), r


def test_recorded_layout_is_row_major_a_and_column_major_b(recorded: Fp8Hardware) -> None:
    accepted = {(r.a_layout, r.b_layout) for r in recorded.layout if r.accepted}
    assert accepted == {("row-major", "column-major")}
    assert all("row-major and column-major" in r.error for r in recorded.layout if not r.accepted)


def test_recorded_gpu_agrees_with_the_emulator_for_16_and_32_bit_d(recorded: Fp8Hardware) -> None:
    rows = [r for r in recorded.agreement if r.out not in FP8_TYPES]
    assert len(rows) == 24
    for r in rows:
        assert r.emulated, r
        assert r.hw_vs_emulator <= r.bound, r
        assert r.hw_vs_fp64 == pytest.approx(r.emulator_vs_fp64, rel=0.01)
    off = [r for r in rows if not r.fast_accum and r.bias == "none"]
    assert all(r.identical_fraction > 0.9 for r in off if r.out == "bf16")
    # With an FP32 D the GPU and the emulator differ by far more than two FP32 summations would (the emulator's own
    # error against the exact product, at the same K), because of the tensor cores' accumulator.
    (fp32_sum,) = [a for a in recorded.accumulation if a.k == rows[0].k and not a.fast_accum]
    for r in off:
        if r.out == "fp32":
            assert r.hw_vs_emulator > 100 * fp32_sum.emulator_vs_exact, r


def test_recorded_scale_result_was_ignored(recorded: Fp8Hardware) -> None:
    # torch 2.11 drops scale_result on CUDA (pytorch/pytorch#190449): D's norm does not change with it.
    assert [r.norm_ratio for r in recorded.scale_result] == [1.0, 1.0, 1.0, 1.0]
    # The FP8-D comparisons agree: the GPU's D matches the emulator's with scale_D = 1, not the requested one.
    for r in recorded.agreement:
        if r.out in FP8_TYPES and not r.fast_accum and r.bias == "none":
            gpu, applied, ignored = hw.requested_scale_errors(r)
            assert abs(gpu - ignored) < 1e-4 < abs(gpu - applied), (r, gpu, applied, ignored)


def test_recorded_fp8_outputs_saturate_and_int_mm_saturates(recorded: Fp8Hardware) -> None:
    for r in recorded.overflow:
        expected = r.emulator_saturating if r.out in FP8_TYPES else r.emulator_format_rules
        assert r.hardware == expected, r
    (fits, overflows) = recorded.int32_overflow
    assert fits.hardware == fits.exact == 131064 * 16384
    assert overflows.hardware == overflows.emulator_saturate == 2**31 - 1


def test_recorded_fp8_accumulation_is_not_fp32(recorded: Fp8Hardware) -> None:
    sweep = {(r.k, r.fast_accum): r for r in recorded.accumulation}
    ks = sorted({k for k, _ in sweep})
    for k in ks:
        off, on = sweep[(k, False)], sweep[(k, True)]
        # FP32 summation (the emulator) is more than 100 times closer to the exact product than the tensor cores.
        assert off.hw_vs_exact > 100 * off.emulator_vs_exact
        assert on.hw_vs_exact > off.hw_vs_exact
    # Fast accumulation off: the error does not grow with K (partial sums are promoted to FP32) ...
    errors_off = [sweep[(k, False)].hw_vs_exact for k in ks]
    assert max(errors_off) < 1.1 * min(errors_off)
    # ... but at K = 256 it exceeds what any FP32 summation order can produce.
    assert sweep[(256, False)].max_error_per_abs_sum > sweep[(256, False)].gamma_k
    # Fast accumulation on: the error grows with K.
    assert sweep[(4096, True)].hw_vs_exact > 5 * sweep[(256, True)].hw_vs_exact
    # The probe's partial sums need at most 13 bits, and come out exact: the accumulator keeps at least that many.
    assert hw.probe_bits_needed(recorded.accumulation_probe[0].k) == 13
    for r in recorded.accumulation_probe:
        assert r.fast_accum_off == r.fast_accum_on == r.emulator == r.exact, r


def test_recorded_tf32_error_is_its_input_rounding(recorded: Fp8Hardware) -> None:
    rows = sorted(recorded.tf32, key=lambda r: r.n)
    for r in rows:
        assert r.tf32_vs_exact > 200 * r.fp32_vs_exact
        assert r.tf32_vs_nearest_even_inputs < r.tf32_vs_exact / 20
    tf32 = [r.tf32_vs_exact for r in rows]
    assert max(tf32) < 1.05 * min(tf32)  # flat in n: the inputs' rounding
    fp32 = [r.fp32_vs_exact for r in rows]
    assert fp32 == sorted(fp32)  # grows with n: more additions round


def test_page_tables_render_from_the_recorded_file() -> None:
    assert "NVIDIA H100 80GB HBM3" in accuracy_page.fp8_measured_on()
    acceptance = accuracy_page.fp8_acceptance()
    assert "| e4m3 | e5m2 | e5m2 | yes | yes | yes | yes | refused |" in acceptance
    assert "`` RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED" in acceptance
    assert accuracy_page.fp8_layout().count("refused") == 3
    assert "scale_result was" in accuracy_page.fp8_output()
    assert "| 131072 | 2147483648 | 2147483647 |" in accuracy_page.fp8_overflow()
    for render in (
        accuracy_page.fp8_agreement,
        accuracy_page.fp8_accumulation,
        accuracy_page.fp8_scale_result,
        accuracy_page.fp8_tf32,
    ):
        assert render().startswith("|")
    with pytest.raises(ValueError, match=r"holds a 'formats\.codec-speed' record; expected 'gemm\.fp8-hardware'"):
        accuracy_page.fp8_acceptance("formats/codec-speed")


def test_requested_scale_errors_need_an_fp8_d(recorded: Fp8Hardware) -> None:
    sixteen_bit = next(r for r in recorded.agreement if r.out == "bf16")
    with pytest.raises(ValueError, match="not an emulated comparison with an FP8 D"):
        hw.requested_scale_errors(sixteen_bit)
    fp8 = [r for r in recorded.agreement if r.out in FP8_TYPES]
    assert {r.emulator_scale for r in fp8} == {"requested"}  # this run compared with the requested scale only
    assert all(r.hw_over_requested_vs_fp64 == r.hw_vs_fp64 for r in fp8)
