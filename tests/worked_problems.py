"""Reading a chapter's rendered worked problems back, for the tests that recompute each answer independently.

A module of its own (not a test module), like ``tests/page_calls.py``: every chapter's
``tests/<chapter>/test_worked_problems.py`` imports it. The problems are read from what the page's render block
prints (rendered once per session by :func:`tests.page_calls.rendered`), so a check fails when the page shows a
wrong number, not only when the library computes one.
"""

from __future__ import annotations

import math
import re

from tests.page_calls import page_calls, rendered

_HEADING = re.compile(r"^### \d+\. (?P<title>.+?) \{#problem-(?P<id>[a-z0-9-]+)\}$", re.M)
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?")


def problems_call(chapter: str):
    """The one render block that prints the chapter's worked problems (from its page layer, one module or a package
    of per-page modules).

    Raises:
        AssertionError: If no page of the chapter renders its worked problems, or more than one does.
    """
    calls = [
        c
        for c in page_calls()
        if c.function == "worked_problems" and (c.module + ".").startswith(f"gpukb.{chapter}.pages.")
    ]
    assert len(calls) == 1, f"the {chapter} chapter renders its worked problems {len(calls)} times"
    return calls[0]


def rendered_problems(chapter: str) -> dict[str, str]:
    """Problem id → its rendered text (question, answer and working) on the chapter's page.

    Raises:
        AssertionError: If no page of the chapter renders its worked problems, or more than one does.
    """
    text = rendered(problems_call(chapter))
    heads = list(_HEADING.finditer(text))
    assert heads, f"no problem headings in the {chapter} chapter's worked problems"
    ends = [h.start() for h in heads[1:]] + [len(text)]
    return {h["id"]: text[h.end() : end] for h, end in zip(heads, ends, strict=True)}


def answer(text: str) -> str:
    """The answer line of one rendered problem (the first line of its folded admonition)."""
    body = text.split('??? note "Answer"', 1)[1]
    return next(line.strip() for line in body.splitlines() if line.strip())


def numbers(text: str) -> list[float]:
    """Every number written in a text (``1,234.5``, ``-3``, ``8.19e-05``), in order."""
    return [float(m.group().replace(",", "")) for m in _NUMBER.finditer(text)]


def shows(text: str, value: float, rel: float = 5e-3, abs_tol: float = 0.0) -> bool:
    """Whether the text writes ``value``, to within the rounding a page uses (``rel``, relative)."""
    return any(math.isclose(x, value, rel_tol=rel, abs_tol=abs_tol) for x in numbers(text))


def assert_shows(text: str, *values: float, rel: float = 5e-3) -> None:
    """Every value is written in the text, each to within ``rel``; the message names those that are not."""
    missing = [v for v in values if not shows(text, v, rel)]
    assert not missing, f"{missing} not found among {numbers(text)} in: {text[:300]}"
