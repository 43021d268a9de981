"""The chapter skeleton, enforced: the layers docs/contributing/contributing.md ("Adding a chapter") tells a chapter to
copy.

data file + model -> library (values or ``(headers, rows)``) -> one ``pages.py`` (the only Markdown) -> the page;
snippets import the library, never the page layer; results are found through ``gpukb.records`` by id and written
by bench scripts through it. Each chapter declares its page layers (``gpukb.chapters``); tests/test_chapters.py
checks the declarations.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpukb import chapters
from gpukb.site.fences import classify, iter_fences, page_layer_modules, render_imports
from tests.helpers import ROOT

SRC = ROOT / "src"
PACKAGE = SRC / "gpukb"
#: The renderers: the one Markdown table writer (and the one for a table of recorded results with its provenance),
#: the one SVG writer and the one calculator form, which page layers call.
RENDERERS = {
    "gpukb/tables.py": "markdown_table",
    "gpukb/figures.py": "to_svg",
    "gpukb/calculators.py": "calculator_html",
    "gpukb/records/run.py": "measured_table",
}
#: Calls that produce page markup, allowed only in a page layer or in the renderer that defines them.
MARKUP_CALLS = set(RENDERERS.values())
#: Folders under docs/ that hold assets, not pages.
CHAPTER_PAGE_SUFFIXES = (".md", ".ipynb")


def _module_file(module: str) -> Path:
    return SRC.joinpath(*module.split(".")).with_suffix(".py")


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _python_files(*folders: Path) -> Iterator[Path]:
    for folder in folders:
        yield from (p for p in sorted(folder.rglob("*.py")) if "__pycache__" not in p.parts)


def _page_layer_files() -> set[str]:
    found = {_rel(p) for p in PACKAGE.rglob("pages.py")}
    return found | {_rel(p) for p in PACKAGE.rglob("pages/*.py") if p.name != "__init__.py"}


def test_every_pages_module_is_a_declared_page_layer() -> None:
    """No second page layer: each ``pages.py`` (or module of a ``pages/`` package) is declared by its chapter."""
    mapped = {_rel(_module_file(m)) for m in page_layer_modules()}
    assert _page_layer_files() - mapped == set()


# --- only the page layer returns markup -----------------------------------------------------------------------


def _markup_violations(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(root).as_posix()
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.endswith("_markdown") and not node.name.startswith("on_"):  # on_*: MkDocs names its hooks
                problems.append(f"{where}:{node.lineno}: def {node.name} (a *_markdown function)")
            returns = ast.unparse(node.returns) if node.returns else ""
            if node.name.endswith(("_table", "_figure")) and returns == "str":
                problems.append(f"{where}:{node.lineno}: def {node.name} -> str (markup outside a page layer)")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in MARKUP_CALLS:
                problems.append(f"{where}:{node.lineno}: calls {name}")
    return problems


def test_only_page_layers_return_markdown() -> None:
    """No module outside a page layer (a ``pages.py``, or a ``pages/`` package of one module per page) or the
    renderers defines ``*_markdown`` or calls ``markdown_table``."""
    shared = {_rel(p) for p in PACKAGE.rglob("pages/__init__.py")}  # what a chapter's page modules share
    allowed = _page_layer_files() | shared | {f"src/{r}" for r in RENDERERS}
    problems = [p for path in _python_files(PACKAGE) if _rel(path) not in allowed for p in _markup_violations(path)]
    assert problems == [], "\n".join(problems)


def test_the_markup_check_finds_what_it_should(tmp_path: Path) -> None:
    module = tmp_path / "mod.py"
    module.write_text(
        "from gpukb.tables import markdown_table\n"
        "def speed_markdown():\n    return ''\n"
        "def cast_table() -> str:\n    return markdown_table([], [])\n"
        "def cast_rows() -> tuple:\n    return [], []\n"
    )
    found = [p.split(": ", 1)[1] for p in _markup_violations(module, tmp_path)]
    assert found == [
        "def speed_markdown (a *_markdown function)",
        "def cast_table -> str (markup outside a page layer)",
        "calls markdown_table",
    ]


# --- the package stays inside itself --------------------------------------------------------------------------

#: Text files whose contents a reader or the package uses. Committed result files are history (the command a run
#: was started with stays as it was run) and are not scanned.
_SCANNED = (".py", ".md", ".toml", ".yml", ".yaml", ".cu", ".txt", ".ipynb")


def _scanned_files() -> Iterator[Path]:
    for top in ("src", "docs", "snippets"):
        for path in sorted((ROOT / top).rglob("*")):
            if not path.is_file() or path.suffix not in _SCANNED or "__pycache__" in path.parts:
                continue
            if ".egg-info" in path.as_posix() or "data/results" in _rel(path):
                continue
            yield path


@pytest.mark.parametrize("needle", ["parents[", "bench/results"])
def test_nothing_reaches_outside_the_package(needle: str) -> None:
    """No ``Path(__file__).parents[...]`` climbing out of src/, no path into bench/results: records go by id."""
    hits = [
        f"{_rel(path)}:{number}: {line.strip()[:100]}"
        for path in _scanned_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if needle in line
    ]
    assert hits == [], "\n".join(hits)


# --- snippets import the library, never the page layer ---------------------------------------------------------


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _is_page_layer(module: str) -> bool:
    return module in page_layer_modules() or module.endswith(".pages") or ".pages." in module


def test_no_snippet_imports_a_page_layer() -> None:
    problems = [
        f"{_rel(path)}:{line}: imports {module}"
        for path in _python_files(ROOT / "snippets")
        for line, module in _imports(path)
        if module.startswith("gpukb") and _is_page_layer(module)
    ]
    assert problems == [], "\n".join(problems)


# --- render blocks call the page layer ------------------------------------------------------------------------

PAGES = sorted((ROOT / "docs").rglob("*.md"))


def _render_blocks() -> Iterator[tuple[Path, int, list[str]]]:
    for page in PAGES:
        for fence in iter_fences(page):
            try:
                kind = classify(fence)
            except ValueError:
                continue  # tests/site/test_fences.py reports it
            if kind == "render":
                yield page, fence.line, render_imports(fence)


def test_render_blocks_import_only_from_a_page_layer() -> None:
    """A block that renders a table or figure at build time calls a page function, and nothing else."""
    layers = page_layer_modules()
    problems = [
        f"{_rel(page)}:{line}: imports {module}"
        for page, line, modules in _render_blocks()
        for module in modules
        if module not in layers
    ]
    assert problems == [], "\n".join(problems)


def test_render_blocks_exist() -> None:
    assert sum(1 for _ in _render_blocks()) > 20


# --- bench scripts write through gpukb.records -----------------------------------------------------------------


def _is_json_call(node: ast.AST, names: tuple[str, ...]) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "json"
        and node.func.attr in names
    )


def _writes_json_itself(tree: ast.AST) -> bool:
    """Whether the script writes a JSON file itself (``json.dump`` or ``.write_text(json.dumps(...))``) outside a
    ``*_scratch`` function: a phase's progress file, which the final record supersedes, may be plain JSON; the
    results file may not. ``json.dumps`` for a command-line argument is not a file."""
    scratch = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and "scratch" in node.name
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in scratch or not isinstance(node, ast.Call):
            continue
        if _is_json_call(node, ("dump",)):
            return True
        writes = isinstance(node.func, ast.Attribute) and node.func.attr in ("write", "write_text")
        if writes and any(_is_json_call(inner, ("dumps",)) for arg in node.args for inner in ast.walk(arg)):
            return True
    return False


def _imports_records(path: Path) -> bool:
    return any(m == "gpukb.records" or m.startswith("gpukb.records.") for _, m in _imports(path))


#: Scripts that write no results themselves but run the bench scripts that do.
RUNNERS = {"rerecord.py"}
BENCH_SCRIPTS = sorted(p.name for p in (ROOT / "bench").glob("*.py") if p.name not in RUNNERS)
#: Where ``triton.testing.do_bench`` may be called in a bench script, and why: as a peer whose numbers a page
#: compares with the project's timer, not as a script's own timer.
DO_BENCH_AS_PEER = {
    "gemm_ground_up.py": "the GEMM timing page compares timing methods; do_bench is one of them",
    "triton_gemm_rounds.py": "the Triton GEMM page shows why do_bench's rounds disagreed; do_bench is what it checks",
}
#: Bench scripts that still time with ``do_bench`` as their own timer, and why. The list may only shrink.
DO_BENCH_NOT_YET: dict[str, str] = {}


def _skeleton_calls(tree: ast.AST) -> list[str]:
    """Problems with how a script uses the skeleton: it must import ``main`` from ``gpukb.records.script`` and
    call it (the ``if __name__ == "__main__"`` line), and never parse its command line itself."""
    problems = []
    imported = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "gpukb.records.script"
        and any(alias.name == "main" for alias in node.names)
        for node in ast.walk(tree)
    )
    if not imported:
        problems.append("does not import main from gpukb.records.script")
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    if not any(isinstance(c.func, ast.Name) and c.func.id == "main" and c.args for c in calls):
        problems.append("never calls main(measure, __doc__, ...)")
    for call in calls:
        name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        if name in ("ArgumentParser", "parse_args", "parse_known_args"):
            problems.append(f"line {call.lineno}: calls {name} (the skeleton parses the command line)")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "argv" and getattr(node.value, "id", "") == "sys":
            problems.append(f"line {node.lineno}: reads sys.argv (the skeleton parses the command line)")
    return problems


def _timer_calls(tree: ast.AST) -> list[str]:
    """Timing done outside ``gpukb.measuring.timing``: CUDA events made by hand, ``do_bench`` called."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        text = ast.unparse(node.func)
        if text.endswith("cuda.Event") or text == "Event" or text.endswith("do_bench"):
            found.append(f"line {node.lineno}: {text}(...)")
    return found


@pytest.mark.parametrize("script", BENCH_SCRIPTS)
def test_bench_scripts_write_through_records(script: str) -> None:
    path = ROOT / "bench" / script
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert not _writes_json_itself(tree), f"bench/{script} writes JSON itself: use gpukb.records.write"
    assert _imports_records(path), f"bench/{script} does not use gpukb.records"


@pytest.mark.parametrize("script", BENCH_SCRIPTS)
def test_bench_scripts_use_the_skeleton(script: str) -> None:
    """One skeleton (``gpukb.records.script.main``) parses every bench script's command line, describes its run
    and writes its record."""
    tree = ast.parse((ROOT / "bench" / script).read_text(encoding="utf-8"))
    assert _skeleton_calls(tree) == [], f"bench/{script}"


def test_cuda_events_are_made_by_the_timer_only() -> None:
    """Outside ``gpukb.measuring`` nothing in the package, the bench scripts or the snippets makes a CUDA event or
    calls ``do_bench`` (except where a script times it as a peer, or is listed as not converted yet)."""
    problems = []
    for path in _python_files(PACKAGE, ROOT / "bench", ROOT / "snippets"):
        if path.is_relative_to(PACKAGE / "measuring"):
            continue
        text = path.read_text(encoding="utf-8")
        if "Event" not in text and "do_bench" not in text:
            continue  # nothing to find: skip the parse
        waived = path.parent == ROOT / "bench" and path.name in {**DO_BENCH_AS_PEER, **DO_BENCH_NOT_YET}
        for found in _timer_calls(ast.parse(text)):
            if not (waived and "do_bench" in found):
                problems.append(f"{_rel(path)}: {found}")
    assert problems == [], "\n".join(problems)
    for name in {**DO_BENCH_AS_PEER, **DO_BENCH_NOT_YET}:  # each waiver still needed
        assert any("do_bench" in f for f in _timer_calls(ast.parse((ROOT / "bench" / name).read_text()))), name


# --- each chapter registers its own subcommand ------------------------------------------------------------------

#: Subcommands about the whole site rather than a chapter, which gpukb/cli.py defines itself.
SITE_COMMANDS = {"info"}


def test_chapters_register_their_own_subcommands() -> None:
    """``gpukb/cli.py`` defines only site-wide subcommands; a chapter's comes from ``gpukb/<topic>/cli.py``, and
    every such module belongs to a chapter that declares it (``Chapter.cli``)."""
    tree = ast.parse((PACKAGE / "cli.py").read_text(encoding="utf-8"))
    defined = [
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "add_parser"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ]
    assert sorted(set(defined) - SITE_COMMANDS) == [], "define these in the chapter's package, in its cli.py"
    declared = {f"{c.package}.cli" for c in chapters.chapters() if c.cli}
    for topic_cli in sorted(PACKAGE.glob("*/cli.py")):
        module = f"gpukb.{topic_cli.parent.name}.cli"
        assert module in declared, f"{_rel(topic_cli)} belongs to no chapter that declares cli=True"


# --- the contributing page shows real files ---------------------------------------------------------------------


def test_the_contributing_page_shows_the_skeleton_from_real_files() -> None:
    """ "Adding a chapter" includes named sections of real files under snippets/ and src/ only (every include
    resolves: test_includes.py); the test and bench patterns it describes in prose are what the named files do."""
    page = (ROOT / "docs" / "contributing" / "contributing.md").read_text(encoding="utf-8")
    section = page.split("## Adding a chapter", 1)[1]
    targets = re.findall(r'--8<-- "([^"]+)"', page)
    shown = {t.split(":", 1)[0] for t in targets}
    assert all(t.startswith(("snippets/", "src/gpukb/")) for t in shown), shown  # no test or bench file shown
    assert all(":" in t for t in re.findall(r'--8<-- "([^"]+)"', section)), targets  # named sections
    assert "src/gpukb/formats/__init__.py" in shown  # a real chapter declaration
    assert "src/gpukb/formats/__init__.py:chapter" in targets  # the declaration is shown, not a registry
    assert any(t.endswith("/pages.py") for t in shown)
    assert "tests/site/test_architecture.py" in section
    # the bench pattern in prose: the script it names makes the calls it quotes
    bench = re.search(r"`(bench/\w+\.py)`", section).group(1)
    source = (ROOT / bench).read_text(encoding="utf-8")
    quoted = re.findall(r"`((?:run = )?\w+\((?:[^`]*)\))`", section.split("### Recorded results", 1)[1].split("###")[0])
    assert quoted, "the recorded-results section quotes no call"
    for call in quoted:
        assert call.replace("[...]", "[").split("[")[0] in source, (bench, call)
    # the snippet-check pattern in prose: every topic's module has CHECKS, and the collector imports them all
    assert "`tests/test_snippets.py`" in section
    assert "`CHECKS`" in section
    assert all(hasattr(importlib.import_module(f"tests.{p.parent.name}.test_snippets"), "CHECKS")
               for p in (ROOT / "tests").glob("*/test_snippets.py"))  # fmt: skip


def test_the_bench_and_import_checks_find_what_they_should(tmp_path: Path) -> None:
    by_hand = tmp_path / "by_hand.py"
    by_hand.write_text("import json\n\ndef main(out):\n    out.write_text(json.dumps({}))\n")
    assert _writes_json_itself(ast.parse(by_hand.read_text()))
    assert not _imports_records(by_hand)
    through = tmp_path / "through.py"
    through.write_text("from gpukb.records import describe_run, write\n")
    assert _imports_records(through)
    assert not _writes_json_itself(ast.parse(through.read_text()))
    own = ast.parse(
        "import argparse, sys, torch\n"
        "def main():\n    args = argparse.ArgumentParser().parse_args()\n    out = sys.argv[1]\n"
        "    a = torch.cuda.Event(enable_timing=True)\n    triton.testing.do_bench(f)\n"
    )
    assert _skeleton_calls(own) == [
        "does not import main from gpukb.records.script",
        "never calls main(measure, __doc__, ...)",
        "line 3: calls parse_args (the skeleton parses the command line)",
        "line 3: calls ArgumentParser (the skeleton parses the command line)",
        "line 4: reads sys.argv (the skeleton parses the command line)",
    ]
    assert _timer_calls(own) == ["line 5: torch.cuda.Event(...)", "line 6: triton.testing.do_bench(...)"]
    skeleton = ast.parse(
        "from gpukb.records.script import Script, main\n"
        "def measure(script):\n    return script.measure(lambda: None).summary()\n"
        "raise SystemExit(main(measure, __doc__))\n"
    )
    assert _skeleton_calls(skeleton) == []
    assert _timer_calls(skeleton) == []
    snippet = tmp_path / "snippet.py"
    snippet.write_text("from gpukb.gemm import pages\nfrom gpukb.formats.pages import codec_speed\n")
    assert [m for _, m in _imports(snippet) if _is_page_layer(m)] == [
        "gpukb.gemm.pages",
        "gpukb.formats.pages",
        "gpukb.formats.pages.codec_speed",
    ]
