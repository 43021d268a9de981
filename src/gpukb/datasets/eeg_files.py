"""Read what an EEG catalog entry reports (subjects, channels, sampling rates) from EDF file headers.

EDF (European Data Format, Kemp et al. 1992; EDF+ 2003) starts with a fixed-width ASCII header: 256 bytes about the
recording, then 256 bytes per signal, each field stored for all signals in turn. A signal's sampling rate is its
``samples per data record`` divided by the record duration. Reading only the header is enough to count channels and
rates, so this module needs no EEG library: MNE-Python would read the samples too, but it is a large dependency for
the few header fields a catalog needs, and the site does not load any recording at build time. BIDS datasets keep
EDF (or BrainVision, or EEGLAB) files plus JSON sidecars; for EDF-based BIDS data, point :func:`summarize` at the
``*_eeg.edf`` files.

:func:`write_edf` writes a small, valid EDF file; the tests and the snippet use it to make files to read back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpukb import arguments

#: Per-signal header fields in file order: (name, width in bytes).
SIGNAL_FIELDS: tuple[tuple[str, int], ...] = (
    ("label", 16),
    ("transducer", 80),
    ("physical_dimension", 8),
    ("physical_min", 8),
    ("physical_max", 8),
    ("digital_min", 8),
    ("digital_max", 8),
    ("prefiltering", 80),
    ("samples_per_record", 8),
    ("reserved", 32),
)

#: Label prefixes of signals that are not EEG (EDF+ recommends "EEG Fpz-Cz" style labels; clinical files often
#: have bare derivations such as "FP1-F7", which count as EEG).
NOT_EEG = ("EOG", "EMG", "ECG", "EKG", "RESP", "TEMP", "EVENT", "SAO2", "SPO2", "PLETH", "STATUS", "EDF ANNOTATIONS")


@dataclass(frozen=True)
class EdfSignal:
    """One signal's header."""

    label: str
    transducer: str
    physical_dimension: str
    physical_min: float
    physical_max: float
    digital_min: int
    digital_max: int
    prefiltering: str
    samples_per_record: int


@dataclass(frozen=True)
class EdfHeader:
    """An EDF file's header.

    Attributes:
        version: ``"0"`` for EDF and EDF+.
        patient: Local patient identification (EDF+: code, sex, birthdate, name).
        recording: Local recording identification.
        start_date: ``dd.mm.yy``.
        start_time: ``hh.mm.ss``.
        header_bytes: 256 * (number of signals + 1).
        reserved: ``"EDF+C"`` or ``"EDF+D"`` for EDF+, blank for EDF.
        n_records: Number of data records (-1 while recording).
        record_duration: Seconds per data record.
        signals: The signals' headers.
    """

    version: str
    patient: str
    recording: str
    start_date: str
    start_time: str
    header_bytes: int
    reserved: str
    n_records: int
    record_duration: float
    signals: tuple[EdfSignal, ...]

    @property
    def duration_s(self) -> float:
        """Recording length in seconds."""
        return self.n_records * self.record_duration

    def sampling_rate(self, signal: EdfSignal) -> float:
        """A signal's samples per second."""
        return signal.samples_per_record / self.record_duration

    def eeg_signals(self, is_eeg: Callable[[str], bool] | None = None) -> list[EdfSignal]:
        """The EEG signals: labels not starting with a :data:`NOT_EEG` prefix, unless ``is_eeg`` decides."""
        test = is_eeg or (lambda label: not label.upper().startswith(NOT_EEG))
        return [s for s in self.signals if test(s.label)]

    @property
    def subject(self) -> str:
        """The patient code: the first word of the patient field (EDF+ puts the code there), or ``""``."""
        words = self.patient.split()
        return words[0] if words else ""


def _field(data: bytes, start: int, width: int, name: str) -> str:
    raw = data[start : start + width]
    if len(raw) < width:
        raise ValueError(f"header ends inside field {name} (bytes {start}-{start + width - 1})")
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise ValueError(f"field {name} (bytes {start}-{start + width - 1}) is not ASCII: {raw!r}") from None
    return text.strip()


def _num(text: str, name: str, kind: type[int] | type[float]) -> int | float:
    try:
        return kind(text)
    except ValueError:
        raise ValueError(f"field {name} must be {'an integer' if kind is int else 'a number'}, got {text!r}") from None


def parse_header(data: bytes) -> EdfHeader:
    """Parse an EDF header from the file's first bytes (at least the whole header).

    Raises:
        ValueError: Naming the field (and signal) that is missing, not ASCII, not a number, or inconsistent:
            a header size other than 256 * (signals + 1), a non-positive record duration or sample count, or a
            digital minimum not below the maximum.
    """
    fixed = [
        ("version", 8),
        ("patient", 80),
        ("recording", 80),
        ("start_date", 8),
        ("start_time", 8),
        ("header_bytes", 8),
        ("reserved", 44),
        ("n_records", 8),
        ("record_duration", 8),
        ("n_signals", 4),
    ]
    values: dict[str, str] = {}
    offset = 0
    for name, width in fixed:
        values[name] = _field(data, offset, width, name)
        offset += width
    ns = int(_num(values["n_signals"], "n_signals", int))
    if ns < 1:
        raise ValueError(f"field n_signals must be at least 1, got {ns}")
    header_bytes = int(_num(values["header_bytes"], "header_bytes", int))
    if header_bytes != 256 * (ns + 1):
        raise ValueError(
            f"field header_bytes is {header_bytes}, but {ns} signals need 256 * ({ns} + 1) = {256 * ns + 256}"
        )
    duration = float(_num(values["record_duration"], "record_duration", float))
    if duration <= 0:
        raise ValueError(f"field record_duration must be positive, got {duration}")
    columns: dict[str, list[str]] = {}
    for name, width in SIGNAL_FIELDS:
        columns[name] = [_field(data, offset + i * width, width, f"{name} of signal {i + 1}") for i in range(ns)]
        offset += ns * width
    signals = []
    for i in range(ns):
        label = columns["label"][i]
        where = f"signal {i + 1} ({label})"
        dmin = int(_num(columns["digital_min"][i], f"digital_min of {where}", int))
        dmax = int(_num(columns["digital_max"][i], f"digital_max of {where}", int))
        if dmin >= dmax:
            raise ValueError(f"{where}: digital_min {dmin} must be below digital_max {dmax}")
        spr = int(_num(columns["samples_per_record"][i], f"samples_per_record of {where}", int))
        if spr < 1:
            raise ValueError(f"{where}: samples_per_record must be positive, got {spr}")
        signals.append(
            EdfSignal(
                label=label,
                transducer=columns["transducer"][i],
                physical_dimension=columns["physical_dimension"][i],
                physical_min=float(_num(columns["physical_min"][i], f"physical_min of {where}", float)),
                physical_max=float(_num(columns["physical_max"][i], f"physical_max of {where}", float)),
                digital_min=dmin,
                digital_max=dmax,
                prefiltering=columns["prefiltering"][i],
                samples_per_record=spr,
            )
        )
    return EdfHeader(
        version=values["version"],
        patient=values["patient"],
        recording=values["recording"],
        start_date=values["start_date"],
        start_time=values["start_time"],
        header_bytes=header_bytes,
        reserved=values["reserved"],
        n_records=int(_num(values["n_records"], "n_records", int)),
        record_duration=duration,
        signals=tuple(signals),
    )


def read_header(path: str | Path) -> EdfHeader:
    """Read an EDF file's header (only the header bytes are read).

    Raises:
        FileNotFoundError: If there is no such file.
        ValueError: For something other than a regular file or a malformed header; the message starts with the
            file name.
    """
    path = arguments.regular_file("an EDF file", path)
    with path.open("rb") as handle:
        head = handle.read(256)
        try:
            ns = int(head[252:256].decode("ascii").strip())
        except (UnicodeDecodeError, ValueError):
            raise ValueError(f"{path}: field n_signals (bytes 252-255) is not an integer: {head[252:256]!r}") from None
        head += handle.read(256 * max(ns, 0))
    try:
        return parse_header(head)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def _ascii(text: str, width: int, name: str) -> bytes:
    raw = text.encode("ascii")
    if len(raw) > width:
        raise ValueError(f"{name} {text!r} is longer than its {width}-byte field")
    return raw.ljust(width, b" ")


def _number_field(value: float, name: str) -> str:
    text = str(int(value)) if float(value).is_integer() else f"{value:.8g}"
    if len(text) > 8:
        raise ValueError(f"{name} {value!r} does not fit in 8 characters")
    return text


def write_edf(
    path: str | Path,
    signals: Mapping[str, tuple[float, Sequence[float] | np.ndarray]],
    *,
    patient: str = "X X X X",
    recording: str = "Startdate X X X X",
    record_duration: float = 1.0,
    physical_range: tuple[float, float] = (-500.0, 500.0),
    dimension: str = "uV",
) -> Path:
    """Write a small EDF file with 16-bit samples.

    Args:
        path: Where to write.
        signals: Label -> (sampling rate in Hz, samples in physical units). Every signal must cover the same
            whole number of data records: rate * record_duration samples per record.
        patient: The patient field (EDF+ style: code, sex, birthdate, name).
        recording: The recording field.
        record_duration: Seconds per data record.
        physical_range: The physical minimum and maximum, mapped onto -32768..32767.
        dimension: The physical unit.

    Returns:
        The path written.

    Raises:
        ValueError: For a rate that does not give a whole number of samples per record, signals of different
            lengths in records, or a field too long for its width.
    """
    if not signals:
        raise ValueError("write_edf needs at least one signal")
    pmin, pmax = physical_range
    dmin, dmax = -32768, 32767
    per_record, arrays, n_records = [], [], None
    for label, (rate, samples) in signals.items():
        spr = rate * record_duration
        if spr < 1 or not float(spr).is_integer():
            raise ValueError(f"signal {label!r}: {rate} Hz x {record_duration} s is not a whole number of samples")
        x = np.asarray(samples, dtype=np.float64)
        if x.size % int(spr):
            raise ValueError(f"signal {label!r}: {x.size} samples is not a whole number of {int(spr)}-sample records")
        records = x.size // int(spr)
        if n_records is None:
            n_records = records
        elif records != n_records:
            raise ValueError(f"signal {label!r} spans {records} records, the first signal {n_records}")
        per_record.append(int(spr))
        digital = np.round((np.clip(x, pmin, pmax) - pmin) / (pmax - pmin) * (dmax - dmin) + dmin)
        arrays.append(digital.astype("<i2").reshape(records, int(spr)))
    ns = len(signals)
    head = b"".join(
        [
            _ascii("0", 8, "version"),
            _ascii(patient, 80, "patient"),
            _ascii(recording, 80, "recording"),
            _ascii("01.01.01", 8, "start_date"),
            _ascii("00.00.00", 8, "start_time"),
            _ascii(str(256 * (ns + 1)), 8, "header_bytes"),
            _ascii("", 44, "reserved"),
            _ascii(str(n_records), 8, "n_records"),
            _ascii(_number_field(record_duration, "record_duration"), 8, "record_duration"),
            _ascii(str(ns), 4, "n_signals"),
        ]
    )
    per_signal = {
        "label": list(signals),
        "transducer": [""] * ns,
        "physical_dimension": [dimension] * ns,
        "physical_min": [_number_field(pmin, "physical_min")] * ns,
        "physical_max": [_number_field(pmax, "physical_max")] * ns,
        "digital_min": [str(dmin)] * ns,
        "digital_max": [str(dmax)] * ns,
        "prefiltering": [""] * ns,
        "samples_per_record": [str(n) for n in per_record],
        "reserved": [""] * ns,
    }
    for name, width in SIGNAL_FIELDS:
        head += b"".join(_ascii(text, width, name) for text in per_signal[name])
    body = b"".join(a[r].tobytes() for r in range(n_records or 0) for a in arrays)
    path = Path(path)
    path.write_bytes(head + body)
    return path


@dataclass(frozen=True)
class EegSummary:
    """What a set of EDF files says about a dataset.

    Attributes:
        files: Files read.
        subjects: Distinct subject codes.
        eeg_channels: Distinct EEG channel counts across files (one value for a consistent dataset).
        sampling_rates_hz: Distinct EEG sampling rates across files.
        hours: Total recording time.
    """

    files: int
    subjects: tuple[str, ...]
    eeg_channels: tuple[int, ...]
    sampling_rates_hz: tuple[float, ...]
    hours: float


def summarize(
    paths: Iterable[str | Path],
    *,
    subject_of: Callable[[Path, EdfHeader], str] | None = None,
    is_eeg: Callable[[str], bool] | None = None,
) -> EegSummary:
    """Read the headers of EDF files and count subjects, EEG channels and sampling rates.

    Args:
        paths: The files.
        subject_of: Maps a file and its header to a subject code (default: :attr:`EdfHeader.subject`, the
            first word of the patient field; pass e.g. ``lambda p, h: p.parent.name`` for one folder per subject).
        is_eeg: Decides which signal labels are EEG (default: :meth:`EdfHeader.eeg_signals`'s rule).

    Raises:
        ValueError: For a malformed file, or a file whose subject code is empty.
    """
    subjects, channels, rates = set(), set(), set()
    files, seconds = 0, 0.0
    for p in paths:
        path = Path(p)
        header = read_header(path)
        subject = subject_of(path, header) if subject_of else header.subject
        if not subject:
            raise ValueError(f"{path}: no subject code (empty patient field); pass subject_of")
        eeg = header.eeg_signals(is_eeg)
        subjects.add(subject)
        channels.add(len(eeg))
        rates.update(header.sampling_rate(s) for s in eeg)
        files += 1
        seconds += header.duration_s
    return EegSummary(
        files=files,
        subjects=tuple(sorted(subjects)),
        eeg_channels=tuple(sorted(channels)),
        sampling_rates_hz=tuple(sorted(rates)),
        hours=seconds / 3600,
    )
