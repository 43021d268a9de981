"""Worked problems of the datasets chapter, every answer computed by the library (see :mod:`gpukb.problems`).

Figures come from the catalogs (``datasets/eeg.toml``, ``datasets/people.toml``, each entry checked against its own
sources); the EDF problem writes a small file with :func:`gpukb.datasets.eeg_files.write_edf` and reads it back.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from gpukb.datasets import eeg_files
from gpukb.datasets.catalog import load
from gpukb.problems import Problem

#: The EDF specification (Kemp et al. 1992), as published on edfplus.info.
EDF_SPEC = ("European Data Format (EDF) specification", "https://www.edfplus.info/specs/edf.html")


def sixty_four_channels() -> Problem:
    chosen = [e for e in load("eeg").datasets if e.eeg is not None and e.eeg.channels == 64]

    def rate(e) -> str:
        return f"{e.eeg.sampling_rate_hz:g} Hz" if e.eeg.sampling_rate_hz else "rate not stated by its sources"

    return Problem(
        id="sixty-four-channels",
        title="Which EEG datasets have 64 channels",
        question="You need EEG recorded with 64 channels. Which datasets in the catalog have exactly 64 EEG channels, "
        "and at what sampling rates?",
        answer=f"{len(chosen)}: " + "; ".join(f"{e.name} ({rate(e)}, {e.eeg.subjects} subjects)" for e in chosen) + ".",
        working=(
            "Filter the EEG catalog on `eeg.channels == 64` (EEG channels only; EOG, EMG and other channels are "
            "described in each entry's note).",
            f"{len(load('eeg').datasets)} entries read; "
            f"{sum(1 for e in load('eeg').datasets if e.eeg is not None and e.eeg.channels is None)} state no channel "
            "count and cannot match.",
            "Each entry's figures were checked against its own pages, linked from its card on the EEG page.",
        ),
    )


def epoch_tensor() -> Problem:
    entry = next(e for e in load("eeg").datasets if e.id == "bci-iv-2a")
    seconds, batch = 4, 64
    channels, rate = entry.eeg.channels, entry.eeg.sampling_rate_hz
    samples = int(rate * seconds)
    nbytes = batch * channels * samples * 4
    return Problem(
        id="epoch-tensor",
        title="The tensor of a batch of EEG epochs",
        question=f"A decoder reads {seconds}-second epochs of {entry.name}. What shape does a batch of {batch} epochs "
        "have, and how many bytes in float32?",
        answer=f"({batch}, {channels}, {samples:,}): {nbytes:,} B, {nbytes / 2**20:.2f} MiB.",
        working=(
            f"The catalog gives {channels} EEG channels at {rate:g} Hz for {entry.name}.",
            f"Samples per epoch: {rate:g} Hz × {seconds} s = {samples:,}.",
            f"{batch} × {channels} × {samples:,} × 4 B = {nbytes:,} B.",
        ),
        sources=tuple((s.title, s.url) for s in entry.verification.sources[:1]),
    )


def most_crowded() -> Problem:
    rated = [e for e in load("people").datasets if e.people is not None and e.people.persons_per_image]
    ranked = sorted(rated, key=lambda e: -e.people.persons_per_image)
    top = ranked[:3]
    return Problem(
        id="most-crowded",
        title="The most crowded person-detection dataset",
        question="A detector must handle dense crowds. Which datasets in the catalog have the most persons per image?",
        answer="; ".join(f"{e.name}: {e.people.persons_per_image:g} per image" for e in top)
        + f" (of {len(rated)} entries that state the figure).",
        working=(
            "Sort the person-detection catalog by `people.persons_per_image`, leaving out entries whose sources "
            "state no such figure.",
            "Statuses: " + "; ".join(f"{e.name} {e.status}" for e in top) + ".",
            "A 'corrected' entry's figure differs from what a summary of the literature said; its card gives both.",
        ),
    )


def edf_layout() -> Problem:
    channels, rate, minutes = 64, 160, 2
    with tempfile.TemporaryDirectory() as tmp:
        path = eeg_files.write_edf(
            Path(tmp) / "one-record.edf",
            {f"EEG{i:02d}": (rate, np.zeros(rate)) for i in range(channels)},
            physical_range=(-500.0, 500.0),
        )
        header = eeg_files.read_header(path)
        one_record = path.stat().st_size - header.header_bytes
    signal = header.signals[0]
    step = (signal.physical_max - signal.physical_min) / (signal.digital_max - signal.digital_min)
    records = minutes * 60 / header.record_duration
    size = header.header_bytes + records * one_record
    return Problem(
        id="edf-layout",
        title="The size and resolution of an EDF file",
        question=f"A {channels}-channel EEG is recorded at {rate} Hz for {minutes} minutes and stored as EDF with a "
        f"physical range of ±{signal.physical_max:g} µV. How large is the file, and what is the smallest voltage "
        "step it can store?",
        answer=f"{size:,.0f} bytes ({header.header_bytes:,} of header); a step of {step:.5f} µV.",
        working=(
            f"Header: 256 bytes plus 256 per signal: 256 × ({channels} + 1) = {header.header_bytes:,}.",
            f"Data: 2-byte samples, {channels} × {rate} per one-second record = {one_record:,} B, × {records:g} "
            f"records = {records * one_record:,.0f} B.",
            f"Samples are 16-bit integers from {signal.digital_min:,} to {signal.digital_max:,} mapped onto "
            f"{signal.physical_min:g} to {signal.physical_max:g} µV: {signal.physical_max - signal.physical_min:g} / "
            f"{signal.digital_max - signal.digital_min:,} = {step:.5f} µV per step.",
            "Written with `write_edf` and read back with `read_header` (one record, sized up by the record count).",
        ),
        sources=(EDF_SPEC,),
    )


def problems() -> list[Problem]:
    """The chapter's worked problems, computed now."""
    return [sixty_four_channels(), epoch_tensor(), most_crowded(), edf_layout()]
