"""The cell checks of the cuda pages, one module per page (``test_<page>.py`` checks ``gpukb.cuda.pages.<page>``); this
package holds what several of them read, and the checks of what the pages share (``gpukb.cuda.pages``).
"""

from __future__ import annotations

import json
from typing import Any

from tests.helpers import ROOT

RESULTS = ROOT / "src/gpukb/data/results/cuda"


def _record(name: str) -> dict[str, Any]:
    return json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))


def _int(cell: str) -> int:
    return int(cell.replace(",", ""))
