"""The page “Pipeline parallelism” (docs/parallelism/pipeline.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.arguments import given, integer
from gpukb.figures import to_svg
from gpukb.parallelism import figures
from gpukb.parallelism.pipeline import bubble_fraction, in_flight, interleaved_bubble_fraction
from gpukb.tables import markdown_table


def bubble_markdown(stages: tuple[int, ...] = (2, 4, 8), micro_batches: tuple[int, ...] = (4, 8, 16, 32)) -> str:
    """The bubble (p − 1)/(m + p − 1) of GPipe and 1F1B, and the interleaved schedule's with 2 chunks per stage.

    Raises:
        TypeError: For ``stages`` or ``micro_batches`` that is not a list or tuple of ints (an int raised a bare
            "not iterable").
        ValueError: For a count below 1, or more than 1,000 rows.
    """
    for name, counts in (("stages", stages), ("micro_batches", micro_batches)):
        if not isinstance(counts, list | tuple):
            raise TypeError(f"{name} must be a list or tuple of counts (e.g. (2, 4, 8)); got {given(counts)}")
    integer("rows (stages × micro_batches)", len(stages) * len(micro_batches), maximum=1000)
    rows = []
    for p in stages:
        for m in micro_batches:
            bubble, interleaved = bubble_fraction(p, m), interleaved_bubble_fraction(p, m, 2)
            rows.append([p, m, f"{float(bubble):.1%}", f"{float(interleaved):.1%}", in_flight("GPipe", p, m),
                         in_flight("1F1B", p, m)])  # fmt: skip
    return markdown_table(
        ["stages p", "micro-batches m", "bubble", "interleaved, v = 2", "held by stage 0: GPipe", "1F1B"], rows
    )


def pipeline_svg(stages: int = 4, micro_batches: int = 8) -> str:
    """GPipe and 1F1B timelines, as SVG."""
    return to_svg(figures.pipeline_figure(stages, micro_batches))
