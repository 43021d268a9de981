"""The memory page (docs/distributed/memory.md): the training states and transients, the FSDP figure and the
memory calculator beside the recorded runs.
"""

from __future__ import annotations

from gpukb import records
from gpukb.calculators import Field, calculator_html
from gpukb.distributed import figures as distributed_figures
from gpukb.distributed import memory
from gpukb.distributed.fsdp_config import mode_dtypes
from gpukb.distributed.model import ModelConfig
from gpukb.distributed.results import FsdpTraining, TrainingRun
from gpukb.figures import to_svg
from gpukb.tables import markdown_table


def states_markdown(world_size: int = 64, parameters: float = 7.5e9) -> str:
    """Bytes per parameter of each scheme at ``world_size`` ranks and GB per rank for ``parameters``."""
    headers, rows = memory.states_table(world_size, parameters)
    return markdown_table(headers, [[f"`{r[0]}`", *r[1:]] for r in rows])


def transients_markdown() -> str:
    """FSDP2's transient bytes per parameter of the unit being computed, by mode."""
    rows = []
    for mode, param, reduce, _ in mode_dtypes("amp_bf16"):
        rows.append(
            [
                f"`{mode}`",
                param or "float32",
                reduce or param or "float32",
                memory.fsdp2_unit_transient_bytes_per_param(param, reduce),
            ]
        )
    return markdown_table(["mode", "param_dtype", "reduce_dtype", "bytes per parameter of the unit"], rows)


def fsdp_figure() -> str:
    """Inline SVG: one FSDP training step, unit by unit, with the measured model's bytes per unit."""
    return to_svg(distributed_figures.fsdp_figure())


#: The memory runs a calculator's prediction is shown beside when its inputs match one (one GPU, two GPUs).
MEMORY_RECORDS = ("distributed/fsdp-memory", "distributed/fsdp-memory-h100x2")


def matching_runs(
    config: ModelConfig,
    batch: int,
    scheme: str,
    world_size: int,
    mixed_precision: str | None,
    checkpointing: bool,
    record_ids: tuple[str, ...] = MEMORY_RECORDS,
) -> list[tuple[str, TrainingRun]]:
    """The recorded runs (without autocast) whose configuration the calculator's inputs match: the same model, batch
    per GPU and number of GPUs, FSDP2 with the same mode (``fsdp2``) or plain/DDP float32 training (``ddp_fp32``),
    and checkpointing on or off as they were; ``(record id, run)`` pairs."""
    found = []
    for record_id in record_ids:
        record = records.load(record_id, FsdpTraining)
        if (ModelConfig(**record.model), record.batch, record.world_size) != (config, batch, world_size):
            continue
        for run in record.runs:
            if run.autocast is not None or (run.checkpointing != "none") != checkpointing:
                continue
            fsdp = scheme == "fsdp2" and run.fsdp and run.mixed_precision == mixed_precision
            if fsdp or (scheme == "ddp_fp32" and not run.fsdp):
                found.append((record_id, run))
    return found


def memory_calculator(record_ids: tuple[str, ...] = MEMORY_RECORDS) -> str:
    """Training memory per GPU: :func:`gpukb.distributed.memory.training_memory` computed in the browser, with the
    schemes and modes exported from :mod:`gpukb.distributed.memory` and the recorded memory runs shown beside a
    prediction whose inputs match one."""
    loaded = [records.load(r, FsdpTraining) for r in record_ids]
    run_fields = ("name", "fsdp", "mixed_precision", "checkpointing", "autocast", "peak_bytes", "activation_bytes")
    data = {
        "schemes": list(memory.SCHEMES),
        "fsdp2_activation_bytes": dict(memory.FSDP2_ACTIVATION_BYTES),
        "records": [
            {
                "id": rid,
                "gpu": f"{r.world_size}× {r.run.gpu.name}" if r.run.gpu else f"{r.world_size} GPU(s)",
                "model": r.model,
                "batch": r.batch,
                "world_size": r.world_size,
                "runs": [{f: getattr(run, f) for f in run_fields} for run in r.runs],
            }
            for rid, r in zip(record_ids, loaded, strict=True)
        ],
    }
    model, record = ModelConfig(**loaded[-1].model), loaded[-1]
    modes = [("", "none (not FSDP2)"), *((m, m) for m in memory.FSDP2_ACTIVATION_BYTES)]
    fields = [
        Field("scheme", "scheme", "select", "fsdp2", [(s, f"{s}: {text}") for s, text in memory.SCHEMES.items()]),
        Field("mixed_precision", "mixed_precision (FSDP2)", "select", "DEFAULT", modes),
        Field("world_size", "world_size (GPUs)", default=str(record.world_size)),
        Field("checkpointing", "activation checkpointing", "checkbox"),
        Field("batch", "batch (sequences per GPU)", default=str(record.batch)),
        Field("vocab", "vocab", default=str(model.vocab)),
        Field("seq", "seq", default=str(model.seq)),
        Field("hidden", "hidden", default=str(model.hidden)),
        Field("heads", "heads", default=str(model.heads)),
        Field("layers", "layers", default=str(model.layers)),
    ]
    return calculator_html("memory", "Training memory per GPU", fields, data)
