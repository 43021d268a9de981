"""Run a snippet the way a reader would: as a script, in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


class SnippetError(RuntimeError):
    """A snippet exited with an error; the message carries its stderr."""


def run_snippet(path: Path, timeout: float = 300) -> str:
    """Run ``python path`` and return what it printed.

    Args:
        path: The snippet file.
        timeout: Seconds before the run is abandoned.

    Raises:
        FileNotFoundError: If the file does not exist.
        SnippetError: If the snippet exits with a non-zero status.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no snippet at {path}")
    proc = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=timeout, cwd=path.parent
    )
    if proc.returncode != 0:
        raise SnippetError(f"{path} exited with status {proc.returncode}:\n{proc.stderr}")
    return proc.stdout
