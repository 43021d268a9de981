"""The chapter's recorded GPU run, written by ``bench/parallelism_schemes.py`` and read back by id with
:func:`gpukb.records.load`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpukb.measuring.stats import Summary
from gpukb.records import Record
from gpukb.schema import StrictModel

#: Id of the committed multi-GPU record.
SCHEMES_ID = "parallelism/schemes-4gpu"


class SchemeRow(StrictModel):
    """One scheme: its step time over the rounds, memory against the prediction, rank 0's traffic against the
    formula.

    Attributes:
        step_ms: The slowest rank's time per step, one value per round, summarized.
        state_bytes: Each rank's allocator growth from building the model to after its first step.
        predicted_state_bytes: Each rank's parameters × 8 bytes (bfloat16 parameter, gradient, two moments).
        step_peak_bytes: Rank 0's peak allocation during a step above what it held before the step.
        sent_bytes: What rank 0 sent in one logged step (ring algorithms), ``formula_bytes`` what the formula says.
        extra: Scheme-specific readings (the pipeline's stage time, context parallelism's error, experts' load).
    """

    name: str
    gpus: int = Field(gt=0)
    tokens_per_step: int = Field(gt=0)
    step_ms: Summary | None
    step_ms_rounds: list[float]
    state_bytes: list[int]
    predicted_state_bytes: list[int]
    step_peak_bytes: int = Field(ge=0)
    sent_bytes: int = Field(ge=0)
    formula_bytes: int = Field(ge=0)
    collectives: dict[str, int]
    formula_collectives: dict[str, int]
    extra: dict[str, float | int | str | list[int]] = Field(default_factory=dict)


class ParallelismSchemes(Record):
    """Every scheme of the chapter trained on one machine's GPUs, interleaved in rounds."""

    kind: Literal["parallelism.schemes"] = "parallelism.schemes"
    schema_version: Literal[1] = 1
    topology: str
    world_size: int = Field(gt=0)
    sizes: dict[str, int]
    rounds: int = Field(gt=0)
    steps: int = Field(gt=0)
    rows: list[SchemeRow] = Field(min_length=1)
