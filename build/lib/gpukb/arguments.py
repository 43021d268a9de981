"""Checks at the boundary of the public API: one message style for a bad argument.

Each check returns the value in its canonical type or raises ``TypeError`` (wrong type) or ``ValueError`` (right
type, value out of range), naming the argument, what was given and what is allowed.
"""

from __future__ import annotations

import numbers


def positive_int(name: str, value: object) -> int:
    """``value`` as an int ≥ 1.

    Raises:
        TypeError: If it is not an integer (a bool is not an integer here).
        ValueError: If it is below 1.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int ≥ 1; got {value!r} ({type(value).__name__})")
    if value < 1:
        raise ValueError(f"{name} must be an int ≥ 1; got {value}")
    return int(value)


def flag(name: str, value: object) -> bool:
    """``value`` as a bool; only ``True`` and ``False`` are accepted (a truthy string such as ``"no"`` is not).

    Raises:
        TypeError: For anything but a bool.
    """
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False; got {value!r} ({type(value).__name__})")
    return value
