"""Chapters are declared once (``gpukb.chapters``), completely, and the packages sit on floors that only look down.

A half-declared chapter fails here: pages with no declaration, a declaration naming a module, test, data file,
results kind, command line or GPU run that does not exist, a results folder or test folder that belongs to no
chapter, a chapter missing from the navigation. The import graph of ``gpukb``'s packages has no cycle, and no
package imports one on a higher floor.
"""

from __future__ import annotations

import ast
import importlib
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpukb import chapters
from gpukb.chapters import Chapter
from gpukb.records import Record
from gpukb.site.fences import NO_PAGE_LAYER, classify, iter_fences, render_imports
from tests.helpers import ROOT, mkdocs_config

PACKAGE = ROOT / "src" / "gpukb"
DECLARED = chapters.chapters()
NAMES = [c.name for c in DECLARED]

#: Packages of gpukb that are not chapters, by floor: a package may import its own floor's modules only through
#: the ones below it, never a higher floor. Chapters form the floor between "records" and "site".
FLOORS: dict[str, int] = {
    # the ground floor: argument checks, schemas, tables, numbers, figures, the environment, data, declarations
    "arguments": 0,
    "schema": 0,
    "tables": 0,
    "numerics": 0,
    "dtypes": 0,
    "figures": 0,
    "calculators": 0,
    "environment": 0,
    "data": 0,
    "chapters": 0,
    "errata": 0,
    "glossary": 0,
    "problems": 0,
    "measuring": 1,
    "records": 2,
    # chapters: 3
    "site": 4,
    "cli": 5,
    "__main__": 5,
}
CHAPTER_FLOOR = 3
#: Folders of tests/ that are layers below or beside the chapters, not chapters.
TEST_FOLDERS_OF_LAYERS = {"measuring", "records", "site", "fuzz"}


def _floor(package: str) -> int:
    if package in FLOORS:
        return FLOORS[package]
    if any(c.package == f"gpukb.{package}" for c in DECLARED):
        return CHAPTER_FLOOR
    raise AssertionError(f"gpukb.{package} is neither a declared chapter nor a layer in FLOORS")


def _top_packages() -> list[str]:
    return sorted(p.stem if p.is_file() else p.name for p in PACKAGE.iterdir() if _is_module(p))


def _is_module(path: Path) -> bool:
    if path.name.startswith((".", "_")) and path.name != "__main__.py":
        return False
    return (path.is_file() and path.suffix == ".py") or (path.is_dir() and (path / "__init__.py").is_file())


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every gpukb module a file imports, at any depth of the file (lazy imports count)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names if a.name.startswith("gpukb"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("gpukb"):
            module = node.module or ""
            if module == "gpukb":  # from gpukb import chapters: the names are modules
                yield from ((node.lineno, f"gpukb.{a.name}") for a in node.names)
            else:
                yield node.lineno, module


def _package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _package_edges() -> dict[tuple[str, str], list[str]]:
    """``(importer, imported)`` top-level packages → where (file:line)."""
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(PACKAGE)
        source = rel.parts[0].removesuffix(".py")
        for line, module in _imports(path):
            target = _package_of(module)
            if target and target != source and target != "__version__":
                edges.setdefault((source, target), []).append(f"src/gpukb/{rel.as_posix()}:{line}")
    return edges


# --- the declarations ---------------------------------------------------------------------------------------------


def test_chapters_are_found() -> None:
    assert {"formats", "gemm", "performance", "cuda", "cudnn", "attention", "distributed", "about"} <= set(NAMES)
    assert len(set(NAMES)) == len(NAMES)


def test_every_docs_folder_is_a_declared_chapter() -> None:
    folders = {d.name for d in (ROOT / "docs").iterdir() if d.is_dir() and any(d.glob("*.md"))}
    declared = chapters.docs_folders()
    assert sorted(folders - set(declared) - set(NO_PAGE_LAYER)) == [], "declare a Chapter in the package's __init__"
    assert sorted(set(declared) - folders) == [], "a declared docs folder holds no page"


def test_a_chapters_folders_start_with_its_name() -> None:
    assert chapters.chapter("about").folders == ("about", "contributing")
    assert chapters.chapter("formats").folders == ("formats",)
    with pytest.raises(ValueError, match=r"first docs folder is its name; got \['contributing', 'demo'\]"):
        Chapter(name="demo", title="Demo", summary="A demo.", folders=("contributing", "demo"))
    with pytest.raises(ValueError, match=r"one lowercase word .*got 'Docs/x'"):
        Chapter(name="demo", title="Demo", summary="A demo.", folders=("demo", "Docs/x"))
    with pytest.raises(ValueError, match=r"names a docs folder twice"):
        Chapter(name="demo", title="Demo", summary="A demo.", folders=("demo", "demo"))
    with pytest.raises(TypeError, match=r"folders must be a tuple of strings"):
        Chapter(name="demo", title="Demo", summary="A demo.", folders="demo")


@pytest.mark.parametrize("chapter", DECLARED, ids=NAMES)
def test_a_declaration_names_only_what_exists(chapter: Chapter) -> None:
    assert (ROOT / "docs" / chapter.name / chapter.start).is_file(), f"docs/{chapter.name}/{chapter.start} is missing"
    assert chapter.title
    assert chapter.summary.endswith(".")
    for layer in chapter.page_layers:
        importlib.import_module(layer)
    checks = chapters.check_modules()
    for module in {checks[layer] for layer in chapter.page_layers if layer in checks}:
        assert isinstance(importlib.import_module(module).CHECKS, dict)
    if chapter.cli:
        assert callable(importlib.import_module(f"{chapter.package}.cli").add_parser)
    for kind, target in chapter.kinds.items():
        model = chapters.resolve(target)
        assert issubclass(model, Record), target
        assert model.kind_name() == kind, f"{target} does not read kind {kind!r}"
    for path, spec in chapter.data_files.items():
        assert (PACKAGE / "data" / path).is_file(), f"data file {path} is missing"
        assert callable(chapters.resolve(spec.parser))
    if chapter.kernel_pairs:
        assert callable(chapters.resolve(chapter.kernel_pairs))
    for file in (*chapter.mutation, *chapter.mutation_tests):
        assert (ROOT / file).exists(), f"{file} (mutation scope) is missing"
    for name, run in chapter.gpu_runs.items():
        assert "{out}" in run.command, name
        assert run.limit_s > 0, name
        script = run.command.split()[1]
        assert (ROOT / script).is_file(), f"GPU run {name}: {script} is missing"
        assert (PACKAGE / "data" / "results" / f"{run.record}.json").is_file(), f"GPU run {name}: no {run.record}"


#: Page modules not named after their page.
_PAGE_OF = {"opening": "index"}


@pytest.mark.parametrize("chapter", DECLARED, ids=NAMES)
def test_one_page_module_per_page(chapter: Chapter) -> None:
    """A page module ``<package>.pages.<page>`` renders ``docs/<name>/<page>.md`` ("_" → "-"; ``opening`` renders
    ``index.md``: a module named ``index`` would take its package's page in the API reference), and that page's
    render blocks import no other page module of the chapter (what several pages share stays in
    ``pages/__init__.py``)."""
    prefix = f"{chapter.package}.pages."
    own = {m for m in chapter.page_layers if m.startswith(prefix)}
    for module in own:
        page = _PAGE_OF.get(module.removeprefix(prefix), module.removeprefix(prefix).replace("_", "-"))
        assert (ROOT / "docs" / chapter.name / f"{page}.md").is_file(), f"{module}: no docs/{chapter.name}/{page}.md"
    for page in sorted((ROOT / "docs" / chapter.name).glob("*.md")) if own else []:
        wanted = prefix + {v: k for k, v in _PAGE_OF.items()}.get(page.stem, page.stem.replace("-", "_"))
        imported = {m for f in iter_fences(page) if classify(f) == "render" for m in render_imports(f)}
        assert sorted((imported & own) - {wanted}) == [], f"{page.name} imports another page's module"


def test_every_results_folder_and_kind_belongs_to_a_chapter() -> None:
    prefixes = {c.package.rsplit(".", 1)[-1] for c in DECLARED}
    folders = {d.name for d in (PACKAGE / "data" / "results").iterdir() if d.is_dir()}
    assert sorted(folders - prefixes) == []


def test_every_data_file_is_declared() -> None:
    files = {p.relative_to(PACKAGE / "data").as_posix() for p in (PACKAGE / "data").rglob("*.toml")}
    assert sorted(files - set(chapters.data_files())) == []


def test_every_test_folder_is_a_chapter_or_a_layer() -> None:
    folders = {d.name for d in (ROOT / "tests").iterdir() if d.is_dir() and (d / "__init__.py").is_file()}
    assert sorted(folders - set(NAMES) - TEST_FOLDERS_OF_LAYERS) == []


def test_every_chapter_is_in_the_navigation() -> None:
    """Each chapter's start page is in ``mkdocs.yml``'s nav (the only hand-written list of pages)."""
    nav = mkdocs_config()["nav"]

    def pages(entry: object) -> Iterator[str]:
        if isinstance(entry, str):
            yield entry
        elif isinstance(entry, list):
            for item in entry:
                yield from pages(item)
        elif isinstance(entry, dict):
            for value in entry.values():
                yield from pages(value)

    listed = set(pages(nav))
    missing = [f"{c.name}/{c.start}" for c in DECLARED if f"{c.name}/{c.start}" not in listed]
    assert missing == []


def test_the_mutation_scope_is_the_declarations() -> None:
    """pyproject's mutmut scope is written from the declarations (``python -m gpukb.site.mutation_scope``)."""
    from gpukb.site.mutation_scope import scope

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]
    files, tests = scope()
    assert (config["only_mutate"], config["pytest_add_cli_args_test_selection"]) == (files, tests), (
        "run `python -m gpukb.site.mutation_scope --write` to update pyproject.toml"
    )


def test_a_kind_outside_the_chapters_prefix_is_refused() -> None:
    with pytest.raises(ValueError, match=r"must start with 'demo\.'"):
        Chapter(name="demo", title="Demo", summary="A demo.", kinds={"other.thing": "m:M"})


def test_an_unknown_chapter_name_lists_the_names() -> None:
    with pytest.raises(ValueError, match=r"no chapter is named 'nope'; chapters: \['formats'"):
        chapters.chapter("nope")


# --- floors ---------------------------------------------------------------------------------------------------------


def test_every_package_has_a_floor() -> None:
    for package in _top_packages():
        _floor(package)


def test_no_package_imports_a_higher_floor() -> None:
    problems = [
        f"gpukb.{source} (floor {_floor(source)}) imports gpukb.{target} (floor {_floor(target)}) at {where[0]}"
        for (source, target), where in sorted(_package_edges().items())
        if _floor(target) > _floor(source)
    ]
    assert problems == [], "\n".join(problems)


def test_no_import_cycle_between_packages() -> None:
    edges = _package_edges()
    graph: dict[str, set[str]] = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
    cycles = []
    for (source, target), where in sorted(edges.items()):
        # an edge is on a cycle when its target reaches its source
        seen, stack = set(), [target]
        while stack:
            node = stack.pop()
            if node == source:
                cycles.append(f"gpukb.{source} -> gpukb.{target} ({where[0]}) is on a cycle")
                break
            if node not in seen:
                seen.add(node)
                stack.extend(graph.get(node, ()))
    assert cycles == [], "\n".join(cycles)
