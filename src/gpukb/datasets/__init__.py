"""Dataset catalogs (EEG, person detection) checked against primary sources, and loaders for their file formats."""

from gpukb.chapters import Chapter, DataFile

CHAPTER = Chapter(
    name="datasets",
    title="Datasets",
    summary="Which EEG and person-detection datasets exist and what they really contain (channels, rates, "
    "counts, licences), checked against their own pages; loaders for their file formats.",
    position=40,
    data_files={
        "datasets/eeg.toml": DataFile(
            "gpukb.datasets.catalog:parse_file", "dataset", schemas=(("dataset", "gpukb.datasets.catalog:Dataset"),)
        ),
        "datasets/people.toml": DataFile(
            "gpukb.datasets.catalog:parse_file", "dataset", schemas=(("dataset", "gpukb.datasets.catalog:Dataset"),)
        ),
    },
    checks="tests.datasets.test_page_tables",
)
