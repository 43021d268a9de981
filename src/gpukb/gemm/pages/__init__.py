"""The GEMM chapter's page layer: one module per page, the only code that turns the chapter's data, models and
records into Markdown.

A page's render blocks call its own module with no file paths (``from gpukb.gemm.pages.accuracy import
fp8_acceptance``); each function loads what it renders (a type table by library, a results record by id) and
renders it. Library modules (:mod:`gpukb.gemm.types`, :mod:`gpukb.gemm.emulator`, :mod:`gpukb.gemm.fp8_hardware`,
...) return values or ``(headers, rows)``; labels a reader sees live in the page modules. This package holds
what two pages share.
"""

from __future__ import annotations

from gpukb.gemm.results import GROUND_UP_H100, GroundUp
from gpukb.records import load, measured_on


def _ground_up(record_id: str) -> GroundUp:
    return load(record_id, expect=GroundUp)


def ground_up_measured_on(record_id: str = GROUND_UP_H100) -> str:
    """Where the ground-up and timing pages' results come from (:func:`gpukb.records.measured_on`)."""
    return measured_on(_ground_up(record_id).run)
