"""The page “Measured on four H100s” (docs/parallelism/measured.md): its tables, figures and text."""

from __future__ import annotations

import re

from gpukb import records
from gpukb.parallelism.results import SCHEMES_ID, ParallelismSchemes
from gpukb.tables import markdown_table

MIB = 2**20


# the four-GPU record
def _record() -> ParallelismSchemes | None:
    return records.load(SCHEMES_ID, ParallelismSchemes) if SCHEMES_ID in records.record_ids() else None


def measured_on_markdown() -> str:
    """Where the record was measured, or that the measurement is pending."""
    record = _record()
    if record is None:
        return '!!! note "Measurement pending"\n    No four-GPU record has been committed yet.'
    return records.measured_on(record.run, notes=True)


def topology_markdown() -> str:
    """``nvidia-smi topo -m`` of the record's machine, as a table (GPU rows only)."""
    record = _record()
    if record is None:
        return "Topology: pending."
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in record.topology.splitlines()]
    header = [c.strip() for c in lines[0].split("\t") if c.strip()]
    rows = [[c.strip() for c in line.split("\t")][: len(header) + 1] for line in lines[1:] if line.startswith("GPU")]
    return markdown_table(["", *header], [r + [""] * (len(header) + 1 - len(r)) for r in rows])


def measured_markdown() -> str:
    """Each scheme's step time, throughput, memory against the prediction and traffic against the formula."""
    record = _record()
    if record is None:
        return "Pending: no record."
    rows = []
    for r in record.rows:
        if r.step_ms is None:
            rows.append([r.name, r.gpus, "failed: " + str(r.extra.get("error", "no time"))[:120], "", "", "", ""])
            continue
        tokens = r.tokens_per_step / (r.step_ms.median / 1e3)
        state = ", ".join(f"{m / MIB:.0f}" for m in r.state_bytes)
        predicted = ", ".join(sorted({f"{m / MIB:.0f}" for m in r.predicted_state_bytes}))
        rows.append([r.name, r.gpus, f"{r.step_ms.median:.1f} ({r.step_ms.spread:.0%})", f"{tokens:,.0f}",
                     f"{state} / {predicted}", f"{r.sent_bytes / MIB:.1f} / {r.formula_bytes / MIB:.1f}",
                     ", ".join(f"{n} {k}" for k, n in r.collectives.items()) or "none"])  # fmt: skip
    return markdown_table(
        ["scheme", "GPUs", "ms per step (IQR/median)", "tokens/s", "state MiB per rank: measured / predicted",
         "MiB sent by rank 0: measured / formula", "collectives of rank 0"],
        rows,
    )  # fmt: skip


def context_parallel_check_markdown() -> str:
    """How far the context-parallel output, gathered back into sequence order, was from the same model on one GPU,
    and which collectives rank 0's log saw against the formula's."""
    record = _record()
    row = None if record is None else next((r for r in record.rows if r.name.startswith("CP")), None)
    if row is None or "max_abs_error" not in row.extra:
        return "Pending: no context-parallel output check recorded."
    error, largest = row.extra["max_abs_error"], row.extra["max_abs_output"]
    seen = ", ".join(f"{n} {k}" for k, n in row.collectives.items()) or "none"
    formula = ", ".join(f"{n} {k}" for k, n in row.formula_collectives.items())
    return (
        f"Largest difference from the one-GPU output: {error:g} where the largest output was {largest:g} "
        f"({error / largest:.1%} of it; bfloat16 keeps 8 significant bits, a step of {2**-7:.1%} to "
        f"{2**-8:.1%} of a value). Collectives rank 0's log saw: {seen}; the formula's: {formula}."
    )


def pipeline_measured_markdown() -> str:
    """The pipelines' step, one stage's micro-batch alone, and the bubble measured against (p − 1)/(m + p − 1)."""
    record = _record()
    if record is None:
        return "Pending: no record."
    rows = []
    for r in record.rows:
        if r.name.startswith("PP") and r.step_ms is not None:
            rows.append([r.name, f"{r.step_ms.median:.2f}", f"{r.extra['stage_ms']:.3f}",
                         f"{record.sizes['micro_batches']}", f"{r.extra['measured_bubble']:.1%}",
                         f"{r.extra['predicted_bubble']:.1%}"])  # fmt: skip
    return markdown_table(
        ["schedule", "ms per step", "ms per micro-batch, one stage alone", "micro-batches", "bubble measured",
         "predicted"],
        rows,
    )  # fmt: skip
