"""Measuring, the floor below every chapter: how a GPU call is timed and summarised, what the GPU is, how many
operations and bytes an operation needs, and a kernel paired with the peer it is measured against.

* ``stats``: medians and spread of repeated timings (one :class:`~gpukb.measuring.stats.Summary` schema).
* ``timing``: how one call is timed (CUDA events or a host clock), warm-up and repetition, L2 flushing, and the
  SM clock and power sampled while the timed calls run.
* ``device``: what the GPU is (name, SMs, driver, clocks).
* ``counting``: the floating-point operations and the fewest bytes an operation needs.
* ``pairs``: a project kernel and its peer, timed on the same inputs in the same run.

Nothing here imports a chapter or the records; torch is imported lazily, so the arithmetic runs on any machine.
"""
