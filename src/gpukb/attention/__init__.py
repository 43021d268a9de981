"""Attention, from the equations to a fast kernel: numpy references of every variant a transformer uses
(:mod:`gpukb.attention.reference`), the arithmetic of its cost (:mod:`gpukb.attention.costs`), the online
softmax and FlashAttention's tiling (:mod:`gpukb.attention.flash`), and the recorded benchmark of the Triton
kernel (:mod:`gpukb.attention.results`); :mod:`gpukb.attention.pages` renders them, one module per page.
"""

from gpukb.chapters import Chapter

#: One page module per page: ``docs/attention/<page>.md`` is rendered by ``gpukb.attention.pages.<page>``
#: ("-" → "_"), whose tables ``tests/attention/pages/test_<page>.py`` checks.
_PAGES = ("cost", "flash", "opening", "kernel")

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
    page_layers=tuple(f"gpukb.attention.pages.{page}" for page in _PAGES),
    checks={f"gpukb.attention.pages.{page}": f"tests.attention.pages.test_{page}" for page in ("cost", "kernel")},
    # What a CPU can check: the numpy references, the costs, the tiling in numpy, the problems and the pages. The
    # Triton kernel (its tests run Triton's interpreter, minutes per mutant) and the Gluon module are left out: the
    # Gluon kernels are plain functions that gluon.jit wraps later, so a mutant of them would be a mutmut trampoline
    # Gluon cannot compile; the Gluon configuration checks there are held by the fuzz and unit tests.
    mutation=(
        "src/gpukb/attention/reference.py",
        "src/gpukb/attention/costs.py",
        "src/gpukb/attention/flash.py",
        "src/gpukb/attention/problems.py",
        # The kernels' host side (configurations, checks, launch geometry, the persistent schedule); the jitted
        # kernels are decorated, which mutmut leaves alone.
        "src/gpukb/attention/kernel.py",
        "src/gpukb/attention/gluon_forward.py",
        "src/gpukb/attention/pages/__init__.py",
        *(f"src/gpukb/attention/pages/{page}.py" for page in _PAGES),
    ),
    mutation_tests=(
        "tests/attention/test_reference.py",
        "tests/attention/test_named_errors.py",
        "tests/attention/test_edges.py",
        "tests/attention/test_flash_and_costs.py",
        "tests/attention/test_worked_problems.py",
        "tests/attention/test_cli.py",
        "tests/attention/test_kernel.py",
        "tests/attention/test_gluon_forward.py",
        "tests/attention/pages",
    ),
)
