"""The catalog files: schema, sources, uniqueness, status rules, and errors that name the file, entry and field."""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from datetime import date

import pytest

from gpukb.datasets import catalog
from gpukb.datasets.catalog import DOMAINS, load, load_all, loads, read_text

EEG_TEXT = read_text("eeg")


@pytest.fixture  # per test (load() caches), so mutmut maps every test to the catalog code it reads
def eeg() -> catalog.Catalog:
    return load("eeg")


def _corrupt(old: str, new: str, text: str = EEG_TEXT, count: int = 1) -> str:
    assert text.count(old) >= 1, f"{old!r} is not in the file any more; update the test"
    return text.replace(old, new, count)


# ---- the files as shipped --------------------------------------------------------------------------------------


@pytest.mark.parametrize("domain", DOMAINS)
def test_each_domain_file_validates(domain: str) -> None:
    cat = load(domain)
    assert cat.datasets, f"{domain}.toml has no entries"
    assert all(d.domain == domain for d in cat.datasets)


def test_names_aliases_and_ids_are_unique_across_the_catalog() -> None:
    catalogs = load_all()
    spelled = Counter(  # one vote per entry: an entry repeating its own name as an alias is redundant, not a clash
        key
        for c in catalogs.values()
        for entries in (c.datasets, c.resources)
        for e in entries
        for key in {" ".join(n.split()).casefold() for n in (e.name, *e.aliases)}
    )
    assert [n for n, k in spelled.items() if k > 1] == []
    ids = Counter(e.id for c in catalogs.values() for e in (*c.datasets, *c.papers, *c.resources))
    assert [i for i, k in ids.items() if k > 1] == []


def test_every_entry_has_a_check_date_and_sources_unless_unconfirmed(eeg) -> None:
    for entry in (*eeg.datasets, *eeg.papers, *eeg.resources):
        v = entry.verification
        assert date(2020, 1, 1) <= v.checked <= date.today(), entry.id
        if v.status == "unconfirmed":
            assert v.notes_said, f"{entry.id}: an unconfirmed entry must say what was claimed"
        else:
            assert v.sources, f"{entry.id}: {v.status} without a source"
            assert all(s.url.startswith(("https://", "http://")) for s in v.sources)


def test_the_raw_file_has_a_source_table_for_every_verified_dataset() -> None:
    # Read with tomllib alone, not through the models: the file itself must carry the sources.
    raw = tomllib.loads(EEG_TEXT)
    for entry in raw["dataset"]:
        ver = entry["verification"]
        assert isinstance(ver["checked"], date), entry["id"]
        if ver["status"] != "unconfirmed":
            assert len(ver["sources"]) >= 1, entry["id"]


def test_at_least_25_eeg_entries_are_verified(eeg) -> None:
    counts = Counter(d.status for d in eeg.datasets)
    assert counts["verified"] >= 25, counts


def test_the_eeg_catalog_covers_every_area_the_chapter_promises(eeg) -> None:
    text = {d.id: f"{d.task} {d.eeg.paradigm if d.eeg else ''}".lower() for d in eeg.datasets if d.status == "verified"}
    for area in ("motor imagery", "p300", "ssvep", "sleep", "emotion", "seizure"):
        assert any(area in t for t in text.values()), area
    kinds = {r.kind for r in eeg.resources if r.verification.status == "verified"}
    assert {"loader library", "data repository"} <= kinds
    assert {"moabb", "braindecode", "mne-python"} <= {r.id for r in eeg.resources}


def test_every_paper_points_at_a_dataset_in_the_file(eeg) -> None:
    ids = {d.id for d in eeg.datasets}
    assert eeg.papers
    assert all(p.dataset in ids for p in eeg.papers)


# ---- what the summary claimed, decided by the sources (the errata name these tests) --------------------------------


def test_ds003190_is_a_p300_dataset_not_high_density_motor_eeg(eeg) -> None:
    d = eeg.get("openneuro-ds003190")
    assert d.status == "corrected"
    assert (d.eeg.subjects, d.eeg.channels, d.eeg.sampling_rate_hz, d.year) == (19, 8, 256, 2020)
    assert "P300" in d.task
    assert "motor" not in d.task
    assert "128 participants" in d.verification.notes_said
    assert "256-channel" in d.verification.notes_said


def test_bciaut_p300_has_no_control_group_and_dates_from_2020(eeg) -> None:
    d = eeg.get("bciaut-p300")
    assert d.status == "corrected"
    assert (d.year, d.eeg.subjects, d.eeg.sessions, d.eeg.recordings) == (2020, 15, 7, 105)
    assert d.doi == "10.3389/fnins.2020.568104"
    assert d.eeg.channels is None  # not in the sources read: nothing is stored for it
    assert "no control group" in d.note


def test_beetl_stands_for_benchmarks_for_eeg_transfer_learning(eeg) -> None:
    d = eeg.get("beetl")
    assert d.status == "corrected"
    assert "Benchmarks for EEG Transfer Learning" in d.name
    assert d.year == 2021
    assert "Brain-Environment-Engagement" in d.verification.notes_said
    assert "200" in d.verification.notes_said
    assert d.eeg.subjects < 200


def test_sleep_edf_expanded_has_197_recordings_and_no_2020_version(eeg) -> None:
    d = eeg.get("sleep-edfx")
    assert d.status == "corrected"
    assert d.eeg.recordings == 197
    assert d.doi == "10.13026/C2X676"
    assert "2020 version" in d.verification.notes_said
    assert d.year != 2020


def test_cognitive_load_eeg_dataset_is_unconfirmed_and_not_presented_as_real(eeg) -> None:
    d = eeg.get("cognitive-load-eeg-2022")
    assert d.status == "unconfirmed"
    assert d.eeg is None
    assert d.homepage is None
    assert d.year is None
    assert "widely shared summary" in d.name


def test_every_accuracy_the_summary_cited_is_unconfirmed(eeg) -> None:
    assert len(eeg.papers) == 10
    for p in eeg.papers:
        assert p.verification.status == "unconfirmed", p.id
        assert re.fullmatch(r"\d+\.\d% accuracy", p.claimed), p.claimed
        assert p.verification.notes_said


# ---- schema rules, each broken on a copy of the real file --------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("channels = 22\n", 'channels = "22"\n', r"eeg\.toml: dataset entry 1 \(bci-iv-2a\): eeg\.channels: "),
        (
            "channels = 22\n",
            "channels = 22\nelectrodes = 22\n",
            r"dataset entry 1 \(bci-iv-2a\): eeg\.electrodes: Extra",
        ),
        (
            "subjects = 9\n",
            "subjects = -9\n",
            r"dataset entry 1 \(bci-iv-2a\): eeg\.subjects: Input should be greater",
        ),
        ('status = "verified"', 'status = "probably"', r"dataset entry 1 \(bci-iv-2a\): verification\.status"),
        ("checked = 2026-11-23", 'checked = "yesterday"', r"dataset entry 1 \(bci-iv-2a\): verification\.checked"),
        (
            'url = "https://github.com/NeuroTechX',
            'url = "github.com/NeuroTechX',
            r"dataset entry 1 \(bci-iv-2a\): verification\.sources\[0\]\.url: Value error",
        ),
        (
            'doi = "10.3389/fnins.2012.00055"',
            'doi = "https://doi.org/10.3389/x"',
            r"dataset entry 1 \(bci-iv-2a\): doi: Value error, .* is not a DOI",
        ),
        ('domain = "eeg"', 'domain = "people"', r"dataset entry 1 \(bci-iv-2a\): .*a 'people' entry cannot have"),
        (
            'id = "bci-iv-2a"',
            'id = "BCI IV 2a"',
            r"dataset entry 1 \(BCI IV 2a\): id: Value error, 'BCI IV 2a' is not a slug",
        ),
    ],
)
def test_a_malformed_entry_names_file_entry_and_field(old: str, new: str, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        loads(_corrupt(old, new), file="eeg.toml", domain="eeg")


def test_a_malformed_file_on_disk_fails_with_its_name(tmp_path) -> None:
    broken = tmp_path / "eeg.toml"
    broken.write_text(_corrupt("sampling_rate_hz = 250\n", "sampling_rate_hz = [250]\n"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"^eeg\.toml: dataset entry 1 \(bci-iv-2a\): eeg\.sampling_rate_hz"):
        loads(broken.read_text(encoding="utf-8"), file=broken.name, domain="eeg")
    broken.write_text(EEG_TEXT + "\n[[dataset]\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^eeg\.toml: not valid TOML"):
        loads(broken.read_text(encoding="utf-8"), file=broken.name, domain="eeg")


def test_status_rules() -> None:
    # corrected needs what the summary said
    text = _corrupt('notes_said = "Presented as a 2021 high-density', 'note_x = "Presented as a 2021 high-density')
    with pytest.raises(ValueError, match=r"\(openneuro-ds003190\): verification\.note_x: Extra"):
        loads(text, file="eeg.toml", domain="eeg")
    start = EEG_TEXT.index('id = "openneuro-ds003190"')
    head, tail = EEG_TEXT[:start], EEG_TEXT[start:]
    tail = re.sub(r'notes_said = "Presented as[^\n]*\n', "", tail, count=1)
    with pytest.raises(
        ValueError, match=r"\(openneuro-ds003190\): verification: Value error, status 'corrected' needs notes_said"
    ):
        loads(head + tail, file="eeg.toml", domain="eeg")
    # verified needs a source
    lines = EEG_TEXT.split("\n")
    first = next(i for i, line in enumerate(lines) if line == "[[dataset.verification.sources]]")
    second = next(i for i in range(first + 1, len(lines)) if lines[i] == "[[dataset.verification.sources]]")
    no_sources = "\n".join(lines[:first] + lines[second + 5 :])  # bci-iv-2a loses both of its sources
    with pytest.raises(
        ValueError, match=r"\(bci-iv-2a\): verification: Value error, status 'verified' needs at least one source"
    ):
        loads(no_sources, file="eeg.toml", domain="eeg")
    # only unconfirmed entries may leave out the license, or every way to find the dataset
    with pytest.raises(
        ValueError, match=r"\(bci-iv-2a\): \(top level\): Value error, a verified entry needs \['license'\]"
    ):
        loads(_corrupt('license = "not stated in the sources read"\n', ""), file="eeg.toml", domain="eeg")
    no_links = _corrupt('homepage = "http://www.bbci.de/competition/iv/"\n', "")
    no_links = _corrupt('doi = "10.3389/fnins.2012.00055"\n', "", no_links)
    no_links = _corrupt('paper = "M. Tangermann et al., Review of the BCI Competition IV', 'xpaper = "', no_links)
    no_links = no_links.replace("xpaper = ", "# ", 1)
    with pytest.raises(
        ValueError, match=r"\(bci-iv-2a\): .*a verified entry needs \['homepage, doi, arxiv or paper'\]"
    ):
        loads(no_links, file="eeg.toml", domain="eeg")
    # an EEG entry cannot carry person-detection figures
    with pytest.raises(ValueError, match=r"\(bci-iv-2a\): .*a 'eeg' entry cannot have a \[people\] table"):
        loads(
            _corrupt("[dataset.eeg]\n", "[dataset.people]\nimages = 3\n\n[dataset.eeg]\n"),
            file="eeg.toml",
            domain="eeg",
        )


def test_an_entry_of_another_domain_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"^people\.toml: dataset entry 1 \(bci-iv-2a\): domain: 'eeg', the file holds 'people'"
    ):
        loads(EEG_TEXT, file="people.toml", domain="people")


def test_duplicate_ids_names_and_aliases_are_refused() -> None:
    with pytest.raises(ValueError, match=r"dataset entry 2 \(bci-iv-2a\): id 'bci-iv-2a' repeats entry 1"):
        loads(_corrupt('id = "bci-iv-2b"', 'id = "bci-iv-2a"'), file="eeg.toml", domain="eeg")
    with pytest.raises(
        ValueError,
        match=r"\(bci-iv-2b\): aliases\[0\]: 'bnci2014_001' is already a name or alias of eeg\.toml: dataset entry 1",
    ):
        loads(_corrupt('"BNCI2014_004"', '"bnci2014_001"'), file="eeg.toml", domain="eeg")
    with pytest.raises(ValueError, match=r"paper entry 1 \(claim-spatiotemporal-hd-motor\): dataset: 'nowhere'"):
        loads(_corrupt('dataset = "openneuro-ds003190"', 'dataset = "nowhere"'), file="eeg.toml", domain="eeg")


def test_unknown_tables_and_domains_are_refused() -> None:
    with pytest.raises(ValueError, match=r"eeg\.toml: unknown top-level keys \['datasets'\]"):
        loads(EEG_TEXT + '\n[[datasets]]\nid = "x"\n', file="eeg.toml", domain="eeg")
    with pytest.raises(ValueError, match="unknown domain 'audio'"):
        load("audio")


def test_get_names_the_known_ids_when_one_is_missing(eeg) -> None:
    assert eeg.get("bci-iv-2a").aliases[0] == "BNCI2014_001"
    with pytest.raises(KeyError, match=r"no dataset 'bci-iv-2c' in eeg\.toml; ids: bci-iv-2a, bci-iv-2b"):
        eeg.get("bci-iv-2c")


def test_a_data_file_is_read_as_the_domain_its_name_gives() -> None:
    """catalog.parse_file is how the data-file checks read a catalog: the domain comes from the file's name."""
    read = catalog.parse_file(EEG_TEXT, "datasets/eeg.toml")
    assert read == catalog.loads(EEG_TEXT, file="datasets/eeg.toml", domain="eeg")
    assert [d.id for d in read.datasets] == [d.id for d in load("eeg").datasets]
    with pytest.raises(ValueError, match=r"^datasets/audio\.toml: a catalog file is named after its domain, one of"):
        catalog.parse_file(EEG_TEXT, "datasets/audio.toml")


def test_uniqueness_across_the_catalog_names_both_entries_by_kind_and_place() -> None:
    """check_unique as load_all calls it: ids, names and aliases across every kind of entry, spacing and case
    ignored, each entry named by its file, kind and place counted from 1."""
    eeg = load("eeg")
    first, second = eeg.datasets[0], eeg.datasets[1]
    paper = eeg.papers[0]
    labelled = [("eeg.toml: dataset entry 1", first), ("eeg.toml: dataset entry 2", second)]
    catalog.check_unique(labelled)
    with pytest.raises(ValueError, match=rf"^x: id: '{first.id}' is already used by eeg\.toml: dataset entry 1$"):
        catalog.check_unique([*labelled, ("x", first)])
    spaced = second.model_copy(update={"id": "other", "name": "  " + first.name.upper().replace(" ", "   ") + " "})
    with pytest.raises(ValueError, match=r"^y: name: .* is already a name or alias of eeg\.toml: dataset entry 1$"):
        catalog.check_unique([*labelled, ("y", spaced)])
    catalog.check_unique([*labelled, ("z", paper)])  # a paper has no name: only its id counts
    with pytest.raises(ValueError, match=rf"^z: id: '{paper.id}' is already used by p$"):
        catalog.check_unique([("p", paper), ("z", paper)])
    everything = catalog.load_all()
    assert set(everything) == set(catalog.DOMAINS)
    assert everything["eeg"] == eeg


def test_an_empty_text_field_or_unknown_domain_is_named() -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        loads(_corrupt('name = "BCI Competition IV dataset 2a"', 'name = " "'), file="eeg.toml", domain="eeg")
    with pytest.raises(ValueError, match=r"^unknown domain 'audio'; domains: eeg, people$"):
        catalog.parse({}, file="audio.toml", domain="audio")
    with pytest.raises(ValueError, match=r"unknown domain 'audio'; domains: eeg, people"):
        read_text("audio")


def test_what_a_field_is_not_is_said() -> None:
    for old, new, said in (
        ('url = "https://github.com/NeuroTechX', 'url = "github.com/NeuroTechX', "is not an http(s) URL"),
        ('arxiv = "1904.09111"', 'arxiv = "arXiv 1904"', "'arXiv 1904' is not an arXiv id like 1805.00123"),
    ):
        with pytest.raises(ValueError, match=re.escape(said)):
            loads(_corrupt(old, new), file="eeg.toml", domain="eeg")
    for file in ("eeg.toml", "catalogs/datasets/eeg.toml"):  # the domain is the last part of the name
        assert catalog.parse_file(EEG_TEXT, file).domain == "eeg"
    with pytest.raises(ValueError, match=r"^datasets/eeg/x\.toml: a catalog file is named after its domain, "
                       r"one of eeg, people$"):  # fmt: skip
        catalog.parse_file(EEG_TEXT, "datasets/eeg/x.toml")
