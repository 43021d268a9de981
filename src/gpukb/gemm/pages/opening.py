"""The GEMM chapter's opening page (docs/gemm/index.md): its worked problems."""

from __future__ import annotations

from gpukb.gemm.problems import problems as chapter_problems
from gpukb.problems import markdown as problems_markdown


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.gemm.problems`)."""
    return problems_markdown(chapter_problems())
