"""The GPU benchmark harness: timing, counting, ceilings, sweep records and the pages rendered from them.

Modules, one concept each:

* ``stats``: medians and spread of repeated timings.
* ``timing``: how one call is timed (CUDA events or a host clock), warm-up and repetition, L2 flushing.
* ``counting``: the floating-point operations and the fewest bytes an operation needs.
* ``roofline``: ceilings, bounds and fractions of a ceiling.
* ``specs``: datasheet figures of GPUs, with their sources (``gpukb/data/gpu_specs.toml``).
* ``results``: the typed record of a sweep (kind ``bench.sweep``), written and read through ``gpukb.records``.
* ``ceilings``: the measured ceilings of a sweep (best matrix product per type, fastest large copy).
* ``registry``: the project's kernels and the peers they are measured against.
* ``device``: what the GPU is (name, SMs, driver, clocks).
* ``suites``: what is measured: matrix products, device and host-device copies, attention, classic mistakes.
* ``runner``: runs the suites, reports progress and writes the sweep record (``gpukb bench``).
* ``pages``: the performance chapter's page layer: the only module here that returns Markdown or SVG.

Only ``timing``, ``device``, ``suites`` and ``runner`` touch a GPU, and they import torch lazily, so the rest
runs on any machine.
"""
