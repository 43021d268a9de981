"""The fuzz budget: how hard ``tests/fuzz`` tries to break the CLI and the public API, in one place.

The About page "How we try to break this site" renders these numbers; the fuzz tests read them from here, so the
page and the suite cannot disagree. The whole fuzz suite is sized to finish in about ``SUITE_SECONDS`` on a 2-core
CI machine.
"""

# No ``from __future__ import annotations`` here: the site loads this file by path (``gpukb.site.breaking``),
# without registering it in sys.modules, and dataclasses with string annotations need that entry.
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """One fuzzed surface.

    Attributes:
        name: What is fuzzed, as the page names it.
        test: The test module under ``tests/fuzz``.
        examples: Hypothesis examples per test (``max_examples``).
        deadline_ms: Longest time one example may take, in milliseconds (Hypothesis ``deadline``).
        inputs: What the strategies generate.
    """

    name: str
    test: str
    examples: int
    deadline_ms: int
    inputs: str


#: Every fuzzed surface, in the order the page lists them.
TARGETS: tuple[Target, ...] = (
    Target(
        "numbers into formats (encode, explain, value tables)",
        "test_numbers.py",
        150,
        500,
        "decimal strings with exponents up to ±10^12, NaN and infinity spellings, random text, floats of every "
        "width, huge integers, fractions; every format; every rounding mode and junk ones; saturate of any type",
    ),
    Target(
        "bit patterns (decode, decode_array, pattern tables)",
        "test_patterns.py",
        200,
        500,
        "integers around every format's width (negative, 0, 2^bits - 1, 2^bits, far beyond), hex text, floats, "
        "bools, arrays of every integer and float dtype",
    ),
    Target(
        "names (formats, MX element formats, GEMM types, libraries, datasets)",
        "test_names.py",
        200,
        500,
        "random text, near misses of real names (case, one letter changed, added or dropped, padding), library "
        "names, empty strings, non-strings",
    ),
    Target(
        "wrong types for every argument of the public API",
        "test_api_types.py",
        25,
        1000,
        "None, bools, strings, bytes, NaN and infinity, negative and huge integers, floats, complex, lists, "
        "dicts and arbitrary objects in place of each argument of each public function",
    ),
    Target(
        "the command line, in-process (gpukb format, gemm-types, bench --show, datasets, info)",
        "test_cli.py",
        60,
        2000,
        "random values and names for every option, options combined every way (including those that make no "
        "sense together), unknown options, missing and unreadable files",
    ),
)

#: The console script, run as a real process for the inputs that used to hang (seconds before it is killed).
SUBPROCESS_TIMEOUT_S = 20

#: What the whole fuzz suite should take on a 2-core CI machine, in seconds.
SUITE_SECONDS = 30


def target(test: str) -> Target:
    """The budget of one test module, by file name (``"test_numbers.py"``)."""
    for t in TARGETS:
        if t.test == test:
            return t
    raise ValueError(f"no fuzz target {test!r}; targets: {[t.test for t in TARGETS]}")


def budget_table() -> tuple[list[str], list[list[str]]]:
    """The budget as ``(headers, rows)`` for a page table."""
    headers = ["what is fuzzed", "examples per test", "deadline per example", "inputs"]
    rows = [[t.name, f"{t.examples:,}", f"{t.deadline_ms:,} ms", t.inputs] for t in TARGETS]
    return headers, rows
