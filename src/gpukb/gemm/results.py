"""The GEMM chapter's recorded GPU runs, as typed records (:mod:`gpukb.records`).

Two kinds:

* ``gemm.fp8-hardware`` (:class:`Fp8Hardware`), written by ``bench/gemm_fp8_h100.py``: which
  ``torch._scaled_mm`` combinations run, how close they come to the emulator, what fast accumulation, overflow and
  ``scale_result`` do, and TF32 against FP32. Committed as ``gemm/fp8-h100``.
* ``gemm.ground-up`` (:class:`GroundUp`), written by ``bench/gemm_ground_up.py``: the cuBLASLt snippet compiled and
  run next to ``torch.mm``, a batch of small GEMMs computed four ways, and one GEMM timed the wrong ways and the
  right ways. Committed as ``gemm/ground-up-h100``.

Entries are found by their keys (a timing by ``(dtype, n, method)``, a batched timing by ``(m, batch, variant)``),
never by the labels the pages show (those live in :mod:`gpukb.gemm.pages`).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from gpukb.formats.results import Tf32Check
from gpukb.measuring.device import WindowClocks
from gpukb.measuring.stats import Summary
from gpukb.records import Record, load
from gpukb.schema import StrictModel

#: The committed records of this chapter, by what they hold.
FP8_H100 = "gemm/fp8-h100"
GROUND_UP_H100 = "gemm/ground-up-h100"

#: A value of D as recorded: a number, or ``"nan"``, ``"inf"``, ``"-inf"`` (JSON has no such numbers).
Value = float | Literal["nan", "inf", "-inf"]


# --- gemm.fp8-hardware ----------------------------------------------------------------------------------------


class Attempt(StrictModel):
    """One call of ``torch._scaled_mm`` with these types: whether it ran, or what it raised.

    Attributes:
        a: Type of A (``e4m3``, ``e5m2``).
        b: Type of B.
        out: Type of D.
        bias: Type of the bias vector, or ``"none"``.
        accepted: Whether the call returned.
        error_type: The exception's class, for a refusal.
        error: The exception's message, for a refusal.
        finite: Whether every element of D was finite, for an accepted call.
    """

    a: str
    b: str
    out: str
    bias: str
    accepted: bool
    error_type: str | None = None
    error: str | None = None
    finite: bool | None = None


class LayoutAttempt(Attempt):
    """An :class:`Attempt` (E4M3 × E4M3 → BF16) with A and B stored row- or column-major."""

    a_layout: Literal["row-major", "column-major"]
    b_layout: Literal["row-major", "column-major"]


class Comparison(StrictModel):
    """The GPU's D against the emulator's and against FP64 for the same stored inputs (relative Frobenius norms).

    Attributes:
        a: Type of A.
        b: Type of B.
        out: Type of D.
        bias: Type of the bias, or ``"none"``.
        fast_accum: ``use_fast_accum`` (cuBLASLt's ``FAST_ACCUM``).
        m: Rows of A.
        n: Columns of B.
        k: Columns of A.
        seed: The seed the inputs are rebuilt from (:func:`gpukb.gemm.fp8_hardware.comparison_inputs`).
        hw_vs_fp64: The GPU's D (divided by the emulator's ``scale_d``, see ``emulator_scale``) against FP64.
        emulated: Whether the emulator models the combination (it models what cuBLASLt's table lists).
        emulator_error: Why not, when it does not.
        emulator_scale: For an FP8 D, the ``scale_d`` the emulator's figures use: ``"requested"`` (the
            ``scale_result`` passed to torch) or ``"one"`` (as if torch ignored it); ``None`` for other D types.
        hw_vs_emulator: The GPU's D against the emulator's.
        bound: The FP32-accumulation bound on that difference (:func:`gpukb.gemm.emulator.fp32_accumulation_bound`).
        identical_fraction: The fraction of elements that came out identical.
        emulator_vs_fp64: The emulator's D against FP64.
        hw_over_requested_vs_fp64: For an FP8 D, the GPU's D divided by the requested ``scale_result`` against FP64.
        hw_nonfinite: Elements of the GPU's D that were not finite.
    """

    a: str
    b: str
    out: str
    bias: str
    fast_accum: bool
    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)
    seed: int
    hw_vs_fp64: float
    emulated: bool
    emulator_error: str | None = None
    emulator_scale: Literal["requested", "one"] | None = None
    hw_vs_emulator: float | None = None
    bound: float | None = None
    identical_fraction: float | None = None
    emulator_vs_fp64: float | None = None
    hw_over_requested_vs_fp64: float | None = None
    hw_nonfinite: int | None = None


class AccumulationStep(StrictModel):
    """E4M3 × E4M3 → FP32 at one K, fast accumulation off or on, against the exact product.

    Attributes:
        k: The inner dimension.
        fast_accum: ``use_fast_accum``.
        hw_vs_exact: The GPU's relative error.
        emulator_vs_exact: The emulator's (FP32 accumulation).
        fp32_bound: How far any FP32 accumulation may be from the exact product, relative.
        max_error_per_abs_sum: The largest ``|D - exact| / (|A| @ |B|)``.
        gamma_k: ``γ(K)`` for FP32, which bounds that ratio for any FP32 summation order.
    """

    k: int = Field(gt=0)
    fast_accum: bool
    hw_vs_exact: float
    emulator_vs_exact: float
    fp32_bound: float
    max_error_per_abs_sum: float
    gamma_k: float


class ProbeSum(StrictModel):
    """One row of the accumulator probe: ``1 + (K - 1)·delta`` summed on the tensor cores."""

    k: int = Field(gt=0)
    delta: float
    exact: float
    emulator: float
    fast_accum_off: float
    fast_accum_on: float


class Overflow(StrictModel):
    """What D became past its type's largest value: on the GPU, saturating, and by the format's own rules.

    Attributes:
        a: Type of A.
        b: Type of B.
        out: Type of D.
        sums: The exact values of the D elements probed.
        emulator_saturating: The emulator's D with saturation.
        emulator_format_rules: The emulator's D by the format's rules (infinity or NaN).
        accepted: Whether torch ran the product.
        hardware: The GPU's D, when it ran.
        error_type: The exception's class, for a refusal.
        error: Its message.
    """

    a: str
    b: str
    out: str
    sums: list[float]
    emulator_saturating: list[Value]
    emulator_format_rules: list[Value]
    accepted: bool
    hardware: list[Value] | None = None
    error_type: str | None = None
    error: str | None = None


class ScaleResultProbe(StrictModel):
    """Whether ``scale_result`` changed D: ``norm_ratio`` is ``‖D(scale_result)‖ / ‖D(1)‖``."""

    out: str
    scale_result: float
    accepted: bool
    norm_ratio: float | None = None
    error_type: str | None = None
    error: str | None = None


class Int32Overflow(StrictModel):
    """``torch._int_mm`` of all -128 INT8 matrices at one K, against wrapping and saturating INT32."""

    k: int = Field(gt=0)
    exact: int
    accepted: bool
    hardware: int | None = None
    emulator_wrap: int | None = None
    emulator_saturate: int | None = None
    error_type: str | None = None
    error: str | None = None


class CublasltHeader(StrictModel):
    """The comments above some cuBLASLt attributes in the ``cublasLt.h`` of the machine that ran.

    Attributes:
        path: The header read.
        comments: Attribute name → the comment text above it.
    """

    path: str
    comments: dict[str, str]


class Fp8Hardware(Record):
    """What FP8 matrix products do on a GPU (``bench/gemm_fp8_h100.py``; :mod:`gpukb.gemm.fp8_hardware`)."""

    kind: Literal["gemm.fp8-hardware"] = "gemm.fp8-hardware"
    schema_version: Literal[1] = 1
    cublaslt_header: CublasltHeader | None
    acceptance: list[Attempt]
    layout: list[LayoutAttempt]
    agreement: list[Comparison]
    accumulation: list[AccumulationStep]
    accumulation_probe: list[ProbeSum]
    overflow: list[Overflow]
    scale_result: list[ScaleResultProbe]
    int32_overflow: list[Int32Overflow]
    tf32: list[Tf32Check]  # the formats chapter's model of the same check


# --- gemm.ground-up -------------------------------------------------------------------------------------------


class Process(StrictModel):
    """A command run to completion: what it was, its exit status and output."""

    command: str
    returncode: int
    stdout: str
    stderr: str


class SnippetOutput(StrictModel):
    """The numbers the cuBLASLt snippet prints: sizes, median time, rate, elements over the error bound, verdict."""

    m: int
    n: int
    k: int
    median_ms: float
    calls: int
    tflops: float
    over_bound: int
    passed: bool


_RUN_LINE = re.compile(r"M=(\d+) N=(\d+) K=(\d+)")
_TIME_LINE = re.compile(r"median ([\d.]+) ms over (\d+) calls \(CUDA events\): ([\d.]+) TFLOP/s")
_OVER_LINE = re.compile(r"elements over the bound: (\d+)")


def parse_snippet_output(stdout: str) -> SnippetOutput:
    """What ``snippets/gemm/cublaslt_matmul.cu`` printed, as numbers.

    Raises:
        ValueError: If a line the snippet always prints is missing.
    """
    found = {}
    for name, pattern in (("size", _RUN_LINE), ("time", _TIME_LINE), ("over", _OVER_LINE)):
        match = pattern.search(stdout)
        if match is None:
            raise ValueError(f"the snippet's output lacks its {name} line ({pattern.pattern}):\n{stdout}")
        found[name] = match.groups()
    m, n, k = map(int, found["size"])
    return SnippetOutput(
        m=m,
        n=n,
        k=k,
        median_ms=float(found["time"][0]),
        calls=int(found["time"][1]),
        tflops=float(found["time"][2]),
        over_bound=int(found["over"][0]),
        passed=stdout.rstrip().endswith("PASS"),
    )


class SnippetRun(Process):
    """One run of the compiled cuBLASLt snippet; ``round`` is ``None`` for the check at the default size."""

    round: int | None

    def parsed(self) -> SnippetOutput:
        """The numbers this run printed (:func:`parse_snippet_output`)."""
        return parse_snippet_output(self.stdout)


class TorchMm(StrictModel):
    """``torch.mm`` on random bf16 operands with one BLAS preference, timed like the snippet."""

    library: Literal["cublas", "cublaslt"]
    round: int = Field(ge=0)
    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)
    ms: Summary
    tflops: float
    rel_error: float
    clocks: WindowClocks | None = None


class Cublaslt(StrictModel):
    """The cuBLASLt snippet built with nvcc and run, and ``torch.mm`` on the same shapes in alternating rounds.

    Attributes:
        error: Why nothing was built (no nvcc), else ``None``.
        nvcc_version: ``nvcc --version``.
        preferred_blas_library: PyTorch's default BLAS preference on that machine.
        compile: The compile command and its outcome.
        runs: The snippet's runs: the check first, then the timed ones.
        torch_mm: The ``torch.mm`` timings.
    """

    error: str | None = None
    nvcc_version: str | None = None
    preferred_blas_library: str | None = None
    compile: Process | None = None
    runs: list[SnippetRun] = Field(default_factory=list)
    torch_mm: list[TorchMm] = Field(default_factory=list)

    def snippet_rates(self) -> dict[tuple[int, int, int], list[float]]:
        """The snippet's TFLOP/s in each timed round, by ``(m, n, k)`` (the first run, the check, left out)."""
        rates: dict[tuple[int, int, int], list[float]] = {}
        for run in self.runs[1:]:
            out = run.parsed()
            rates.setdefault((out.m, out.n, out.k), []).append(out.tflops)
        return rates

    def torch_rates(self, shape: tuple[int, int, int], library: str) -> list[float]:
        """``torch.mm``'s TFLOP/s in each round at one ``(m, n, k)`` with one BLAS preference."""
        return [r.tflops for r in self.torch_mm if (r.m, r.n, r.k) == shape and r.library == library]


#: How a batch of products was computed (:mod:`gpukb.gemm.batched`, plus the loop replayed from a CUDA graph).
BatchedVariant = Literal["loop", "loop_graph", "bmm", "one_gemm"]


class BatchedTiming(StrictModel):
    """A batch of ``batch`` bf16 products of m×k by k×n, computed one way, timed with CUDA events.

    Attributes:
        max_abs_diff: The largest difference of this way's result from ``torch.bmm``'s on the same operands.
        max_abs_out: The largest element of the output (the scale of that difference).
    """

    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)
    batch: int = Field(gt=0)
    dtype: str
    variant: BatchedVariant
    ms: Summary
    tflops: float
    gbps: float
    max_abs_diff: float
    max_abs_out: float


class BatchedFailure(StrictModel):
    """A way of computing a batch that could not be timed (a CUDA graph that failed to capture, say)."""

    m: int = Field(gt=0)
    batch: int = Field(gt=0)
    variant: BatchedVariant
    error: str


#: How a product was timed (``bench/gemm_ground_up.py``); the pages' labels for these are in :mod:`gpukb.gemm.pages`.
TimingMethod = Literal[
    "lab_first_call",
    "first_call_synchronized",
    "warm_call_no_sync",
    "warm_calls_no_sync",
    "warm_call_synchronized",
    "warm_calls_synchronized",
    "warm_calls_events",
    "back_to_back",
    "do_bench",
    "numpy_first_call",
    "numpy_after_first",
]


class TimingEntry(StrictModel):
    """One product (``dtype`` at n×n×n) timed one way.

    Attributes:
        device: ``cuda`` for the GPU products, ``cpu`` for the lab's numpy half.
        dtype: ``fp32``, ``tf32``, ``bf16``, or ``cpu-fp32``.
        n: The size.
        method: How it was timed.
        ms: Milliseconds per product.
        gflops: ``2n³`` over the median time.
        calls: For ``back_to_back``, the calls between the two clock readings.
        rel_error_vs_fp64: The product's error against float64 (first 256 rows), checked before timing.
    """

    device: Literal["cuda", "cpu"]
    dtype: str
    n: int = Field(gt=0)
    method: TimingMethod
    ms: Summary
    gflops: float
    calls: int | None = None
    rel_error_vs_fp64: float | None = None
    clocks: WindowClocks | None = None


class GroundUp(Record):
    """The GEMM ground-up and timing pages' GPU run (``bench/gemm_ground_up.py``)."""

    kind: Literal["gemm.ground-up"] = "gemm.ground-up"
    schema_version: Literal[2] = 2
    cublaslt: Cublaslt
    batched: list[BatchedTiming]
    batched_failures: list[BatchedFailure] = Field(default_factory=list)
    timing: list[TimingEntry]

    def batched_cases(self) -> list[tuple[int, int]]:
        """The ``(m, batch)`` cases timed, sorted."""
        return sorted({(r.m, r.batch) for r in self.batched})

    def batched_by_variant(self, m: int, batch: int) -> dict[str, BatchedTiming]:
        """One case's timings by variant."""
        return {r.variant: r for r in self.batched if (r.m, r.batch) == (m, batch)}

    def loop_over_bmm(self, m: int, batch: int) -> float | None:
        """How many times longer the loop of ``torch.mm`` took than one ``torch.bmm`` (``None`` if either is
        missing)."""
        by = self.batched_by_variant(m, batch)
        if "loop" not in by or "bmm" not in by:
            return None
        return by["loop"].ms.median / by["bmm"].ms.median

    def worst_batched_difference(self) -> float:
        """The largest difference of any variant from ``torch.bmm``, relative to the largest output element."""
        return max(r.max_abs_diff / r.max_abs_out for r in self.batched if r.max_abs_out)

    def timings(self, dtype: str | None = None, n: int | None = None) -> list[TimingEntry]:
        """The timing entries, optionally of one element type and size, in the order measured."""
        return [t for t in self.timing if (dtype is None or t.dtype == dtype) and (n is None or t.n == n)]

    def gpu_cases(self) -> list[tuple[str, int]]:
        """The GPU products timed, as ``(dtype, n)`` in the order run."""
        return list(dict.fromkeys((t.dtype, t.n) for t in self.timing if t.device == "cuda"))

    def by_method(self, dtype: str, n: int) -> dict[str, TimingEntry]:
        """One product's timings by method."""
        return {t.method: t for t in self.timings(dtype, n)}


def fp8_h100() -> Fp8Hardware:
    """The committed H100 run of ``bench/gemm_fp8_h100.py``."""
    return load(FP8_H100, expect=Fp8Hardware)


def ground_up_h100() -> GroundUp:
    """The committed H100 run of ``bench/gemm_ground_up.py``."""
    return load(GROUND_UP_H100, expect=GroundUp)
