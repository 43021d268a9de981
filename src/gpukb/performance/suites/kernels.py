"""Each registered project kernel against its peer, on the same inputs, in the same run.

The pairs are the ones the chapters declare (:func:`gpukb.measuring.pairs.registry`). With none declared the
suite records nothing and says so.
"""

from __future__ import annotations

from gpukb.measuring.pairs import KernelRecord, Registry, measure_pair, registry
from gpukb.performance.suites import Context


def run(ctx: Context, pairs: Registry | None = None) -> list[KernelRecord]:
    """Measure every case of every declared pair (or of ``pairs``)."""
    pairs = registry() if pairs is None else pairs
    if not len(pairs):
        ctx.notes.append("kernels: no project kernel is registered yet; nothing to compare with a peer")
        ctx.progress("kernels: none registered")
        return []
    records = []
    for pair in pairs:
        for case in pair.cases:
            records.append(measure_pair(pair, case, ctx.timer, ctx.budget, ctx.flush))
            ctx.progress(f"kernels {pair.name} {case}: {records[-1].ratio:.2f}x the peer's speed")
    return records
