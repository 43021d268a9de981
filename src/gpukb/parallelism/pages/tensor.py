"""The page “Tensor and sequence parallelism” (docs/parallelism/tensor.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.figures import to_svg
from gpukb.parallelism import communication as comm
from gpukb.parallelism import figures
from gpukb.parallelism.memory import activation_bytes_per_layer
from gpukb.tables import bytes_text, markdown_table


def tp_traffic_markdown(batch: int = 1, seq: int = 2048, hidden: int = 12288, tp: int = 8) -> str:
    """One block's collectives per training step under tensor and under tensor + sequence parallelism."""
    rows = []
    for label, sequence in (("TP", False), ("TP + SP", True)):
        for t in comm.tensor_parallel(batch, seq, hidden, tp, 2, 1, sequence=sequence):
            rows.append(
                [label, t.what, t.kind.replace("_", "-"), t.count, bytes_text(t.whole_bytes), bytes_text(t.sent_bytes)]
            )
    return markdown_table(["scheme", "what moves", "collective", "per step", "size of each", "sent per GPU"], rows)


def activation_markdown(seq: int = 2048, batch: int = 1, hidden: int = 12288, heads: int = 96, tp: int = 8) -> str:
    """Activation bytes one layer keeps per GPU (Korthikanti et al. 2022, table 2) for each choice."""
    choices = [("none", 1, False, "none"), ("TP", tp, False, "none"), ("TP + SP", tp, True, "none"),
               ("TP", tp, False, "selective"), ("TP + SP", tp, True, "selective"),
               ("TP", tp, False, "full")]  # fmt: skip
    rows = [
        [label, t, recompute, bytes_text(activation_bytes_per_layer(seq, batch, hidden, heads, t, sequence, recompute))]
        for label, t, sequence, recompute in choices
    ]
    return markdown_table(["parallelism", "t", "recomputation", "activations per layer per GPU"], rows)


# figures
def tensor_parallel_svg(tp: int = 2, sequence: bool = False) -> str:
    """The MLP split over ``tp`` ranks (:func:`gpukb.parallelism.figures.tensor_parallel_figure`), as SVG."""
    return to_svg(figures.tensor_parallel_figure(tp, sequence))
