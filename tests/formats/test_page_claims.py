"""The prose of the FP8 and anatomy pages, decided by the codec and by ml_dtypes and torch.

Each test computes a statement the page makes in words (FNUZ's range against OCP's, what reading OCP bytes as FNUZ
does, where FP16 underflows to zero, how FP32 becomes BF16) and then checks that the page states the computed
figures, so a page that drifted from the code fails here.
"""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from gpukb.formats.codec import decode, encode
from gpukb.formats.spec import get_format
from tests.helpers import ROOT

FP8_PAGE = (ROOT / "docs/formats/fp8.md").read_text(encoding="utf-8")
ANATOMY_PAGE = (ROOT / "docs/formats/anatomy.md").read_text(encoding="utf-8")


def _prose(page: str) -> str:
    """The page's text with its line breaks folded, so a phrase may wrap."""
    return " ".join(page.split())


def _latex_power(x: Fraction) -> str:
    """``2^{-10}`` for 1/1024, as the page writes powers of two."""
    assert x.numerator == 1
    assert x.denominator & (x.denominator - 1) == 0
    return f"2^{{-{x.denominator.bit_length() - 1}}}"


# --- FNUZ against OCP ---------------------------------------------------------------------------------------------

OCP_FNUZ = (("e4m3", "e4m3fnuz", ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz),
            ("e5m2", "e5m2fnuz", ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz))  # fmt: skip


@pytest.mark.parametrize(("ocp", "fnuz", "ocp_dtype", "fnuz_dtype"), OCP_FNUZ)
def test_fnuz_adds_a_binade_at_the_bottom_and_does_not_halve_the_maximum(ocp, fnuz, ocp_dtype, fnuz_dtype) -> None:
    o, f = get_format(ocp), get_format(fnuz)
    assert f.bias == o.bias + 1
    assert f.min_subnormal == o.min_subnormal / 2
    assert f.min_normal == o.min_normal / 2
    assert f.max_value > o.max_value / 2  # the range is not shifted down by a factor of two
    for fmt, dtype in ((o, ocp_dtype), (f, fnuz_dtype)):
        info = ml_dtypes.finfo(dtype)
        assert Fraction(float(info.max)) == fmt.max_value
        assert Fraction(float(info.smallest_subnormal)) == fmt.min_subnormal


def test_fnuz_maxima_are_57344_and_240_as_the_page_says() -> None:
    e5m2, e5m2fnuz, e4m3, e4m3fnuz = (get_format(n) for n in ("e5m2", "e5m2fnuz", "e4m3", "e4m3fnuz"))
    assert e5m2fnuz.max_value == e5m2.max_value == 57344
    assert e4m3fnuz.max_value == 240 == decode(0x7F, "e4m3fnuz").value == Fraction(15, 8) * 2**7
    assert e4m3.max_value == 448
    text = _prose(FP8_PAGE)
    assert f"E5M2FNUZ reaches {e5m2fnuz.max_value}, the same largest value as E5M2" in text
    assert f"E4M3FNUZ reaches {e4m3fnuz.max_value} (\\(1.875 \\times 2^7\\), its all-ones pattern `0x7F`)" in text
    assert f"more than half of E4M3's {e4m3.max_value}" in text
    assert (
        f"E4M3FNUZ's smallest subnormal is \\({_latex_power(e4m3fnuz.min_subnormal)}\\), "
        f"E5M2FNUZ's \\({_latex_power(e5m2fnuz.min_subnormal)}\\)" in text
    )
    assert "shifts the whole range down" not in text


def _values(fmt: str) -> list[Fraction | str]:
    """Every byte decoded: its signed value, or ``"nan"``/``"inf"``/``"-inf"``."""
    out: list[Fraction | str] = []
    for bits in range(256):
        d = decode(bits, fmt)
        out.append(d.signed_value if d.value is not None else ("-" if d.sign and d.kind == "inf" else "") + d.kind)
    return out


@pytest.mark.parametrize(("ocp", "fnuz"), [("e4m3", "e4m3fnuz"), ("e5m2", "e5m2fnuz")])
def test_reading_ocp_bytes_as_fnuz_halves_finite_values_and_turns_specials_into_numbers(ocp, fnuz) -> None:
    changed = {}
    for bits, (a, b) in enumerate(zip(_values(ocp), _values(fnuz), strict=True)):
        if isinstance(a, Fraction) and a != 0:
            assert b == a / 2, hex(bits)  # every nonzero finite value halves
        else:
            changed[bits] = (a, b)
    assert changed.pop(0x00) == (0, 0)
    assert changed.pop(0x80) == (0, "nan")  # negative zero becomes the one NaN
    assert all(isinstance(b, Fraction) for a, b in changed.values())  # every OCP NaN and infinity is a number
    if ocp == "e4m3":
        assert changed == {0x7F: ("nan", 240), 0xFF: ("nan", -240)}
    else:
        assert changed.pop(0x7C) == ("inf", 32768)
        assert changed.pop(0xFC) == ("-inf", -32768)
        assert {bits: b for bits, (a, b) in changed.items() if a == "nan"} == {
            0x7D: 40960,
            0x7E: 49152,
            0x7F: 57344,
            0xFD: -40960,
            0xFE: -49152,
            0xFF: -57344,
        }


def test_fp8_page_states_the_reinterpretation_as_computed() -> None:
    text = _prose(FP8_PAGE)
    e4m3, e5m2 = dict(enumerate(_values("e4m3fnuz"))), dict(enumerate(_values("e5m2fnuz")))
    assert f"the NaNs `0x7F` and `0xFF` into \\(\\pm {e4m3[0x7F]}\\)" in text
    assert e4m3[0xFF] == -e4m3[0x7F]
    assert f"the infinities `0x7C`/`0xFC` become \\(\\pm {e5m2[0x7C]}\\)" in text
    assert f"the NaNs `0x7D` to `0x7F` (and their negatives) become numbers up to {e5m2[0x7F]}" in text
    assert "halves every value" not in text


# --- FP16 underflow -----------------------------------------------------------------------------------------------

SMALLEST = Fraction(1, 2**24)


@pytest.mark.parametrize("x", [SMALLEST / 2 + SMALLEST / 2**20, SMALLEST * 3 / 4, SMALLEST * 0.99, SMALLEST])
def test_fp16_values_between_2_pow_minus_25_and_2_pow_minus_24_round_up_to_2_pow_minus_24(x) -> None:
    assert get_format("fp16").min_subnormal == SMALLEST
    assert decode(encode(x, "fp16"), "fp16").value == SMALLEST
    assert Fraction(float(np.float16(float(x)))) == SMALLEST
    assert Fraction(float(np.float32(float(x)).astype(np.float16))) == SMALLEST


@pytest.mark.parametrize("x", [SMALLEST / 2, SMALLEST / 3, SMALLEST / 2**10])
def test_fp16_values_at_or_below_2_pow_minus_25_round_to_zero(x) -> None:
    assert decode(encode(x, "fp16"), "fp16").value == 0
    assert float(np.float16(float(x))) == 0


def test_anatomy_page_states_the_fp16_underflow_as_computed() -> None:
    text = _prose(ANATOMY_PAGE)
    assert (
        "Its smallest subnormal is \\(2^{-24}\\); a magnitude at or below half of it, \\(2^{-25}\\), rounds to zero, "
        "and one between \\(2^{-25}\\) and \\(2^{-24}\\) rounds up to \\(2^{-24}\\)." in text
    )
    assert _latex_power(get_format("fp16").min_subnormal) == "2^{-24}"
    assert "below \\(2^{-24}\\) they vanish" not in text


# --- FP32 to BF16: round to nearest even, not truncation ----------------------------------------------------------


def _random_normal_float32(n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    return x[np.isfinite(x) & (np.abs(x) >= np.finfo(np.float32).tiny) & (np.abs(x) < 3e38)]


def _truncated_bf16(x: np.ndarray) -> np.ndarray:
    return (x.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


def test_bf16_casts_round_to_nearest_even_and_truncation_differs_for_about_half() -> None:
    x = _random_normal_float32(200_000)
    cast = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    exact = [decode(encode(float(v), "bf16"), "bf16").signed_value for v in x[:2000]]
    assert [Fraction(float(v)) for v in cast[:2000]] == exact  # ml_dtypes agrees with the reference, nearest-even
    truncated = _truncated_bf16(x)
    differs = cast != truncated
    assert 0.49 < differs.mean() < 0.51
    # where they differ, truncation is the neighbour one step closer to zero
    assert np.all(np.abs(truncated[differs]) < np.abs(cast[differs]))
    # a tie goes to the even neighbour: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7
    assert float(np.float32(1 + 2**-8).astype(ml_dtypes.bfloat16)) == 1.0
    assert float(np.float32(1 + 3 * 2**-8).astype(ml_dtypes.bfloat16)) == 1 + 2**-6


def test_torch_bf16_cast_rounds_to_nearest_even() -> None:
    torch = pytest.importorskip("torch")
    x = _random_normal_float32(50_000)
    through_torch = torch.from_numpy(x).to(torch.bfloat16).to(torch.float32).numpy()
    assert np.array_equal(through_torch, x.astype(ml_dtypes.bfloat16).astype(np.float32))
    assert not np.array_equal(through_torch, _truncated_bf16(x))


def test_anatomy_page_says_bf16_casts_round() -> None:
    text = _prose(ANATOMY_PAGE)
    assert "to nearest with ties to even, as the casts of PyTorch and ml_dtypes do" in text
    assert "by dropping or appending 16 mantissa bits" not in text
