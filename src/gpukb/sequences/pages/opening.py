"""The page “Sequence models” (docs/sequences/index.md): its tables, figures and text."""

from __future__ import annotations

from importlib import metadata

from gpukb.problems import markdown as problems_markdown
from gpukb.sequences.problems import problems as chapter_problems


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def versions() -> str:
    """The library versions this build of the chapter ran with (the tests run with the same environment)."""
    return (
        "Built with "
        + ", ".join(f"{p} {_version(p)}" for p in ("numpy", "torch", "sacrebleu"))
        + "; everything on these pages runs on the CPU."
    )


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.sequences.problems`)."""
    return problems_markdown(chapter_problems())
