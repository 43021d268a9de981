"""The About chapter's snippets (``snippets/site/``): each is run as a reader runs it, and what it prints is
asserted against this machine. ``tests/test_snippets.py`` collects ``CHECKS`` from every topic.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Callable

import numpy as np


def check_environment(out: str) -> None:
    from gpukb import environment

    assert out.startswith("| item | value |\n")
    table = dict(re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|$", out, flags=re.MULTILINE))
    assert list(table) == ["item", *(item for item, _ in environment.rows(environment.collect()))]
    assert table["python"] == platform.python_version()
    assert table["numpy"] == np.__version__
    import torch

    assert table["torch"] == torch.__version__
    assert table["CUDA GPU"] == (torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")


def check_validate_record(out: str) -> None:
    from gpukb import records

    record = records.load("formats/h100-gpu-checks")
    first, second = out.splitlines()
    assert first == f"{record.kind} schema {record.schema_version} | {records.measured_on(record.run, command=False)}"
    inputs = record.casts[0].inputs
    # Both edits are named, with the field path and the value found, and the file name starts the message.
    assert second == (
        "edited.json: tf32.seeed: Extra inputs are not permitted (got 0); "
        f"casts[0].inputs: Input should be a valid integer (got '{inputs}')"
    )


CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/site/environment.py": check_environment,
    "snippets/site/validate_record.py": check_validate_record,
}
