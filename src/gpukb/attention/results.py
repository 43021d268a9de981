"""The attention chapter's recorded result: ``bench/attention_flash.py`` on an H100.

One :class:`gpukb.records.Record` kind, ``attention.flash-forward``, read back by id with
:func:`gpukb.records.load` (``"attention/flash-forward-h100"``) and rendered by :mod:`gpukb.attention.pages`:
the Triton flash-attention forward kernel (:mod:`gpukb.attention.kernel`) against every backend of
``torch.nn.functional.scaled_dot_product_attention``, timed in the same run on the same inputs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

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
