"""Attention, from the equations to a fast kernel: numpy references of every variant a transformer uses
(:mod:`gpukb.attention.reference`), the arithmetic of its cost (:mod:`gpukb.attention.costs`), the online
softmax and FlashAttention's tiling (:mod:`gpukb.attention.flash`), and the recorded benchmark of the Triton
kernel (:mod:`gpukb.attention.results`); :mod:`gpukb.attention.pages` renders them, one module per page.
"""

from gpukb.chapters import Chapter

#: One page module per page: ``docs/attention/<page>.md`` is rendered by ``gpukb.attention.pages.<page>``
#: ("-" → "_"), whose tables ``tests/attention/pages/test_<page>.py`` checks.
_PAGES = ("cost", "flash", "opening", "kernel")

CHAPTER = Chapter(
    name="attention",
    title="Attention and sequence models",
    summary="Attention from the equations to a fast kernel: every variant a transformer uses, its cost, the "
    "online softmax and FlashAttention's tiling, and a Triton kernel measured against SDPA.",
    position=70,
    kinds={
        "attention.flash-forward": "gpukb.attention.results:FlashForward",
        "attention.flash-training": "gpukb.attention.results:FlashTraining",
        "attention.gluon-forward": "gpukb.attention.results:GluonForward",
    },
    page_layers=tuple(f"gpukb.attention.pages.{page}" for page in _PAGES),
    checks={f"gpukb.attention.pages.{page}": f"tests.attention.pages.test_{page}" for page in ("cost", "kernel")},
)
