"""What ``pip install -e .[docs]`` installs, read from the installed metadata, and the packages it does not.

The site must build with the docs extra alone (plus the CPU torch the README installs first): a page that imports a
test-only package (pytest-codeblocks, hypothesis) or one nobody declared would fail for a reader who installs only
what the README says. The test suite's one site build runs with every other installed package hidden
(``docs_only/sitecustomize.py``), so such a page fails the build here as it would there.
"""

from __future__ import annotations

import os
import re
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from tests.helpers import ROOT

#: Installed beside the extra: the CPU build of PyTorch (the README's and the Makefile's first step), and pip.
ALONGSIDE = ("torch", "pip")  # pip: every virtual environment has it
#: The folder whose ``sitecustomize.py`` hides the other packages.
GUARD = Path(__file__).resolve().parent / "docs_only"
#: The environment variable that carries the hidden top-level module names to ``docs_only/sitecustomize.py``.
HIDDEN_ENV = "GPUKB_DOCS_ONLY_HIDDEN"


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(name: str, extras: tuple[str, ...] = ()) -> set[str]:
    """The normalized names of a distribution and of everything its requirements (with ``extras``) pull in,
    transitively, as installed here; requirements not installed are left out (their markers do not apply)."""
    seen: set[str] = set()
    todo = [(name, extras)]
    while todo:
        current, wanted = todo.pop()
        key = _normal(current)
        try:
            dist = metadata.distribution(current)
        except metadata.PackageNotFoundError:
            continue
        if key in seen and not wanted:
            continue
        seen.add(key)
        for text in dist.requires or []:
            req = Requirement(text)
            environments = [{"extra": e} for e in wanted] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in environments):
                todo.append((req.name, tuple(sorted(req.extras))))
    return seen


def docs_requirements() -> list[Requirement]:
    """gpukb's own requirements and its ``docs`` extra, as ``pyproject.toml`` says (not as installed: an edit of
    the extra counts before anyone reinstalls), those whose markers apply here."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    texts = [*project["dependencies"], *project["optional-dependencies"]["docs"]]
    return [r for r in map(Requirement, texts) if r.marker is None or r.marker.evaluate()]


def allowed() -> set[str]:
    """The distributions a docs-only environment has: gpukb with its ``docs`` extra, and :data:`ALONGSIDE`."""
    names = {"gpukb"}
    for req in docs_requirements():
        names |= closure(req.name, tuple(sorted(req.extras)))
    for name in ALONGSIDE:
        names |= closure(name)
    return names


@cache
def hidden_modules() -> tuple[str, ...]:
    """Top-level modules installed here whose every distribution is outside :func:`allowed`."""
    keep = allowed()
    return tuple(
        sorted(
            top
            for top, dists in metadata.packages_distributions().items()
            if not any(_normal(d) in keep for d in dists) and top.isidentifier()
        )
    )


def build_environment() -> dict[str, str]:
    """Environment variables for a ``mkdocs build`` subprocess that sees only the docs extra's packages and runs
    every code block (no render cache): ``docs_only/`` first on ``PYTHONPATH`` and the hidden module names."""
    from gpukb.site.render_cache import CACHE_ENV

    path = [str(GUARD), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {"PYTHONPATH": os.pathsep.join(path), HIDDEN_ENV: ",".join(hidden_modules()), CACHE_ENV: "off"}
