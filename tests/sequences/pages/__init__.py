"""The cell checks of the sequences pages, one module per page (``test_<page>.py`` checks
``gpukb.sequences.pages.<page>``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from typing import Any

from tests.helpers import ROOT


def check_sequences_errata(markdown: str, kwargs: dict[str, Any]) -> None:
    """One folded note per erratum named, in the data file's order, each with its claim, its deciding test and the
    link to its entry; the errata file read raw."""
    raw = tomllib.loads((ROOT / "src/gpukb/data/errata.toml").read_text(encoding="utf-8"))["erratum"]
    named = [e for e in raw if e["id"] in kwargs["args"]]
    assert len(named) == len(kwargs["args"])
    assert all(e["topic"] == "sequences" for e in named)
    blocks = markdown.split("\n\n")
    assert len(blocks) == 2 * len(named)
    for e, note, decided in zip(named, blocks[::2], blocks[1::2], strict=True):
        head, truth = note.split("\n", 1)
        assert head == f'??? note "A claim you may meet: {e["claim"]}"'
        assert truth == f"    {e['truth']}"
        assert decided.strip("\n") == f"    Decided by `{e['test']}`; [errata entry](../../about/errata/#{e['id']})."


#: The checks of what several pages share (``gpukb.sequences.pages``).
CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {"sequences_errata": check_sequences_errata}
