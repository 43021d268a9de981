"""Binary floating-point formats: how a number is stored, and what storing it does to the number."""

from gpukb.chapters import Chapter, DataFile

# --8<-- [start:chapter]
CHAPTER = Chapter(
    name="formats",
    title="Number formats",
    summary="What exactly happens to a number in FP32, TF32, FP16, BF16, FP8 (OCP and FNUZ), FP6, FP4 and the "
    "microscaling formats: bits, limits, rounding, and mixed-precision training.",
    position=10,
    kinds={
        "formats.gpu-checks": "gpukb.formats.results:GpuChecks",
        "formats.codec-speed": "gpukb.formats.results:CodecSpeed",
    },
    data_files={
        "formats.toml": DataFile(
            "gpukb.formats.spec:parse", "format", schemas=(("format", "gpukb.formats.spec:FormatEntry"),)
        ),
        "autocast.toml": DataFile(
            "gpukb.formats.mixed_precision:parse_autocast",
            "list",
            schemas=(("list", "gpukb.formats.mixed_precision:AutocastList"),),
        ),
    },
    checks="tests.formats.test_page_tables",
    mutation=(
        "src/gpukb/formats/codec.py",
        "src/gpukb/formats/spec.py",
        "src/gpukb/formats/pages.py",
        "src/gpukb/formats/tables.py",
    ),
    mutation_tests=(
        "tests/formats/test_decode.py",
        "tests/formats/test_encode.py",
        "tests/formats/test_spec.py",
        "tests/formats/test_rounding_properties.py",
        "tests/formats/test_tables.py",
        "tests/formats/test_page_tables.py",
        "tests/formats/test_figures.py",
        "tests/formats/test_page_claims.py",
    ),
)
# --8<-- [end:chapter]
