"""The machinery that keeps the site honest: fence and include checks, build-time math rendering."""

from gpukb.chapters import Chapter, DataFile

CHAPTER = Chapter(
    name="about",
    title="About",
    summary="How the site is verified and the claims it corrects (About), and for contributors how to add a page or "
    "a chapter, its files and schemas and how we try to break it (Contributing).",
    start="verification.md",
    folders=("about", "contributing"),
    position=900,
    package="gpukb.site",
    cli=False,
    kinds={
        "site.gpu-tests": "gpukb.site.gpu_tests:GpuTestRun",
        "site.snippet-runs": "gpukb.site.snippet_runs:SnippetRuns",
    },
    data_files={
        "errata.toml": DataFile("gpukb.errata:parse", "erratum", schemas=(("erratum", "gpukb.errata:Erratum"),)),
        "mutation.toml": DataFile(
            "gpukb.site.breaking:parse_mutation", "run", schemas=(("run", "gpukb.site.breaking:MutationRun"),)
        ),
        "fuzz.toml": DataFile(
            "gpukb.site.breaking:parse_fuzz", "target", schemas=(("target", "gpukb.site.breaking:FuzzTarget"),)
        ),
        "glossary.toml": DataFile("gpukb.glossary:parse", "term", schemas=(("term", "gpukb.glossary:Term"),)),
    },
    checks="tests.site.test_about_page_tables",
    mutation_tests=("tests/site/test_snippet_runs.py",),
)
