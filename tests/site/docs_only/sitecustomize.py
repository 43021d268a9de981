"""Hide the packages that ``pip install -e .[docs]`` would not install (a test's site build puts this folder first on
``PYTHONPATH``; Python imports ``sitecustomize`` at start-up, in the ``gpukb`` processes of console blocks too).

The names come from ``tests/site/docs_extra.py`` through the environment variable below. Every import finder is
wrapped so that it does not find them: ``import pytest_codeblocks`` fails with "No module named
'pytest_codeblocks'" and ``importlib.util.find_spec`` answers None, as in an environment with only the docs extra
(a library that probes for an optional package, as nbconvert does for playwright, sees it missing).
"""

import os
import sys

HIDDEN = frozenset(filter(None, os.environ.get("GPUKB_DOCS_ONLY_HIDDEN", "").split(",")))


class HidingFinder:
    """A meta path finder that answers as the one it wraps, except for the hidden top-level modules."""

    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            return None
        return self.finder.find_spec(name, path, target)

    def __getattr__(self, attribute):  # invalidate_caches, find_distributions, ...
        return getattr(self.finder, attribute)


if HIDDEN:
    sys.meta_path[:] = [HidingFinder(f) if hasattr(f, "find_spec") else f for f in sys.meta_path]
