"""The cuDNN chapter: tensor, filter and convolution descriptors as a model you can compute with, reference
convolutions in numpy, and the records of real cuDNN runs on a GPU."""

from gpukb.chapters import Chapter, DataFile

#: One page module per page: ``docs/cudnn/<page>.md`` is rendered by ``gpukb.cudnn.pages.<page>`` (``index.md`` by
#: ``opening``), whose tables ``tests/cudnn/pages/test_<page>.py`` checks; what pages share is
#: ``gpukb.cudnn.pages``'s, checked by ``tests.cudnn.pages``.
_PAGES = ("convolution", "descriptors", "h100", "opening")

CHAPTER = Chapter(
    name="cudnn",
    title="cuDNN",
    summary="Tensor, filter and convolution descriptors as a model you can compute with, reference "
    "convolutions, and what cuDNN's algorithms and layouts measured on an H100.",
    position=60,
    kinds={"cudnn.conv-forward": "gpukb.cudnn.results:ConvForward"},
    data_files={
        "cudnn/facts.toml": DataFile("gpukb.cudnn.facts:parse", "fact", schemas=(("fact", "gpukb.cudnn.facts:Fact"),)),
        "cudnn/resnet50_layers.toml": DataFile(
            "gpukb.cudnn.layers:parse", "layer", schemas=(("layer", "gpukb.cudnn.layers:Layer"),)
        ),
        "cudnn/small_cnn.toml": DataFile(
            "gpukb.cudnn.cnn:parse", "example", schemas=(("example", "gpukb.cudnn.cnn:Network"),)
        ),
    },
    page_layers=("gpukb.cudnn.pages", *(f"gpukb.cudnn.pages.{page}" for page in _PAGES)),
    checks={
        "gpukb.cudnn.pages": "tests.cudnn.pages",
        **{
            f"gpukb.cudnn.pages.{page}": f"tests.cudnn.pages.test_{page}"
            for page in ("convolution", "descriptors", "h100")
        },
    },
    mutation=(
        "src/gpukb/cudnn/descriptors.py",
        "src/gpukb/cudnn/convolution.py",
        "src/gpukb/cudnn/program.py",
        "src/gpukb/cudnn/cnn.py",
        "src/gpukb/cudnn/layers.py",
        "src/gpukb/cudnn/facts.py",
        "src/gpukb/cudnn/problems.py",
        "src/gpukb/cudnn/pages/__init__.py",
        "src/gpukb/cudnn/pages/convolution.py",
        "src/gpukb/cudnn/pages/descriptors.py",
        "src/gpukb/cudnn/pages/h100.py",
        "src/gpukb/cudnn/pages/opening.py",
    ),
    # Every test of the chapter: the record's tests (test_results.py) are the only CPU callers of parse_layers and
    # check the h100 page's findings against the record; the snippet and command-line tests read the same code.
    mutation_tests=("tests/cudnn",),
)
