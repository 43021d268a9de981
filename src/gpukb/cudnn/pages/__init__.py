"""The cuDNN chapter's page layer, the only code that turns its models, data and records into Markdown: one module per
page (``pages.<page>`` renders ``docs/cudnn/<page>.md``), and here what several of its pages share (the fact tables,
the layers' ceilings).

Pages call their module's functions with literal arguments (``from gpukb.cudnn.pages.descriptors import
format_strides``); each computes or loads what it renders. Library modules (:mod:`gpukb.cudnn.descriptors`,
:mod:`gpukb.cudnn.convolution`, :mod:`gpukb.cudnn.cnn`, :mod:`gpukb.cudnn.program`) return values; labels a reader
sees live here.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpukb.cudnn import facts, layers
from gpukb.performance.ceilings import H100_CEILING_QUANTITIES, h100_ceilings
from gpukb.performance.roofline import bound
from gpukb.tables import markdown_table


def _tuple(values: Sequence[int]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


def fact_table(topic: str) -> str:
    """The cited facts of one topic (tensor, convolution, math, algorithm)."""
    headers, rows = facts.facts_table(topic)
    table = markdown_table(headers, [[text, source, status, f"`{test}`"] for text, source, status, test in rows])
    cited = "\n".join(f"- **{key}**: {text}" for key, text in facts.sources_cited(topic))
    return table + "\n\nSources:\n\n" + cited + "\n"


def _bound_us(layer: layers.Layer, dtype: str, ceilings: dict[str, float]) -> tuple[float, str, float, float]:
    c = layers.counts(layer)
    nbytes = c.bytes(2)
    b = bound(c.flops, nbytes, ceilings[dtype] * 1e12, ceilings["bandwidth"] * 1e9)
    return b.time_s * 1e6, b.limiter, c.flops, nbytes


def layer_ceilings(dtype: str = "fp16") -> str:
    """The one sentence naming the ceilings the bounds use."""
    from gpukb.performance.pages import quantity

    ceilings = h100_ceilings()
    rate = quantity(H100_CEILING_QUANTITIES[dtype]) if dtype in H100_CEILING_QUANTITIES else f"{ceilings[dtype]:.0f}"
    return (f"Bounds use the H100's measured ceilings: {rate} TFLOP/s for {dtype} products and "
            f"{quantity(H100_CEILING_QUANTITIES['bandwidth'])} GB/s of copy bandwidth, each the median of rounds "
            "interleaved in one run "
            "([the H100's ceilings](../../performance/h100/#the-h100s-ceilings-one-figure-each)); "
            f"batch {layers.load().batch}, no bias.")  # fmt: skip
