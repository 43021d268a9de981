"""The CUDA chapter: execution model (thread indices, occupancy), kernels that run, and the memory model.

Modules: :mod:`gpukb.cuda.limits` (per compute capability limits, sourced data), :mod:`gpukb.cuda.occupancy`
(the occupancy calculator), :mod:`gpukb.cuda.indexing` (thread-index arithmetic), :mod:`gpukb.cuda.kernels`
(numba CUDA kernels), :mod:`gpukb.cuda.triton_kernels` (the Triton vector add), :mod:`gpukb.cuda.bits`
(bit reinterpretation), :mod:`gpukb.cuda.results` (recorded GPU runs) and :mod:`gpukb.cuda.pages` (the page layer).
"""

from gpukb.chapters import Chapter, DataFile

#: One page module per page: ``docs/cuda/<page>.md`` is rendered by ``gpukb.cuda.pages.<page>`` (``index.md`` by
#: ``opening``), whose tables ``tests/cuda/pages/test_<page>.py`` checks.
_PAGES = ("execution", "opening", "kernels", "memory")

CHAPTER = Chapter(
    name="cuda",
    title="CUDA",
    summary="SMs, warps and blocks; occupancy and what limits it; kernels you can run; pageable and pinned "
    "copies, overlap and the memory hierarchy, measured on an H100.",
    position=50,
    kinds={
        "cuda.device": "gpukb.cuda.results:DeviceFacts",
        "cuda.occupancy-check": "gpukb.cuda.results:OccupancyCheck",
        "cuda.copy-width": "gpukb.cuda.results:CopyWidth",
        "cuda.transfers": "gpukb.cuda.results:Transfers",
        "cuda.kernels": "gpukb.cuda.results:KernelBench",
        "cuda.host-memory": "gpukb.cuda.results:HostMemory",
        "cuda.overlap": "gpukb.cuda.results:Overlap",
    },
    data_files={
        "cuda/limits.toml": DataFile(
            "gpukb.cuda.limits:parse", "capability", schemas=(("capability", "gpukb.cuda.limits:Capability"),)
        )
    },
    page_layers=tuple(f"gpukb.cuda.pages.{page}" for page in _PAGES),
    checks={f"gpukb.cuda.pages.{page}": f"tests.cuda.pages.test_{page}" for page in _PAGES},
    # What a CPU can check: the arithmetic, the limits, the tables and the pages. The numba kernels (slow on numba's
    # simulator), the Triton add, the CUDA runtime's host memory and the simulator's shuffles run in the GPU tests.
    mutation=(
        "src/gpukb/cuda/banks.py",
        "src/gpukb/cuda/indexing.py",
        "src/gpukb/cuda/limits.py",
        "src/gpukb/cuda/occupancy.py",
        "src/gpukb/cuda/overlap.py",
        "src/gpukb/cuda/problems.py",
        "src/gpukb/cuda/tables.py",
        "src/gpukb/cuda/pages/__init__.py",
        *(f"src/gpukb/cuda/pages/{page}.py" for page in _PAGES),
    ),
    mutation_tests=(
        "tests/cuda/test_banks.py",
        "tests/cuda/test_indexing.py",
        "tests/cuda/test_limits.py",
        "tests/cuda/test_occupancy.py",
        "tests/cuda/test_overlap.py",
        "tests/cuda/test_results.py",
        "tests/cuda/test_worked_problems.py",
        "tests/cuda/test_cli.py",
        "tests/cuda/pages",
    ),
)
