"""The recorded run of ``bench/triton_gemm.py`` (the Triton GEMM against cuBLAS on one GPU), as a typed record,
and what follows from it: the goal, the sizes measured with an earlier tiling, the compiler's shared-memory
figures.

A record holds the candidate configurations, the ``sweep`` that timed each against cuBLAS, the configurations
it chose (``chosen``), the ``compare`` phase (``matmul``'s default path per size, what Triton compiled, the host cost of
a launch) and the ``fp8`` phase against ``torch._scaled_mm``. Entries are found by their configuration (a
:class:`~gpukb.kernels.configs.Config`) and their size, never by a label. Nothing here imports torch or triton,
so the site builds anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from gpukb.bench.ceilings import measured_ceilings
from gpukb.bench.device import WindowClocks
from gpukb.bench.results import H100_SWEEP
from gpukb.bench.stats import Summary
from gpukb.kernels.configs import CANDIDATES, TUNED_ON, Config, current_choice, shared_memory_model
from gpukb.records import Record, load
from gpukb.schema import StrictModel

#: The committed H100 run (a record id, see :func:`gpukb.records.load`).
RECORD_ID = TUNED_ON

#: The goal set for the kernel: this fraction of cuBLAS's throughput at each of ``GOAL_SIZES`` (bf16 squares).
GOAL = 0.95
GOAL_SIZES = (4096, 8192)

#: The project's harness run whose best cuBLAS bf16 rate is the measured ceiling (a record id).
CEILING_RECORD = H100_SWEEP

Layout = Literal["NN", "NT"]
Phase = Literal["sweep", "compare", "fp8"]


class Check(StrictModel):
    """One product into a NaN-poisoned output, against a float64 reference.

    Attributes:
        shape: ``[M, N, K]``.
        dtype: The input and output type (a torch dtype name).
        layout: ``"NN"`` (B row-major) or ``"NT"`` (B the transpose of a row-major N×K matrix).
        all_written: No output element was left NaN.
        rel_error: Relative Frobenius error of the output.
        rel_error_of_rounded_reference: The same of the float64 product rounded once to ``dtype`` (the floor).
    """

    shape: tuple[int, int, int]
    dtype: str
    layout: Layout
    all_written: bool
    rel_error: float
    rel_error_of_rounded_reference: float


class Paired(StrictModel):
    """Kernel and peer timed call by call in alternation (ms), and the ratio of their medians (peer / kernel:
    above 1, the kernel was faster). ``cublas_ms`` is the peer's time (``torch._scaled_mm`` in the FP8 phase);
    ``clocks`` the SM clock and power sampled while the pairs ran (``None`` in runs before schema 2)."""

    kernel_ms: Summary
    cublas_ms: Summary
    ratio: float = Field(gt=0)
    clocks: WindowClocks | None = None


class SweepCase(Paired):
    """One configuration on one bf16 square of the sweep.

    Attributes:
        m: Rows of C (the sweep's products are squares: ``m == n == k``).
        diff_vs_cublas: Relative Frobenius difference from cuBLAS's output.
        identical_to_cublas: The outputs were bit-for-bit equal.
        timed: How the calls were timed: CUDA-graph replays (device time), or eager calls where capture failed.
        graph_error: Why capture failed, where it did.
        tflops: The kernel's rate from its median time.
        cublas_tflops: cuBLAS's rate from its median time.
    """

    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)
    diff_vs_cublas: float
    identical_to_cublas: bool
    timed: Literal["graph replays", "eager calls"]
    graph_error: str | None = None
    tflops: float
    cublas_tflops: float


class SweepEntry(StrictModel):
    """One candidate configuration: its check, and its cases (none where it failed to compile or fit).

    Attributes:
        error: The first line of the error that stopped it, or ``None``.
        compile_and_check_s: Seconds to compile and check it (``None`` where it failed).
    """

    config: Config
    check: Check | None
    compile_and_check_s: float | None
    results: list[SweepCase]
    error: str | None

    def case(self, size: int) -> SweepCase | None:
        """Its result on the size³ product, if it has one."""
        return next((r for r in self.results if r.m == size), None)


class Sweep(StrictModel):
    """Every candidate checked, then timed against cuBLAS on bf16 squares of ``sizes``."""

    sizes: list[int]
    configs: list[SweepEntry]

    def entry(self, config: Config) -> SweepEntry | None:
        """The entry of a configuration, if the sweep measured it."""
        return next((e for e in self.configs if e.config == config), None)

    def case(self, config: Config, size: int) -> SweepCase | None:
        """A configuration's result on the size³ product, if the sweep has one."""
        entry = self.entry(config)
        return None if entry is None else entry.case(size)

    def compiler_limit(self) -> int | None:
        """The shared-memory limit per program the compiler reported when a configuration did not fit, bytes."""
        for entry in self.configs:
            match = re.search(r"Hardware limit: (\d+)", entry.error or "")
            if match:
                return int(match.group(1))
        return None

    def compiler_required(self) -> dict[Config, int]:
        """Shared memory the compiler said a configuration that did not fit required, bytes."""
        required = {}
        for entry in self.configs:
            match = re.search(r"Required: (\d+)", entry.error or "")
            if match:
                required[entry.config] = int(match.group(1))
        return required


class Choice(StrictModel):
    """A configuration the sweep chose: the best geometric mean over ``sizes`` of cuBLAS time / kernel time."""

    config: Config
    sizes: list[int]
    geomean_ratio: float = Field(gt=0)


class Chosen(StrictModel):
    """The sweep's choices: for large and small 16-bit products, and for FP8 (``None`` where nothing passed).

    Attributes:
        rule: How a choice is made, in words.
        small_rate: The small tiling's rate relative to the large one's on the sweep's largest size.
    """

    large: Choice | None
    small: Choice | None
    rule: str
    small_rate: float | None
    fp8: Choice | None


class CompareRow(StrictModel):
    """``matmul``'s default path against cuBLAS on one square, three rounds of eager calls and three of graph
    replays. The measured fields are ``None`` where ``error`` says why the case failed.

    Attributes:
        dtype: Input and output type.
        layout: Storage of B (see :class:`Check`).
        config: The configuration ``matmul`` picked.
        rounds: Eager rounds; ``kernel_ms``, ``cublas_ms`` (the middle of the rounds' medians) and ``ratio``
            follow from them, and the rates from those times.
        graph_rounds: The same as CUDA-graph replays; ``graph_ratio`` from their middle medians.
    """

    dtype: str
    layout: Layout
    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)
    error: str | None
    config: Config | None
    all_written: bool | None
    diff_vs_cublas: float | None
    identical_to_cublas: bool | None
    rounds: list[Paired]
    graph_rounds: list[Paired]
    graph_error: str | None = None
    graph_ratio: float | None
    kernel_ms: float | None
    cublas_ms: float | None
    kernel_tflops: float | None
    cublas_tflops: float | None
    ratio: float | None

    @property
    def case_id(self) -> str:
        """``"bfloat16-NN-4096"``: type, layout and size, unique within a comparison."""
        return f"{self.dtype}-{self.layout}-{self.m}"


class Compiled(StrictModel):
    """What Triton compiled for one product (see :func:`gpukb.kernels.matmul.compiled_summary`); the compiled
    fields are ``None`` where ``error`` says why there is no kernel.

    Attributes:
        ptx: How many instructions of each of ``gpukb.kernels.matmul.PTX_MARKERS`` the PTX starts.
        warp_specialized: The IR held a ``ttg.warp_specialize`` operation.
    """

    dtype: str
    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)
    error: str | None
    config: Config | None
    registers: int | None
    spills: int | None
    shared_bytes: int | None
    ptx: dict[str, int] | None
    warp_specialized: bool | None


class HostOverhead(StrictModel):
    """Host time per call (µs) of a small product, split into the wrapper's parts, against ``torch.matmul``.

    Attributes:
        shape: ``[M, N, K]`` of the product.
        matmul_config: The configuration ``matmul`` picked for it.
        raw_launch_config: The configuration of the raw launches (``triton_launch_*``).
        profile: The top of a ``cProfile`` of 300 calls, as printed.
    """

    shape: tuple[int, int, int]
    matmul_config: Config
    raw_launch_config: Config
    matmul: float
    checks_and_config: float
    descriptors: float
    triton_launch_tma: float
    triton_launch_blocked: float
    torch_matmul: float
    profile: list[str]


class Compare(StrictModel):
    """The comparison phase: checks of the default path, the per-size rows, the compiled kernels, host costs.

    Attributes:
        host_overhead: ``None`` where ``host_overhead_error`` says why it was not measured.
    """

    checks: list[Check]
    records: list[CompareRow]
    compiled: list[Compiled]
    host_overhead: HostOverhead | None
    host_overhead_error: str | None = None

    def mismatched_sizes(self, sm_count: int) -> list[int]:
        """Sizes whose row measured a configuration other than the one the code picks now for a bf16 square."""
        return sorted({r.m for r in self.records if r.config is not None and r.config != current_choice(r.m, sm_count)})


class Fp8Peer(StrictModel):
    """``torch._scaled_mm``'s error on one square in one accumulation mode, and the rounded reference's."""

    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)
    use_fast_accum: bool
    rel_error: float
    rel_error_of_rounded_reference: float


class Fp8Case(Paired):
    """One FP8 configuration on one square, against ``_scaled_mm`` in the same accumulation mode
    (``peer_use_fast_accum``); ``cublas_ms`` is ``_scaled_mm``'s time."""

    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)
    rel_error: float
    all_written: bool
    peer_use_fast_accum: bool
    tflops: float
    peer_tflops: float


class Fp8Entry(StrictModel):
    """One FP8 candidate and its cases (none where ``error`` stopped it)."""

    config: Config
    results: list[Fp8Case]
    error: str | None


class Fp8(StrictModel):
    """The FP8 phase: E4M3 in, bf16 out, against ``torch._scaled_mm`` with unit scales."""

    sizes: list[int]
    peer: list[Fp8Peer]
    configs: list[Fp8Entry]

    def peer_for(self, size: int, fast: bool) -> Fp8Peer:
        """The peer's result on the size³ product in one accumulation mode.

        Raises:
            KeyError: If the run has none.
        """
        for p in self.peer:
            if p.m == size and p.use_fast_accum == fast:
                return p
        raise KeyError(f"the FP8 phase has no _scaled_mm result for {size}³ with use_fast_accum={fast}")


class PhaseStatus(StrictModel):
    """How one phase's process ended: its exit status (``None``: killed at its time limit) and its seconds."""

    name: Phase
    returncode: int | None
    seconds: float = Field(ge=0)


class TritonGemm(Record):
    """A run of ``bench/triton_gemm.py``: the Triton GEMM's candidate configurations against cuBLAS.

    Clock readings are in ``run.clocks``, keyed ``<phase>_start`` and ``<phase>_end``.

    Attributes:
        timing: How calls were timed, in words.
        inputs: How inputs were made, in words.
        defaults_in_code: ``DEFAULT_CONFIGS`` of the code that ran, by input type.
        small_defaults_in_code: ``SMALL_CONFIGS`` of the code that ran.
        candidates: The 16-bit configurations swept; ``fp8_candidates`` the FP8 ones.
        phases: How each phase's process ended.
        compare: ``None`` where the sweep chose nothing to compare; ``fp8`` ``None`` where it was skipped.
    """

    kind: Literal["kernels.triton-gemm"] = "kernels.triton-gemm"
    schema_version: Literal[2] = 2
    timing: str
    inputs: str
    defaults_in_code: dict[str, Config]
    small_defaults_in_code: dict[str, Config]
    candidates: list[Config]
    fp8_candidates: list[Config]
    phases: list[PhaseStatus]
    sweep: Sweep
    chosen: Chosen
    compare: Compare | None
    fp8: Fp8 | None

    @property
    def sm_count(self) -> int:
        """Multiprocessors of the GPU measured.

        Raises:
            ValueError: For a record without a GPU.
        """
        if self.run.gpu is None:
            raise ValueError("this Triton GEMM record names no GPU")
        return self.run.gpu.sm_count


def committed() -> TritonGemm:
    """The committed H100 run (:data:`RECORD_ID`)."""
    return load(RECORD_ID, expect=TritonGemm)


def measured_ceiling() -> float:
    """The best bf16 rate cuBLAS reached in the project's harness run (:data:`CEILING_RECORD`), in TFLOP/s."""
    return measured_ceilings(CEILING_RECORD)["bf16"]


@dataclass(frozen=True)
class GoalRow:
    """The goal at one size: the chosen large configuration's rate and cuBLAS's from the sweep (timed in
    alternation), their ratio, the kernel's fraction of the measured ceiling, and whether the goal was met."""

    size: int
    config: Config
    kernel_tflops: float
    cublas_tflops: float
    ratio: float
    of_ceiling: float
    met: bool
    timed: str


def goal_rows(record: TritonGemm, ceiling: float) -> list[GoalRow]:
    """For each of :data:`GOAL_SIZES`, the chosen large configuration against cuBLAS (see :class:`GoalRow`).

    Raises:
        ValueError: If the sweep chose no large configuration or has no result for it at a goal size.
    """
    if record.chosen.large is None:
        raise ValueError("the sweep chose no configuration for large products")
    config = record.chosen.large.config
    rows = []
    for size in GOAL_SIZES:
        case = record.sweep.case(config, size)
        if case is None:
            raise ValueError(f"the sweep has no {size}³ result for the chosen configuration {config.label!r}")
        rows.append(
            GoalRow(
                size=size,
                config=config,
                kernel_tflops=case.tflops,
                cublas_tflops=case.cublas_tflops,
                ratio=case.ratio,
                of_ceiling=case.tflops / ceiling,
                met=case.ratio >= GOAL,
                timed=case.timed,
            )
        )
    return rows


@dataclass(frozen=True)
class SharedMemoryRow:
    """Shared memory of one TMA candidate: by count (:func:`~gpukb.kernels.configs.shared_memory_model`), as the
    compiler reported it (``None`` where the run recorded no figure), and whether the count fits the limit the
    compiler reported (``None`` where it reported none)."""

    config: Config
    by_count: int
    reported: int | None
    fits: bool | None


def shared_memory_rows(record: TritonGemm) -> list[SharedMemoryRow]:
    """For each TMA candidate of :data:`~gpukb.kernels.configs.CANDIDATES`: its shared memory by count, the
    compiler's figure (from a refusal in the sweep, or a 16-bit kernel compiled in the comparison), and whether
    it fits."""
    limit = record.sweep.compiler_limit()
    reported = record.sweep.compiler_required()
    if record.compare is not None:
        for c in record.compare.compiled:
            if c.config is not None and c.shared_bytes is not None and c.dtype != "float8_e4m3fn":
                reported[c.config] = c.shared_bytes
    rows = []
    for config in CANDIDATES:
        if config.kernel != "tma":
            continue
        model = shared_memory_model(config)
        rows.append(SharedMemoryRow(config, model, reported.get(config), None if limit is None else model <= limit))
    return rows
