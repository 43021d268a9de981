"""MkDocs hooks (``hooks:`` in mkdocs.yml). Kept thin: the work is in tested modules."""

from __future__ import annotations

import html
import logging
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from gpukb.site import page_helper, render_cache
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


#: The abbr extension of mkdocs.yml (Python-Markdown's, its pattern compiled once: ``gpukb.site.abbreviations``).
ABBREVIATIONS = "gpukb.site.abbreviations"

#: Set by ``mkdocs serve --dirty`` (``make serve``): only changed pages are rebuilt, unless more changed.
_dirty: DirtyBuilds | None = None
#: The environment when the build started; each page starts from it (``render_cache.restore_environ``).
_build_environ: dict[str, str] = {}
#: MkDocs' order of the site's files while a helper process runs pages' code blocks ahead (``gpukb.site.page_helper``;
#: the order is restored before the pages are written), and the helper.
_files_order: list[str] = []
_helper: page_helper.PageHelper | None = None


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
        config["mdx_configs"].setdefault(ABBREVIATIONS, {})["glossary"] = glossary.hover_texts()
    return config


def on_files(files, config, **kwargs):
    """Publish the JSON Schemas of the results and data files under ``schemas/`` (see the page "Files and schemas");
    in a dirty ``serve`` that keeps the site, leave the generated API pages as they were built; when the render cache
    will miss, start a second process on the pages' code blocks (``gpukb.site.page_helper``)."""
    from mkdocs.structure.files import File

    from gpukb.site.schemas import schemas

    if _dirty is not None:  # a dirty serve that keeps the site: the API pages stand as built (see dirty_builds)
        _dirty.keep_generated_pages(files)
    _plan_helper(files, config)  # first: the helper starts while the schemas are made
    if page_helper.is_helper():  # the helper writes no site
        return files
    for schema in schemas():
        files.append(File.generated(config, f"schemas/{schema.name}", content=schema.text))
    return files


def _plan_helper(files, config) -> None:
    """When the render cache is likely to miss (its inputs changed since the last build) and the machine has a
    second core, start a helper process on the pages with code blocks that this build renders
    (``gpukb.site.page_helper``), and let the build render the other pages first."""
    global _helper, _files_order
    _stop_helper()
    _files_order = []
    cache = render_cache.ACTIVE
    if cache is None or cache.inputs_unchanged() or not page_helper.wanted():
        return
    pages = [
        f.src_uri
        for f in files.documentation_pages()
        if f.abs_src_path
        and (_dirty is None or f.is_modified())
        and page_helper.runs_code(Path(f.abs_src_path).read_text(encoding="utf-8"))
    ]
    if len(pages) >= 2:
        pages = page_helper.cheapest_first(pages, cache.page_costs())
        _files_order = [f.src_uri for f in files]
        page_helper.move_last(files, pages)
        _helper = page_helper.PageHelper.start(pages, page_helper.command(config["config_file_path"]), cache.index)


def _stop_helper() -> page_helper.PageHelper | None:
    global _helper
    helper, _helper = _helper, None
    if helper is not None:
        helper.stop()
    return helper


def on_env(env, config, files, **kwargs):
    """Every page is rendered: put the site's files back in MkDocs' order before the pages are written."""
    if _files_order:
        page_helper.restore_order(files, _files_order)
    return env


def on_build_error(**kwargs) -> None:
    """End the helper of a failed build."""
    _stop_helper()


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
    """Start each page from the build's environment: what a page's code blocks set stays on that page. With a
    helper, take the page or wait until the helper has rendered it (its blocks are stored then)."""
    render_cache.restore_environ(_build_environ)
    if render_cache.ACTIVE is not None:
        render_cache.ACTIVE.page = page.file.src_uri
    if _helper is not None:
        _helper.before_page(page.file.src_uri)
    return page


def on_post_build(config, **kwargs) -> None:
    """Leave the environment as the build found it; say how many blocks the cache answered, and delete entries
    long unused."""
    render_cache.restore_environ(_build_environ)
    helper = _stop_helper()
    cache = render_cache.ACTIVE
    if cache is not None:
        if helper is not None:
            cache.ahead = helper.ran
            cache.durations.extend(helper.durations)
            log.info(
                "a second process (exit status %s) ran %d blocks ahead of the build, which waited %.1f s for it",
                helper.returncode,
                helper.ran,
                helper.waited,
            )
        cache.mark_built(helper.page_runs if helper is not None else None)
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
