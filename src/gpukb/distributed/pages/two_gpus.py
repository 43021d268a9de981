"""The two-GPU page (docs/distributed/two-gpus.md): what the FSDP and DDP runs on two H100s measured."""

from __future__ import annotations

from collections import Counter

from gpukb import records
from gpukb.distributed.pages import GIB, _key, _same_configurations
from gpukb.distributed.results import FsdpDtypes, FsdpTraining


def ddp_buckets_markdown(record_id: str, one_gpu_id: str) -> str:
    """How much of DDP's extra peak over plain training on one GPU its gradient buckets explain: with the default
    ``gradient_as_bucket_view=False`` they are a float32 copy of every gradient, 4 bytes per parameter."""
    record = records.load(record_id, FsdpTraining)
    _, single = _same_configurations(record, one_gpu_id)
    run = next(r for r in record.runs if not r.fsdp and r.autocast is None and r.checkpointing == "none")
    extra = run.peak_bytes - single[_key(run)].peak_bytes
    buckets = 4 * record.parameters
    return (
        f"DDP's peak per GPU was {extra / GIB:.3f} GiB above plain training's on one GPU. Its buckets, a float32 "
        f"copy of the {record.parameters / 1e6:.0f} M gradients, are {buckets / GIB:.3f} GiB of it "
        f"({buckets / extra:.0%}); the other {(extra - buckets) / GIB:.3f} GiB this run does not attribute.\n"
    )


def _calls(dtypes: list[str]) -> str:
    """``["bfloat16"] * 4`` as ``4 × bfloat16``; several dtypes joined with ``+``."""
    return " + ".join(f"{n} × {d}" for d, n in Counter(dtypes).items()) or "none"


def fsdp_dtypes_markdown(record_id: str) -> str:
    """The dtypes FSDP2 used under each mode, as every rank of a recorded run saw them
    (``bench/distributed_dtypes.py``): parameters in forward, unsharded gradients, the all-gathers and reduce-scatters
    it called, and the sharded gradients the optimizer got."""
    record = records.load(record_id, FsdpDtypes)
    order = {"FULL": 0, "DEFAULT": 1, "PURE": 2}
    rows = []
    for c in sorted(record.captures, key=lambda c: (order[c.mode], c.rank)):
        ops = [(x.op, x.dtype) for x in c.collectives]
        rows.append(
            [
                f"`{c.mode}`",
                c.rank,
                " / ".join(dict.fromkeys(c.forward_params)),
                " / ".join(dict.fromkeys(c.unsharded_grads)),
                _calls([d for op, d in ops if op.startswith("all_gather")]),
                _calls([d for op, d in ops if op.startswith("reduce_scatter")]),
                " / ".join(dict.fromkeys(c.sharded_grads)),
            ]
        )
    headers = [
        "mode",
        "rank",
        "params in forward",
        "unsharded grads",
        "all-gathers",
        "reduce-scatters",
        "sharded grads (optimizer)",
    ]
    where = f"{record.world_size} ranks, {record.backend.upper()}, device {record.device}. "
    return records.measured_table(headers, rows, record.run, where)
