"""The About chapter's snippets (``snippets/site/``): each is run as a reader runs it, and what it prints is
asserted against this machine. ``tests/test_snippets.py`` collects ``CHECKS`` from every topic.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Callable

import numpy as np
import pytest

from gpukb.site.snippets import run_snippet
from tests.helpers import ROOT


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


CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/site/environment.py": check_environment,
}


@pytest.mark.parametrize("snippet", sorted(CHECKS))
def test_snippet_output(snippet: str) -> None:
    CHECKS[snippet](run_snippet(ROOT / snippet))
