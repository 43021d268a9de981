"""The page “Context parallelism” (docs/parallelism/context.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.figures import to_svg
from gpukb.parallelism import communication as comm
from gpukb.parallelism import figures
from gpukb.tables import bytes_text, markdown_table


def cp_traffic_markdown(batch: int = 1, seq: int = 131072, hidden: int = 4096, kv_hidden: int = 1024) -> str:
    """One attention layer's ring traffic per GPU per step for a long sequence, by ring size."""
    rows = []
    for cp in (2, 4, 8):
        ref = comm.context_parallel(batch, seq, hidden, cp, 2, 1, kv_hidden)
        torch_cp = comm.context_parallel(batch, seq, hidden, cp, 2, 1, kv_hidden, implementation="pytorch")
        rows.append([cp, bytes_text(2 * batch * seq // cp * kv_hidden * 2), bytes_text(comm.sent_bytes(ref)),
                     bytes_text(comm.sent_bytes(torch_cp))])  # fmt: skip
    return markdown_table(["ring size", "K and V shard", "sent: reference", "sent: PyTorch, all-to-all rotation"], rows)


def ring_svg(cp: int = 4) -> str:
    """Which block pair each rank computes at each ring step, as SVG."""
    return to_svg(figures.ring_figure(cp))
