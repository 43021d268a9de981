"""The datasets chapter's worked problems, recomputed from the catalog files and the EDF specification."""

from __future__ import annotations

import tomllib

import pytest

from tests.helpers import ROOT
from tests.worked_problems import answer, assert_shows, rendered_problems, working

DATA = ROOT / "src/gpukb/data/datasets"


def _entries(domain: str) -> list[dict]:
    return tomllib.loads((DATA / f"{domain}.toml").read_text("utf-8"))["dataset"]


@pytest.fixture  # per test (rendered once, then cached), so mutmut maps every test to the problems it reads
def problems() -> dict[str, str]:
    return rendered_problems("datasets")


def test_sixty_four_channels(problems: dict[str, str]) -> None:
    entries = _entries("eeg")
    chosen = [e for e in entries if e.get("eeg", {}).get("channels") == 64]

    def rate(e: dict) -> str:
        hz = e["eeg"].get("sampling_rate_hz")
        return f"{hz:g} Hz" if hz else "rate not stated by its sources"

    listed = "; ".join(f"{e['name']} ({rate(e)}, {e['eeg'].get('subjects')} subjects)" for e in chosen)
    assert answer(problems["sixty-four-channels"]) == f"{len(chosen)}: {listed}."
    uncounted = sum(1 for e in entries if "eeg" in e and "channels" not in e["eeg"])
    assert f"{len(entries)} entries read; {uncounted} state no channel count and cannot match." in working(
        problems["sixty-four-channels"]
    )


def test_epoch_tensor(problems: dict[str, str]) -> None:
    (entry,) = [e for e in _entries("eeg") if e["id"] == "bci-iv-2a"]
    samples = int(entry["eeg"]["sampling_rate_hz"] * 4)
    nbytes = 64 * entry["eeg"]["channels"] * samples * 4
    text = answer(problems["epoch-tensor"])
    assert text == f"(64, {entry['eeg']['channels']}, {samples:,}): {nbytes:,} B, {nbytes / 2**20:.2f} MiB."
    assert_shows(text, nbytes)


def test_most_crowded(problems: dict[str, str]) -> None:
    rated = sorted((e for e in _entries("people") if e.get("people", {}).get("persons_per_image")),
                   key=lambda e: -e["people"]["persons_per_image"])  # fmt: skip
    text = answer(problems["most-crowded"])
    top = "; ".join(f"{e['name']}: {e['people']['persons_per_image']:g} per image" for e in rated[:3])
    assert text == f"{top} (of {len(rated)} entries that state the figure)."
    assert [e["name"] in text for e in rated[:4]] == [True, True, True, False]


def test_edf_layout(problems: dict[str, str]) -> None:
    channels, rate, seconds = 64, 160, 120
    header = 256 * (channels + 1)  # the EDF specification: 256 bytes, then 256 per signal
    size = header + channels * rate * seconds * 2  # 16-bit samples
    assert_shows(answer(problems["edf-layout"]), size, header, 1000 / 65535, rel=1e-4)
    steps = working(problems["edf-layout"])
    one = channels * rate * 2
    assert (
        f"{channels} × {rate} per one-second record = {one:,} B, × {seconds:g} records = {size - header:,} B."
        in (steps[1])
    )
    assert steps[2].endswith(f"-500 to 500 µV: 1000 / 65,535 = {1000 / 65535:.5f} µV per step.")


def _sources_line(text: str) -> str:
    (line,) = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("Sources:")]
    return line


def test_the_problems_cite_what_they_read(problems: dict[str, str]) -> None:
    """The epoch problem cites the first source its catalog entry was checked against, and only it; the EDF problem
    the EDF specification, and only it."""
    (entry,) = [e for e in _entries("eeg") if e["id"] == "bci-iv-2a"]
    first = entry["verification"]["sources"][0]
    assert _sources_line(problems["epoch-tensor"]) == f"Sources: [{first['title']}]({first['url']})."
    assert _sources_line(problems["edf-layout"]) == (
        "Sources: [European Data Format (EDF) specification](https://www.edfplus.info/specs/edf.html)."
    )
