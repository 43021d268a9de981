"""The cuDNN chapter: tensor, filter and convolution descriptors as a model you can compute with, reference
convolutions in numpy, and the records of real cuDNN runs on a GPU."""

from gpukb.chapters import Chapter, DataFile

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
    checks="tests.cudnn.test_page_tables",
    mutation=(
        "src/gpukb/cudnn/descriptors.py",
        "src/gpukb/cudnn/convolution.py",
        "src/gpukb/cudnn/program.py",
        "src/gpukb/cudnn/cnn.py",
        "src/gpukb/cudnn/layers.py",
        "src/gpukb/cudnn/facts.py",
        "src/gpukb/cudnn/problems.py",
        "src/gpukb/cudnn/pages.py",
    ),
    mutation_tests=(
        "tests/cudnn/test_descriptors.py",
        "tests/cudnn/test_convolution.py",
        "tests/cudnn/test_conv_program.py",
        "tests/cudnn/test_worked_problems.py",
        "tests/cudnn/test_page_tables.py",
        "tests/site/test_page_tables.py",  # renders the pages and runs the chapter's cell checks on them
    ),
)
