"""Parallelism beyond FSDP: tensor, sequence, context, pipeline and expert parallelism, and FSDP with tensor
parallelism on a 2-D mesh.

Formulas as functions: the bytes each rank sends (:mod:`~gpukb.parallelism.communication`), memory per GPU
(:mod:`~gpukb.parallelism.memory`), the pipeline bubble (:mod:`~gpukb.parallelism.pipeline`). Demonstrations with
PyTorch's own engines on CPU ranks (:mod:`~gpukb.parallelism.demos`, started by
:func:`gpukb.distributed.launch.run_spawned`), their collectives logged (:mod:`~gpukb.parallelism.traffic`); ring
attention (:mod:`~gpukb.parallelism.ring_attention`) and a mixture-of-experts layer
(:mod:`~gpukb.parallelism.experts`) as references; the block they split (:mod:`~gpukb.parallelism.model`).
"""

from gpukb.chapters import Chapter, DataFile

#: One page module per page: ``docs/parallelism/<page>.md`` is rendered by ``gpukb.parallelism.pages.<page>``
#: ("-" → "_", ``index.md`` by ``opening``), whose tables ``tests/parallelism/pages/test_<page>.py`` checks (the
#: FSDP + TP page prints no table).
_PAGES = ("opening", "tensor", "pipeline", "context", "experts", "fsdp_tp", "measured", "problems")

# --8<-- [start:chapter]
CHAPTER = Chapter(
    name="parallelism",
    title="Parallelism",
    summary="Tensor, sequence, context, pipeline and expert parallelism and FSDP + TP: what each sends, what it "
    "saves, PyTorch's engines run on CPU ranks against one process, and when to reach for which.",
    position=85,
    cli=False,
    kinds={"parallelism.schemes": "gpukb.parallelism.results:ParallelismSchemes"},
    data_files={
        "parallelism/sources.toml": DataFile(
            "gpukb.parallelism.sources:parse", "source", schemas=(("source", "gpukb.parallelism.sources:Source"),)
        )
    },
    page_layers=tuple(f"gpukb.parallelism.pages.{page}" for page in _PAGES),
    checks={
        f"gpukb.parallelism.pages.{page}": f"tests.parallelism.pages.test_{page}"
        for page in _PAGES
        if page != "fsdp_tp"
    },
)
# --8<-- [end:chapter]
