"""Fuzz: any bit pattern (or anything else) of any format decodes or gets a ValueError/TypeError."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from gpukb.formats import tables
from gpukb.formats.arrays import decode_array, encode_array
from gpukb.formats.codec import decode
from gpukb.formats.spec import formats, get_format
from tests.fuzz.common import attempt, fuzz_settings, junk

SETTINGS = fuzz_settings("test_patterns.py")
NAMES = list(formats())


@st.composite
def patterns(draw) -> tuple[object, str]:
    """A format and a pattern near the edges of its width: inside, just outside, far outside, or not an int."""
    name = draw(st.sampled_from(NAMES))
    width = get_format(name).bits
    bits = draw(
        st.one_of(
            st.integers(0, (1 << width) - 1),
            st.sampled_from([-1, 1 << width, (1 << width) + 1, 1 << (2 * width), -(1 << 70)]),
            st.integers(0, (1 << width) - 1).map(hex),  # text, not an int
            st.integers(0, 255).map(np.uint8),
            st.integers(0, 2**62).map(np.int64),
            junk,
        )
    )
    return bits, name


@SETTINGS
@given(patterns())
def test_decode_means_something_or_refuses(case) -> None:
    bits, name = case
    d, err = attempt(decode, bits, name)
    if err is None:
        assert d.kind in ("zero", "subnormal", "normal", "inf", "nan")
        assert 0 <= int(bits) < 1 << get_format(name).bits


@SETTINGS
@given(patterns())
def test_pattern_table_has_one_row_or_refuses(case) -> None:
    bits, name = case
    table, err = attempt(tables.pattern_table, bits, name)
    if err is None:
        assert len(table[1]) == 1


@SETTINGS
@given(
    st.sampled_from(NAMES),
    st.sampled_from(["uint8", "int8", "uint16", "int32", "int64", "uint64", "float32", "bool", "object"]),
    st.lists(st.integers(-5, 70000), max_size=6),
)
def test_decode_array_of_any_dtype(name, dtype, values) -> None:
    try:
        array = np.array(values, dtype=dtype)
    except OverflowError:
        array = np.array(values, dtype=object)
    out, err = attempt(decode_array, array, name)
    if err is None:
        assert out.shape == array.shape
        assert array.dtype.kind in "ui"


@SETTINGS
@given(
    st.sampled_from([n for n in NAMES if get_format(n).bits <= 32]),
    st.one_of(
        st.lists(st.floats(width=32), max_size=6).map(lambda v: np.array(v, dtype=np.float32)),
        st.lists(st.floats(), max_size=6).map(np.array),
        st.lists(st.integers(-5, 5), max_size=3).map(np.array),
        junk,
    ),
    st.one_of(st.booleans(), junk),
)
def test_encode_array_round_trips_or_refuses(name, x, saturate) -> None:
    bits, err = attempt(encode_array, x, name, saturate=saturate)
    if err is None:
        assert bits.shape == np.shape(x)
        _, err = attempt(decode_array, bits, name)
        assert err is None
