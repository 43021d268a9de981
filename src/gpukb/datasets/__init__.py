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
    mutation=(
        "src/gpukb/datasets/catalog.py",
        "src/gpukb/datasets/coco.py",
        "src/gpukb/datasets/odgt.py",
        "src/gpukb/datasets/eeg_files.py",
        "src/gpukb/datasets/tables.py",
        "src/gpukb/datasets/problems.py",
        "src/gpukb/datasets/pages.py",
    ),
    mutation_tests=(
        "tests/datasets/test_catalog.py",
        "tests/datasets/test_coco.py",
        "tests/datasets/test_odgt.py",
        "tests/datasets/test_eeg_files.py",
        "tests/datasets/test_tables.py",
        "tests/datasets/test_people_catalog.py",
        "tests/datasets/test_pages.py",
        "tests/datasets/test_worked_problems.py",
        "tests/datasets/test_page_tables.py",
    ),
)
