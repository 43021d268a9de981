"""The one-GPU page (docs/distributed/single-gpu.md): what the FSDP runs on one H100 measured."""

from __future__ import annotations

from gpukb import records
from gpukb.distributed import memory
from gpukb.distributed.results import FSDP_SINGLE_GPU_ID, FsdpTraining


def block_check_markdown() -> str:
    """Bytes one block's forward left alive on the GPU (recorded) against the formula with 4-byte LayerNorm
    statistics."""
    record = records.load(FSDP_SINGLE_GPU_ID, FsdpTraining)
    rows = []
    for b in record.blocks:
        element = 4 if b.dtype == "float32" else 2
        saved = b.live_bytes - b.output_bytes + b.input_bytes
        formula = memory.block_activation_bytes(b.batch, b.seq, b.hidden, b.heads, element, stats_bytes=4)
        rows.append(
            [b.dtype, f"{b.batch} × {b.seq} × {b.hidden}, {b.heads} heads", saved, formula, f"{saved / formula:.4f}"]
        )
    headers = ["dtype", "shape", "saved bytes (measured)", "formula", "measured / formula"]
    return records.measured_table(headers, rows, record.run)
