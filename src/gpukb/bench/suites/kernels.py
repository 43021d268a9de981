"""Each registered project kernel against its peer, on the same inputs, in the same run.

See :mod:`gpukb.bench.registry`. With nothing registered the suite records nothing and says so.
"""

from __future__ import annotations

import gpukb.kernels  # noqa: F401  (importing the kernels package registers its pairs)
from gpukb.bench.registry import REGISTRY, Registry, measure_pair
from gpukb.bench.results import KernelRecord
from gpukb.bench.suites import Context


def run(ctx: Context, registry: Registry = REGISTRY) -> list[KernelRecord]:
    """Measure every case of every registered pair."""
    if not len(registry):
        ctx.notes.append("kernels: no project kernel is registered yet; nothing to compare with a peer")
        ctx.progress("kernels: none registered")
        return []
    records = []
    for pair in registry:
        for case in pair.cases:
            records.append(measure_pair(pair, case, ctx.timer, ctx.budget, ctx.flush))
            ctx.progress(f"kernels {pair.name} {case}: {records[-1].ratio:.2f}x the peer's speed")
    return records
