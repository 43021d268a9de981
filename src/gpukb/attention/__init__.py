"""Attention, from the equations to a fast kernel: numpy references of every variant a transformer uses
(:mod:`gpukb.attention.reference`), the arithmetic of its cost (:mod:`gpukb.attention.costs`), the online
softmax and FlashAttention's tiling (:mod:`gpukb.attention.flash`), and the recorded benchmark of the Triton
kernel (:mod:`gpukb.attention.results`); :mod:`gpukb.attention.pages` renders them.
"""
