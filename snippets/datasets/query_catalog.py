"""Query the EEG catalog: verified motor-imagery datasets with at least 50 subjects, and the sources behind them."""

# --8<-- [start:example]
from gpukb.datasets.catalog import load
from gpukb.datasets.tables import select

eeg = load("eeg")
for d in select(eeg, status="verified", text="motor", min_subjects=50):
    facts = d.eeg
    kinds = ", ".join(source.kind for source in d.verification.sources)
    print(
        f"{d.id:<12} {facts.subjects:>4} subjects {facts.channels:>3} channels {facts.sampling_rate_hz:>5g} Hz"
        f"  checked {d.verification.checked} against: {kinds}"
    )
# --8<-- [end:example]
