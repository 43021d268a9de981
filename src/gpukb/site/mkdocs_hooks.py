"""MkDocs hooks (``hooks:`` in mkdocs.yml). Kept thin: the work is in tested modules."""

from __future__ import annotations

import html
import logging
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from gpukb.site import render_cache
from gpukb.site.dirty_builds import DirtyBuilds
from gpukb.site.mathml import render_math
from gpukb.site.reference import rank_below_prose

log = logging.getLogger("mkdocs.hooks.gpukb")


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


#: Set by ``mkdocs serve --dirty`` (``make serve``): only changed pages are rebuilt, unless more changed.
_dirty: DirtyBuilds | None = None
#: The environment when the build started; each page starts from it (``render_cache.restore_environ``).
_build_environ: dict[str, str] = {}


def on_startup(*, command: str, dirty: bool, **kwargs) -> None:
    """Before the build (or ``serve``) starts: make ``gpukb`` on ``PATH`` the one beside this MkDocs; note a
    dirty ``serve`` (``gpukb.site.dirty_builds``)."""
    global _dirty
    scripts_first_on_path()
    _dirty = DirtyBuilds(Path.cwd()) if dirty else None


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
    """Publish the JSON Schemas of the results and data files under ``schemas/`` (see the page "Files and schemas");
    in a dirty ``serve`` that keeps the site, leave the generated API pages as they were built."""
    from mkdocs.structure.files import File

    from gpukb.site.schemas import schemas

    for schema in schemas():
        files.append(File.generated(config, f"schemas/{schema.name}", content=schema.text))
    if _dirty is not None:  # a dirty serve that keeps the site: the API pages stand as built (see dirty_builds)
        _dirty.keep_generated_pages(files)
    return files


def on_pre_build(config, **kwargs) -> None:
    """Route the build-time code blocks through the cache of their output (``gpukb.site.render_cache``) and let
    it see the source as it is now (in ``mkdocs serve``, drop modules whose code changed); in a dirty ``serve``,
    rebuild every page when more than a page's Markdown changed."""
    global _build_environ
    _build_environ = dict(os.environ)
    root = Path(config["config_file_path"]).parent
    logging.getLogger("mkdocs.plugins.api-autonav").setLevel(logging.WARNING)  # not one line per module
    cache = render_cache.install(root, root / "src")
    if cache is not None:
        cache.begin_build()
    if _dirty is not None:
        _dirty.root = root
        if _dirty.before_build(Path(config["site_dir"])):
            log.info("code, snippets or configuration changed: every page is built again")


def on_pre_page(page, **kwargs):
    """Start each page from the build's environment: what a page's code blocks set stays on that page."""
    render_cache.restore_environ(_build_environ)
    return page


def on_post_build(config, **kwargs) -> None:
    """Leave the environment as the build found it; say how many blocks the cache answered, and delete entries
    long unused."""
    render_cache.restore_environ(_build_environ)
    cache = render_cache.ACTIVE
    if cache is not None:
        cache.prune()
        log.info(
            "render cache %s: %d blocks from the cache, %d run, %d not cacheable",
            cache.folder,
            cache.hits,
            cache.misses,
            cache.uncached,
        )
        for seconds, label in sorted(cache.durations, reverse=True)[:5]:
            log.info("  ran in %.1f s: %s", seconds, label)


def on_page_markdown(markdown: str, *, page, config, **kwargs) -> str:
    """Say once, before a page's first snippet, how a reader installs ``gpukb`` and runs the snippets without a GPU
    (``gpukb.site.install``)."""
    from gpukb.site import install

    return install.with_note(markdown, Path(config["config_file_path"]).parent, repository_url())


def on_page_content(html: str, *, page, **kwargs) -> str:
    """Render the page's math to MathML before the theme wraps it; rank the generated API pages below prose in the
    search (``gpukb.site.reference``: the search indexes the page after this event)."""
    rank_below_prose(page.file.src_uri, page.meta)
    return render_math(html)
