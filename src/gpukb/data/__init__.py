"""The project's data files (facts as TOML) and recorded results (``results/``), shipped inside the package."""

from __future__ import annotations

import re
from importlib import resources

from gpukb.arguments import given, text

#: One step of a data file's path: a name of letters, digits, ``_``, ``-`` and ``.`` that is not ``.`` or ``..``.
_PART = re.compile(r"(?!\.\.?$)[A-Za-z0-9_.-]+")


def data_text(path: str) -> str:
    """The text of a data file, by its path under ``gpukb/data/`` (``"cudnn/facts.toml"``): the one way every
    module reads its data file, from a checkout or an installed wheel alike.

    Only files inside the package are read: the path is relative, its steps are plain names (no ``..``, no
    absolute path, no backslash, no empty step), and what it names must be a regular file (a folder or a named
    pipe is refused before it is opened).

    Raises:
        TypeError: If ``path`` is not a string.
        ValueError: For a path that would leave ``gpukb/data/`` or names something other than a file.
        FileNotFoundError: If the package has no such file.
    """
    path = text("path", path, max_length=200)
    parts = path.split("/")
    if not all(_PART.fullmatch(p) for p in parts):
        raise ValueError(
            f"a data file is named by its relative path under gpukb/data/, steps of letters, digits, '_', '-' and "
            f"'.' joined by '/' (e.g. 'cudnn/facts.toml'), never '..' or an absolute path; got {given(path)}"
        )
    found = resources.files("gpukb.data").joinpath(*parts)
    if not found.is_file():
        if found.is_dir() or _exists(found):
            raise ValueError(f"gpukb/data/{path}: not a regular file; give a data file's path")
        raise FileNotFoundError(f"gpukb/data/{path}: no such data file")
    return found.read_text(encoding="utf-8")


def _exists(found: object) -> bool:
    # A named pipe or a socket is neither a file nor a folder; only a real path can be one.
    import os

    return isinstance(found, os.PathLike) and os.path.lexists(found)
