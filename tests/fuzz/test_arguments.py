"""The shared boundary checks (``gpukb.arguments``): each takes exactly its type and says what was given."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from gpukb import arguments


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        (lambda v: arguments.positive_int("n", v), [1, 2**70, np.int8(3)], [0, -1, True, 1.0, "1", None]),
        (lambda v: arguments.non_negative_int("n", v), [0, 5], [-1, False, 0.0]),
        (lambda v: arguments.integer("n", v, minimum=-2, maximum=2), [-2, 2], [-3, 3, np.float64(1)]),
        (lambda v: arguments.flag("f", v), [True, False, np.bool_(True)], [1, 0, "no", "False", None, [True]]),
        (lambda v: arguments.real("x", v), [1, 1.5, Fraction(1, 3), np.float32(2), 10**300],
         [math.nan, math.inf, True, "1", None, 1j, 10**400]),
        (lambda v: arguments.real("x", v, minimum=0), [0, 0.0], [-1e-300]),
        (lambda v: arguments.real("x", v, positive=True), [1e-300], [0, -0.0]),
        (lambda v: arguments.text("s", v, max_length=3), ["", "abc"], ["abcd", b"a", 1]),
        (lambda v: arguments.choice("mode", v, ("a", "b")), ["a", "b"], ["A", "", None, ["a"]]),
        (lambda v: arguments.names("names", v), [None, [], ["a"], ("a", "b")], ["ab", b"ab", 3, [1]]),
        (lambda v: arguments.random_generator("rng", v), [None, 0, 2**70, np.random.default_rng(0)],
         [-1, 1.5, True, "1", np.random.RandomState(0)]),
    ],
)  # fmt: skip
def test_each_check_takes_exactly_its_type(check, good, bad) -> None:
    for value in good:
        check(value)
    for value in bad:
        with pytest.raises((TypeError, ValueError)) as info:
            check(value)
        message = str(info.value)
        assert message.split(" ")[0] in {"n", "f", "x", "s", "mode", "names", "rng", "unknown"}, message
        shown = _shown(value)
        if "at most" in message:  # a string too long is described by its length, not repeated
            assert f"{len(value):,} characters long" in message, message
        elif message.startswith("unknown"):
            assert f"unknown mode {shown};" in message, message
        elif isinstance(info.value, TypeError):  # a wrong type is shown with the type's name
            assert message.endswith(f"got {shown} ({type(value).__name__})") or (
                isinstance(value, list) and f"got {_shown(value[0])} ({type(value[0]).__name__})" in message
            ), message
        else:
            assert message.endswith(f"got {shown}"), message


def _shown(value: object) -> str:
    """The value as a message must show it: its repr, cut to 60 characters and its length past 80."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}...({len(text)} characters)"


def test_messages_show_what_was_given_and_its_type_shortened_when_long() -> None:
    with pytest.raises(TypeError, match=r"^n must be an int ≥ 1; got '1' \(str\)$"):
        arguments.positive_int("n", "1")
    with pytest.raises(TypeError) as info:
        arguments.flag("f", "x" * 500)
    assert "(502 characters)" in str(info.value)
    assert len(str(info.value)) < 200
    for length, shown in ((78, repr("x" * 78)), (79, f"'{'x' * 59}...(81 characters)")):  # repr: 80, 81 characters
        with pytest.raises(TypeError) as info:
            arguments.flag("f", "x" * length)
        assert str(info.value).endswith(f"got {shown} (str)"), str(info.value)


def test_a_numpy_bool_is_read_as_the_bool_it_holds() -> None:
    assert arguments.flag("f", np.bool_(True)) is True
    assert arguments.flag("f", np.bool_(False)) is False
