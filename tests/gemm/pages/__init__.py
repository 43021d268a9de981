"""The cell checks of the GEMM pages, one module per page (``test_<page>.py`` checks
``gpukb.gemm.pages.<page>``); this package holds what several of them read: the committed records, read with
``json`` rather than through gpukb's models, and how a printed cell compares with a value.
"""

from __future__ import annotations

import json
import math
import tomllib
from functools import cache
from typing import Any

from tests.helpers import ROOT


def _raw(library: str) -> dict[str, Any]:
    return tomllib.loads((ROOT / "src" / "gpukb" / "data" / "gemm" / f"{library}.toml").read_text(encoding="utf-8"))


DASH = "–"


@cache
def _record(record_id: str) -> dict[str, Any]:
    """A committed results file, read with json (not through gpukb's models)."""
    return json.loads((ROOT / "src" / "gpukb" / "data" / "results" / f"{record_id}.json").read_text(encoding="utf-8"))


def _ground() -> dict[str, Any]:
    return _record("gemm/ground-up-h100")


def _num(cell: str) -> float:
    return float(cell.replace(",", "").rstrip("×%"))


def _rounds(cell: str, value: float, digits: int) -> bool:
    """``cell`` is ``value`` printed with ``digits`` decimals."""
    return abs(_num(cell) - value) <= 0.5 * 10**-digits * (1 + 1e-9) + 1e-12


def _sig(cell: str, value: float, digits: int) -> bool:
    """``cell`` is ``value`` printed with ``digits`` significant digits."""
    if value == 0:
        return _num(cell) == 0
    return abs(_num(cell) - value) <= 0.5 * 10 ** (math.floor(math.log10(abs(value))) - digits + 1) * (1 + 1e-6)
