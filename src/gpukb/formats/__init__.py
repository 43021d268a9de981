"""Binary floating-point formats: how a number is stored, and what storing it does to the number."""

from gpukb.chapters import Chapter, DataFile

#: One page module per page: ``docs/formats/<page>.md`` is rendered by ``gpukb.formats.pages.<page>`` ("-" → "_"),
#: whose tables ``tests/formats/pages/test_<page>.py`` checks; what pages share (the properties table) is
#: ``gpukb.formats.pages``'s, checked by ``tests.formats.pages``.
_PAGES = ("anatomy", "fp8", "opening", "mixed_precision", "mx")

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
    page_layers=("gpukb.formats.pages", *(f"gpukb.formats.pages.{page}" for page in _PAGES)),
    checks={
        "gpukb.formats.pages": "tests.formats.pages",
        **{f"gpukb.formats.pages.{page}": f"tests.formats.pages.test_{page}" for page in _PAGES},
    },
    mutation=(
        "src/gpukb/formats/codec.py",
        "src/gpukb/formats/spec.py",
        "src/gpukb/formats/pages/__init__.py",
        *(f"src/gpukb/formats/pages/{page}.py" for page in _PAGES),
        "src/gpukb/formats/tables.py",
    ),
    mutation_tests=(
        "tests/formats/test_decode.py",
        "tests/formats/test_encode.py",
        "tests/formats/test_spec.py",
        "tests/formats/test_rounding_properties.py",
        "tests/formats/test_tables.py",
        "tests/formats/pages",
        "tests/formats/test_figures.py",
        "tests/formats/test_page_claims.py",
    ),
)
# --8<-- [end:chapter]
