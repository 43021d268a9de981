"""Worked problems: a question a reader could be asked at work, its answer computed by the library, and the working.

Each chapter's ``problems`` module returns a list of :class:`Problem`, every number in it produced by library calls
when the page is built; :func:`markdown` is the one renderer, which each chapter's page layer calls for the
"Worked problems" section that ends the chapter. The answer is folded away (a collapsed ``??? note "Answer"``), so a
reader can try first. Tests recompute each answer independently and read it back from the rendered page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpukb.arguments import given, text

_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# A line that starts "32. " or "32) " is an ordered-list item in Markdown, rendered as "1." without its number.
_LIST_MARKER = re.compile(r"^(\d+)([.)])(\s)")


@dataclass(frozen=True)
class Problem:
    """One worked problem.

    Attributes:
        id: A slug, unique within its chapter; the problem's anchor on the page (``#problem-<id>``).
        title: A short title (the heading).
        question: The question as it would be asked.
        answer: The answer in one or two sentences, with the computed numbers.
        working: The steps, one Markdown line each, with the numbers each step produced.
        sources: ``(label, URL)`` of each datasheet, paper or specification a number was taken from.
    """

    id: str
    title: str
    question: str
    answer: str
    working: tuple[str, ...]
    sources: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _SLUG.match(self.id):
            raise ValueError(f"a problem id is a lowercase slug such as 'e5m2fnuz-max'; got {given(self.id)}")
        for name in ("title", "question", "answer"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip() or "\n" in value:
                raise ValueError(f"a problem's {name} is one non-empty line of text; got {given(value)}")
        if isinstance(self.working, str | bytes) or not isinstance(self.working, tuple | list):
            raise TypeError(f"a problem's working is a tuple of lines; got {given(self.working)}")
        working = tuple(self.working)
        if not working or not all(isinstance(w, str) and w.strip() and "\n" not in w for w in working):
            raise ValueError(f"a problem's working is one or more non-empty lines; got {given(self.working)}")
        object.__setattr__(self, "working", working)
        if isinstance(self.sources, str | bytes) or not isinstance(self.sources, tuple | list):
            raise TypeError(f"sources are (label, https URL) pairs; got {given(self.sources)}")
        sources = tuple(tuple(s) if isinstance(s, tuple | list) else (s,) for s in self.sources)
        if not all(
            len(s) == 2
            and all(isinstance(part, str) for part in s)
            and s[0].strip()
            and len(s[1]) > len("https://")
            and s[1].startswith("https://")
            and not any(c.isspace() for c in s[1])
            for s in sources
        ):
            raise ValueError(f"sources are (label, https URL) pairs; got {given(self.sources)}")
        object.__setattr__(self, "sources", sources)


def _literal(line: str) -> str:
    """The line with a leading number and ``.`` or ``)`` escaped, so that Markdown keeps the number as text."""
    return _LIST_MARKER.sub(r"\1\\\2\3", line)


def markdown(problems: Sequence[Problem], intro: str = "") -> str:
    """The problems as Markdown: a heading per problem, the question, and the answer and working folded away.

    Args:
        problems: The chapter's problems, in order (at least one; ids unique).
        intro: A sentence shown before the first problem.

    Raises:
        TypeError: If an item is not a :class:`Problem`.
        ValueError: For no problems or a repeated id.
    """
    intro = text("intro", intro)
    if isinstance(problems, str | bytes) or not isinstance(problems, Sequence):
        raise TypeError(f"problems must be a list of Problem; got {given(problems)}")
    if not problems:
        raise ValueError("no problems to render")
    seen: set[str] = set()
    lines = [intro, ""] if intro else []
    for number, problem in enumerate(problems, start=1):
        if not isinstance(problem, Problem):
            raise TypeError(f"problems[{number - 1}] must be a Problem; got {given(problem)}")
        if problem.id in seen:
            raise ValueError(f"two problems have the id {problem.id!r}")
        seen.add(problem.id)
        lines += [f"### {number}. {problem.title} {{#problem-{problem.id}}}", "", problem.question, ""]
        lines += ['??? note "Answer"', f"    {_literal(problem.answer)}", "", "    Working:", ""]
        lines += [f"    - {step}" for step in problem.working]
        if problem.sources:
            cited = "; ".join(f"[{label}]({url})" for label, url in problem.sources)
            lines += ["", f"    Sources: {cited}."]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
