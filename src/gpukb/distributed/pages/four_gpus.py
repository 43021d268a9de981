"""The four-GPU page (docs/distributed/four-gpus.md): DEFAULT against PURE in paired rounds on four H100s."""

from __future__ import annotations

import statistics

from gpukb import records
from gpukb.distributed.results import FSDP_MODES_ID, FsdpTraining
from gpukb.measuring.stats import median_interval
from gpukb.tables import markdown_table


def _paired_modes(record: FsdpTraining, first: str = "DEFAULT", second: str = "PURE") -> tuple[list, list, list]:
    """Tokens/s of two FSDP modes (no checkpointing) in each round of a record, and their per-round ratio.

    Raises:
        ValueError: For a record whose modes were not trained in alternating rounds (``--rounds``): its repeats
            ran one mode after the other, so their ratios are not paired and have no interval.
    """
    if not any("Interleaved:" in note for note in record.run.notes):  # the note bench/distributed_fsdp.py writes
        raise ValueError(
            f"{record.run.command}: its modes were not trained in alternating rounds (bench/distributed_fsdp.py "
            "--rounds N); its repeats are not paired, so they give no ratio per round"
        )
    by_mode = {r.mixed_precision: r.tokens_per_s for r in record.runs if r.fsdp and r.checkpointing == "none"}
    missing = [m for m in (first, second) if m not in by_mode]
    if missing:
        raise ValueError(f"{record.run.command}: no run of mode(s) {missing}; it has {sorted(by_mode)}")
    a, b = by_mode[first], by_mode[second]
    return a, b, [y / x for x, y in zip(a, b, strict=True)]


def _gpus(record: FsdpTraining) -> str:
    """``"4 H100s"``, or the device's full name for another GPU (the CPU smoke test's record: ``"1 CPU rank(s)"``)."""
    gpu = record.run.gpu
    if gpu is None:
        return f"{record.world_size} CPU rank(s)"
    return f"{record.world_size} H100s" if "H100" in gpu.name else f"{record.world_size} × {gpu.name}"


def modes_answer(record_id: str = FSDP_MODES_ID) -> str:
    """One sentence: PURE's tokens/s over DEFAULT's, the median of paired rounds and its confidence interval."""
    record = records.load(record_id, FsdpTraining)
    _, _, ratios = _paired_modes(record)
    low, high, coverage = median_interval(ratios)
    median = statistics.median(ratios)
    return (
        f"On {_gpus(record)}, PURE trained the {record.parameters / 1e6:,.0f}M-parameter model at "
        f"**{median:.3f}×** DEFAULT's tokens/s (median of {len(ratios)} paired rounds; {coverage:.0%} confidence "
        f"interval {low:.3f}× to {high:.3f}×): {median - 1:+.0%}, "
        + ("an interval that stops below the 5% at which the claimed 5–15% begins."
           if high < 1.05 else f"an interval that reaches {high - 1:+.0%}.")
    )  # fmt: skip


def modes_markdown(record_id: str = FSDP_MODES_ID) -> str:
    """DEFAULT and PURE trained afresh in each round, in alternating order: tokens/s of each and their ratio,
    with the median ratio and its distribution-free confidence interval, and each mode's peak memory."""
    record = records.load(record_id, FsdpTraining)
    a, b, ratios = _paired_modes(record)
    rows = [[i + 1, "DEFAULT, PURE" if i % 2 == 0 else "PURE, DEFAULT", f"{x:,.0f}", f"{y:,.0f}", f"{r:.3f}"]
            for i, (x, y, r) in enumerate(zip(a, b, ratios, strict=True))]  # fmt: skip
    low, high, coverage = median_interval(ratios)
    rows.append(["median", "", f"{statistics.median(a):,.0f}", f"{statistics.median(b):,.0f}",
                 f"{statistics.median(ratios):.3f} ({coverage:.0%} interval {low:.3f} to {high:.3f})"])  # fmt: skip
    peaks = {r.mixed_precision: r.peak_bytes for r in record.runs if r.fsdp}
    table = markdown_table(["round", "order", "DEFAULT tokens/s", "PURE tokens/s", "PURE / DEFAULT"], rows)
    memory = ", ".join(f"{mode} {peak / 2**30:.2f} GiB" for mode, peak in peaks.items())
    # 6 FLOPs per parameter per token (forward and backward matmuls) is a lower bound: attention adds more
    flops = 6 * record.parameters * statistics.median(a + b) / record.world_size / 1e12
    return (f"{table}\n\nPeak memory per GPU: {memory}. Each GPU ran at least {flops:,.0f} TFLOP/s of model "
            f"matmuls (6 × parameters × tokens/s per GPU): the step is spent in the GPUs, not the host."
            f"\n\n{records.measured_on(record.run, notes=True)}")  # fmt: skip
