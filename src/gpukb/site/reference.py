"""The API reference: one page per module of ``gpukb`` under ``docs/reference/``, and the nav entries listing them.

The pages are committed, so that ``mkdocs.yml`` lists every one and the site needs no generator at build time;
``tests/site/test_reference.py`` fails when a module has no page, a page no module, or the nav differs, and says to
run ``python -m gpukb.site.reference``, which rewrites the pages and prints the nav to paste into ``mkdocs.yml``.

Each page shows the module's docstrings without source code (``show_source: false`` in ``mkdocs.yml``) and is ranked
below prose in the site search (front matter ``search.boost``), so that a search for a concept finds the page that
explains it before the function that computes it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

import gpukb

#: The package directory (``src/gpukb``).
PACKAGE = Path(gpukb.__file__).resolve().parent
#: Where the pages go, relative to the repository root.
REFERENCE = Path("docs") / "reference"
#: Modules without a page: the ``python -m gpukb`` shim and the packages that only hold data files.
SKIPPED = ("gpukb.__main__", "gpukb.data")
#: Search weight of an API page (Material's front matter ``search.boost``; prose pages have 1).
SEARCH_BOOST = 0.1


def modules() -> list[str]:
    """Every documented module of ``gpukb``, by dotted name, packages before their modules."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = ["gpukb", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if not any(name == s or name.startswith(f"{s}.") for s in SKIPPED):
            names.append(name)
    return sorted(names, key=lambda n: n.split("."))


def is_package(module: str) -> bool:
    return PACKAGE.joinpath(*module.split(".")[1:], "__init__.py").is_file()


def page_path(module: str) -> str:
    """The page of a module, relative to ``docs/``: ``reference/gpukb.formats.codec.md`` (a package's too:
    ``reference/gpukb.formats.md``); ``gpukb`` itself is the reference's index, ``reference/index.md``.

    Raises:
        ValueError: If ``module`` is not a documented module of ``gpukb``.
    """
    if module not in modules():
        raise ValueError(f"{module!r} is not a documented module of gpukb; documented: {modules()}")
    return "reference/index.md" if module == "gpukb" else f"reference/{module}.md"


def _front_matter() -> str:
    return f"---\nsearch:\n  boost: {SEARCH_BOOST}\n---\n"


def page(module: str) -> str:
    """The Markdown of a module's page; ``gpukb``'s is the reference's index, with a list of every module.

    The index names the modules without their summaries, so that it changes only when a module is added or removed
    (each module's page shows its docstring, rendered at build time).
    """
    if module != "gpukb":
        return f"{_front_matter()}\n# `{module}`\n\n::: {module}\n"
    items = [f"- [`{m}`]({Path(page_path(m)).name})" for m in modules() if m != "gpukb"]
    return (
        f"{_front_matter()}\n# API reference\n\n"
        "Generated from the docstrings of the `gpukb` package when the site is built, one page per module; the "
        "source code is in the repository (see [Get the code](../index.md#get-the-code)). The modules:\n\n"
        + "\n".join(items)
        + "\n\n## The package\n\n::: gpukb\n"
    )


def pages() -> dict[str, str]:
    """Every page, by path relative to ``docs/``."""
    return {page_path(m): page(m) for m in modules()}


def nav() -> list:
    """The ``API reference`` entries of ``mkdocs.yml``'s nav: the index, then each package as a section."""

    def entries(package: str) -> list:
        out: list = [page_path(package)]
        for m in modules():
            if m.rsplit(".", 1)[0] != package or m == package:
                continue
            short = m.rsplit(".", 1)[1]
            out.append({short: entries(m)} if is_package(m) else {short: page_path(m)})
        return out

    return entries("gpukb")


def write(root: Path) -> list[Path]:
    """Write every page under ``root/docs/reference`` and delete pages of modules that are gone; return the paths."""
    folder = root / REFERENCE
    wanted = {root / "docs" / path: text for path, text in pages().items()}
    for stale in set(folder.rglob("*.md")) - set(wanted):
        stale.unlink()
    for empty in sorted((d for d in folder.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)):
        if not any(empty.iterdir()):
            empty.rmdir()
    for path, text in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return sorted(wanted)


def main() -> None:
    """Rewrite the pages and print the nav entry for ``mkdocs.yml``."""
    root = Path.cwd()
    if not (root / "mkdocs.yml").is_file():
        sys.exit("run from the repository root (where mkdocs.yml is)")
    write(root)
    text = yaml.safe_dump([{"API reference": nav()}], sort_keys=False, width=120)
    print("".join(f"  {line}" for line in text.splitlines(keepends=True)), end="")  # under mkdocs.yml's ``nav:``


if __name__ == "__main__":
    main()
