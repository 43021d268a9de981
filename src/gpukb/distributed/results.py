"""The distributed chapter's recorded results, written by ``bench/distributed_fsdp.py``,
``bench/distributed_collectives.py`` and ``bench/distributed_dtypes.py`` (any number of ranks), read back by id with
:func:`gpukb.records.load`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpukb.measuring.stats import Summary
from gpukb.records import Record
from gpukb.schema import StrictModel

#: Id of the committed one-GPU FSDP record.
FSDP_SINGLE_GPU_ID = "distributed/fsdp-single-gpu"


class TrainingRun(StrictModel):
    """One configuration trained for ``repeats`` timed runs of ``steps`` steps after ``warmup`` steps."""

    name: str
    fsdp: bool
    mixed_precision: Literal["FULL", "DEFAULT", "PURE"] | None
    checkpointing: Literal["none", "reentrant", "non-reentrant"]
    autocast: Literal["bfloat16"] | None
    tokens_per_s: list[float] = Field(min_length=1)
    peak_bytes: int = Field(ge=0)
    activation_bytes: int = Field(ge=0)
    loss_first: float
    loss_last: float


class BlockCheck(StrictModel):
    """Bytes one block's forward left alive on the GPU (``LiveBytes``), its output's and its input's bytes."""

    dtype: Literal["float32", "bfloat16"]
    batch: int = Field(gt=0)
    seq: int = Field(gt=0)
    hidden: int = Field(gt=0)
    heads: int = Field(gt=0)
    live_bytes: int = Field(gt=0)
    output_bytes: int = Field(gt=0)
    input_bytes: int = Field(gt=0)


class CheckpointWarning(StrictModel):
    """What ``torch.utils.checkpoint.checkpoint`` does when ``use_reentrant`` is not passed, in this torch."""

    torch: str
    category: str | None
    message: str | None
    default_is_reentrant: bool


class FsdpTraining(Record):
    """FSDP2 under FULL/DEFAULT/PURE and three checkpointing choices, and plain training (DDP on several ranks)."""

    kind: Literal["distributed.fsdp-training"] = "distributed.fsdp-training"
    schema_version: Literal[1] = 1
    model: dict[str, int]
    parameters: int = Field(gt=0)
    batch: int = Field(gt=0)
    steps: int = Field(gt=0)
    warmup: int = Field(ge=0)
    world_size: int = Field(gt=0)
    runs: list[TrainingRun] = Field(min_length=1)
    blocks: list[BlockCheck]
    checkpoint_warning: CheckpointWarning


class CollectiveRow(StrictModel):
    """One collective at one size: nccl-tests' S, the time of one call (each sample one window of ``iters`` calls:
    their mean, the slowest rank's), and algbw and busbw in bytes/s at its median."""

    op: Literal["all_reduce", "reduce_scatter", "all_gather"]
    size_bytes: int = Field(gt=0)
    ms: Summary
    algbw: float = Field(gt=0)
    busbw: float = Field(ge=0)
    ranks: int = Field(gt=0)


class CollectiveBandwidth(Record):
    """``bench/distributed_collectives.py``: bandwidth of three collectives over torch.distributed.

    Schema 2 keeps each time as a summary of ``repeats`` windows in milliseconds (schema 1 kept one window's mean
    in ``seconds``; converted, it is a summary of that one sample)."""

    kind: Literal["distributed.collectives"] = "distributed.collectives"
    schema_version: Literal[2] = 2
    backend: Literal["gloo", "nccl"]
    world_size: int = Field(gt=0)
    dtype: str
    iters: int = Field(gt=0)
    warmup: int = Field(ge=0)
    repeats: int = Field(gt=0)
    topology: str | None = None
    rows: list[CollectiveRow] = Field(min_length=1)


#: Id of the committed interleaved rerun of the bfloat16 configurations on one GPU.
FSDP_INTERLEAVED_ID = "distributed/fsdp-interleaved"

#: Id of the committed comparison of DEFAULT and PURE on four H100s, in paired rounds (``ModelConfig.gpu_bound``).
FSDP_MODES_ID = "distributed/fsdp-modes-h100x4"


class CollectiveCall(StrictModel):
    """One collective FSDP2 called during a capture: its ``torch.distributed`` name and its input's dtype."""

    op: str
    dtype: str


class DtypeCapture(StrictModel):
    """What :func:`gpukb.distributed.dtypes.capture` saw on one rank under one mode's ``MixedPrecisionPolicy``
    (``param_dtype``/``reduce_dtype`` as the plan sets them, ``None`` = the parameter's own)."""

    rank: int = Field(ge=0)
    mode: Literal["FULL", "DEFAULT", "PURE"]
    param_dtype: str | None
    reduce_dtype: str | None
    forward_params: list[str]
    forward_inputs: list[str]
    unsharded_grads: list[str]
    sharded_params: list[str]
    sharded_grads: list[str]
    param_type: str
    collectives: list[CollectiveCall]


class FsdpDtypes(Record):
    """``bench/distributed_dtypes.py``: the dtypes FSDP2 used under FULL/DEFAULT/PURE, every rank's capture."""

    kind: Literal["distributed.fsdp-dtypes"] = "distributed.fsdp-dtypes"
    schema_version: Literal[1] = 1
    backend: Literal["gloo", "nccl"]
    world_size: int = Field(gt=0)
    device: Literal["cpu", "cuda"]
    captures: list[DtypeCapture] = Field(min_length=1)


#: What the conversion from schema 1 did, in words; the converted record's ``run.notes`` end with it.
CONVERSION_NOTE = (
    "Converted from schema 1 (gpukb.distributed.results.upgrade): each row's seconds, the slowest rank's mean of "
    "one window of iters calls, became ms, the summary of that one sample (n = 1: median, quartiles and extremes "
    "are all that value, times 1000), and repeats is 1."
)


def upgrade(data: dict) -> dict:
    """A schema-1 ``distributed.collectives`` record (parsed JSON) as schema 2; any other record as it was.

    Schema 1 timed one window per size and kept its mean in seconds: that is one sample, so its summary is that
    value in every field, with ``n = 1``. Nothing else is filled in.
    """
    if data.get("kind") != "distributed.collectives" or data.get("schema_version") != 1:
        return data
    rows = []
    for r in data["rows"]:
        ms = r["seconds"] * 1e3
        one = {"median": ms, "q1": ms, "q3": ms, "min": ms, "max": ms, "n": 1}
        rows.append({k: v for k, v in r.items() if k != "seconds"} | {"ms": one})
    run = {**data["run"], "notes": [*data["run"].get("notes", []), CONVERSION_NOTE]}
    return {**data, "schema_version": 2, "repeats": 1, "rows": rows, "run": run}
