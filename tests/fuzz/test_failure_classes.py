"""One test per class of failure an adversarial review found at the boundary (the table of the hardening issue:
hangs, tracebacks, silently wrong or mislabelled results, unhelpful errors). Each holds the class, not only the
example it was found with. The inputs that used to hang run as real processes with a timeout, so that a
regression fails the test instead of stalling the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpukb.cli import main
from gpukb.formats import mx
from gpukb.formats.codec import decode, encode
from gpukb.formats.explain import explain
from gpukb.formats.spec import formats, get_format
from gpukb.formats.tables import value_table
from tests.fuzz.budget import SUBPROCESS_TIMEOUT_S

GPUKB = Path(sys.executable).with_name("gpukb")


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        status = main(argv)
    except SystemExit as exit_info:
        status = exit_info.code
    out, err = capsys.readouterr()
    return status, out, err


# --- hangs --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["format", "1e9999999", "--formats", "e4m3"],
        ["format", "-1e-999999999999"],  # every format at once, and tiny rather than huge
    ],
)
def test_hang_huge_decimal_exponents_on_the_command_line(argv) -> None:
    proc = subprocess.run([str(GPUKB), *argv], capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr
    outcomes = {line.split()[0]: line.split()[-1] for line in proc.stdout.splitlines()[2:]}
    if argv[1].startswith("1e"):
        assert outcomes == {"e4m3": "overflow"}  # E4M3 has no infinity: overflow is NaN
    else:
        assert set(outcomes.values()) == {"underflow"} | ({"representable"} if "e8m0" in outcomes else set())


def test_hang_huge_decimal_exponents_in_the_python_api() -> None:
    code = (
        "from gpukb.formats.codec import encode\n"
        "from gpukb.formats.explain import explain\n"
        "from gpukb.formats.mixed_precision import stored\n"
        "print(hex(encode('1e999999999', 'e4m3')), hex(encode('-1e999999999', 'fp32', saturate=True)))\n"
        "print(explain('1e-999999999', 'bf16').outcome)\n"
        "try:\n    stored('1e999999999', 'fp16')\nexcept ValueError as err:\n    print('ValueError')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0x7f", "0xff7fffff", "underflow", "ValueError"]


def test_hang_class_every_format_and_mode_is_bounded() -> None:
    """The bound holds for every format, rounding mode and kind of input (text, Decimal), both directions."""
    from decimal import Decimal

    for fmt in formats():
        for rounding in ("nearest-even", "toward-zero", "stochastic"):
            for text in ("7e123456789012", "-7e123456789012", "7e-123456789012", "-7e-123456789012"):
                for value in (text, Decimal(text)):
                    bits = encode(value, fmt, rounding=rounding, rng=0)
                    assert 0 <= bits < 1 << get_format(fmt).bits


# --- tracebacks ---------------------------------------------------------------------------------------------


def test_traceback_rng_takes_a_seed_or_a_generator() -> None:
    assert encode(1.3, "e2m1", rounding="stochastic", rng=42) == encode(1.3, "e2m1", rounding="stochastic", rng=42)
    assert encode(1.3, "e2m1", rounding="stochastic", rng=np.random.default_rng(1)) in (2, 3)
    for bad, error in [("42", TypeError), (4.2, TypeError), (np.random.RandomState(0), TypeError), (-1, ValueError)]:
        with pytest.raises(error, match="rng must be"):
            encode(1.3, "e2m1", rounding="stochastic", rng=bad)
        with pytest.raises(error, match="rng must be"):
            explain(1.3, "e2m1", rounding="stochastic", rng=bad)


@pytest.mark.parametrize("size", [0, -32, 2.5, True, "32", None])
def test_traceback_block_sizes_are_checked(size) -> None:
    with pytest.raises((ValueError, TypeError), match="block_size must be an int ≥ 1"):
        mx.bits_per_element("e2m1", size)


def test_traceback_unreadable_files_are_usage_errors(tmp_path, capsys) -> None:
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe")
    for argv in (["bench", "--show", str(tmp_path)], ["bench", "--show", str(tmp_path / "binary.json")],
                 ["datasets", "stats", str(tmp_path / "binary.json")]):  # fmt: skip
        status, _, err = _run(argv, capsys)
        assert status == 2
        assert "Traceback" not in err
        assert f"gpukb {argv[0]}: error: " in err
        assert str(tmp_path) in err


# --- silently wrong or mislabelled --------------------------------------------------------------------------


@pytest.mark.parametrize("truthy", ["no", "False", 1, 0, None, np.array([True])])
def test_silently_wrong_bool_means_bool(truthy) -> None:
    with pytest.raises(TypeError, match="saturate must be True or False"):
        encode(1e6, "e4m3", saturate=truthy)
    with pytest.raises(TypeError, match="pad must be True or False"):
        mx.quantize(np.ones(32), "e4m3", pad=truthy)


def test_silently_wrong_outcomes_are_labelled() -> None:
    assert explain(-1, "e8m0").outcome == "negative values are not representable"
    assert explain("-inf", "e8m0").outcome == "negative values are not representable"
    assert explain(0, "e8m0").outcome == "zero is not representable"
    for fmt in ("e2m1", "e2m3", "e3m2"):  # formats without infinity saturate it
        assert explain("inf", fmt).outcome == "saturated"
        assert explain("-inf", fmt).outcome == "saturated"
    assert explain("inf", "e4m3", saturate=True).outcome == "saturated"
    assert explain("1e999999", "e4m3", saturate=True).outcome == "saturated"
    assert explain("1e999999", "e4m3").outcome == "overflow"
    assert explain("1e-999999", "fp64").outcome == "underflow"
    rows = {r[0]: r[-1] for r in value_table("-1", ["e8m0", "e4m3"])[1]}
    assert rows == {"e8m0": "negative values are not representable", "e4m3": "exact"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["format", "--list", "--saturate"], "--list prints every format; it takes no --saturate"),
        (["format", "--list", "42"], "--list prints every format; it takes no VALUE"),
        (["format", "--list", "--formats", "e4m3"], "it takes no --formats"),
        (["format", "--list", "--as", "e4m3"], "it takes no --as"),
        (["format", "0x63", "--as", "e4m3", "--rounding", "toward-zero"], "--as decodes one bit pattern"),
        (["format", "0x63", "--as", "e4m3", "--formats", "bf16"], "it takes no --formats"),
        (["format", "1", "--formats", "e4m3,E4M3"], "format e4m3 is named twice"),
        (["gemm-types", "--lib", "cublaslt", "--list", "--a", "e4m3"], "--list prints the whole table"),
        (["datasets", "list", "--min-subjects", "-5"], "N is a whole number ≥ 0; got '-5'"),
        (["datasets", "stats", "x.odgt", "--category", "car"], "it applies to one .json file only"),
        (["bench", "--show", "x.json", "--quick"], "cannot be combined with --quick"),
    ],
)
def test_silently_ignored_options_are_refused(argv, message, capsys) -> None:
    status, out, err = _run(argv, capsys)
    assert status == 2
    assert out == ""
    assert f"gpukb {argv[0]}" in err
    assert message in err


def test_silently_wrong_api_lists_are_not_split_into_letters() -> None:
    from gpukb.formats import tables

    with pytest.raises(TypeError, match="names must be a list of names"):
        tables.properties_table("e4m3")
    with pytest.raises(ValueError, match="named twice"):
        tables.names_table(["e4m3", "float8_e4m3fn"])


# --- unhelpful errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "names_given", "names_allowed"),
    [
        (lambda: get_format("e4m4"), ValueError, "'e4m4'", "known formats: fp64"),
        (lambda: encode(1, "e4m3", rounding="nearest"), ValueError, "'nearest'", "'nearest-even'"),
        (lambda: encode(1, "e4m3", rounding=None), TypeError, "None", "'toward-zero'"),
        (lambda: encode(object(), "e4m3"), TypeError, "object", "a real number or a decimal string"),
        (lambda: encode("4 2", "e4m3"), ValueError, "'4 2'", "'42.5'"),
        (lambda: encode("9" * 3000, "e4m3"), ValueError, "3,000", "at most 2,000"),
        (lambda: decode(0x1FF, "e4m3"), ValueError, "0x1ff", "0..0xff"),
        (lambda: decode(1.0, "e4m3"), TypeError, "1.0 (float)", "integer"),
        (lambda: mx.quantize(np.ones(32), "fp16"), ValueError, "fp16", "MX element formats: e4m3"),
        (lambda: mx.quantize(np.ones(32), scale_rounding="up"), ValueError, "'up'", "'floor'"),
        (lambda: mx.OutlierModel(outlier_channels=2000), ValueError, "2000", "≤ 1024"),
    ],
)
def test_unhelpful_errors_name_what_was_given_and_what_is_allowed(call, error, names_given, names_allowed) -> None:
    with pytest.raises(error) as info:
        call()
    assert names_given in str(info.value)
    assert names_allowed in str(info.value)


def test_unhelpful_cli_errors_name_the_command_and_the_input(capsys) -> None:
    status, _, err = _run(["format", "12..5"], capsys)
    assert status == 2
    assert err.strip().split("\n")[-1] == (
        "gpukb format: error: '12..5' is not a number (write e.g. '42.5', '-1e-3', 'inf', 'nan')"
    )
    status, _, err = _run(["format", "1", "--formats", "e4m3,fp7"], capsys)
    assert status == 2
    assert "unknown format 'fp7'; known formats: fp64" in err
