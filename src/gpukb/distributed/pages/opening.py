"""The distributed chapter's opening page (docs/distributed/index.md): the sources checked and the worked problems."""

from __future__ import annotations

import re

from gpukb.distributed.options import facts
from gpukb.distributed.pages import _cell
from gpukb.distributed.problems import problems as chapter_problems
from gpukb.problems import markdown as problems_markdown
from gpukb.tables import markdown_table


def _short_commits(version: str) -> str:
    """A version with its commit hashes cut to 12 hex digits (the link holds the whole pin): a 40-digit hash
    cannot wrap and would widen the table past the page."""
    return re.sub(r"\b([0-9a-f]{12})[0-9a-f]{28}\b", r"\1", _cell(version))


def sources_markdown() -> str:
    """Every primary source of the chapter, with its pinned version and the date it was checked."""
    rows = [
        [
            _cell(s.title),
            f"[{(s.path or s.version).replace('/', '/<wbr>')}]({s.url})",
            _short_commits(s.version),
            s.checked,
        ]
        for s in facts().source
    ]
    return markdown_table(["source", "file or document", "version", "checked"], rows)


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.distributed.problems`)."""
    return problems_markdown(chapter_problems())
