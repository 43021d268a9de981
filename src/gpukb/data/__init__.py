"""The project's data files (facts as TOML) and recorded results (``results/``), shipped inside the package."""

from __future__ import annotations

from importlib import resources


def data_text(path: str) -> str:
    """The text of a data file, by its path under ``gpukb/data/`` (``"cudnn/facts.toml"``): the one way every
    module reads its data file, from a checkout or an installed wheel alike.

    Raises:
        FileNotFoundError: If the package has no such file.
    """
    return resources.files("gpukb.data").joinpath(*path.split("/")).read_text(encoding="utf-8")
