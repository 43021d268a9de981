"""Count subjects, EEG channels and sampling rates from EDF headers, without an EEG library."""

# --8<-- [start:example]
import tempfile
from pathlib import Path

import numpy as np

from gpukb.datasets import eeg_files

rng = np.random.default_rng(0)
with tempfile.TemporaryDirectory() as tmp:
    # Two nights of a sleep study: two EEG derivations at 100 Hz, EOG at 100 Hz, a 1 Hz temperature channel.
    paths = []
    for subject, night in [("SC4001", 1), ("SC4001", 2), ("SC4012", 1)]:
        signals = {
            "EEG Fpz-Cz": (100, rng.normal(0, 20, 100 * 60)),
            "EEG Pz-Oz": (100, rng.normal(0, 20, 100 * 60)),
            "EOG horizontal": (100, rng.normal(0, 50, 100 * 60)),
            "Temp rectal": (1, np.full(60, 37.0)),
        }
        path = Path(tmp, f"{subject}-night{night}-PSG.edf")
        eeg_files.write_edf(path, signals, patient=f"{subject} F 01-JAN-1950 X", record_duration=30)
        paths.append(path)

    header = eeg_files.read_header(paths[0])
    for signal in header.signals:
        print(f"{signal.label:<16} {header.sampling_rate(signal):>5g} Hz  {signal.physical_dimension}")
    summary = eeg_files.summarize(paths)

print(f"files: {summary.files}, subjects: {len(summary.subjects)} {summary.subjects}")
print(f"EEG channels per file: {summary.eeg_channels}, EEG rates (Hz): {summary.sampling_rates_hz}")
print(f"hours recorded: {summary.hours:.2f}")
# --8<-- [end:example]
