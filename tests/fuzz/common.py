"""What every fuzz test shares: the settings from ``budget``, the rule an outcome must obey, and strategies."""

from __future__ import annotations

import math
import os
import signal
from collections.abc import Callable
from contextlib import contextmanager
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.fuzz.budget import target

#: The exceptions bad input may raise; anything else (AttributeError, ZeroDivisionError, KeyError, ...) fails.
ALLOWED = (ValueError, TypeError)


def fuzz_settings(test_file: str) -> settings:
    """Hypothesis settings from the budget of one test module.

    Examples are derandomized (the same on every run, so CI is reproducible); set ``GPUKB_FUZZ_EXPLORE=1`` to
    draw new ones, and ``GPUKB_FUZZ_EXAMPLES`` to change how many.
    """
    t = target(test_file)
    return settings(
        max_examples=int(os.environ.get("GPUKB_FUZZ_EXAMPLES", t.examples)),
        # under mutmut, on a machine shared with other work, a wall-clock deadline fails clean runs at random (a
        # mutant that hangs is still stopped, by mutmut's own timeout)
        deadline=None if "MUTANT_UNDER_TEST" in os.environ else t.deadline_ms,
        derandomize=not os.environ.get("GPUKB_FUZZ_EXPLORE"),
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


class Hang(BaseException):
    """An example ran past its time bound (a BaseException, so that no ``except Exception`` swallows it)."""


@contextmanager
def time_bound(seconds: float):
    """Interrupt the block with ``Hang`` after ``seconds`` (Python-level loops; a single C call that never returns
    is caught by the subprocess tests instead)."""

    def expire(signum, frame):
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def attempt(
    function: Callable[..., Any], *args: Any, bound_s: float = 5.0, **kwargs: Any
) -> tuple[Any, Exception | None]:
    """Call ``function``: it must return, or raise ``ValueError``/``TypeError`` with a message, within ``bound_s``.

    Returns:
        ``(result, None)`` or ``(None, the error)``.
    """
    with time_bound(bound_s):
        try:
            return function(*args, **kwargs), None
        except ALLOWED as caught:
            err = caught
    message = str(err)
    assert message.strip(), f"{type(err).__name__} without a message from {function.__name__}"
    assert "Traceback" not in message
    return None, err


# --- strategies ----------------------------------------------------------------------------------------------

SPECIAL_SPELLINGS = [
    "nan", "NaN", "-nan", "+nan", "snan", "sNaN", "-sNaN", "nan123", "NAN", "inf", "-inf", "+inf", "Inf",
    "infinity", "-Infinity", "INFINITY", "∞", "-∞", "1e", "e5", "", " ", "-", "+", ".", "0x10", "1_000", "١٢٣",
    "1,5", "1.5.2", "--1", "0e0", "-0", "-0.0", "0E-999999999999", "1e-0", " 42.5 ", "\t7\n",
]  # fmt: skip

#: Decimal text: digits with exponents from ordinary to absurd (the class of input that used to hang).
decimal_text = st.builds(
    lambda sign, digits, point, exponent: (
        f"{sign}{digits[:point]}{'.' if point < len(digits) else ''}{digits[point:]}e{exponent}"
    ),
    st.sampled_from(["", "-", "+"]),
    st.text("0123456789", min_size=1, max_size=30),
    st.integers(0, 30),
    st.one_of(st.integers(-400, 400), st.integers(-(10**12), 10**12)),
)

number_text = st.one_of(
    decimal_text,
    st.sampled_from(SPECIAL_SPELLINGS),
    st.text(max_size=40),
    st.just("1" * 2500),  # longer than any number is read
    st.just("0." + "0" * 1500 + "1"),
)

real_numbers = st.one_of(
    st.floats(width=16).map(np.float16),
    st.floats(width=32).map(np.float32),
    st.floats(),
    st.integers(-(2**2000), 2**2000),
    st.fractions(max_denominator=2**70),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.integers(-(2**62), 2**62).map(np.int64),
)

#: Anything in place of an argument: wrong types, and right types with values no function accepts.
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([np.bool_(True), -1, 0, 2**64, -(2**70), 10**30, 1.5, -0.0, math.nan, math.inf, -math.inf]),
    st.text(max_size=20),
    st.binary(max_size=8),
    st.complex_numbers(max_magnitude=10),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.just(object()),
    st.just(Fraction(1, 3)),
    st.just(Decimal("NaN")),
    st.just(np.zeros((2, 2))),
)


def near_misses(names: list[str]) -> st.SearchStrategy[str]:
    """Real names changed a little: case, a letter dropped, doubled or replaced, padding, a prefix."""

    def mutate(name: str, how: int, where: int, letter: str) -> str:
        i = where % max(len(name), 1)
        return [
            name.upper(),
            name[:i] + name[i + 1 :],
            name[:i] + name[i] * 2 + name[i + 1 :] if name else letter,
            name[:i] + letter + name[i + 1 :],
            f"  {name}\t",
            f"torch.{name}",
            name.replace("e", "E").replace("m", "M"),
            name + letter,
        ][how]

    return st.builds(mutate, st.sampled_from(names), st.integers(0, 7), st.integers(0, 40), st.characters())
