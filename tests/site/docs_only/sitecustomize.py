"""Hide the packages that ``pip install -e .[docs]`` would not install (a test's site build puts this folder first on
``PYTHONPATH``; Python imports ``sitecustomize`` at start-up, in the ``gpukb`` processes of console blocks too).

The names come from ``tests/site/docs_extra.py`` through the environment variable below: importing one fails as it
would in an environment that has only the docs extra, naming the package and why.
"""

import os
import sys

HIDDEN = frozenset(filter(None, os.environ.get("GPUKB_DOCS_ONLY_HIDDEN", "").split(",")))


class HideNonDocsPackages:
    """A meta path finder that refuses the hidden top-level modules before any other finder sees them."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(
                f"No module named {name!r}: the docs extra does not install it (pyproject.toml, "
                "[project.optional-dependencies] docs), and the site must build with that extra alone",
                name=name,
            )
        return None


if HIDDEN:
    sys.meta_path.insert(0, HideNonDocsPackages())
