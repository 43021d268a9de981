"""The format registry: names from every library resolve, parameters agree with ml_dtypes' and torch's finfo."""

from __future__ import annotations

import re
from fractions import Fraction
from importlib import resources

import numpy as np
import pytest

from gpukb.formats.library_casts import ml_dtypes_type, torch_dtype
from gpukb.formats.properties import properties
from gpukb.formats.spec import FloatFormat, formats, get_format, parse

ml_dtypes = pytest.importorskip("ml_dtypes")
torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("e4m3", "e4m3"),
        ("float8_e4m3fn", "e4m3"),
        ("torch.float8_e4m3fn", "e4m3"),
        ("HIP_R_8F_E4M3", "e4m3"),
        ("cuda_r_8f_e4m3", "e4m3"),
        ("HIP_R_8F_E4M3_FNUZ", "e4m3fnuz"),
        ("float8_e4m3", "e4m3ieee"),  # ml_dtypes' IEEE-style E4M3 is not OCP E4M3
        ("bfloat16", "bf16"),
        ("CUDA_R_8F_UE8M0", "e8m0"),
        ("float4_e2m1fn", "e2m1"),
        (" FP16 ", "fp16"),
    ],
)
def test_library_names_resolve(alias: str, name: str) -> None:
    assert get_format(alias).name == name


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown format 'fp7'; known formats: fp64, fp32, tf32, .*e2m1"):
        get_format("fp7")


def test_non_string_name_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="named by a string, got int"):
        get_format(8)


def test_bad_parameters_are_refused() -> None:
    def make(**change) -> FloatFormat:
        params = dict(name="x", title="x", exponent_bits=4, mantissa_bits=3, bias=7, encoding="fn")
        return FloatFormat(**{**params, **change})

    assert make().max_value == 448
    with pytest.raises(ValueError, match="encoding\n  Input should be 'ieee', 'fn', 'fnuz', 'finite' or 'e8m0'"):
        make(encoding="ibm")
    with pytest.raises(ValueError, match="exponent-only"):
        make(exponent_bits=8, mantissa_bits=1, bias=127, encoding="e8m0")
    with pytest.raises(ValueError, match="exponent_bits\n  Input should be greater than or equal to 1"):
        make(exponent_bits=0)


DATA = resources.files("gpukb.data").joinpath("formats.toml").read_text(encoding="utf-8")
E4M3 = DATA[DATA.index('[[format]]\nname = "e4m3"\n') :].split("\n\n")[0]  # the E4M3 entry, as written
N_E4M3 = list(formats()).index("e4m3") + 1
AT = rf"format entry {N_E4M3} \(e4m3\)"  # how a message names the E4M3 entry


def _with(entry: str) -> str:
    """A copy of the real file with the E4M3 entry replaced."""
    return DATA.replace(E4M3, entry)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_with(E4M3.replace('encoding = "fn"', 'encoding = "ibm"')), rf"{AT}: encoding: Input should be"),
        (_with(E4M3.replace("bias = 7", 'bias = "7"')), rf"{AT}: bias: Input should be a valid integer"),
        (_with(E4M3.replace("exponent_bits = 4", "exponent_bits = 0")), rf"{AT}: exponent_bits: Input should be"),
        (_with(E4M3 + '\ncolour = "red"'), rf"{AT}: colour: Extra inputs are not permitted"),
        (_with(re.sub(r'\ncuda = "[^"]*"', "", E4M3)), rf"{AT}: cuda: Field required"),
        (_with(E4M3 + "\n\n" + E4M3), rf"entry {N_E4M3 + 1} \(e4m3\): name 'e4m3' repeats entry {N_E4M3}"),
        (DATA.replace('cuda = "cudaDataType_t', 'cudnn = "cudaDataType_t', 1), r"name_sources: cuda: Field required"),
        ("version = 1\n" + DATA, r"unknown top-level keys \['version'\]"),
    ],
)  # fmt: skip
def test_a_corrupted_copy_fails_naming_file_entry_and_field(text: str, message: str) -> None:
    assert text != DATA
    with pytest.raises(ValueError, match=f"^formats\\.toml: .*{message}"):
        parse(text, "formats.toml")


def test_the_data_file_reads_as_the_registry() -> None:
    assert [entry.name for entry in parse(DATA).format] == list(formats())


FINFO_FORMATS = [name for name in formats() if ml_dtypes_type(name) is not None]


@pytest.mark.parametrize("name", FINFO_FORMATS)
def test_properties_match_ml_dtypes_finfo(name: str) -> None:
    info = ml_dtypes.finfo(ml_dtypes_type(name))
    props = properties(name)
    assert float(props.max_value) == float(info.max)
    assert float(props.min_normal) == float(info.smallest_normal)
    assert float(props.min_subnormal) == float(info.smallest_subnormal)
    assert float(props.epsilon) == float(info.eps)
    assert props.format.mantissa_bits == info.nmant


@pytest.mark.parametrize("name", [n for n in formats() if torch_dtype(n) is not None])
def test_properties_match_torch_finfo(name: str) -> None:
    info = torch.finfo(torch_dtype(name))
    props = properties(name)
    assert float(props.max_value) == info.max
    assert float(props.min_normal) == info.smallest_normal
    assert props.format.bits == info.bits
    if name == "e5m2fnuz" and info.eps != float(props.epsilon):
        # torch.finfo reports E4M3FNUZ's epsilon for E5M2FNUZ; ml_dtypes and the bit patterns say 2**-2.
        assert (info.eps, float(props.epsilon)) == (2.0**-3, 2.0**-2)
    else:
        assert float(props.epsilon) == info.eps


@pytest.mark.parametrize(
    ("name", "maximum"),
    # The largest finite values the OCP OFP8 and MX specifications state, and AMD's FNUZ variants.
    [
        ("e4m3", 448),
        ("e5m2", 57344),
        ("e4m3fnuz", 240),
        ("e5m2fnuz", 57344),
        ("e2m3", 7.5),
        ("e3m2", 28),
        ("e2m1", 6),
        ("e8m0", 2.0**127),
        ("fp16", 65504),
        ("bf16", 3.3895313892515355e38),
    ],
)
def test_largest_values(name: str, maximum: float) -> None:
    assert properties(name).max_value == maximum


def test_finite_value_counts_match_the_bit_patterns() -> None:
    from gpukb.formats.arrays import decode_array

    for fmt in formats().values():
        if fmt.bits > 19:
            continue
        values = decode_array(np.arange(1 << fmt.bits), fmt)
        props = properties(fmt)
        assert props.finite_values == int(np.isfinite(values).sum()), fmt.name
        assert props.nan_patterns == int(np.isnan(values).sum()), fmt.name


def test_bf16_max_is_not_fp32_max() -> None:
    """Decides the erratum 'bf16-max': BF16's largest value is (2 - 2**-7) * 2**127, below FP32's."""
    bf16, fp32 = properties("bf16").max_value, properties("fp32").max_value
    assert bf16 == (2 - Fraction(1, 2**7)) * Fraction(2) ** 127
    assert f"{float(bf16):.4e}" == "3.3895e+38"
    assert f"{float(fp32):.4e}" == "3.4028e+38"


def test_quad_precision_is_not_double_double() -> None:
    """Decides the erratum 'quad-is-not-double-double': binary128 and a pair of doubles differ in range and bits."""
    quad = FloatFormat(
        name="fp128", title="IEEE binary128", exponent_bits=15, mantissa_bits=112, bias=16383, encoding="ieee"
    )
    double = properties("fp64")
    assert quad.mantissa_bits + 1 == 113  # significand bits of binary128
    assert 2 * (double.format.mantissa_bits + 1) + 1 == 107  # double-double: two 53-bit significands and a sign bit
    assert quad.max_exponent == 16383  # quad reaches ~1.19e4932; double-double stops at FP64's ~1.80e308
    assert double.format.max_exponent == 1023


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # torch's names of E4M3 and E5M2 swapped: each name still unique, each contradicting its format
        ('torch = "float8_e4m3fn"\nml_dtypes', 'torch = "float8_e5m2"\nml_dtypes',
         r"format entry 6 \(e4m3\): torch name 'float8_e5m2' says E5M2; the format is E4M3"),
        ('torch = "float8_e5m2"', 'torch = "float8_e4m3fn"',
         r"format entry 7 \(e5m2\): torch name 'float8_e4m3fn' says E4M3; the format is E5M2"),
        ('torch = "bfloat16"', 'torch = "float16"',
         r"format entry 5 \(bf16\): torch name 'float16' is already the torch name of format entry 4 \(fp16\)"),
        ('torch = "float16"', 'torch = "bfloat16"',
         r"torch name 'bfloat16' says bfloat16 \(E8M7\); the format is E5M10"),
        ('hip = "HIP_R_8F_E4M3_FNUZ"', 'hip = "HIP_R_8F_E4M3"', r"\(e4m3fnuz\): hip name 'HIP_R_8F_E4M3' lacks fnuz"),
        ('torch = "float8_e4m3fnuz"', 'torch = "float8_e4m3fn"', r"torch name 'float8_e4m3fn' lacks fnuz"),
        ('cuda = "CUDA_R_16F"', 'cuda = "CUDA_R_32F"',
         r"\(fp16\): cuda name 'CUDA_R_32F' says 32 bits; the format has 16"),
        ('ml_dtypes = "float8_e4m3"', 'ml_dtypes = "e4m3"',
         r"ml_dtypes name 'e4m3' is already the name of format entry 6"),
        # a bias that does not fit the exponent width (the fnuz formats use one more)
        ("bias = 8\n", "bias = 7\n", r"\(e4m3fnuz\): .*bias 7 does not fit 4 exponent bits with encoding 'fnuz': it is "
                                     r"2\^\(e-1\) - 1 \+ 1 = 8"),
        ("bias = 15\nencoding = \"ieee\"\ntorch = \"float16\"", "bias = 16\nencoding = \"ieee\"\ntorch = \"float16\"",
         r"\(fp16\): .*bias 16 does not fit 5 exponent bits"),
    ],
)  # fmt: skip
def test_library_names_and_biases_must_fit_their_formats(old, new, message) -> None:
    assert old in DATA
    with pytest.raises(ValueError, match=message):
        parse(DATA.replace(old, new, 1))


def test_every_library_name_spells_its_format() -> None:
    """The packaged file passes the checks the refusals above rely on: each name resolves to its own format."""
    for name, fmt in formats().items():
        assert fmt.bias == 2 ** (fmt.exponent_bits - 1) - 1 + (fmt.encoding == "fnuz")
        for library_name in fmt.library_names.values():
            assert get_format(library_name).name == name


def test_a_library_name_that_says_fnuz_is_refused_with_the_file_named() -> None:
    """formats.toml with e4m3's torch name swapped for the fnuz one: the message names the file and says what the
    name claims (fnuz) against the format's encoding (fn)."""
    assert DATA.count('torch = "float8_e4m3fn"\n') == 1
    bad = DATA.replace('torch = "float8_e4m3fn"\n', 'torch = "float8_e4m3fnuz"\n')
    message = (
        r"^x\.toml: format entry \d+ \(e4m3\): torch name 'float8_e4m3fnuz' says fnuz; "
        r"the format's encoding is 'fn'$"
    )
    with pytest.raises(ValueError, match=message):
        parse(bad, "x.toml")
