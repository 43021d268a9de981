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
* ``pages``: the chapter's page layer, one module per page (``pages.<page>`` renders ``docs/performance/<page>.md``)
  and what several pages share (a quantity's one figure): the only modules here that return Markdown or SVG.

How a call is timed, counted and described lives one floor down, in :mod:`gpukb.measuring`.
"""

from gpukb.chapters import Chapter, DataFile, GpuRun

#: One page module per page: ``docs/performance/<page>.md`` is rendered by ``gpukb.performance.pages.<page>``, whose
#: tables ``tests/performance/pages/test_<page>.py`` checks; ``gpukb.performance.pages`` itself holds what pages of
#: any chapter quote (a quantity's one figure) and prints no table.
_PAGES = ("measuring", "bounding", "datasheets", "h100")

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
    page_layers=("gpukb.performance.pages", *(f"gpukb.performance.pages.{page}" for page in _PAGES)),
    checks={f"gpukb.performance.pages.{page}": f"tests.performance.pages.test_{page}" for page in _PAGES},
    mutation=(
        "src/gpukb/performance/pages/__init__.py",
        *(f"src/gpukb/performance/pages/{page}.py" for page in _PAGES),
    ),
    mutation_tests=(
        "tests/performance/test_pages.py",
        "tests/performance/pages",
        "tests/performance/test_quantities.py",
        "tests/performance/test_measured.py",
    ),
    gpu_runs={
        "sweep-quick": GpuRun("python3 bench/gpu_sweep.py --quick {out}", "performance/h100-sweep-quick", 90),
        "sweep": GpuRun("python3 bench/gpu_sweep.py {out}", "performance/h100-sweep", 240),
        "ceilings": GpuRun("python3 bench/performance_ceilings.py {out}", "performance/ceilings-h100", 240),
    },
)
