"""The page “CUDA: execution model, kernels and memory” (docs/cuda/index.md): its tables, figures and text."""

from __future__ import annotations

from gpukb import records
from gpukb.cuda import tables
from gpukb.cuda.problems import problems as chapter_problems
from gpukb.problems import markdown as problems_markdown


def device_facts() -> str:
    """The GPU's architecture facts as the CUDA runtime reported them, and where."""
    record = tables.device_record()
    return records.measured_table(*tables.device_table(), record.run) + "\n"


def worked_problems() -> str:
    """The chapter's worked problems, each answer computed now and folded away (:mod:`gpukb.cuda.problems`)."""
    return problems_markdown(chapter_problems())
