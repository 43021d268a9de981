"""Attention, from the equations to a fast kernel: numpy references of every variant a transformer uses
(:mod:`gpukb.attention.reference`), the arithmetic of its cost (:mod:`gpukb.attention.costs`), the online
softmax and FlashAttention's tiling (:mod:`gpukb.attention.flash`), and the recorded benchmark of the Triton
kernel (:mod:`gpukb.attention.results`); :mod:`gpukb.attention.pages` renders them.
"""

from gpukb.chapters import Chapter

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
    checks="tests.attention.test_page_tables",
)
