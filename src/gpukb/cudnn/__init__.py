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
)
