"""Fuzz: any number (or anything else) stored in any format gets a bit pattern or a ValueError/TypeError."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from gpukb.formats import tables
from gpukb.formats.codec import DECIMAL_EXPONENT_LIMIT, ROUNDING_MODES, encode
from gpukb.formats.explain import explain
from gpukb.formats.spec import formats, get_format
from tests.fuzz.common import attempt, fuzz_settings, junk, near_misses, number_text, real_numbers

SETTINGS = fuzz_settings("test_numbers.py")
NAMES = list(formats())

any_value = st.one_of(number_text, real_numbers, junk)
any_format = st.one_of(st.sampled_from(NAMES), near_misses(NAMES))
any_rounding = st.one_of(st.sampled_from(ROUNDING_MODES), st.sampled_from(["nearest", "", "STOCHASTIC"]), junk)
any_saturate = st.one_of(st.booleans(), junk)
any_rng = st.one_of(st.none(), st.integers(0, 2**32), junk)


@SETTINGS
@given(any_value, any_format, any_rounding, any_saturate, any_rng)
def test_encode_returns_a_pattern_or_refuses(value, fmt, rounding, saturate, rng) -> None:
    bits, err = attempt(encode, value, fmt, rounding=rounding, saturate=saturate, rng=rng)
    if err is None:
        assert 0 <= bits < 1 << get_format(fmt).bits
        assert isinstance(saturate, bool), f"saturate={saturate!r} was accepted: bool means bool"


@SETTINGS
@given(any_value, st.sampled_from(NAMES), st.sampled_from(ROUNDING_MODES[:2]), st.booleans())
def test_explain_says_what_happened(value, fmt, rounding, saturate) -> None:
    e, err = attempt(explain, value, fmt, rounding=rounding, saturate=saturate)
    if err is None:
        f = get_format(fmt)
        assert e.outcome
        if e.outcome == "saturated":
            assert abs(e.stored.signed_value) == f.max_value
        if e.outcome == "overflow":
            assert e.stored.kind in ("inf", "nan")
        if e.stored.kind == "nan" and e.outcome not in ("nan", "overflow"):
            assert "not representable" in e.outcome


@SETTINGS
@given(st.one_of(number_text, real_numbers), st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
def test_value_table_has_a_row_per_format(value, names) -> None:
    table, err = attempt(tables.value_table, value, names)
    if err is None:
        headers, rows = table
        assert [r[0] for r in rows] == names
        assert all(len(r) == len(headers) for r in rows)


@SETTINGS
@given(
    st.sampled_from(["", "-"]),
    st.text("123456789", min_size=1, max_size=5),
    st.integers(DECIMAL_EXPONENT_LIMIT + 1, 10**15),
    st.sampled_from(NAMES),
    st.sampled_from(ROUNDING_MODES[:2]),
    st.booleans(),
)
def test_far_out_decimals_round_as_their_exact_values_would(sign, digits, exponent, fmt, rounding, saturate) -> None:
    """Beyond the exact range a decimal rounds like any exact value past every format: the bound changes
    nothing a reader can see. ``10**(limit + 1)`` and ``10**-(limit + 1)`` are built exactly to compare."""
    huge, tiny = f"{sign}{digits}e{exponent}", f"{sign}{digits}e-{exponent}"
    exact_huge = Fraction(10) ** (DECIMAL_EXPONENT_LIMIT + 1) * (-1 if sign else 1)
    exact_tiny = Fraction(1, 10 ** (DECIMAL_EXPONENT_LIMIT + 1)) * (-1 if sign else 1)
    options = {"rounding": rounding, "saturate": saturate}
    assert attempt(encode, huge, fmt, **options) == attempt(encode, exact_huge, fmt, **options)
    assert attempt(encode, tiny, fmt, **options) == attempt(encode, exact_tiny, fmt, **options)
    assert attempt(encode, Decimal(huge), fmt, **options) == attempt(encode, exact_huge, fmt, **options)


@SETTINGS
@given(decimal_text_in_range := st.builds(lambda d, e: f"{d}e{e}", st.integers(1, 10**6), st.integers(-60, 60)),
       st.sampled_from(NAMES))  # fmt: skip
def test_decimals_in_range_are_read_exactly(text, fmt) -> None:
    assert encode(text, fmt) == encode(Fraction(Decimal(text)), fmt)
