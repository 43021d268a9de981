"""EDF headers: files written byte by byte from the specification, the module's writer, and malformed headers."""

from __future__ import annotations

import numpy as np
import pytest

from gpukb.datasets import eeg_files


def _spec_header(labels: list[str], samples: list[int], *, duration: str = "1", records: int = 2) -> bytes:
    """An EDF header assembled here from the field widths of Kemp et al. (1992), independently of the module."""
    ns = len(labels)

    def f(text: object, width: int) -> bytes:
        return str(text).ljust(width).encode("ascii")

    head = f("0", 8) + f("P01 M 02-MAR-1975 Anon", 80) + f("Startdate 01-JAN-2020 X X X", 80)
    head += f("01.01.20", 8) + f("22.30.00", 8) + f(256 * (ns + 1), 8) + f("EDF+C", 44) + f(records, 8)
    head += f(duration, 8) + f(ns, 4)
    for values, width in (
        (labels, 16),
        (["AgAgCl electrode"] * ns, 80),
        (["uV"] * ns, 8),
        (["-3200"] * ns, 8),
        (["3200"] * ns, 8),
        (["-32768"] * ns, 8),
        (["32767"] * ns, 8),
        (["HP:0.1Hz LP:75Hz"] * ns, 80),
        (samples, 8),
        ([""] * ns, 32),
    ):
        head += b"".join(f(v, width) for v in values)
    return head


def test_a_header_built_from_the_specification_parses() -> None:
    data = _spec_header(["EEG Fpz-Cz", "EEG Pz-Oz", "EOG horizontal", "EDF Annotations"], [100, 100, 100, 60])
    h = eeg_files.parse_header(data)
    assert (h.version, h.subject, h.reserved, h.n_records, h.record_duration) == ("0", "P01", "EDF+C", 2, 1.0)
    assert (h.start_date, h.start_time, h.header_bytes, h.duration_s) == ("01.01.20", "22.30.00", 1280, 2.0)
    assert [s.label for s in h.eeg_signals()] == ["EEG Fpz-Cz", "EEG Pz-Oz"]
    assert [h.sampling_rate(s) for s in h.signals] == [100.0, 100.0, 100.0, 60.0]
    s = h.signals[0]
    assert (s.physical_min, s.physical_max, s.digital_min, s.digital_max) == (-3200.0, 3200.0, -32768, 32767)
    assert (s.transducer, s.prefiltering, s.physical_dimension) == ("AgAgCl electrode", "HP:0.1Hz LP:75Hz", "uV")


def test_record_duration_sets_the_rate() -> None:
    h = eeg_files.parse_header(_spec_header(["C3"], [3000], duration="30"))
    assert h.sampling_rate(h.signals[0]) == 100.0


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda b: b[:236] + b"   x    " + b[244:], r"field n_records must be an integer, got 'x'"),
        (
            lambda b: b[:184] + b"9999    " + b[192:],
            r"field header_bytes is 9999, but 2 signals need 256 \* \(2 \+ 1\) = 768",
        ),
        (lambda b: b[:244] + b"0       " + b[252:], r"field record_duration must be positive, got 0.0"),
        (lambda b: b[:252] + b"0   " + b[256:], r"field n_signals must be at least 1, got 0"),
        (lambda b: b[:8] + "é".encode() + b[10:], r"field patient \(bytes 8-87\) is not ASCII"),
        (lambda b: b[:600], r"header ends inside field"),
    ],
)
def test_malformed_headers_name_the_field(mutate, message: str) -> None:
    good = _spec_header(["C3", "C4"], [256, 256])
    assert eeg_files.parse_header(good).signals[1].label == "C4"
    with pytest.raises(ValueError, match=message):
        eeg_files.parse_header(mutate(good))


def test_a_bad_signal_field_names_the_signal() -> None:
    good = _spec_header(["C3", "C4"], [256, 256])
    spr = 256 + 2 * (16 + 80 + 8 + 8 + 8 + 8 + 8 + 80)  # samples_per_record of signal 1
    with pytest.raises(ValueError, match=r"signal 2 \(C4\): samples_per_record must be positive, got 0"):
        eeg_files.parse_header(good[: spr + 8] + b"0       " + good[spr + 16 :])
    dmin = 256 + 2 * (16 + 80 + 8 + 8 + 8)
    with pytest.raises(ValueError, match=r"signal 1 \(C3\): digital_min 40000 must be below digital_max 32767"):
        eeg_files.parse_header(good[:dmin] + b"40000   " + good[dmin + 8 :])


def test_write_then_read_round_trips(tmp_path) -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(0, 30, 256 * 4)
    path = eeg_files.write_edf(
        tmp_path / "rec.edf",
        {"FP1-F7": (256, x), "F7-T7": (256, -x), "ECG": (128, np.zeros(128 * 4))},
        patient="chb01 F 01-JAN-2000 X",
        record_duration=2,
    )
    h = eeg_files.read_header(path)
    assert (h.subject, h.n_records, h.record_duration, len(h.signals)) == ("chb01", 2, 2.0, 3)
    assert [(s.label, h.sampling_rate(s)) for s in h.eeg_signals()] == [("FP1-F7", 256.0), ("F7-T7", 256.0)]
    data = path.read_bytes()
    assert len(data) == h.header_bytes + 2 * 2 * (512 + 512 + 256)  # records x bytes per sample x samples per record
    # The first record's samples for FP1-F7 decode back to x within one quantization step.
    digital = np.frombuffer(data[h.header_bytes : h.header_bytes + 2 * 512], dtype="<i2").astype(float)
    step = 1000 / 65535
    assert np.max(np.abs(-500 + (digital + 32768) * step - np.clip(x[:512], -500, 500))) <= step


def test_writer_refuses_what_edf_cannot_hold(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"'C3': 100.5 Hz x 1.0 s is not a whole number of samples"):
        eeg_files.write_edf(tmp_path / "a.edf", {"C3": (100.5, np.zeros(201))})
    with pytest.raises(ValueError, match=r"'C4' spans 1 records, the first signal 2"):
        eeg_files.write_edf(tmp_path / "a.edf", {"C3": (10, np.zeros(20)), "C4": (10, np.zeros(10))})
    with pytest.raises(ValueError, match=r"label 'x{17}' is longer than its 16-byte field"):
        eeg_files.write_edf(tmp_path / "a.edf", {"x" * 17: (10, np.zeros(10))})


def test_summarize_counts_subjects_channels_and_rates(tmp_path) -> None:
    paths = []
    for subject, rate, n_eeg in (("s01", 256, 3), ("s01", 256, 3), ("s02", 512, 3), ("s03", 256, 2)):
        signals = {f"EEG {k}": (rate, np.zeros(rate * 10)) for k in range(n_eeg)}
        signals["EOG left"] = (rate, np.zeros(rate * 10))
        paths.append(eeg_files.write_edf(tmp_path / f"{subject}_{len(paths)}.edf", signals, patient=f"{subject} X X X"))
    s = eeg_files.summarize(paths)
    assert (s.files, s.subjects, s.eeg_channels, s.sampling_rates_hz) == (
        4,
        ("s01", "s02", "s03"),
        (2, 3),
        (256.0, 512.0),
    )
    assert s.hours == pytest.approx(40 / 3600)
    by_folder = eeg_files.summarize(paths, subject_of=lambda p, h: "one")
    assert by_folder.subjects == ("one",)
    anonymous = eeg_files.write_edf(tmp_path / "anon.edf", {"C3": (10, np.zeros(10))}, patient="")
    with pytest.raises(ValueError, match=r"anon\.edf: no subject code"):
        eeg_files.summarize([anonymous])


def test_read_header_names_the_file(tmp_path) -> None:
    path = tmp_path / "truncated.edf"
    path.write_bytes(_spec_header(["C3"], [100])[:300])
    with pytest.raises(ValueError, match=r"truncated\.edf: header ends inside field"):
        eeg_files.read_header(path)
    path.write_bytes(b"0" * 252 + b"abcd")
    with pytest.raises(ValueError, match=r"truncated\.edf: field n_signals \(bytes 252-255\) is not an integer"):
        eeg_files.read_header(path)


def test_the_writer_fills_every_field_as_the_specification_lays_it_out(tmp_path) -> None:
    """The header written with the defaults, read back field by field with the specification's offsets (Kemp et al.
    1992), not with the module's parser: version, identifications, dates, sizes, the signal's dimension and ranges."""
    path = eeg_files.write_edf(tmp_path / "d.edf", {"Cz": (4, np.array([-600.0, -500.0, 0.0, 700.0]))})
    data = path.read_bytes()
    fields = [data[a:b].decode("ascii") for a, b in ((0, 8), (8, 88), (88, 168), (168, 176), (176, 184), (184, 192),
                                                      (192, 236), (236, 244), (244, 252), (252, 256))]  # fmt: skip
    assert [f.rstrip() for f in fields] == ["0", "X X X X", "Startdate X X X X", "01.01.01", "00.00.00", "512", "",
                                            "1", "1", "1"]  # fmt: skip
    assert not any(f.startswith(" ") for f in fields[:6])  # left-justified, padded with spaces
    spans = ((0, 16), (96, 104), (104, 112), (112, 120), (120, 128), (128, 136))
    signal = [data[256 + a : 256 + b].decode("ascii").rstrip() for a, b in spans]
    assert signal == ["Cz", "uV", "-500", "500", "-32768", "32767"]
    blank = {"transducer": (16, 96), "prefiltering": (136, 216), "reserved": (224, 256)}
    assert {k: data[256 + a : 256 + b] for k, (a, b) in blank.items()} == {
        k: b" " * (b - a) for k, (a, b) in blank.items()
    }
    assert data[256 + 216 : 256 + 224].decode("ascii").rstrip() == "4"  # samples per record
    digital = np.frombuffer(data[512:], dtype="<i2")
    assert digital.tolist() == [-32768, -32768, 0, 32767]  # clipped to the physical range, mapped onto the digital one
    header = eeg_files.read_header(path)
    assert (header.patient, header.recording, header.signals[0].physical_dimension) == (
        "X X X X",
        "Startdate X X X X",
        "uV",
    )


def test_the_writer_names_what_does_not_fit(tmp_path) -> None:
    long = "x" * 81
    for field in ("patient", "recording"):
        with pytest.raises(ValueError, match=rf"^{field} 'x{{81}}' is longer than its 80-byte field$"):
            eeg_files.write_edf(tmp_path / "a.edf", {"C3": (10, np.zeros(10))}, **{field: long})
    with pytest.raises(ValueError, match=r"^record_duration 123456789 does not fit in 8 characters$"):
        eeg_files.write_edf(tmp_path / "a.edf", {"C3": (1 / 123456789, np.zeros(1))}, record_duration=123456789)
    eight = eeg_files.write_edf(tmp_path / "b.edf", {"C3": (1 / 12345678, np.zeros(1))}, record_duration=12345678)
    assert eeg_files.read_header(eight).record_duration == 12345678  # eight characters fit
    for lowest, highest, field in ((-123456789, 1.0, "physical_min"), (-1.0, 123456789, "physical_max")):
        with pytest.raises(ValueError, match=rf"^{field} -?123456789 does not fit in 8 characters$"):
            eeg_files.write_edf(tmp_path / "a.edf", {"C3": (1, np.zeros(1))}, physical_range=(lowest, highest))
    with pytest.raises(ValueError, match=r"^write_edf needs at least one signal$"):
        eeg_files.write_edf(tmp_path / "a.edf", {})
    with pytest.raises(ValueError, match=r"^signal 'C3': 15 samples is not a whole number of 10-sample records$"):
        eeg_files.write_edf(tmp_path / "a.edf", {"C3": (10, np.zeros(15))})
    one = eeg_files.read_header(eeg_files.write_edf(tmp_path / "c.edf", {"C3": (1, np.zeros(3))}))
    assert (one.signals[0].samples_per_record, one.n_records) == (1, 3)  # one sample per record is a record


def test_the_parser_takes_the_smallest_valid_signal_and_names_each_field(tmp_path) -> None:
    header = eeg_files.parse_header(_spec_header(["C3"], [1]))
    assert header.signals[0].samples_per_record == 1
    equal = _spec_header(["C3"], [1]).replace(b"-32768  ", b"32767   ", 1)  # digital_min = digital_max
    with pytest.raises(ValueError, match=r"^signal 1 \(C3\): digital_min 32767 must be below digital_max 32767$"):
        eeg_files.parse_header(equal)
    for start, message in (
        (252, r"^field n_signals must be an integer, got 'x'$"),
        (184, r"^field header_bytes must be an integer, got 'x'$"),
        (244, r"^field record_duration must be a number, got 'x'$"),
    ):
        data = bytearray(_spec_header(["C3"], [1]))
        data[start] = ord("x")
        data[start + 1 : start + 4] = b"   "
        with pytest.raises(ValueError, match=message):
            eeg_files.parse_header(bytes(data))
    with pytest.raises(ValueError, match=r"^header ends inside field label of signal 1 \(bytes 256-271\)$"):
        eeg_files.parse_header(_spec_header(["C3"], [1])[:260])


def test_the_reader_names_the_bytes_and_the_signal_it_cannot_read(tmp_path) -> None:
    path = tmp_path / "odd.edf"
    path.write_bytes(b"0" * 252 + b"abcd")
    with pytest.raises(ValueError, match=r"odd\.edf: field n_signals \(bytes 252-255\) is not an integer: b'abcd'$"):
        eeg_files.read_header(path)
    with pytest.raises(TypeError, match=r"^an EDF file must be a path"):
        eeg_files.read_header(3)
    for old, field in ((b"-32768  ", "digital_min"), (b"32767   ", "digital_max"), (b"-3200   ", "physical_min"),
                       (b"3200    ", "physical_max"), (b"1       ", "samples_per_record")):  # fmt: skip
        data = _spec_header(["C3"], [1])
        at = data.index(old, 256)
        bad = data[:at] + b"x".ljust(8) + data[at + 8 :]
        with pytest.raises(ValueError, match=rf"^field {field} of signal 1 \(C3\) must be (an integer|a number)"):
            eeg_files.parse_header(bad)


def test_a_fractional_record_duration_and_a_subject_from_the_file(tmp_path) -> None:
    half = eeg_files.write_edf(tmp_path / "s7.edf", {"C3": (2, np.zeros(4)), "EOG": (2, np.zeros(4))},
                               record_duration=0.5, patient="p9 X X X")  # fmt: skip
    assert eeg_files.read_header(half).record_duration == 0.5
    s = eeg_files.summarize([half], subject_of=lambda p, h: f"{p.stem}/{h.subject}", is_eeg=lambda label: True)
    assert (s.subjects, s.eeg_channels) == (("s7/p9",), (2,))  # both signals, as is_eeg says
