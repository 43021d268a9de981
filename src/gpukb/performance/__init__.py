"""The performance chapter: ceilings, rooflines and the bound of a layer, GPU datasheets, and ``gpukb bench``,
which measures the GPU that is present and records a sweep. Modules, one concept each:

* ``roofline``: ceilings, bounds and fractions of a ceiling.
* ``specs``: datasheet figures of GPUs, with their sources (``gpukb/data/gpu_specs.toml``).
* ``results``: the typed record of a sweep (kind ``performance.sweep``), written and read through ``gpukb.records``.
* ``ceilings``: the measured ceilings of a sweep (best matrix product per type, fastest large copy).
* ``quantities``: one figure per quantity the pages quote, reconciled across the records that measure it.
* ``suites``: what is measured: matrix products, device and host-device copies, attention, the chapters' kernels
  against their peers, classic mistakes.
* ``runner``: runs the suites, reports progress and writes the sweep record (``gpukb bench``).
* ``pages``: the chapter's page layer: the only module here that returns Markdown or SVG.

How a call is timed, counted and described lives one floor down, in :mod:`gpukb.measuring`.
"""

from gpukb.chapters import Chapter, DataFile, GpuRun

CHAPTER = Chapter(
    name="performance",
    title="Performance",
    summary="FLOPs, bytes, arithmetic intensity and rooflines; how to time a GPU honestly, and what an H100 "
    "measured against its datasheet.",
    start="measuring.md",
    position=30,
    kinds={
        "performance.sweep": "gpukb.performance.results:SweepRecord",
        "performance.ceilings": "gpukb.performance.results:CeilingsRecord",
    },
    data_files={
        "gpu_specs.toml": DataFile(
            "gpukb.performance.specs:parse",
            "gpu",
            schemas=(
                ("gpu", "gpukb.performance.specs:GpuEntry"),
                ("figure", "gpukb.performance.specs:Figure"),
            ),
        )
    },
    checks="tests.performance.test_page_tables",
    mutation=("src/gpukb/performance/pages.py",),
    mutation_tests=(
        "tests/performance/test_pages.py",
        "tests/performance/test_page_tables.py",
        "tests/performance/test_quantities.py",
        "tests/performance/test_measured.py",
    ),
    gpu_runs={
        "sweep-quick": GpuRun("python3 bench/gpu_sweep.py --quick {out}", "performance/h100-sweep-quick", 90),
        "sweep": GpuRun("python3 bench/gpu_sweep.py {out}", "performance/h100-sweep", 240),
        "ceilings": GpuRun("python3 bench/performance_ceilings.py {out}", "performance/ceilings-h100", 240),
    },
)
