"""The page “Embeddings and the seq2seq bottleneck” (docs/sequences/seq2seq.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.sequences import seq2seq
from gpukb.tables import markdown_table


def bottleneck() -> str:
    """The seq2seq bottleneck measured on a random model: context size, first-token sensitivity, context gap."""
    headers, rows = seq2seq.bottleneck_rows()
    cells = [[n, size, f"{sens:.1e}", f"{gap:.1e}"] for n, size, sens, gap in rows]
    return markdown_table(headers, cells) + "\n"


def capacity() -> str:
    """The bottleneck as counting: a rotation RNN whose first input never fades, and inputs that share a context."""
    headers, rows = seq2seq.capacity_rows()
    cells = [[n, numbers, size, f"{sens:.4f}", null, "–" if shift is None else f"{shift:.2f}",
              "–" if gap is None else f"{gap:.0e}"] for n, numbers, size, sens, null, shift, gap in rows]  # fmt: skip
    return markdown_table(headers, cells) + "\n"
