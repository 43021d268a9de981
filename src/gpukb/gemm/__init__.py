"""Matrix products (GEMM): reference implementations, counts, the libraries that compute them, and the project's
Triton GEMM (:mod:`gpukb.gemm.triton`), measured against cuBLAS."""

from gpukb.chapters import Chapter, DataFile, GpuRun

#: One page module per page: ``docs/gemm/<page>.md`` is rendered by ``gpukb.gemm.pages.<page>`` ("-" → "_"), whose
#: tables ``tests/gemm/pages/test_<page>.py`` checks. The opening page, index.md, is ``opening`` (a module named
#: ``index`` would take the package's place in the API reference); it prints no table.
_PAGES = ("opening", "type_tables", "accuracy", "ground_up", "timing", "triton")
_TRITON_HOST = ("matmul", "configs", "tuning", "model_shapes", "sweep", "pairs", "results", "peer_kernels")

CHAPTER = Chapter(
    name="gemm",
    title="GEMM and BLAS",
    summary="Which type combinations hipBLASLt and cuBLASLt accept and what each costs in accuracy; BLAS levels, "
    "blocking, timing a GEMM, and a Triton GEMM measured against cuBLAS.",
    position=20,
    kinds={
        "gemm.fp8-hardware": "gpukb.gemm.results:Fp8Hardware",
        "gemm.ground-up": "gpukb.gemm.results:GroundUp",
        "gemm.triton-gemm": "gpukb.gemm.triton.results:TritonGemm",
        "gemm.triton-tuning": "gpukb.gemm.triton.tuning:GemmTuning",
        "gemm.triton-gemm-sweep": "gpukb.gemm.triton.results:TritonGemmSweep",
        "gemm.triton-rounds": "gpukb.gemm.triton.results:TritonRounds",
    },
    data_files={
        "gemm/hipblaslt.toml": DataFile(
            "gpukb.gemm.types:parse_file", "group", schemas=(("", "gpukb.gemm.types:TableFile"),)
        ),
        "gemm/cublaslt.toml": DataFile(
            "gpukb.gemm.types:parse_file", "group", schemas=(("", "gpukb.gemm.types:TableFile"),)
        ),
        "gemm/model_shapes.toml": DataFile(
            "gpukb.gemm.triton.model_shapes:parse",
            "model",
            schemas=(("model", "gpukb.gemm.triton.model_shapes:Model"),),
        ),
    },
    kernel_pairs="gpukb.gemm.triton.pairs:pairs",
    page_layers=tuple(f"gpukb.gemm.pages.{page}" for page in _PAGES),
    checks={f"gpukb.gemm.pages.{page}": f"tests.gemm.pages.test_{page}" for page in _PAGES if page != "opening"},
    mutation=(
        "src/gpukb/gemm/type_tables.py",
        *(f"src/gpukb/gemm/pages/{page}.py" for page in _PAGES),
        # The Triton GEMM's host side: launch checks, configurations, the tuning look-up, sweeps and records (the
        # @triton.jit kernels themselves are decorated, which mutmut leaves alone, and run only on a GPU).
        *(f"src/gpukb/gemm/triton/{part}.py" for part in _TRITON_HOST),
    ),
    mutation_tests=(
        "tests/gemm/test_types.py",
        "tests/gemm/test_blas.py",  # the BLAS roofline and examples tables of the ground-up page
        "tests/gemm/test_blocking.py",  # its blocking tables
        "tests/gemm/pages",
        "tests/gemm/test_results.py",
        "tests/gemm/test_fp8_hardware.py",
        "tests/gemm/triton",
    ),
    gpu_runs={
        "triton": GpuRun("python3 bench/triton_gemm.py {out}", "gemm/triton-gemm-h100", 300),
        "ground-up": GpuRun("python3 bench/gemm_ground_up.py {out}", "gemm/ground-up-h100", 150),
    },
)
