"""The cell checks of the sequences opening page (``gpukb.sequences.pages.opening``): the versions line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def check_versions(markdown: str, kwargs: dict[str, Any]) -> None:
    from importlib import metadata

    shown = ", ".join(f"{p} {metadata.version(p)}" for p in ("numpy", "torch", "sacrebleu"))
    assert markdown == f"Built with {shown}; everything on these pages runs on the CPU."


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {"versions": check_versions}
