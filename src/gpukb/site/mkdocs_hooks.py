"""MkDocs hooks (``hooks:`` in mkdocs.yml). Kept thin: the work is in tested modules."""

from __future__ import annotations

import html
import os
import re
import sys
from collections.abc import Mapping

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


def repository_url(environ: Mapping[str, str] | None = None) -> str | None:
    """The URL of the repository being built, where the build says it: GitHub Actions sets ``GITHUB_SERVER_URL``
    and ``GITHUB_REPOSITORY`` (owner/name) for the Pages workflow; a local build has neither, and gets None.

    The site names no repository of its own: a fork's site links the fork.
    """
    env = os.environ if environ is None else environ
    server, repository = env.get("GITHUB_SERVER_URL", "").rstrip("/"), env.get("GITHUB_REPOSITORY", "")
    if not server.startswith("https://") or not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repository):
        return None
    return f"{server}/{repository}"


def on_config(config, **kwargs):
    """Put a plain link to the repository in every page's footer when the build knows it (see ``repository_url``),
    and give every page the glossary's terms as abbreviations.

    A link, not ``repo_url``: Material would fetch the repository's star count from the GitHub API on every page
    view, and the site makes no request to any host but its own.
    """
    url = repository_url()
    if url:
        link = f'<a href="{html.escape(url)}">Source code: {html.escape(url)}</a>'
        config["copyright"] = f"{config.get('copyright') or ''} {link}".strip()
    # Every glossary term shows its definition on hover wherever prose uses it (the abbr extension's glossary).
    from gpukb import glossary

    if "mdx_configs" in config:  # absent where a test calls the hook with a bare config
        config["mdx_configs"].setdefault("abbr", {})["glossary"] = glossary.hover_texts()
    return config


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
