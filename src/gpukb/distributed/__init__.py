"""FSDP options and distributed training.

Composer's ``fsdp_config`` translated to torch objects (:mod:`~gpukb.distributed.fsdp_config`, facts and sources in
:mod:`~gpukb.distributed.options`); a memory calculator (:mod:`~gpukb.distributed.memory`); ring collectives simulated
and bandwidth as nccl-tests reports it (:mod:`~gpukb.distributed.collectives`, measured by
:mod:`~gpukb.distributed.benchmark`); activation checkpointing measured (:mod:`~gpukb.distributed.checkpointing`);
FSDP2's dtypes caught with hooks (:mod:`~gpukb.distributed.dtypes`); a process group that cannot hang
(:mod:`~gpukb.distributed.launch`, :mod:`~gpukb.distributed.demos`); the measured transformer
(:mod:`~gpukb.distributed.model`, :mod:`~gpukb.distributed.training`) and its records
(:mod:`~gpukb.distributed.results`).
"""

from gpukb.chapters import Chapter, DataFile

#: One page module per page: ``docs/distributed/<page>.md`` is rendered by ``gpukb.distributed.pages.<page>`` ("-" →
#: "_"), whose tables ``tests/distributed/pages/test_<page>.py`` checks; the tables the one-GPU and two-GPU pages
#: share are ``gpukb.distributed.pages``'s, checked by ``tests.distributed.pages``.
_PAGES = ("opening", "options", "demonstrations", "memory", "single_gpu", "two_gpus", "four_gpus", "collectives")

CHAPTER = Chapter(
    name="distributed",
    title="Distributed training",
    summary="FSDP's options and what each costs, memory per GPU, ring collectives and their bandwidth, "
    "demonstrated on CPU ranks and measured on one, two and four H100s.",
    position=80,
    kinds={
        "distributed.collectives": "gpukb.distributed.results:CollectiveBandwidth",
        "distributed.fsdp-training": "gpukb.distributed.results:FsdpTraining",
        "distributed.fsdp-dtypes": "gpukb.distributed.results:FsdpDtypes",
    },
    data_files={
        "distributed/fsdp.toml": DataFile(
            "gpukb.distributed.options:parse", "source", schemas=(("", "gpukb.distributed.options:FsdpFacts"),)
        )
    },
    page_layers=("gpukb.distributed.pages", *(f"gpukb.distributed.pages.{page}" for page in _PAGES)),
    checks={
        "gpukb.distributed.pages": "tests.distributed.pages",
        **{f"gpukb.distributed.pages.{page}": f"tests.distributed.pages.test_{page}" for page in _PAGES},
    },
    # What a CPU can check in one process: the memory and collective arithmetic, the model's sizes, the
    # fsdp_config translation, the facts, the problems and the pages. Training, checkpointing, DDP's buckets and the
    # process groups (spawned ranks, seconds per test) are left to their own tests and the GPU runs.
    mutation=(
        "src/gpukb/distributed/memory.py",
        "src/gpukb/distributed/model.py",
        "src/gpukb/distributed/collectives.py",
        "src/gpukb/distributed/fsdp_config.py",
        "src/gpukb/distributed/options.py",
        "src/gpukb/distributed/problems.py",
        "src/gpukb/distributed/pages/__init__.py",
        *(f"src/gpukb/distributed/pages/{page}.py" for page in _PAGES),
    ),
    mutation_tests=(
        "tests/distributed/test_memory.py",
        "tests/distributed/test_model.py",
        "tests/distributed/test_collectives.py",
        "tests/distributed/test_fsdp_config.py",
        "tests/distributed/test_results.py",
        "tests/distributed/test_worked_problems.py",
        "tests/distributed/test_cli.py",
        "tests/distributed/pages",
    ),
)
