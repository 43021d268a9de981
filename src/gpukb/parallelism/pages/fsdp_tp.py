"""The page “FSDP + TP on a 2-D mesh” (docs/parallelism/fsdp-tp.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.figures import to_svg
from gpukb.parallelism import figures


def mesh_svg(dp: int = 2, tp: int = 2) -> str:
    """A 2-D device mesh, as SVG."""
    return to_svg(figures.mesh_figure(dp, tp))
