"""The attention chapter's recorded results: ``bench/attention_flash.py`` and ``bench/attention_training.py``.

Two :class:`gpukb.records.Record` kinds, read back by id with :func:`gpukb.records.load` and rendered by
:mod:`gpukb.attention.pages`: ``attention.flash-forward`` (``"attention/flash-forward-h100"``), the Triton
flash-attention forward kernel (:mod:`gpukb.attention.kernel`) against every backend of
``torch.nn.functional.scaled_dot_product_attention``, timed in the same run on the same inputs; and
``attention.flash-training`` (``"attention/flash-training-atomic-dq-h100"``), forward and backward, head dims to
256, and the losses of a small model trained with each.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpukb.measuring.device import WindowClocks
from gpukb.measuring.stats import Summary
from gpukb.records import Record
from gpukb.schema import StrictModel

#: Id of the committed file the pages render.
FLASH_FORWARD_ID = "attention/flash-forward-h100"
#: The SDPA backends measured, by the names ``torch.nn.attention.SDPBackend`` gives them.
BACKENDS = ("flash", "efficient", "cudnn")


class Timing(StrictModel):
    """One implementation on one case: the time (ms, order statistics of all samples) and the rate it implies
    (``gpukb.measuring.counting.attention_flops`` over the median), or why it did not run."""

    name: str
    ms: Summary | None = None
    tflops: float | None = Field(default=None, gt=0)
    error: str | None = None
    #: Relative Frobenius difference of this output from the Triton kernel's (``None`` for the kernel itself).
    difference: float | None = Field(default=None, ge=0)


class Candidate(StrictModel):
    """A tiling tried while tuning, at one (head_dim, causal) on the tuning shape."""

    head_dim: int = Field(gt=0)
    causal: bool
    config: str
    block_m: int = Field(gt=0)
    block_n: int = Field(gt=0)
    num_warps: int = Field(gt=0)
    num_stages: int = Field(gt=0)
    tma: bool = False
    tflops: float | None = Field(default=None, gt=0)
    registers: int | None = None
    spills: int | None = None
    error: str | None = None


class Case(StrictModel):
    """One shape, bf16: the kernel (with the tiling the run chose for its head_dim and causality) and each
    SDPA backend."""

    group: Literal["standard", "sweep"]
    batch: int = Field(gt=0)
    heads: int = Field(gt=0)
    seq: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    causal: bool
    config: str
    triton: Timing
    backends: list[Timing]


class FlashForward(Record):
    """The Triton flash-attention forward kernel against SDPA's flash, efficient and cuDNN backends."""

    kind: Literal["attention.flash-forward"] = "attention.flash-forward"
    schema_version: Literal[1] = 1
    dtype: Literal["bf16"] = "bf16"
    timing: str
    tuning_shape: str
    candidates: list[Candidate]
    cases: list[Case]


# --- forward and backward, for training: bench/attention_training.py -------------------------------------------

#: Id of the committed training-benchmark file the pages render.
FLASH_TRAINING_ID = "attention/flash-training-atomic-dq-h100"
#: The backward pass counts 2.5 times the forward's operations: five matrix products to the forward's two, as
#: FlashAttention's benchmark counts it (Dao-AILab/flash-attention, benchmarks/benchmark_flash_attention.py).
BACKWARD_FLOP_FACTOR = 2.5


class Timed(StrictModel):
    """One implementation on one case: time, rate, what the clocks did while it ran, or why it did not run."""

    name: str
    ms: Summary | None = None
    tflops: float | None = Field(default=None, gt=0)
    error: str | None = None
    #: Relative Frobenius difference from the Triton kernel's result (the output; for a backward, the largest
    #: of dQ's, dK's and dV's); ``None`` for the kernel itself.
    difference: float | None = Field(default=None, ge=0)
    #: SM clock and power sampled during each timed round.
    clocks: list[WindowClocks] = Field(default_factory=list)


class BackwardCandidate(StrictModel):
    """A backward tiling tried on the tuning shape for one head dim (non-causal)."""

    head_dim: int = Field(gt=0)
    config: str
    block_m1: int = Field(gt=0)
    block_n1: int = Field(gt=0)
    block_m2: int = Field(gt=0)
    block_n2: int = Field(gt=0)
    num_warps: int = Field(gt=0)
    num_stages: int = Field(gt=0)
    #: How dQ was computed (``BackwardConfig.dq``): by a pass of its own, or added by the dK/dV kernel.
    dq: Literal["pass", "atomic", "tma"] = "pass"
    tflops: float | None = Field(default=None, gt=0)
    #: Registers and spills per kernel ("dkdv", and "dq" when a dQ pass ran).
    registers: dict[str, int] = Field(default_factory=dict)
    spills: dict[str, int] = Field(default_factory=dict)
    error: str | None = None


class Step(StrictModel):
    """One step of the kernel page's story at the standard shape: an implementation and its rate."""

    step: str
    direction: Literal["forward", "backward"]
    causal: bool
    description: str
    timing: Timed


class Measured(StrictModel):
    """One shape, bf16, one direction: the kernel (the tiling it used) and each SDPA backend, in one run."""

    direction: Literal["forward", "backward"]
    group: Literal["standard", "sweep"]
    batch: int = Field(gt=0)
    heads: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    seq: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    causal: bool
    config: str
    triton: Timed
    backends: list[Timed]


class Training(StrictModel):
    """Losses of a small transformer trained from one seed with the kernel, with SDPA, and with a second SDPA
    backend (the control: how far two correct bf16 implementations drift apart)."""

    model: str
    steps: int = Field(gt=0)
    seed: int
    peer: str
    control: str
    kernel: list[float]
    sdpa: list[float]
    control_losses: list[float]
    seconds: dict[str, float]


class FlashTraining(Record):
    """The Triton flash-attention forward and backward against SDPA's flash, efficient and cuDNN backends."""

    kind: Literal["attention.flash-training"] = "attention.flash-training"
    schema_version: Literal[1] = 1
    dtype: Literal["bf16"] = "bf16"
    timing: str
    flops: str
    tuning_shapes: str
    forward_candidates: list[Candidate]
    backward_candidates: list[BackwardCandidate]
    steps: list[Step]
    cases: list[Measured]
    training: Training | None = None


# --- the Gluon forward, step by step: bench/attention_gluon.py ---------------------------------------------------

#: Id of the committed Gluon-forward benchmark file the pages render as their evidence: the run on the
#: chapter's reference GPU, an H100 (every comparison in it is within the one run).
GLUON_FORWARD_ID = "attention/gluon-forward-persistent-h100"
#: The same benchmark, run on an H200 before the persistent step was added: the page compares its summary with the
#: H100's on the steps both runs timed.
GLUON_FORWARD_H200_ID = "attention/gluon-forward-h200"


class GluonBuild(StrictModel):
    """One Gluon configuration (a step of the page) as compiled and checked on the GPU, in its own process (a
    kernel that waits on mbarriers hangs rather than fails when its protocol is wrong)."""

    step: str
    config: str
    description: str
    registers: int | None = None
    spills: int | None = None
    shared_bytes: int | None = None
    #: What ptxas said of the kernel (``-v``, head dim 128, not causal): its performance notes and register use.
    ptxas: list[str] = Field(default_factory=list)
    #: Largest relative error against float64 attention over the check shapes, and SDPA's on the same inputs.
    error: float | None = Field(default=None, ge=0)
    sdpa_error: float | None = Field(default=None, ge=0)
    #: Why it did not build or run, or why its results were not trusted.
    failure: str | None = None


class GluonCase(StrictModel):
    """One shape, bf16: every implementation timed in the same rounds. ``difference`` of each is measured from
    the Triton (``tl``) kernel's output, which the attention tests hold to float64 attention."""

    group: Literal["standard", "sweep"]
    batch: int = Field(gt=0)
    heads: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    seq: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    causal: bool
    timings: list[Timed]


class GluonForward(Record):
    """The Gluon forward, step by step, beside the Triton kernel and SDPA's flash, efficient and cuDNN backends."""

    kind: Literal["attention.gluon-forward"] = "attention.gluon-forward"
    schema_version: Literal[1] = 1
    dtype: Literal["bf16"] = "bf16"
    timing: str
    flops: str
    builds: list[GluonBuild]
    cases: list[GluonCase]
    #: Nsight Compute's readings per implementation at the standard shape, not causal (the kernel's name under
    #: ``"kernel"``, then metric → "value unit"), when ncu was there to run.
    profile: dict[str, dict[str, str]] = Field(default_factory=dict)
