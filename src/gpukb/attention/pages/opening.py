"""The page “Attention” (docs/attention/index.md): its tables, figures and text."""

from __future__ import annotations

from gpukb.attention.problems import problems as chapter_problems
from gpukb.problems import markdown as problems_markdown


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.attention.problems`)."""
    return problems_markdown(chapter_problems())
