"""The page “Online softmax and FlashAttention” (docs/attention/flash.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.attention import figures as attention_figures
from gpukb.figures import to_svg


def flash_figure() -> str:
    """Inline SVG: the causal score matrix in the kernel's tiles, and one program's walk with its running state."""
    return to_svg(attention_figures.flash_figure())
