"""Checks at the boundary of the public API: one message style for a bad argument.

Each check returns the value in its canonical type or raises ``TypeError`` (wrong type) or ``ValueError`` (right
type, value out of range), naming the argument, what was given and what is allowed. The command line reports the
same messages as ``gpukb <command>: error: ...`` with exit status 2.
"""

from __future__ import annotations

import math
import numbers
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

#: The most elements a function here builds in one array (2^28: 2 GiB of float64); a larger request is refused
#: before anything is allocated, instead of failing in numpy or exhausting memory.
MAX_ARRAY_ELEMENTS = 1 << 28

#: The longest text a number, a bit pattern or a name may be (a decimal of every digit of the smallest FP64
#: subnormal has about 1,100 characters); longer text is refused before it is parsed.
MAX_TEXT_LENGTH = 2000


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}...({len(text)} characters)"


def given(value: object) -> str:
    """How a message shows a given value: its repr (shortened when long) and its type."""
    return f"{_show(value)} ({type(value).__name__})"


def integer(name: str, value: object, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int in ``[minimum, maximum]`` (either bound may be absent); a bool is not an integer.

    Raises:
        TypeError: If it is not an integer.
        ValueError: If it is out of range.
    """
    low = "" if minimum is None else f" ≥ {minimum}"
    high = "" if maximum is None else f" ≤ {maximum}"
    allowed = f"an int{low}{',' if low and high else ''}{high}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral | np.integer):
        raise TypeError(f"{name} must be {allowed}; got {given(value)}")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be {allowed}; got {value}")
    return value


def positive_int(name: str, value: object) -> int:
    """``value`` as an int ≥ 1.

    Raises:
        TypeError: If it is not an integer (a bool is not an integer here).
        ValueError: If it is below 1.
    """
    return integer(name, value, minimum=1)


def non_negative_int(name: str, value: object) -> int:
    """``value`` as an int ≥ 0 (a bool is not an integer here).

    Raises:
        TypeError: If it is not an integer.
        ValueError: If it is negative.
    """
    return integer(name, value, minimum=0)


def array_size(what: str, shape: Sequence[int], limit: int = MAX_ARRAY_ELEMENTS) -> int:
    """The number of elements of an array of ``shape`` (checked ints), refused above ``limit``.

    Raises:
        ValueError: If the array would hold more than ``limit`` elements (naming ``what``, the shape and the count).
    """
    count = math.prod(shape)
    if count > limit:
        raise ValueError(f"{what} would hold {count:,} elements {tuple(shape)}; at most {limit:,} are built here")
    return count


#: The most elements a torch tensor (or module) may have: torch counts elements and sizes in an int64. Modules are
#: bounded by it, not by :data:`MAX_ARRAY_ELEMENTS`, so that a GPU run may build what its memory holds.
MAX_TORCH_ELEMENTS = 2**63 - 1
#: The largest seed ``torch.manual_seed`` takes: it is a 64-bit unsigned integer.
MAX_TORCH_SEED = 2**64 - 1


def torch_seed(name: str, value: object) -> int:
    """``value`` as a seed for ``torch.manual_seed``: an int in ``[0, 2^64 - 1]`` (torch itself read ``2.5`` as 2,
    ``True`` as 1 and ``"3"`` as 3, and raised ``OverflowError`` for an infinite float).

    Raises:
        TypeError: If it is not an integer (a bool is not).
        ValueError: If it is negative or above :data:`MAX_TORCH_SEED`.
    """
    return integer(name, value, minimum=0, maximum=MAX_TORCH_SEED)


def flag(name: str, value: object) -> bool:
    """``value`` as a bool; only ``True`` and ``False`` are accepted (a truthy string such as ``"no"`` is not).

    Raises:
        TypeError: For anything but a bool (``numpy.bool_`` included).
    """
    if isinstance(value, np.bool_):
        return bool(value)
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False; got {given(value)}")
    return value


def real(
    name: str,
    value: object,
    *,
    finite: bool = True,
    minimum: float | None = None,
    maximum: float | None = None,
    positive: bool = False,
) -> float:
    """``value`` as a float: a real number (not a bool, not a string), finite unless ``finite=False``.

    Args:
        name: The argument's name, for the message.
        value: What was given.
        finite: Refuse NaN and infinity.
        minimum: Refuse values below it.
        maximum: Refuse values above it.
        positive: Refuse values ≤ 0.

    Raises:
        TypeError: If it is not a real number.
        ValueError: If it is NaN or infinite (with ``finite``), or out of range.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real | np.integer | np.floating):
        raise TypeError(f"{name} must be a real number; got {given(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int or a fraction beyond float's range
        raise ValueError(f"{name} is beyond the range of a float (about ±1.8e308); got {_show(value)}") from None
    if finite and not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number; got {_show(value)}")
    if positive and not number > 0:
        raise ValueError(f"{name} must be positive; got {_show(value)}")
    if minimum is not None and not number >= minimum:
        raise ValueError(f"{name} must be ≥ {minimum}; got {_show(value)}")
    if maximum is not None and not number <= maximum:
        raise ValueError(f"{name} must be ≤ {maximum}; got {_show(value)}")
    return number


def text(name: str, value: object, max_length: int = MAX_TEXT_LENGTH) -> str:
    """``value`` as a string of at most ``max_length`` characters.

    Raises:
        TypeError: If it is not a string.
        ValueError: If it is longer than ``max_length``.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string; got {given(value)}")
    if len(value) > max_length:
        raise ValueError(f"{name} is {len(value):,} characters long; at most {max_length:,} are read")
    return value


def choice(name: str, value: object, allowed: Sequence[str]) -> str:
    """``value`` if it is one of the strings ``allowed`` (exactly).

    Raises:
        TypeError: If it is not a string.
        ValueError: If it is not one of ``allowed``.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {list(allowed)}; got {given(value)}")
    if value not in allowed:
        raise ValueError(f"unknown {name} {_show(value)}; choose one of {list(allowed)}")
    return value


def names(name: str, value: object) -> list[str] | None:
    """``value`` as a list of strings (``None`` stays ``None``); a lone string is refused, not split into letters.

    Raises:
        TypeError: If it is a string, not iterable, or holds something other than strings.
    """
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a list of names (e.g. ['e4m3', 'bf16']); got {given(value)}")
    items = list(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{name} must hold names (strings); got {given(item)}")
    return items


def random_generator(name: str, value: object) -> np.random.Generator:
    """A ``numpy.random.Generator`` from ``None`` (fresh entropy), an int seed ≥ 0 or a ``Generator`` (as it is).

    Raises:
        TypeError: For anything else (a ``RandomState``, a float, a bool, ...).
        ValueError: For a negative seed.
    """
    if value is None:
        return np.random.default_rng()
    if isinstance(value, np.random.Generator):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral | np.integer):
        raise TypeError(f"{name} must be None, an int seed or a numpy.random.Generator; got {given(value)}")
    return np.random.default_rng(integer(name, value, minimum=0))


def path(name: str, value: object) -> Path:
    """``value`` (a ``str`` or ``os.PathLike``) as a ``Path``, its text at most :data:`MAX_TEXT_LENGTH` characters.

    Raises:
        TypeError: For anything but a string or a path.
        ValueError: For an empty path, one with a NUL character, or one longer than the bound.
    """
    if not isinstance(value, str | os.PathLike) or isinstance(value, bytes):
        raise TypeError(f"{name} must be a path (a string or a pathlib.Path); got {given(value)}")
    raw = os.fspath(value)
    if not isinstance(raw, str):
        raise TypeError(f"{name} must be a path (a string or a pathlib.Path); got {given(value)}")
    text(name, raw)
    if not raw or "\0" in raw:
        raise ValueError(f"{name} must be a non-empty path without NUL characters; got {_show(raw)}")
    return Path(raw)


def regular_file(name: str, value: object) -> Path:
    """``value`` as the ``Path`` of an existing regular file, checked before anything opens it: a folder, a named
    pipe (which would block the reader forever), a socket or a device is refused.

    Raises:
        TypeError: If it is not a path.
        FileNotFoundError: If nothing is there (naming the path).
        ValueError: If something other than a regular file is there (naming the path and what it is).
    """
    found = path(name, value)
    try:
        mode = found.stat().st_mode  # follows links: a link to a regular file is read as that file
    except FileNotFoundError:
        raise FileNotFoundError(f"{found}: no such file") from None
    except OSError as err:  # a name too long for the file system, a loop of links, no permission
        raise ValueError(f"{found}: cannot be read ({err.strerror or err})") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"{found}: not a regular file (it is {_file_kind(mode)}); give a file")
    return found


def _file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):  # fmt: skip
        if test(mode):
            return kind
    return "not a regular file"
