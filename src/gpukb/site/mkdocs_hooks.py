"""MkDocs hooks (``hooks:`` in mkdocs.yml). Kept thin: the work is in tested modules."""

from __future__ import annotations

import os
import sys

from gpukb.site.mathml import render_math


def scripts_first_on_path() -> str:
    """Put the scripts directory of the Python running MkDocs first on ``PATH``; return that directory.

    The pages' ``console`` blocks run ``gpukb ...`` in a shell while the site is built. ``.venv/bin/mkdocs build``
    without an activated virtual environment would otherwise find no ``gpukb`` (or another install's), so the
    build uses the ``gpukb`` installed next to the MkDocs that runs it.
    """
    scripts = os.path.dirname(sys.executable)
    entries = [e for e in os.environ.get("PATH", "").split(os.pathsep) if e and e != scripts]
    os.environ["PATH"] = os.pathsep.join([scripts, *entries])
    return scripts


def on_startup(**kwargs) -> None:
    """Before the build (or ``serve``) starts: make ``gpukb`` on ``PATH`` the one beside this MkDocs."""
    scripts_first_on_path()


def on_files(files, config, **kwargs):
    """Publish the JSON Schemas of the results and data files under ``schemas/`` (see the page "Files and schemas")."""
    from mkdocs.structure.files import File

    from gpukb.site.schemas import schemas

    for schema in schemas():
        files.append(File.generated(config, f"schemas/{schema.name}", content=schema.text))
    return files


def on_page_content(html: str, **kwargs) -> str:
    """Render the page's math to MathML before the theme wraps it."""
    return render_math(html)
