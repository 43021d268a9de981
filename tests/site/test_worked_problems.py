"""Every chapter ends with 3 to 6 worked problems, rendered by the one renderer (:mod:`gpukb.problems`)."""

from __future__ import annotations

import pytest

from gpukb import chapters
from gpukb.problems import Problem, markdown
from tests.helpers import ROOT
from tests.worked_problems import answer, problems_call, rendered_problems

CHAPTERS = [c.name for c in chapters.chapters() if c.package == f"gpukb.{c.name}"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_ends_with_worked_problems(chapter: str) -> None:
    call = problems_call(chapter)
    page = (ROOT / call.page).read_text(encoding="utf-8")
    tail = page.rsplit("\n## ", 1)[1]
    assert tail.startswith("Worked problems\n"), f"{call.page}: the worked problems are not its last section"
    assert "worked_problems()" in tail
    problems = rendered_problems(chapter)
    assert 3 <= len(problems) <= 6
    for text in problems.values():
        assert '??? note "Answer"' in text
        assert answer(text)
        assert "Working:" in text


def _problem(**changes: object) -> Problem:
    fields = {"id": "a-b", "title": "T", "question": "Q?", "answer": "A.", "working": ("step",)}
    return Problem(**{**fields, **changes})


@pytest.mark.parametrize(
    "changes",
    [
        {"id": "Not A Slug"},
        {"id": 3},
        {"title": ""},
        {"question": "two\nlines"},
        {"working": ()},
        {"working": ("",)},
        {"sources": (("label", "http://insecure"),)},
    ],
)
def test_a_malformed_problem_is_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"problem|sources"):
        _problem(**changes)


def test_the_renderer_refuses_what_it_cannot_render() -> None:
    with pytest.raises(ValueError, match="no problems"):
        markdown([])
    with pytest.raises(ValueError, match="two problems have the id"):
        markdown([_problem(), _problem()])
    with pytest.raises(TypeError, match="must be a Problem"):
        markdown([_problem(), "a question"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="list of Problem"):
        markdown("a question")  # type: ignore[arg-type]


def test_the_answer_is_folded_and_the_sources_linked() -> None:
    text = markdown([_problem(sources=(("Spec", "https://example.org/spec"),))])
    assert text.splitlines()[0] == "### 1. T {#problem-a-b}"
    assert '??? note "Answer"\n    A.' in text
    assert "    Sources: [Spec](https://example.org/spec)." in text


def test_an_answer_that_starts_with_a_number_keeps_it_when_rendered() -> None:
    # "32. At 33 ..." is an ordered-list item to Markdown: the page showed "1. At 33 ..." and lost the answer.
    import markdown as md

    text = markdown([_problem(answer="32. At 33 it drops.")])
    assert '??? note "Answer"\n    32\\. At 33 it drops.' in text
    html = md.markdown(text, extensions=["admonition", "pymdownx.details", "attr_list"])
    assert "<ol" not in html
    assert "32. At 33 it drops." in html
    unescaped = md.markdown(text.replace("32\\.", "32."), extensions=["admonition", "pymdownx.details", "attr_list"])
    assert "<ol" in unescaped  # the check above can fail: without the escape the number is lost
