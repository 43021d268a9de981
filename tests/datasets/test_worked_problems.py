"""The datasets chapter's worked problems, recomputed from the catalog files and the EDF specification."""

from __future__ import annotations

import tomllib

import pytest

from tests.helpers import ROOT
from tests.worked_problems import answer, assert_shows, rendered_problems

DATA = ROOT / "src/gpukb/data/datasets"


def _entries(domain: str) -> list[dict]:
    return tomllib.loads((DATA / f"{domain}.toml").read_text("utf-8"))["dataset"]


@pytest.fixture(scope="module")
def problems() -> dict[str, str]:
    return rendered_problems("datasets")


def test_sixty_four_channels(problems: dict[str, str]) -> None:
    chosen = [e for e in _entries("eeg") if e.get("eeg", {}).get("channels") == 64]
    text = answer(problems["sixty-four-channels"])
    assert text.startswith(f"{len(chosen)}: ")
    assert all(e["name"] in text for e in chosen)
    assert all(f"{e['eeg']['sampling_rate_hz']:g} Hz" in text for e in chosen if "sampling_rate_hz" in e["eeg"])


def test_epoch_tensor(problems: dict[str, str]) -> None:
    (entry,) = [e for e in _entries("eeg") if e["id"] == "bci-iv-2a"]
    samples = int(entry["eeg"]["sampling_rate_hz"] * 4)
    text = answer(problems["epoch-tensor"])
    assert text.startswith(f"(64, {entry['eeg']['channels']}, {samples:,})")
    assert_shows(text, 64 * entry["eeg"]["channels"] * samples * 4)


def test_most_crowded(problems: dict[str, str]) -> None:
    rated = sorted((e for e in _entries("people") if e.get("people", {}).get("persons_per_image")),
                   key=lambda e: -e["people"]["persons_per_image"])  # fmt: skip
    text = answer(problems["most-crowded"])
    assert text.startswith(f"{rated[0]['name']}: {rated[0]['people']['persons_per_image']:g} per image")
    assert [e["name"] in text for e in rated[:4]] == [True, True, True, False]


def test_edf_layout(problems: dict[str, str]) -> None:
    channels, rate, seconds = 64, 160, 120
    header = 256 * (channels + 1)  # the EDF specification: 256 bytes, then 256 per signal
    size = header + channels * rate * seconds * 2  # 16-bit samples
    assert_shows(answer(problems["edf-layout"]), size, header, 1000 / 65535, rel=1e-4)
