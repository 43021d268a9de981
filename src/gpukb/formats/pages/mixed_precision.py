"""The page “Mixed-precision training” (docs/formats/mixed-precision.md): its tables, figures and text."""

from __future__ import annotations

from collections.abc import Sequence

from gpukb import tables as render
from gpukb.formats import mixed_precision

#: What each autocast list runs in, and why, as the page says it.
_AUTOCAST_ROWS = (
    ("lower-precision", "float16 / bfloat16",
     "products of 16-bit inputs, summed by tensor cores in an FP32 accumulator"),
    ("float32", "float32",
     "long sums (reductions, norms, softmax, losses) and functions whose output range outgrows FP16"),
    ("widest", "the widest input type", "several inputs that must share a dtype"),
)  # fmt: skip


def autocast_table() -> str:
    """PyTorch's CUDA autocast op lists (``gpukb/data/autocast.toml``): what runs in 16 bits, what in FP32, and why."""

    def ops(names: Sequence[str]) -> str:
        return ", ".join(f"`{name}`" for name in names)  # code spans, so that `__matmul__` does not turn bold

    rows = [[runs_in, ops(mixed_precision.autocast_ops(list_id)), why] for list_id, runs_in, why in _AUTOCAST_ROWS]
    return render.markdown_table(["autocast runs them in", "ops (CUDA)", "why"], rows)
