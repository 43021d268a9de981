"""The attention chapter's page layer: one module per page (``pages.<page>`` renders ``docs/attention/<page>.md``), and
here what several of its pages share: the only code of the chapter that returns Markdown or SVG.

Pages call their module's functions with no file paths (``from gpukb.attention.pages.cost import scaling``). The library
(:mod:`gpukb.attention.costs`, :mod:`gpukb.attention.flash`) returns values or ``(headers, rows)``; the benchmark
records are loaded by id (:data:`gpukb.attention.results.FLASH_FORWARD_ID`,
:data:`gpukb.attention.results.FLASH_TRAINING_ID`).
"""

from __future__ import annotations

from gpukb.attention.results import FLASH_FORWARD_ID, FlashForward
from gpukb.records import load


def _record() -> FlashForward:
    return load(FLASH_FORWARD_ID, FlashForward)
