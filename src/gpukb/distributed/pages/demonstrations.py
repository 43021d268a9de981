"""The demonstrations page (docs/distributed/demonstrations.md): how dtypes flow and what checkpointing does,
probed on the CPU while the site is built.
"""

from __future__ import annotations

from gpukb.distributed import checkpointing, memory
from gpukb.distributed.fsdp_config import mode_dtypes
from gpukb.distributed.pages import _cell
from gpukb.tables import markdown_table


def dtype_flow_markdown(precision: str = "amp_bf16") -> str:
    """Where each dtype of a mode shows up in one FSDP2 step (each cell is asserted on two gloo ranks in CI)."""
    rows = []
    for mode, param, reduce, _ in mode_dtypes(precision):
        compute = param or "float32"
        rows.append([f"`{mode}`", compute, compute, compute, reduce or compute, "float32", "float32"])
    headers = [
        "mode",
        "params in forward",
        "all-gather",
        "unsharded grads",
        "reduce-scatter",
        "sharded grads (optimizer)",
        "sharded params (optimizer)",
    ]
    return markdown_table(headers, rows)


def checkpoint_behaviours_markdown() -> str:
    """Each behaviour probed in the torch that builds the site."""
    headers, rows = checkpointing.behaviours()
    return markdown_table(headers, [[_cell(c) for c in r] for r in rows])


def checkpoint_memory_markdown() -> str:
    """Bytes held for backward and peak bytes of three checkpointed blocks on the CPU, with the formula's value."""
    headers, rows = checkpointing.memory_table()
    b, s, h, a, layers = 2, 16, 32, 4, 3
    full = memory.block_activation_bytes(b, s, h, a, 4)
    out = b * s * h * 4
    formula = {"none": layers * full + 4, "reentrant": layers * out + 4, "non-reentrant": layers * out + 4}
    return markdown_table([*headers, "formula"], [[*r, formula[r[0]]] for r in rows])
