"""The recorded run of ``bench/triton_gemm.py`` (the Triton GEMM against cuBLAS on one GPU), as a typed record,
and what follows from it: the goal, the sizes measured with an earlier tiling, the compiler's shared-memory
figures.

A record holds the candidate configurations, the ``sweep`` that timed each against cuBLAS, the configurations
it chose (``chosen``), the ``compare`` phase (``matmul``'s default path per size, what Triton compiled, the host cost of
a launch) and the ``fp8`` phase against ``torch._scaled_mm``. Entries are found by their configuration (a
:class:`~gpukb.gemm.triton.configs.Config`) and their size, never by a label. Nothing here imports torch or triton,
so the site builds anywhere.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import Field

from gpukb.arguments import flag, positive_int, real, text
from gpukb.gemm.triton.configs import (
    CANDIDATES,
    DEFAULT_CONFIGS,
    TUNED_ON,
    Config,
    current_choice,
    shared_memory_model,
    stream_k_tiles,
    tail_rows,
)
from gpukb.measuring.device import WindowClocks
from gpukb.measuring.stats import Summary
from gpukb.performance.ceilings import h100_ceilings
from gpukb.records import Record, load
from gpukb.schema import StrictModel

#: The committed H100 run (a record id, see :func:`gpukb.records.load`).
RECORD_ID = TUNED_ON

#: The goal set for the kernel: this fraction of cuBLAS's throughput at each of ``GOAL_SIZES`` (bf16 squares).
GOAL = 0.95
GOAL_SIZES = (4096, 8192)

#: The project's harness run whose best cuBLAS bf16 rate is the measured ceiling (a record id).

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
    """What Triton compiled for one product (see :func:`gpukb.gemm.triton.matmul.compiled_summary`); the compiled
    fields are ``None`` where ``error`` says why there is no kernel.

    Attributes:
        ptx: How many instructions of each of ``gpukb.gemm.triton.matmul.PTX_MARKERS`` the PTX starts.
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

    kind: Literal["gemm.triton-gemm"] = "gemm.triton-gemm"
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
    """The H100's bf16 product ceiling the pages quote (:func:`gpukb.performance.ceilings.h100_ceilings`: the
    median of rounds interleaved with fp16 in one run), in TFLOP/s."""
    return h100_ceilings()["bf16"]


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
    """Shared memory of one TMA candidate: by count (:func:`~gpukb.gemm.triton.configs.shared_memory_model`), as the
    compiler reported it (``None`` where the run recorded no figure), and whether the count fits the limit the
    compiler reported (``None`` where it reported none)."""

    config: Config
    by_count: int
    reported: int | None
    fits: bool | None


def shared_memory_rows(record: TritonGemm) -> list[SharedMemoryRow]:
    """For each TMA candidate of :data:`~gpukb.gemm.triton.configs.CANDIDATES`: its shared memory by count, the
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


# --- The shape sweep (bench/triton_gemm_sweep.py) -------------------------------------------------------------

#: The committed shape sweep (a record id): the run after the third tuning, with the held-out sweep (H100).
SWEEP_RECORD_ID = "gemm/triton-gemm-sweep-h100-held-out"
#: The same code and tables on an H200 in an earlier call of the same session (the device the lease gave first).
SWEEP_H200_ID = "gemm/triton-gemm-sweep-h200-held-out"
#: The run after the fourth tuning: every set again and the second held-out draw, timed with the held timer.
SWEEP_FINAL_ID = "gemm/triton-gemm-sweep-h100-held-out-2"
#: The run after the look-up's rules changed (no tuning): the third held-out draw, the second re-measured (seen).
SWEEP_RULES_ID = "gemm/triton-gemm-sweep-h100-held-out-3"
#: The run after the fifth tuning (decode classes and under-filled waves on designed shapes), in the same process: the
#: fourth held-out draw, the third re-measured (seen), the tiny products and the first sweep.
SWEEP_FILL_ID = "gemm/triton-gemm-sweep-h100-held-out-4"
#: The run after step 11's look-up rules (weight-bound products carried over by bytes, a borrowed class's split-K
#: re-split for the product, the one-launch reduction capped; no tuning): the fifth held-out draw, the fourth
#: re-measured (seen), the tiny products and the first sweep.
SWEEP_BYTES_ID = "gemm/triton-gemm-sweep-h100-held-out-5"
#: The run after issue 29's tuning (the random sweep's first measurement), kept to show what the third tuning changed.
SWEEP_ISSUE29_ID = "gemm/triton-gemm-sweep-h100-issue29"
#: The sweep before issue 29 (the first run of the page's sweep), kept to show what changed.
SWEEP_BEFORE_ID = "gemm/triton-gemm-sweep-h100"

#: The sweep's goals (issue 29): for each 16-bit type and each of the first and the random sweep, the geometric mean
#: of the ratio to cuBLAS; no 16-bit product of at least ``FLOOR_MIN_MNK`` multiply-adds under ``SWEEP_FLOOR_GOAL``;
#: tiny products (``TINY_MNK``) within twice cuBLAS's time (a ratio of at least ``TINY_GOAL``); the FP8 ratio to
#: ``_scaled_mm`` (no fast accumulation) on shapes with every dimension ≥ ``FP8_GOAL_MIN_DIM``; the error relative
#: to the peer's.
SWEEP_GEOMEAN_GOAL = 0.95
SWEEP_FLOOR_GOAL = 0.80
FLOOR_MIN_MNK = 2**30
TINY_GOAL = 0.5
FP8_GOAL = 0.95
FP8_GOAL_MIN_DIM = 1024
ERROR_GOAL = 2.0

#: The sets of shapes a sweep record's rows belong to (:attr:`SweepRow.sweep`).
SweepName = Literal[
    "first",
    "issue",
    "random",
    "held-out",
    "held-out-2",
    "held-out-3",
    "held-out-4",
    "held-out-5",
    "held-out-6",
    "held-out-7",
    "held-out-8",
    "held-out-9",
    "tokens",
    "tokens-2",
    "tokens-3",
    "mid-rows",
    "tokens-4",
    "tiny",
]


class SweepRow(StrictModel):
    """One product of the sweep: ``matmul``'s default path against its peer in the same run.

    Attributes:
        group: ``"square"``, ``"odd"``, ``"llm"``, ``"k-heavy"`` or ``"tall-skinny"``.
        label: What the shape is, in words (``"Llama-3-8B MLP up 4096→14336"``).
        layout: ``"NN"``, ``"NT"``... (see :func:`gpukb.gemm.triton.matmul.layout_code`).
        tuned_on: The shape was its class's representative in the tuning run.
        config: The configuration ``matmul`` chose; ``split_k`` the K slices it used.
        staged: The operands copied into buffers with 128-byte-aligned rows first (``"A"``, ``"B"``, ``"C"``).
        peer: The peer, in words.
        kernel_ms: The kernel's median time in each round (ms); ``peer_ms`` the peer's.
        ratio: Peer time over kernel time (medians of the rounds' medians): above 1, the kernel was faster.
        rel_error: Relative Frobenius error of the kernel's output on the sampled rows, against float64;
            ``peer_rel_error`` the peer's; ``floor`` the float64 product's rounded once to the output type.
        all_written: No output element was left NaN.
        error: Why the kernel's case failed; ``peer_error`` why the peer's did.
        peer_kernels: The GPU kernels one call of the peer launched, by name (``torch.profiler``, after all the
            timing; bf16 products with M ≤ 64 and the K-heavy ones, or every bf16 product in runs with
            ``--profile all``); ``kernels`` the same for ``matmul``.
        sweep: Which set of shapes the row belongs to: ``"first"`` (the page's sweep), ``"issue"`` (the products
            issue 29 reported), ``"random"`` (the seeded draw of :mod:`gpukb.gemm.triton.model_shapes`, made before the
            issue-29 tuning), ``"held-out"`` (a second draw, made before the third tuning and measured only after it),
            ``"held-out-2"`` (a third draw, made after the fourth tuning and before the run that measured it),
            ``"held-out-3"`` (a fourth draw, made after the look-up's rules changed and before the run that measured
            it), ``"held-out-4"`` (a fifth draw, made before the fifth tuning and measured in the run after it),
            ``"held-out-5"`` (a sixth draw, made after the look-up's step-11 rules and before the run that measured it),
            ``"held-out-6"`` (a seventh, made after the look-up's step-15 rule and before the run that measured it),
            ``"held-out-7"`` (an eighth, made before step 16's run and before the run that measured it),
            ``"held-out-8"`` (a ninth, made before step 17's run and before the run that measured it),
            ``"held-out-9"`` (a tenth, made after step 20's rule and before the run that measured it),
            ``"tokens"`` (step 16's draw of products of 65 to 320 rows, made after its rule and before the run that
            measured it), ``"tokens-2"`` (step 18's, the same way), ``"tokens-3"`` (step 19's, made before its tuning
            run), ``"mid-rows"`` (step 20's draw of products of 321 to 2048 rows, made before its tuning run),
            ``"tokens-4"`` (step 21's draw of products of 65 to 320 rows, made before its tuning run),
            ``"tiny"`` (fewer than 2^20 multiply-adds).
        clocks: SM clock and power sampled while the row's rounds were timed (``None`` in earlier runs).
        kernel_host_us: The host's time to queue one timed sample of the kernel (the flush, two events and the
            call), each round's median, in µs; ``peer_host_us`` the peer's (empty in runs before the held timer).
    """

    sweep: SweepName = "first"
    dtype: str
    group: str
    label: str
    layout: str
    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)
    tuned_on: bool
    config: Config | None
    split_k: int | None
    staged: list[str]
    peer: str
    kernel_ms: list[float]
    peer_ms: list[float]
    kernel_host_us: list[float] = Field(default_factory=list)
    peer_host_us: list[float] = Field(default_factory=list)
    ratio: float | None
    kernel_tflops: float | None
    peer_tflops: float | None
    rel_error: float | None
    peer_rel_error: float | None
    floor: float | None
    all_written: bool | None
    error: str | None = None
    peer_error: str | None = None
    peer_kernels: list[str] | None = None
    kernels: list[str] | None = None
    clocks: WindowClocks | None = None

    @property
    def error_ratio(self) -> float | None:
        """The kernel's error over the peer's (``None`` where either is missing or the peer's is zero)."""
        if self.rel_error is None or not self.peer_rel_error:
            return None
        return self.rel_error / self.peer_rel_error


class HostRow(StrictModel):
    """Host cost of back-to-back calls of one tiny product.

    Attributes:
        what: The call, in words.
        wall_us: Wall time of ``calls`` back-to-back calls, ended by one synchronize, per call (µs).
        enqueue_us: Wall time until the last call returned, before the synchronize, per call (µs).
        kernel_us: The device time of one call, from CUDA-graph replays of the same call (µs).
        host_us: ``wall_us - kernel_us``: the issue's measure of host time per call.
    """

    what: str
    wall_us: float
    enqueue_us: float
    kernel_us: float
    host_us: float


class HostPath(StrictModel):
    """The host path: ``calls`` back-to-back calls of a tiny product of an already-seen shape.

    Attributes:
        notes: How the plans launched their kernels, and the top of a profile of 300 calls.
    """

    shape: tuple[int, int, int]
    dtype: str
    calls: int
    rows: list[HostRow]
    notes: list[str] = Field(default_factory=list)


class LayoutCheck(StrictModel):
    """One product on the GPU in a given layout (or strided view) into a NaN-poisoned output, against float64,
    next to cuBLAS's error on the same product."""

    what: str
    dtype: str
    shape: tuple[int, int, int]
    config: Config | None
    staged: list[str]
    all_written: bool | None
    rel_error: float | None
    peer_rel_error: float | None
    error: str | None = None


class TritonGemmSweep(Record):
    """A run of ``bench/triton_gemm_sweep.py``: the Triton GEMM's default path across shapes it was and was not
    tuned on, in bf16, fp16 and FP8, against cuBLAS in the same run; its host path; layout checks.

    Attributes:
        timing: How products were timed, in words.
        error_rows: Rows of C sampled for the errors against float64.
        tuning: The tuning table in use, as the run named it (the committed one is the record
            ``gemm/triton-gemm-tuning-h100``): made earlier in the same run, or, with ``--table``, by an earlier run.
        held_out: The held-out draw the run measured (seed, count and the commit that fixed it), if any.
    """

    kind: Literal["gemm.triton-gemm-sweep"] = "gemm.triton-gemm-sweep"
    schema_version: Literal[1] = 1
    timing: str
    inputs: str
    error_rows: int
    tuning: str
    host: HostPath | None
    tiny_host: HostPath | None = None
    checks: list[LayoutCheck]
    rows: list[SweepRow]
    held_out: str | None = None


def sweep_committed(record_id: str = SWEEP_RECORD_ID) -> TritonGemmSweep:
    """A committed shape sweep (by default the latest, :data:`SWEEP_RECORD_ID`)."""
    return load(record_id, expect=TritonGemmSweep)


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


@dataclass(frozen=True)
class SweepGoalRow:
    """One goal of the sweep, from its measured rows.

    Attributes:
        sweep: The set of shapes (:data:`SweepName`).
        dtype: The input type.
        scope: Which rows count, in words.
        rows: The rows that count (measured, with a ratio).
        geomean: Geometric mean of their ratios to the peer.
        lowest: The row with the lowest ratio.
        lowest_large: The row with the lowest ratio among those of at least :data:`FLOOR_MIN_MNK` multiply-adds
            (``None`` where there is none, or for FP8 and tiny products, whose goals are per row).
        goal: What is asked, in words; ``met`` whether the rows meet it.
        worst_error_ratio: The largest kernel error over peer error among the rows.
        errors_met: Every row's error is within :data:`ERROR_GOAL` times the peer's.
    """

    sweep: str
    dtype: str
    scope: str
    rows: tuple[SweepRow, ...]
    geomean: float
    lowest: SweepRow
    lowest_large: SweepRow | None
    goal: str
    met: bool
    worst_error_ratio: float
    errors_met: bool


#: The goals' order: (sweep, input type).
GOAL_SETS = (
    ("first", "bfloat16"),
    ("first", "float16"),
    ("random", "bfloat16"),
    ("random", "float16"),
    ("held-out", "bfloat16"),
    ("held-out", "float16"),
    ("held-out-2", "bfloat16"),
    ("held-out-2", "float16"),
    ("held-out-3", "bfloat16"),
    ("held-out-3", "float16"),
    ("held-out-4", "bfloat16"),
    ("held-out-4", "float16"),
    ("held-out-5", "bfloat16"),
    ("held-out-5", "float16"),
    ("held-out-6", "bfloat16"),
    ("held-out-6", "float16"),
    ("held-out-7", "bfloat16"),
    ("held-out-7", "float16"),
    ("held-out-8", "bfloat16"),
    ("held-out-8", "float16"),
    ("held-out-9", "bfloat16"),
    ("held-out-9", "float16"),
    ("tokens", "bfloat16"),
    ("tokens", "float16"),
    ("tokens-2", "bfloat16"),
    ("tokens-2", "float16"),
    ("tokens-3", "bfloat16"),
    ("tokens-3", "float16"),
    ("mid-rows", "bfloat16"),
    ("mid-rows", "float16"),
    ("tokens-4", "bfloat16"),
    ("tokens-4", "float16"),
    ("first", "float8_e4m3fn"),
    ("tiny", "bfloat16"),
    ("tiny", "float16"),
)


def _mnk(r: SweepRow) -> int:
    return r.m * r.n * r.k


def sweep_goal_rows(record: TritonGemmSweep) -> list[SweepGoalRow]:
    """The goals of :data:`GOAL_SETS` that the record has rows for: bf16 and fp16 on the first and the random sweep
    (geometric mean ≥ :data:`SWEEP_GEOMEAN_GOAL`, no product of ≥ :data:`FLOOR_MIN_MNK` multiply-adds below
    :data:`SWEEP_FLOOR_GOAL`); FP8 over the first sweep's rows with every dimension ≥ :data:`FP8_GOAL_MIN_DIM` (each
    ≥ :data:`FP8_GOAL`); tiny products (each ≥ :data:`TINY_GOAL`: within twice cuBLAS's time). Errors: every row of
    the set within :data:`ERROR_GOAL` times the peer's.

    Raises:
        ValueError: If the record has a first sweep and it has no measured row of a type.
    """
    out = []
    for sweep, dtype in GOAL_SETS:
        typed = [r for r in record.rows if r.dtype == dtype and r.sweep == sweep]
        measured = [r for r in typed if r.ratio is not None]
        fp8, tiny = dtype == "float8_e4m3fn", sweep == "tiny"
        if fp8:
            counted = [r for r in measured if min(r.m, r.n, r.k) >= FP8_GOAL_MIN_DIM]
            scope, goal = f"shapes with every dimension ≥ {FP8_GOAL_MIN_DIM}", f"each ≥ {FP8_GOAL}"
        elif tiny:
            counted = measured
            scope, goal = "every shape (M·N·K < 2^20)", f"each ≥ {TINY_GOAL} (within twice cuBLAS's time)"
        else:
            counted = measured
            scope = "every shape"
            goal = f"geometric mean ≥ {SWEEP_GEOMEAN_GOAL}, none of M·N·K ≥ 2^30 below {SWEEP_FLOOR_GOAL}"
        if not counted:
            if sweep == "first" and any(r.sweep == "first" for r in record.rows):  # a run of other sets has none
                raise ValueError(f"the sweep of {record.run.date} has no measured {dtype} row")
            continue
        ratios = [r.ratio for r in counted if r.ratio is not None]
        geomean = _geomean(ratios)
        lowest = min(counted, key=lambda r: r.ratio or 0.0)
        large = [r for r in counted if _mnk(r) >= FLOOR_MIN_MNK and not fp8 and not tiny]
        lowest_large = min(large, key=lambda r: r.ratio or 0.0) if large else None
        low = lowest.ratio or 0.0
        if fp8:
            met = low >= FP8_GOAL
        elif tiny:
            met = low >= TINY_GOAL
        else:
            met = geomean >= SWEEP_GEOMEAN_GOAL and (
                lowest_large is None or (lowest_large.ratio or 0.0) >= SWEEP_FLOOR_GOAL
            )
        errors = [r.error_ratio for r in typed if r.error_ratio is not None]
        worst = max(errors) if errors else math.nan
        out.append(
            SweepGoalRow(
                sweep=sweep, dtype=dtype, scope=scope, rows=tuple(counted), geomean=geomean, lowest=lowest,
                lowest_large=lowest_large, goal=goal, met=met, worst_error_ratio=worst,
                errors_met=bool(errors) and worst <= ERROR_GOAL,
            )
        )  # fmt: skip
    return out


def losing_rows(record: TritonGemmSweep, below: float = SWEEP_GEOMEAN_GOAL) -> list[SweepRow]:
    """The measured rows whose ratio to the peer is below ``below``, lowest first."""
    rows = [r for r in record.rows if r.ratio is not None and r.ratio < below]
    return sorted(rows, key=lambda r: r.ratio or 0.0)


@dataclass(frozen=True)
class TrialRow:
    """One candidate the tuning run timed on a class's representative shape.

    Attributes:
        config: The configuration; ``split_k`` the slices it used (split-K only).
        reads: How it reads the operands: ``"in place"`` (TMA descriptors over the operands as they are),
            ``"padded copy"`` (``pad_rows``: copied into rows on 128-byte lines first) or ``"pointers"`` (the blocked
            kernel's masked loads).
        units: Programs' worth of work: output tiles, times the K slices of a split-K configuration (a split tail:
            the persistent part's tiles plus the tail's tiles times its slices).
        rounds: How many rounds of ``units`` the GPU's multiprocessors take (the last one maybe part full; a split
            tail: the persistent part's rounds plus the tail's, each a round of short programs).
        ms: Its median time; ``ratio`` cuBLAS's time in the same run over it.
    """

    config: Config
    split_k: int | None
    reads: str
    units: int
    rounds: int
    ms: float
    ratio: float | None


def class_trials(record_id: str, layout: str, shape: tuple[int, int, int], sms: int = 132) -> list[TrialRow]:
    """Every timed candidate of the class tuned on ``shape`` in ``layout`` (bf16) of a tuning record, fastest first.

    Raises:
        ValueError: If the record tuned no class on that shape and layout.
    """
    from gpukb.gemm.triton.tuning import GemmTuning

    record = load(record_id, expect=GemmTuning)
    entry = next((c for c in record.classes if c.layout == layout and tuple(c.shape) == tuple(shape)), None)
    if entry is None:
        tuned = sorted({(c.layout, tuple(c.shape)) for c in record.classes})
        raise ValueError(f"{record_id} tuned no class on {layout} {shape}; it tuned {tuned}")
    m, n, _ = shape
    rows = []
    for t in sorted((t for t in entry.trials if t.ms is not None), key=lambda t: t.ms or 0.0):
        c = t.config
        reads = "pointers" if c.kernel == "blocked" else ("padded copy" if c.pad_rows else "in place")
        units = -(-m // c.block_m) * -(-n // c.block_n) * (t.split_k or 1)
        rounds = -(-units // sms)
        if c.split_tail:  # whole tiles on the persistent kernel, then the tail's tiles times its K slices
            rows_head, split = tail_rows(m, n, shape[2], c, sms)
            head = -(-rows_head // c.block_m) * -(-n // c.block_n)
            tail = -(-(m - rows_head) // c.block_m) * -(-n // c.block_n) * split
            units, rounds = head + tail, -(-head // sms) + -(-tail // sms)
        ms = float(t.ms or 0.0)
        ratio = None if entry.cublas_ms is None else entry.cublas_ms / ms
        rows.append(TrialRow(c, t.split_k, reads, units, rounds, ms, ratio))
    return rows


#: The fifth tuning run's record (decode classes and under-filled waves on designed shapes, ``--tune fill``).
FILL_TABLE_ID = "gemm/triton-gemm-tuning-h100-fill"


@dataclass(frozen=True)
class FillAlternatives:
    """What each kind of candidate reached on one class of the fifth tuning run (bf16, times in ms, the best of the
    kind; ``None`` where the kind was not tried there).

    Attributes:
        layout, shape: The class's representative product.
        cublas_ms: cuBLAS's time on it in the same run.
        earlier_ms: The best of the candidates the decode classes had before (64-row tiles, two kernels where split).
        narrow_ms: The best with 16- or 32-row tiles, each tile as it is.
        swapped_ms: The best computing each tile as its transpose (``swap_ab``).
        best: The fastest candidate of all (the class's choice); ``best_split`` the K slices it used.
        fused_ms, unfused_ms, split: 16×64×128 tiles, 4 stages, with the one-launch reduction and with the second
            kernel, at the most K slices both were timed at (``split``); ``None`` where neither was split.
        weight_bytes: Bytes of B (N·K elements of two bytes): what a decode step must read.
    """

    layout: str
    shape: tuple[int, int, int]
    cublas_ms: float | None
    earlier_ms: float | None
    narrow_ms: float | None
    swapped_ms: float | None
    best: Config
    best_ms: float
    best_split: int | None
    fused_ms: float | None
    unfused_ms: float | None
    split: int | None
    weight_bytes: int


def fill_alternatives(record_id: str = FILL_TABLE_ID) -> list[FillAlternatives]:
    """Each class of a ``--tune fill`` record, the best time of each kind of candidate (:class:`FillAlternatives`).

    Raises:
        TypeError, ValueError: For a ``record_id`` that is not a string, or not a tuning record that timed the fill
            candidates. FileNotFoundError: For an id with no record.
    """
    from gpukb.gemm.triton.tuning import CANDIDATES_16_FILL_DECODE, CANDIDATES_16_FILL_MID, GemmTuning

    record = load(text("record_id", record_id), expect=GemmTuning)
    new = set(CANDIDATES_16_FILL_DECODE + CANDIDATES_16_FILL_MID)
    if not any(replace(t.config, split_k=None) in new or t.config in new for c in record.classes for t in c.trials):
        raise ValueError(f"{record_id} timed none of the fill candidates (tuning.CANDIDATES_16_FILL_DECODE, _MID)")
    out = []
    for entry in record.classes:
        timed = [t for t in entry.trials if t.ms is not None]

        def best(trials: list, _: object = None) -> float | None:
            return min((float(t.ms) for t in trials), default=None)

        earlier = [t for t in timed if t.config not in new and replace(t.config, split_k=None) not in new]
        narrow = [t for t in timed if t.config.block_m < 64 and not t.config.swap_ab]
        swapped = [t for t in timed if t.config.swap_ab]
        pair = Config("splitk", 16, 64, 128, num_stages=4, num_warps=4)
        by_split: dict[int, dict[bool, float]] = {}
        for t in timed:
            c = t.config
            if replace(c, split_k=None, fused_reduce=False) == pair and t.split_k and t.split_k > 1:
                by_split.setdefault(t.split_k, {})[c.fused_reduce] = float(t.ms)  # type: ignore[arg-type]
        both = [split for split, found in by_split.items() if len(found) == 2]
        split = max(both, default=None)
        top = min(timed, key=lambda t: float(t.ms))  # type: ignore[arg-type]
        m, n, k = entry.shape
        out.append(
            FillAlternatives(
                entry.layout, (m, n, k), entry.cublas_ms, best(earlier), best(narrow), best(swapped), top.config,
                float(top.ms), top.split_k, None if split is None else by_split[split][True],  # type: ignore[arg-type]
                None if split is None else by_split[split][False], split, 2 * n * k,
            )
        )  # fmt: skip
    return out


@dataclass(frozen=True)
class FillSummary:
    """Counts over the decode classes (M ≤ 64) of a ``--tune fill`` record.

    Attributes:
        classes: Decode classes.
        narrow_faster: Classes where the best 16- or 32-row tiling beat the best earlier (64-row) candidate.
        one_slice: Classes whose fastest candidate cut K into one slice (stored directly).
        by_split: For each split above 1, ``(pairs, fused faster)``: the classes where 16×64×128 tiles (4 stages) were
            timed at that split with one launch and with two kernels, and how many the one launch won.
        swap_gap: The largest relative difference between the best transposed and the best plain 16- or 32-row time.
    """

    classes: int
    narrow_faster: int
    one_slice: int
    by_split: dict[int, tuple[int, int]]
    swap_gap: float


def fill_summary(record_id: str = FILL_TABLE_ID) -> FillSummary:
    """:class:`FillSummary` of a ``--tune fill`` record.

    Raises:
        TypeError, ValueError, FileNotFoundError: As :func:`fill_alternatives`.
    """
    from gpukb.gemm.triton.tuning import SMALL_M, GemmTuning

    decode = [a for a in fill_alternatives(record_id) if a.shape[0] <= SMALL_M]
    record = load(record_id, expect=GemmTuning)
    pair = Config("splitk", 16, 64, 128, num_stages=4, num_warps=4)
    one_slice = 0
    by: dict[int, list[int]] = {}
    for entry in record.classes:
        if entry.shape[0] > SMALL_M:
            continue
        timed = [t for t in entry.trials if t.ms is not None]
        top = min(timed, key=lambda t: float(t.ms))  # type: ignore[arg-type]
        one_slice += top.config.kernel != "splitk" or top.split_k == 1
        by_split: dict[int, dict[bool, float]] = {}
        for t in timed:
            if replace(t.config, split_k=None, fused_reduce=False) == pair and t.split_k and t.split_k > 1:
                by_split.setdefault(t.split_k, {})[t.config.fused_reduce] = float(t.ms)  # type: ignore[arg-type]
        for split, found in by_split.items():
            if len(found) == 2:
                counts = by.setdefault(split, [0, 0])
                counts[0] += 1
                counts[1] += found[True] < found[False]
    gaps = [abs(a.swapped_ms - a.narrow_ms) / a.narrow_ms for a in decode if a.swapped_ms and a.narrow_ms]
    return FillSummary(
        classes=len(decode),
        narrow_faster=sum(1 for a in decode if a.narrow_ms and a.earlier_ms and a.narrow_ms < a.earlier_ms),
        one_slice=one_slice,
        by_split={split: (counts[0], counts[1]) for split, counts in sorted(by.items())},
        swap_gap=max(gaps, default=0.0),
    )


#: Step 12's run: one stream-K round timed on seen products against the look-up's choice (``--tune streamk``).
STREAMK_TABLE_ID = "gemm/triton-gemm-tuning-h100-streamk"


@dataclass(frozen=True)
class StreamKPair:
    """One tiling of a ``--tune streamk`` record, timed without and with one stream-K round on one product.

    Attributes:
        layout, shape: The product.
        config: The tiling without ``stream_k``.
        tiles: Its tiles of C; ``shared`` those of the last, part-full round, whose K steps the stream-K kernel
            shares among ``sms`` programs (0: the tiles fill whole rounds, and the two are one kernel).
        k_steps: K steps of one tile (``ceil(K / block_k)``); ``contributors`` the most programs that share a tile.
        plain_ms, stream_k_ms: The two times (``None`` where one failed or was not timed).
        cublas_ms: cuBLAS's time on the product in the same run.
    """

    layout: str
    shape: tuple[int, int, int]
    config: Config
    tiles: int
    shared: int
    k_steps: int
    contributors: int
    plain_ms: float | None
    stream_k_ms: float | None
    cublas_ms: float | None


def _streamk_contributors(shared: int, k_steps: int, sms: int) -> int:
    """The most programs that share one tile of a stream-K round of ``shared`` tiles of ``k_steps`` K steps on ``sms``
    programs, as the kernel divides them (the first ``total % sms`` programs take one step more)."""
    total = shared * k_steps
    per, extra = divmod(total, sms)
    starts = [p * per + min(p, extra) for p in range(sms)] + [total]
    most = 0
    for tile in range(shared):
        lo, hi = tile * k_steps, (tile + 1) * k_steps
        most = max(most, sum(1 for p in range(sms) if starts[p] < hi and starts[p + 1] > lo))
    return most


def streamk_pairs(record_id: str = STREAMK_TABLE_ID, sms: int = 132) -> list[StreamKPair]:
    """Every tiling a ``--tune streamk`` record timed both without and with ``stream_k``, product by product in the
    record's order.

    Raises:
        TypeError, ValueError: For a ``record_id`` that is not a string, or not a tuning record that timed a
            ``stream_k`` candidate. FileNotFoundError: For an id with no record.
    """
    from gpukb.gemm.triton.tuning import GemmTuning

    record = load(text("record_id", record_id), expect=GemmTuning)
    if not any(t.config.stream_k for c in record.classes for t in c.trials):
        raise ValueError(f"{record_id} timed no stream_k candidate")
    out = []
    for entry in record.classes:
        times = {t.config: t.ms for t in entry.trials}
        m, n, k = entry.shape
        for config in times:
            if not config.stream_k or replace(config, stream_k=False) not in times:
                continue
            plain = replace(config, stream_k=False)
            tiles = -(-m // config.block_m) * -(-n // config.block_n)
            shared = stream_k_tiles(m, n, config, sms)
            k_steps = -(-k // config.block_k)
            contributors = _streamk_contributors(shared, k_steps, sms)
            out.append(
                StreamKPair(
                    entry.layout,
                    (m, n, k),
                    plain,
                    tiles,
                    shared,
                    k_steps,
                    contributors,
                    times[plain],
                    times[config],
                    entry.cublas_ms,
                )
            )
    return out


@dataclass(frozen=True)
class StreamKChoice:
    """One product of a ``--tune streamk`` record: the look-up's choice (the record's first trial of the product) and
    the fastest candidate with ``stream_k``, each with its time, and cuBLAS's (ms; ``None`` where not timed)."""

    layout: str
    shape: tuple[int, int, int]
    chosen: Config
    chosen_ms: float | None
    best_stream_k: Config | None
    best_stream_k_ms: float | None
    cublas_ms: float | None


def streamk_choices(record_id: str = STREAMK_TABLE_ID) -> list[StreamKChoice]:
    """:class:`StreamKChoice` for each product of a ``--tune streamk`` record, in its order.

    Raises:
        TypeError, ValueError, FileNotFoundError: As :func:`streamk_pairs`.
    """
    from gpukb.gemm.triton.tuning import GemmTuning

    streamk_pairs(record_id)  # refuses a record that timed no stream_k candidate
    record = load(record_id, expect=GemmTuning)
    out = []
    for entry in record.classes:
        first = entry.trials[0]
        timed = [t for t in entry.trials if t.config.stream_k and t.ms is not None]
        best = min(timed, key=lambda t: float(t.ms or 0.0), default=None)
        out.append(
            StreamKChoice(
                entry.layout,
                entry.shape,
                first.config,
                first.ms,
                None if best is None else best.config,
                None if best is None else best.ms,
                entry.cublas_ms,
            )
        )
    return out


@dataclass(frozen=True)
class ChangedRow:
    """A shape of the first sweep measured before issue 29 and after it: its configuration and ratio in each."""

    before: SweepRow
    after: SweepRow


def sweep_changes(before: TritonGemmSweep, after: TritonGemmSweep, threshold: float = 0.05) -> list[ChangedRow]:
    """The first-sweep shapes (type, layout, M, N, K) both records measured whose configuration changed, or whose
    ratio to the peer moved by more than ``threshold``, in the order of ``after``."""
    old = {(r.dtype, r.layout, r.m, r.n, r.k): r for r in before.rows if r.ratio is not None}
    out = []
    for r in after.rows:
        prior = old.get((r.dtype, r.layout, r.m, r.n, r.k))
        if r.sweep != "first" or prior is None or r.ratio is None or prior.ratio is None:
            continue
        if prior.config != r.config or abs(r.ratio - prior.ratio) > threshold:
            out.append(ChangedRow(prior, r))
    return out


#: A kernel round this many times its row's fastest marks a row whose median the host may have decided: the same
#: kernel on the same inputs, timed three times in one run (see :func:`uneven_rows`).
UNEVEN_ROUNDS = 1.5


def uneven_rows(record: TritonGemmSweep, factor: float = UNEVEN_ROUNDS) -> list[SweepRow]:
    """The measured rows whose slowest kernel round took more than ``factor`` times their fastest, in record order."""
    return [r for r in record.rows if r.ratio is not None and max(r.kernel_ms) > factor * min(r.kernel_ms)]


@dataclass(frozen=True)
class ArcStep:
    """One step of the page's arc: a change to the kernel or its tuning, and what it measured.

    Attributes:
        change: What changed, in words.
        config: The configuration measured on the squares (steps 1–4), else ``None``.
        squares: Its ratio to cuBLAS on bf16 4096³ and 8192³ (``gemm/triton-gemm-h100``), where measured.
        sweeps: The bf16 geometric mean of the ratio to cuBLAS on each set of shapes the step's run measured.
        record: The record the figures come from.
    """

    change: str
    config: Config | None
    squares: tuple[float | None, float | None]
    sweeps: dict[str, float]
    record: str


#: The arc's steps on the squares: what changed, and the configuration that measured it.
ARC_CONFIGS: tuple[tuple[str, Config], ...] = (
    ("one program per tile of C, masked pointer loads (as in tutorial 03), 128×128 tiles",
     Config("blocked", 128, 128, 64, num_stages=4, num_warps=4)),
    ("tiles of 128×256, two warpgroups", Config("blocked", 128, 256, 64, num_stages=3, num_warps=8)),
    ("TMA descriptors and a persistent grid (tutorial 09)", Config("tma", 128, 256, 64, num_stages=3, num_warps=8)),
    ("a fourth pipeline stage, the output stored in halves (the default)",
     Config("tma", 128, 256, 64, num_stages=4, num_warps=8, epilogue_subtile=True)),
)  # fmt: skip

#: The arc's steps across shapes: what changed, and the sweep record that measured it.
ARC_SWEEPS: tuple[tuple[str, str], ...] = (
    ("a tuning table by shape class; split-K for few tiles; copies for unaligned rows", SWEEP_BEFORE_ID),
    ("classes for under-filled waves, rows off 128-byte lines, transposed operands, tiny products", SWEEP_ISSUE29_ID),
    ("classes tuned on the random sweep's products: narrow decode tiles, rows off 32-byte sectors", SWEEP_RECORD_ID),
    ("classes designed for the empty ones; every set re-timed with a timer that cannot time the host", SWEEP_FINAL_ID),
    ("look-up rules: no fallback across layouts or row alignment, under-filled waves refilled, decode and long-K "
     "tiny products by rule", SWEEP_RULES_ID),
    ("decode classes tuned on designed shapes: 16-row tiles, a one-launch split-K, the transposed product",
     SWEEP_FILL_ID),
    ("look-up rules: weight-bound products carried over by bytes, a borrowed split re-split, the one-launch "
     "reduction at two slices at most", SWEEP_BYTES_ID),
)  # fmt: skip


def arc_steps(kernel_record: TritonGemm | None = None) -> list[ArcStep]:
    """The page's arc, step by step: each change with its measured ratio to cuBLAS (bf16), on the squares of the
    first run (``gemm/triton-gemm-h100``) and, for the tuning steps, the geometric mean on each set of shapes.

    Raises:
        ValueError: If the kernel record did not time one of :data:`ARC_CONFIGS` on both squares.
    """
    record = kernel_record or load("gemm/triton-gemm-h100", expect=TritonGemm)
    steps = []
    for change, config in ARC_CONFIGS:
        cases = [record.sweep.case(config, size) for size in (4096, 8192)]
        if any(c is None for c in cases):
            raise ValueError(f"the kernel record has no 4096³ and 8192³ result for {config.label!r}")
        steps.append(ArcStep(change, config, (cases[0].ratio, cases[1].ratio), {}, "gemm/triton-gemm-h100"))  # type: ignore[union-attr]
    for change, record_id in ARC_SWEEPS:
        sweep = sweep_committed(record_id)
        means = {g.sweep: g.geomean for g in sweep_goal_rows(sweep) if g.dtype == "bfloat16" and g.sweep != "tiny"}
        steps.append(ArcStep(change, None, (None, None), means, record_id))
    return steps


# --- why rounds of one product disagree: bench/triton_gemm_rounds.py ---------------------------------------------

#: The committed diagnostic run (a record id).
ROUNDS_RECORD_ID = "gemm/triton-gemm-rounds-h100"

#: How a case was timed: ``"do_bench, clocks sampled"`` (the sweep's method before the held timer: do_bench, with a
#: thread sampling SM clock and power every 5 ms), ``"do_bench"`` (no sampler), ``"traced"`` (do_bench's loop
#: written out, with the host's time per call and CUDA-event marks before each flush), ``"held"`` (the project's
#: timer with the samples queued behind a gate, same flush as do_bench, sampler running) and ``"graph"`` (a
#: CUDA-graph replay of the call, timed held: the device time without the Python launch path).
RoundsMethod = Literal["do_bench, clocks sampled", "do_bench", "traced", "held", "graph"]


class RoundsCase(StrictModel):
    """One product and side, timed in repeated rounds by one method.

    Attributes:
        side: ``"kernel"`` (``matmul``) or ``"peer"`` (cuBLAS, or ``torch._scaled_mm`` for fp8).
        rounds_ms: Each round's median time per call (ms).
        host_us: ``traced`` and ``held``: each round's median host time to queue one call (µs).
        waited: ``traced``: each round's fraction of calls before whose flush the GPU sat idle, waiting for the host.
    """

    dtype: str
    layout: str
    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)
    side: Literal["kernel", "peer"]
    method: RoundsMethod
    rounds_ms: list[float] = Field(min_length=1)
    host_us: list[float] | None = None
    waited: list[float] | None = None


class HostDelay(StrictModel):
    """One product with a host delay added to each call (a spin on the host clock before the launch), by method:
    the medians of the rounds (ms)."""

    delay_us: float = Field(ge=0)
    method: RoundsMethod
    rounds_ms: list[float] = Field(min_length=1)


class TritonRounds(Record):
    """A run of ``bench/triton_gemm_rounds.py``: products whose rounds disagreed in the held-out sweep, each side
    timed again and again by do_bench (with and without the clock sampler), by do_bench's loop traced call by call,
    by the held timer and from a CUDA-graph replay; one product with a growing host delay; what a flush costs.

    Attributes:
        flush_us: The device time of one flush (µs), by method: ``"zero_ 256 MiB"`` (do_bench's) and ``"read"`` (the
            project's :class:`~gpukb.measuring.timing.L2Flusher`).
        sampler_read_us: The time of each of a few hundred NVML readings of the clock sampler (µs).
        delay_shape: The product of :attr:`delays`: its layout, M, N and K (bf16).
    """

    kind: Literal["gemm.triton-rounds"] = "gemm.triton-rounds"
    schema_version: Literal[1] = 1
    timing: str
    tuning: str
    flush_us: dict[str, float]
    sampler_read_us: list[float] = Field(default_factory=list)
    cases: list[RoundsCase]
    delay_shape: tuple[str, int, int, int]
    delays: list[HostDelay]


def rounds_committed(record_id: str = ROUNDS_RECORD_ID) -> TritonRounds:
    """The committed diagnostic run of ``bench/triton_gemm_rounds.py``."""
    return load(record_id, expect=TritonRounds)


@dataclass(frozen=True)
class RoundsRow:
    """One product and side of the diagnostic run, every method side by side.

    Attributes:
        spread: For each method, the slowest round's median over the fastest's.
        held_us: The held timer's median over its rounds (µs); ``graph_us`` the graph replay's.
        host_us: The host's time per call in do_bench's loop traced (the median over its rounds, µs).
        waited: The largest fraction of calls, over the traced rounds, before whose flush the GPU sat idle.
    """

    dtype: str
    layout: str
    shape: tuple[int, int, int]
    side: str
    spread: dict[str, float]
    held_us: float
    graph_us: float
    host_us: float
    waited: float


def rounds_rows(record: TritonRounds | None = None) -> list[RoundsRow]:
    """The diagnostic run's products and sides in the record's order, each with every method's spread of rounds.

    Raises:
        ValueError: If a product and side lacks one of the methods.
    """
    record = record or rounds_committed()
    grouped: dict[tuple, dict[str, RoundsCase]] = {}
    for case in record.cases:
        grouped.setdefault((case.dtype, case.layout, case.m, case.n, case.k, case.side), {})[case.method] = case
    rows = []
    for (dtype, layout, m, n, k, side), methods in grouped.items():
        missing = sorted(set(RoundsMethod.__args__) - set(methods))  # type: ignore[attr-defined]
        if missing:
            raise ValueError(f"{dtype} {layout} {m}x{n}x{k} {side}: no rounds by {missing}")
        traced = methods["traced"]
        rows.append(
            RoundsRow(
                dtype=dtype, layout=layout, shape=(m, n, k), side=side,
                spread={name: max(c.rounds_ms) / min(c.rounds_ms) for name, c in methods.items()},
                held_us=float(_median(methods["held"].rounds_ms)) * 1e3,
                graph_us=float(_median(methods["graph"].rounds_ms)) * 1e3,
                host_us=float(_median(traced.host_us or [math.nan])),
                waited=max(traced.waited or [math.nan]),
            )
        )  # fmt: skip
    return rows


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


#: A round counts as slow when its median is this many times the fastest round's of the same method.
SLOW_ROUND = 1.3


def slow_rounds(record: TritonRounds | None = None, factor: float = SLOW_ROUND) -> dict[str, tuple[int, int]]:
    """For each method, ``(slow rounds, rounds)`` over every product and side: a round is slow when its median is
    over ``factor`` times the fastest round's of that product, side and method."""
    record = record or rounds_committed()
    counts: dict[str, tuple[int, int]] = {}
    for case in record.cases:
        fastest = min(case.rounds_ms)
        slow, total = counts.get(case.method, (0, 0))
        counts[case.method] = (slow + sum(x > factor * fastest for x in case.rounds_ms), total + len(case.rounds_ms))
    return counts


#: Step 14's run: tiles of two blocks, and tilings of one block flattened and not, on seen products (``--tune
#: twoblock``).
TWO_BLOCK_TABLE_ID = "gemm/triton-gemm-tuning-h100-twoblock"


@dataclass(frozen=True)
class TwoBlockRow:
    """One product of a ``--tune twoblock`` record (ms; ``None`` where a time is missing), cuBLAS's time in the same
    run, and:

    Attributes:
        chosen, chosen_ms: The look-up's choice (the record's first trial of the product).
        one_block, one_block_ms: The fastest tiling of one block (the look-up's choice among them where it is one).
        flat_ms, unflat_ms: The 192×128 tile of two blocks with its loops flattened, and not.
        two_block, two_block_ms: The fastest tile of two blocks.
    """

    layout: str
    shape: tuple[int, int, int]
    cublas_ms: float | None
    chosen: Config
    chosen_ms: float | None
    one_block: Config
    one_block_ms: float
    flat_ms: float | None
    unflat_ms: float | None
    two_block: Config
    two_block_ms: float


def two_block_rows(record_id: str = TWO_BLOCK_TABLE_ID) -> list[TwoBlockRow]:
    """:class:`TwoBlockRow` for each product of a ``--tune twoblock`` record, in its order.

    Raises:
        TypeError, ValueError: For a ``record_id`` that is not a string, or not a tuning record that timed both a
            tiling of one block and a tile of two blocks (flattened and not) on every product.
            FileNotFoundError: For an id with no record.
    """
    from gpukb.gemm.triton.tuning import GemmTuning

    record = load(text("record_id", record_id), expect=GemmTuning)
    out = []
    for entry in record.classes:
        timed = [t for t in entry.trials if t.ms is not None and t.config.kernel == "tma"]
        ones = [t for t in timed if not t.config.two_part]
        twos = [t for t in timed if t.config.two_part and not t.config.flatten]
        by_tile = {(t.config.block_m, t.config.block_n, t.config.flatten): t.ms for t in timed if t.config.two_part}
        if not ones or not twos or (192, 128, True) not in by_tile or (192, 128, False) not in by_tile:
            raise ValueError(
                f"{record_id}: {entry.layout} {entry.shape} lacks a timed tiling of one block, a tile of two blocks or "
                "the 192×128 tile flattened and not"
            )
        one = min(ones, key=lambda t: float(t.ms or 0.0))
        two = min(twos, key=lambda t: float(t.ms or 0.0))
        first = entry.trials[0]
        out.append(
            TwoBlockRow(
                entry.layout, entry.shape, entry.cublas_ms, first.config, first.ms, one.config, float(one.ms or 0.0),
                by_tile[192, 128, True], by_tile[192, 128, False], two.config, float(two.ms or 0.0),
            )
        )  # fmt: skip
    return out


#: Step 16's run: tall tiles and one-block tilings on seen products of 86 to 297 rows (``--tune tokens``).
TOKEN_TABLE_ID = "gemm/triton-gemm-tuning-h100-tokens"


@dataclass(frozen=True)
class TokenRow:
    """One product of a ``--tune tokens`` record (ms), cuBLAS's time and kernels in the same run, and:

    Attributes:
        chosen, chosen_ms: The look-up's choice (the record's first trial of the product).
        tall_128x128_ms, wide_64x256_ms: The one-block tilings 128×128 and 64×256 (``tuning.CANDIDATES_16_TOKENS``,
            ``tuning.TOKEN_TILE``).
        one_row, one_row_ms: The fastest of ``tuning.token_tiles`` that holds all M rows in one row of tiles.
        two_rows, two_rows_ms: The fastest that holds them in two.
        best, best_ms: The fastest trial of all.
    """

    layout: str
    shape: tuple[int, int, int]
    cublas_ms: float | None
    cublas_kernels: list[str] | None
    chosen: Config
    chosen_ms: float | None
    tall_128x128_ms: float
    wide_64x256_ms: float
    one_row: Config
    one_row_ms: float
    two_rows: Config
    two_rows_ms: float
    best: Config
    best_ms: float


def token_rows(record_id: str = TOKEN_TABLE_ID) -> list[TokenRow]:
    """:class:`TokenRow` for each product of a ``--tune tokens`` record, in its order.

    Raises:
        TypeError, ValueError: For a ``record_id`` that is not a string, or not a tuning record that timed, on every
            product, 128×128 and 64×256 and a tall tile in one row and in two rows of tiles.
        FileNotFoundError: For an id with no record.
    """
    from gpukb.gemm.triton import tuning

    record = load(text("record_id", record_id), expect=tuning.GemmTuning)
    out = []
    for entry in record.classes:
        m = entry.shape[0]
        timed = {t.config: float(t.ms) for t in entry.trials if t.ms is not None}
        # the candidates as tuning.token_trials timed them: with the look-up's choice's pad_rows (rows off 128-byte
        # lines are padded for every one)
        pad = entry.trials[0].config.pad_rows if entry.trials else False
        wide = replace(tuning.TOKEN_TILE, pad_rows=pad)
        tall = next(
            replace(c, pad_rows=pad) for c in tuning.CANDIDATES_16_TOKENS if (c.block_m, c.block_n) == (128, 128)
        )
        tiles = tuple(
            replace(c, pad_rows=pad)
            for c in (tuning.token_tiles(m) if tuning.SMALL_M < m <= tuning.TOKEN_MAX_M else ())
        )
        one = [c for c in tiles if c.block_m >= m and c in timed]
        two = [c for c in tiles if c.block_m < m and c in timed]
        if not (one and two and wide in timed and tall in timed):
            raise ValueError(
                f"{record_id}: {entry.layout} {entry.shape} lacks a timed 128×128, 64×256, or tall tile in one row and "
                "in two rows of tiles"
            )
        one_best, two_best = min(one, key=timed.__getitem__), min(two, key=timed.__getitem__)
        best = min(timed, key=timed.__getitem__)
        first = entry.trials[0]
        out.append(
            TokenRow(
                entry.layout, entry.shape, entry.cublas_ms, entry.cublas_kernels, first.config, first.ms,
                timed[tall], timed[wide], one_best, timed[one_best], two_best, timed[two_best], best, timed[best],
            )
        )  # fmt: skip
    return out


#: Step 17's run: the default tiling against the look-up's choice on seen large products (``--tune default``).
DEFAULT_TABLE_ID = "gemm/triton-gemm-tuning-h100-default"


@dataclass(frozen=True)
class DefaultRow:
    """One product of a ``--tune default`` record (ms), cuBLAS's time in the same run, and:

    Attributes:
        chosen, chosen_ms: The look-up's choice (the record's first trial of the product).
        default_ms: The default tiling (``DEFAULT_CONFIGS``: 128×256, four stages, subtiled epilogue).
        rounds: The default's tiles over ``sms`` programs: the rounds they fill, the last one in part.
        ruled: Whether step 17's rule (``tuning.many_rounds``) takes the default for this product.
    """

    layout: str
    shape: tuple[int, int, int]
    cublas_ms: float | None
    chosen: Config
    chosen_ms: float
    default_ms: float
    rounds: float
    ruled: bool


def default_rows(record_id: str = DEFAULT_TABLE_ID, sms: int = 132) -> list[DefaultRow]:
    """:class:`DefaultRow` for each product of a ``--tune default`` record, in its order, with rounds of ``sms``
    programs (the H100 the record ran on has 132).

    Raises:
        TypeError, ValueError: For a ``record_id`` that is not a string, or not a tuning record that timed, on every
            product, the look-up's choice and the default, and no trials but ``tuning.default_trials``'s (other
            steps' records time the default too); an ``sms`` that is not an int ≥ 1.
        FileNotFoundError: For an id with no record.
    """
    from gpukb.gemm.triton import tuning

    record = load(text("record_id", record_id), expect=tuning.GemmTuning)
    sms = positive_int("sms", sms)
    out = []
    for entry in record.classes:
        if not entry.trials:
            raise ValueError(
                f"{record_id}: {entry.layout} {entry.shape} lacks a timed look-up choice or default tiling"
            )
        first = entry.trials[0]
        default = replace(DEFAULT_CONFIGS["bfloat16"], pad_rows=first.config.pad_rows)
        timed = {t.config: t.ms for t in entry.trials if t.ms is not None}
        if first.ms is None or default not in timed:
            raise ValueError(
                f"{record_id}: {entry.layout} {entry.shape} lacks a timed look-up choice or default tiling"
            )
        if {t.config for t in entry.trials} != set(tuning.default_trials(first.config)):  # another step's record
            raise ValueError(
                f"{record_id}: {entry.layout} {entry.shape} timed other trials than step 17's (the look-up's choice, "
                "then tuning.CANDIDATES_16_DEFAULT)"
            )
        m, n, k = entry.shape
        rounds = -(-m // default.block_m) * -(-n // default.block_n) / sms
        ruled = tuning.many_rounds(first.config, entry.dtype, m, n, k, sms) != first.config
        out.append(
            DefaultRow(
                entry.layout, entry.shape, entry.cublas_ms, first.config, first.ms, timed[default], rounds, ruled
            )
        )
    return out


def _step_products(record_id: str, step: int, what: str, trials: Callable[[Any, Config], Any]) -> Iterator[Any]:
    """``(entry, first trial)`` for each product of a product-by-product tuning record, checked to be one step
    ``step`` timed: a timed look-up choice first, then exactly ``trials(entry, choice)`` (``None``: a product the step
    does not take). ``what`` says so in the error."""
    from gpukb.gemm.triton import tuning

    for entry in load(text("record_id", record_id), expect=tuning.GemmTuning).classes:
        first = entry.trials[0] if entry.trials else None  # a record may hold a product with no trials
        expected = None if first is None or first.ms is None else trials(entry, first.config)
        if expected is None or tuple(t.config for t in entry.trials) != expected:
            raise ValueError(f"{record_id}: {entry.layout} {entry.shape} is not a product step {step} timed ({what})")
        yield entry, first


def _bf16_step_products(
    record_id: str, step: int, what: str, trials: Callable[[Any, Config], Any]
) -> Iterator[tuple[Any, Any]]:
    """:func:`_step_products` for a step that timed each bf16 product once (steps 19 to 21): a product of another
    type, one in the record twice, or a record with none is refused (the readers' means and shares are over the
    products, and a twin would be its own nearest product in step 19's leave-one-out)."""
    seen = set()
    for entry, first in _step_products(record_id, step, what, trials):
        if entry.dtype != "bfloat16":
            raise ValueError(f"{record_id}: {entry.layout} {entry.shape} is {entry.dtype}; step {step} timed bfloat16")
        if (entry.layout, entry.shape) in seen:
            raise ValueError(
                f"{record_id}: {entry.layout} {entry.shape} is in the record twice; step {step} timed it once"
            )
        seen.add((entry.layout, entry.shape))
        yield entry, first
    if not seen:
        raise ValueError(f"{record_id}: holds no product; step {step}'s record holds every product it timed")


#: Step 18's run: split-K tilings and two persistent ones on seen products of 65 to 320 rows (``--tune tokensplit``).
TOKEN_SPLIT_TABLE_ID = "gemm/triton-gemm-tuning-h100-tokensplit"


@dataclass(frozen=True)
class TokenSplitRow:
    """One product of a ``--tune tokensplit`` record (ms), cuBLAS's time in the same run, and:

    Attributes:
        chosen, chosen_ms, chosen_slices: The look-up's choice (the record's first trial of the product) and the K
            slices it ran.
        tiles: The product's tiles of 64×128 (``tuning.TOKEN_SPLIT_TILE``).
        persistent_ms: The persistent kernel's 64×128 tiles.
        split, split_ms, slices: The fastest split-K trial (the look-up's choice among them) and the K slices it ran.
        ruled: Whether step 18's rule (``tuning.token_split``) takes the persistent tiles for this product.
    """

    layout: str
    shape: tuple[int, int, int]
    cublas_ms: float | None
    chosen: Config
    chosen_ms: float
    chosen_slices: int | None
    tiles: int
    persistent_ms: float
    split: Config
    split_ms: float
    slices: int | None
    ruled: bool


def token_split_rows(record_id: str = TOKEN_SPLIT_TABLE_ID) -> list[TokenSplitRow]:
    """:class:`TokenSplitRow` for each product of a ``--tune tokensplit`` record, in its order.

    Raises:
        TypeError, ValueError: For a ``record_id`` that is not a string, or not a record of step 18's trials
            (``tuning.token_split_trials``) on products whose look-up choice was the split-K kernel, or one whose
            persistent 64×128 tiling has no time (it failed).
        FileNotFoundError: For an id with no record.
    """
    from gpukb.gemm.triton import tuning

    def trials(entry: Any, chosen: Config) -> tuple[Config, ...] | None:
        if chosen.kernel != "splitk":
            return None
        return tuning.token_split_trials(chosen, *entry.shape, tuning.SMS_TUNED)

    out = []
    for entry, first in _step_products(record_id, 18, "a timed split-K choice, then tuning.token_split_trials", trials):
        m, n, k = entry.shape
        timed = {t.config: t.ms for t in entry.trials if t.ms is not None}
        tile = replace(tuning.TOKEN_SPLIT_TILE, pad_rows=first.config.pad_rows)
        if tile not in timed:  # a trial that failed is recorded without a time
            raise ValueError(f"{record_id}: {entry.layout} {entry.shape} lacks a timed persistent 64×128 tiling")
        split = min((t for t in entry.trials if t.ms is not None and t.config.kernel == "splitk"), key=lambda t: t.ms)
        ruled = tuning.token_split(first.config, entry.dtype, m, n, k) != first.config
        tiles = -(-m // tile.block_m) * -(-n // tile.block_n)
        out.append(
            TokenSplitRow(
                entry.layout, entry.shape, entry.cublas_ms, first.config, first.ms, first.split_k, tiles, timed[tile],
                split.config,
                split.ms, split.split_k, ruled,
            )
        )  # fmt: skip
    return out


#: Step 19's record: swapped tiles on every seen product of 65 to 320 rows (``bench/triton_gemm_sweep.py --tune swap``).
SWAP_TABLE_ID = "gemm/triton-gemm-tuning-h100-swap"


@dataclass(frozen=True)
class SwapRow:
    """One product of a ``--tune swap`` record (ms), cuBLAS's time in the same run, and:

    Attributes:
        chosen, chosen_ms: The look-up's choice (the record's first trial of the product).
        swapped, swapped_ms: The fastest swapped tile (``swap_ab``).
        same_ms: The swapped tile of the choice's own shape (its rows along the tokens, its columns along B's), where
            the choice is a persistent tiling of one block and step 19 timed that tile; ``None`` otherwise.
    """

    layout: str
    shape: tuple[int, int, int]
    cublas_ms: float | None
    chosen: Config
    chosen_ms: float
    swapped: Config
    swapped_ms: float
    same_ms: float | None

    @property
    def gain(self) -> float:
        """The look-up's choice's time over the fastest swapped tile's: above 1, swapping was faster."""
        return self.chosen_ms / self.swapped_ms


def swap_rows(record_id: str = SWAP_TABLE_ID) -> list[SwapRow]:
    """:class:`SwapRow` for each product of a ``--tune swap`` record, in its order.

    Raises:
        TypeError, ValueError: For a ``record_id`` that is not a string, or not a record of step 19's trials
            (bf16 products, each once, each a timed look-up choice, then ``tuning.swap_trials``), a record with no
            product, or one of whose products has no timed swapped tile.
        FileNotFoundError: For an id with no record.
    """
    from gpukb.gemm.triton import tuning

    def trials(entry: Any, chosen: Config) -> tuple[Config, ...] | None:
        m, n, k = entry.shape
        if not tuning.SMALL_M < m <= tuning.TOKEN_MAX_M or min(n, k) < 1:  # the leave-one-out takes logarithms
            return None
        return tuning.swap_trials(chosen, m)

    out = []
    for entry, first in _bf16_step_products(record_id, 19, "a timed choice, then tuning.swap_trials", trials):
        swapped = [t for t in entry.trials[1:] if t.ms is not None and t.config.swap_ab]
        if not swapped:
            raise ValueError(f"{record_id}: {entry.layout} {entry.shape} has no timed swapped tile")
        best = min(swapped, key=lambda t: t.ms)
        same = [
            t.ms for t in swapped
            if (first.config.kernel, first.config.two_part, first.config.swap_ab) == ("tma", False, False)
            and (t.config.block_m, t.config.block_n) == (first.config.block_m, first.config.block_n)
        ]  # fmt: skip
        out.append(
            SwapRow(entry.layout, entry.shape, entry.cublas_ms, first.config, first.ms, best.config, best.ms,
                    same[0] if same else None)
        )  # fmt: skip
    return out


@dataclass(frozen=True)
class RuleScore:
    """What a candidate rule would have done on the products of a product-by-product record, scored with each
    product's own times: step 19's nearest-neighbour verdicts (:func:`swap_leave_one_out`), step 20's count of work
    (:func:`mid_by_count`).

    Attributes:
        products: The products tried.
        changed: How many the rule would have given another configuration.
        faster, slower: How many of those ran faster, or slower, than the look-up's choice by more than the margin.
        mean_gain: The geometric mean, over all the products, of the choice's time over the rule's.
    """

    products: int
    changed: int
    faster: int
    slower: int
    mean_gain: float

    @classmethod
    def of(cls, outcomes: list[tuple[float, bool]], margin: float = 0.02) -> RuleScore:
        """The score of ``outcomes``: for each product, the choice's time over the rule's and whether the rule changed
        its configuration; a change counts as faster or slower where it moved the time by more than ``margin``.

        Raises:
            TypeError, ValueError: For no outcomes, an outcome that is not a (gain, changed) pair, a gain that is not
                a finite number > 0, a ``changed`` that is not a bool, or a ``margin`` that is not a number from 0 to
                1.
        """
        margin = real("margin", margin, minimum=0.0, maximum=1.0)
        if not isinstance(outcomes, list | tuple) or not outcomes:
            raise ValueError(f"outcomes must be a non-empty list of (gain, changed) pairs; got {outcomes!r:.80}")
        for outcome in outcomes:
            if not isinstance(outcome, tuple) or len(outcome) != 2:
                raise TypeError(f"each outcome must be a (gain, changed) pair; got {outcome!r:.80}")
            real("gain", outcome[0], positive=True)
            flag("changed", outcome[1])
        moved = [gain for gain, changed in outcomes if changed]
        mean = math.exp(sum(math.log(gain) for gain, _ in outcomes) / len(outcomes))
        return cls(
            len(outcomes), len(moved), sum(g > 1 + margin for g in moved), sum(g < 1 - margin for g in moved), mean
        )


def _tile_rows(m: int, config: Config) -> int:
    # how many rows of tiles a swapped tile cuts m tokens into
    return -(-m // config.block_m)


def swap_leave_one_out(record_id: str = SWAP_TABLE_ID, same_class: bool = False, margin: float = 0.02) -> RuleScore:
    """Leave each product of a ``--tune swap`` record out in turn and ask its nearest other product (by the distance of
    log M, log N and log K; with ``same_class``, only among products of its shape class): where that product's fastest
    swapped tile beat its choice by more than ``margin``, the left-out product takes the swapped tile of the same rows
    of tiles and width, if it timed one. The result is scored with the left-out product's own times.

    Raises:
        TypeError, ValueError: For a record :func:`swap_rows` refuses, a ``same_class`` that is not a bool, or a
            ``margin`` that is not a number from 0 to 1.
    """
    from gpukb.gemm.triton import tuning

    same_class = flag("same_class", same_class)
    margin = real("margin", margin, minimum=0.0, maximum=1.0)
    rows = swap_rows(record_id)
    timed = {}  # per product: (rows of tiles, width) -> the fastest swapped time of that kind
    for entry in load(record_id, expect=tuning.GemmTuning).classes:
        kinds: dict[tuple[int, int], float] = {}
        for t in entry.trials[1:]:
            if t.ms is not None and t.config.swap_ab:
                key = (_tile_rows(entry.shape[0], t.config), t.config.block_n)
                kinds[key] = min(t.ms, kinds.get(key, math.inf))
        timed[entry.layout, entry.shape] = kinds
    classes = [tuning.ShapeClass.of("bfloat16", r.layout, *r.shape) for r in rows]
    outcomes = []
    for i, r in enumerate(rows):
        others = [j for j in range(len(rows)) if j != i and (not same_class or classes[j] == classes[i])]
        ms, changed = r.chosen_ms, False
        if others:
            here = [math.log(x) for x in r.shape]
            near = rows[min(others, key=lambda j: math.dist([math.log(x) for x in rows[j].shape], here))]
            verdict = (_tile_rows(near.shape[0], near.swapped), near.swapped.block_n)
            if near.gain > 1 + margin and verdict in timed[r.layout, r.shape]:
                ms, changed = timed[r.layout, r.shape][verdict], True
        outcomes.append((r.chosen_ms / ms, changed))
    return RuleScore.of(outcomes, margin)


#: Step 20's record: one-block and two-block tilings, split-K and a stream-K round on every seen product of 321 to
#: 2048 rows (``bench/triton_gemm_sweep.py --tune mid``).
MID_TABLE_ID = "gemm/triton-gemm-tuning-h100-mid"


@dataclass(frozen=True)
class MidRow:
    """One product of a ``--tune mid`` record, cuBLAS's time in the same run (ms), and:

    Attributes:
        chosen: The look-up's choice (the record's first trial of the product).
        times: Each timed trial's time (ms) by its configuration, the choice's included; a trial that failed is absent.
        ruled: What step 20's rule (``tuning.mid_tiles``) takes for the product: ``chosen`` where it keeps it.
    """

    layout: str
    shape: tuple[int, int, int]
    cublas_ms: float | None
    chosen: Config
    times: dict[Config, float]
    ruled: Config

    @property
    def chosen_ms(self) -> float:
        return self.times[self.chosen]

    @property
    def fastest(self) -> Config:
        """The fastest timed trial (the choice where it ties)."""
        return min(self.times, key=lambda c: (self.times[c], c != self.chosen))

    def as_timed(self, config: Config) -> Config:
        """``config`` as this product's trials ran it: with the choice's ``pad_rows``, as ``tuning.mid_trials`` times
        every candidate (a key of :attr:`times` where it ran)."""
        return replace(config, pad_rows=self.chosen.pad_rows)


def mid_rows(record_id: str = MID_TABLE_ID) -> list[MidRow]:
    """:class:`MidRow` for each product of a ``--tune mid`` record, in its order.

    Raises:
        TypeError, ValueError: For a ``record_id`` that is not a string, or not a record of step 20's trials (bf16
            products of 321 to 2048 rows, each once, each a timed look-up choice, then ``tuning.mid_trials``), a
            record with no product, or one whose rule's tiles have no time (the rule's verdict could not be scored).
        FileNotFoundError: For an id with no record.
    """
    from gpukb.gemm.triton import tuning

    def trials(entry: Any, chosen: Config) -> tuple[Config, ...] | None:
        if not tuning.TOKEN_MAX_M < entry.shape[0] <= tuning.MID_MAX_M:
            return None
        return tuning.mid_trials(chosen)

    out = []
    for entry, first in _bf16_step_products(record_id, 20, "a timed choice, then tuning.mid_trials", trials):
        times = {t.config: t.ms for t in entry.trials if t.ms is not None}
        copied = tuning.contiguous_copied(entry.dtype, entry.layout, *entry.shape)
        ruled = tuning.mid_tiles(first.config, entry.dtype, *entry.shape, tuning.SMS_TUNED, entry.aligned, copied)
        if ruled not in times:
            raise ValueError(f"{record_id}: {entry.layout} {entry.shape}: the rule's {ruled.label!r} has no time")
        out.append(MidRow(entry.layout, entry.shape, entry.cublas_ms, first.config, times, ruled))
    return out


def mid_by_count(record_id: str = MID_TABLE_ID, margin: float = 0.05) -> RuleScore:
    """What step 19's count of work would have chosen on each product of a ``--tune mid`` record: where the look-up's
    choice is a persistent tiling of one block, the persistent tiling of the record (one block or two, without
    stream-K) with the least ``tuning.tile_work``, where that is at least ``margin`` less than the choice's. Scored with
    each product's own times; faster and slower count changes of more than 2 %.

    Raises:
        TypeError, ValueError: For a record :func:`mid_rows` refuses, or a ``margin`` that is not a number from 0 to 1.
    """
    from gpukb.gemm.triton import tuning

    margin = real("margin", margin, minimum=0.0, maximum=1.0)
    rows = mid_rows(record_id)
    outcomes = []
    for r in rows:
        m, n, _ = r.shape
        pick = r.chosen
        if tuning._one_block_persistent(r.chosen):
            options = [c for c in r.times if c.kernel == "tma" and not (c.stream_k or c.swap_ab)]
            best = min(options, key=lambda c: tuning.tile_work(m, n, c, tuning.SMS_TUNED))
            work = tuning.tile_work(m, n, best, tuning.SMS_TUNED)
            if work <= (1 - margin) * tuning.tile_work(m, n, r.chosen, tuning.SMS_TUNED):
                pick = best
        outcomes.append((r.chosen_ms / r.times[pick], pick != r.chosen))
    return RuleScore.of(outcomes)


#: Step 21's record: the look-up's choice and swapped tiles 64 and 128 wide, each at its own depth and at its deepest
#: pipeline, on every seen product of 65 to 320 rows (``bench/triton_gemm_sweep.py --tune depth``).
DEPTH_TABLE_ID = "gemm/triton-gemm-tuning-h100-depth"


@dataclass(frozen=True)
class DepthPair:
    """One tiling a ``--tune depth`` record timed at two depths on one product (times in ms).

    Attributes:
        tile: The tiling at its own depth (the look-up's, or step 19's for a swapped tile).
        deep: The same tiling at its deepest pipeline (``tuning.deepest``).
        chosen: Whether ``tile`` is the look-up's choice for the product.
    """

    layout: str
    shape: tuple[int, int, int]
    tile: Config
    deep: Config
    tile_ms: float
    deep_ms: float
    chosen: bool

    @property
    def k_steps(self) -> int:
        """The K loop's steps (K over ``block_k``, rounded up)."""
        return -(-self.shape[2] // self.tile.block_k)

    @property
    def gain(self) -> float:
        """The tiling's time at its own depth over its time at the deepest."""
        return self.tile_ms / self.deep_ms


def _depth_entries(record_id: str) -> Iterator[tuple[Any, Any]]:
    """Each product of a ``--tune depth`` record with its first trial, checked to be what step 21 timed."""
    from gpukb.gemm.triton import tuning

    def trials(entry: Any, chosen: Config) -> tuple[Config, ...] | None:
        m, n, k = entry.shape
        if not tuning.SMALL_M < m <= tuning.TOKEN_MAX_M or min(n, k) < 1:  # a K of 0 has no K steps to band
            return None
        return tuning.depth_trials(chosen, m)

    yield from _bf16_step_products(record_id, 21, "a timed choice, then tuning.depth_trials", trials)


def depth_pairs(record_id: str = DEPTH_TABLE_ID) -> list[DepthPair]:
    """Every tiling of a ``--tune depth`` record that was timed both at its own depth and at its deepest pipeline
    (both times present), product by product in the record's order.

    Raises:
        TypeError, ValueError: For a ``record_id`` that is not a string, or not a record of step 21's trials (bf16
            products of 65 to 320 rows and N and K of at least 1, each once, each a timed look-up choice, then
            ``tuning.depth_trials``), or a record with no product, or none timed at both depths.
        FileNotFoundError: For an id with no record.
    """
    from gpukb.gemm.triton import tuning

    out = []
    for entry, first in _depth_entries(record_id):
        times = {t.config: t.ms for t in entry.trials if t.ms is not None}
        for tile in dict.fromkeys(t.config for t in entry.trials):
            deep = tuning.deepest(tile)
            if deep != tile and tile in times and deep in times:
                out.append(DepthPair(entry.layout, entry.shape, tile, deep, times[tile], times[deep],
                                     tile == first.config))  # fmt: skip
    if not out:
        raise ValueError(f"{record_id}: holds no tiling timed at both its own depth and its deepest pipeline")
    return out


def depth_rule(record_id: str = DEPTH_TABLE_ID) -> RuleScore:
    """What step 21's rule (``tuning.deep_tokens``) does on the products of a ``--tune depth`` record, scored with
    each product's own times; faster and slower count changes of more than 2 %.

    Raises:
        TypeError, ValueError: For a record :func:`depth_pairs` refuses (but for having no tiling timed at both
            depths: the rule is scored on the times it chose between), or one where the rule's pipeline has no time
            (the rule's verdict could not be scored).
    """
    from gpukb.gemm.triton import tuning

    outcomes = []
    for entry, first in _depth_entries(record_id):
        times = {t.config: t.ms for t in entry.trials if t.ms is not None}
        ruled = tuning.deep_tokens(first.config, entry.dtype, *entry.shape)
        if ruled not in times:
            raise ValueError(f"{record_id}: {entry.layout} {entry.shape}: the rule's {ruled.label!r} has no time")
        outcomes.append((times[first.config] / times[ruled], ruled != first.config))
    return RuleScore.of(outcomes)
