"""Find every piece of code on a page and decide whether something tests it.

The page is parsed the way it is rendered, with a Markdown parser (markdown-it-py) rather than regexes: Material's
containers (admonitions ``!!!``/``???`` and tabs ``===``) are opened first, so their indented bodies are read as
the renderer reads them. What pytest-codeblocks runs is read with pytest-codeblocks' own extractor, so a block
counts as run only if it really is. Code may reach a page in one of four ways, and only these:

* **include**: a fence whose body is nothing but ``--8<-- "snippets/..."`` or ``--8<-- "src/..."`` lines, so the
  code shown is a file that the test suite runs and asserts (:mod:`gpukb.site.includes` checks the paths).
* **codeblock**: a block that pytest-codeblocks collects and runs (info string exactly ``python``, ``bash`` or
  ``sh``, no skip mark). A ``python`` block must assert something itself or be followed by an expected-output block.
* **render**: a markdown-exec block that shows no source (``exec="on"`` without ``source=``) and only imports
  names from a chapter's page layer (:func:`page_layer_modules`, from the chapters' declarations) and prints one of
  them called with literal arguments.
* **cli**: a markdown-exec ``console`` block whose every line is a ``$ gpukb ...`` command: the page shows the
  command line's real output, produced at build time (the CLI has its own tests).

Anything else that shows code is refused, each with a rule of :data:`RULES` and the file and line: other fences,
indented code blocks, raw ``<pre>``/``<code>`` HTML, code in a notebook's Markdown cells, pages with a suffix
pytest-codeblocks does not collect.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpukb import chapters
from gpukb.site.includes import BLOCK_MARKER, INCLUDE_LINE, include_problem, parse_target, sections

CODEBLOCK_LANGUAGES = ("python", "bash", "sh")

#: Folders of pages under docs/ that belong to no chapter and render nothing from code, and why.
NO_PAGE_LAYER = {"reference": "the API reference, rendered from docstrings by mkdocstrings"}


def page_layer_modules() -> set[str]:
    """Every module a render block may import from: the page layers the chapters declare."""
    return {module for layers in chapters.page_layers().values() for module in layers}


#: Every rule of the lint, by id: what it refuses. The "How we try to break this site" page renders this list.
RULES = {
    "untested-fence": "a fence that is no include, render or CLI block and that pytest-codeblocks does not run "
    "(info string other than exactly python, bash or sh: `py`, `python title=...`, a space before the language, "
    "`~~~` fences, `text` blocks of hand-typed output)",
    "skipped-fence": "a block pytest-codeblocks would run but a skip or xfail mark stops",
    "checks-nothing": "a python block that asserts nothing and has no expected-output block",
    "render-block": "a hidden markdown-exec block that does more than import from a chapter's page layer and print "
    "one of its functions called by name with literal arguments",
    "cli-block": "a markdown-exec console block running anything but `$ gpukb ...` commands",
    "include-path": "an include with `..`, an absolute path, or a path outside snippets/ and src/gpukb/ (a test "
    "module or a bench script is described in prose, never included)",
    "include-run": "an include whose info string is exactly python, bash or sh, which pytest-codeblocks runs as code "
    "(the include line itself, which fails)",
    "include-file": "an include of a file that is missing, has no such section, or is not checked "
    "(a snippet without a check; under src/ anything but a gpukb module or data file)",
    "indented-code": "an indented code block (four spaces), which nothing runs",
    "html-code": "raw `<pre>` or `<code>` HTML, which nothing runs",
    "page-suffix": "a page MkDocs renders with a suffix other than .md or .ipynb (pytest-codeblocks collects .md)",
    "notebook-markdown": "code in a notebook's Markdown cell (mkdocs-jupyter runs no include, exec or test there)",
    "notebook-untested": "a notebook that no test under tests/ names, so its code cells are never run",
    "unclosed-fence": "a fence that is never closed",
}

#: Suffixes MkDocs renders as pages (``mkdocs.utils.markdown_extensions``) and the notebooks mkdocs-jupyter adds.
PAGE_SUFFIXES = (".md", ".markdown", ".mdown", ".mkdn", ".mkd", ".ipynb")

_SKIP_MARK = re.compile(r"pytest\.mark\.(skip|xfail)")
_EXPECTED_OUTPUT = re.compile(r"<!--[-\s]*pytest-codeblocks:\s*expected-output")
_CLI_LINE = re.compile(r"^\$ gpukb( [\w.,:=+-]+)*$")
_CONTAINER = re.compile(r"^(?P<indent> *)(?:!!!|\?\?\?\+?|===\+?)(?: |$)")
_HTML_CODE = re.compile(r"<\s*(pre|code)\b", re.IGNORECASE)


class LintError(ValueError):
    """A piece of code on a page that nothing tests: ``path:line: [rule] message``."""

    def __init__(self, where: str, rule: str, message: str) -> None:
        if rule not in RULES:
            raise KeyError(f"unknown lint rule {rule!r}; rules: {sorted(RULES)}")
        self.rule = rule
        super().__init__(f"{where}: [{rule}] {message}")


@dataclass(frozen=True)
class Fence:
    """One fenced block of a Markdown file, as the renderer parses it.

    Attributes:
        path: The file it is in.
        line: 1-based line number of the opening fence.
        marker: The fence characters, e.g. ```` ``` ```` or ``~~~``.
        info: The info string after the marker, stripped.
        body: The lines between the fences, without the fence's indentation.
        before: The nearest non-blank line above the fence.
        after: The nearest non-blank line below the closing fence.
        runs: pytest-codeblocks' view of the block: ``(language, marks, has expected output)``, or ``None`` when
            pytest-codeblocks does not collect a block on this line.
    """

    path: Path
    line: int
    marker: str
    info: str
    body: list[str]
    before: str
    after: str
    runs: tuple[str | None, tuple[str, ...], bool] | None = field(default=None, compare=False)

    @property
    def language(self) -> str:
        """The first word of the info string (``python`` for ``python title="x.py"``)."""
        return self.info.split(maxsplit=1)[0] if self.info else ""

    def options(self) -> dict[str, str]:
        """``key="value"`` options of the info string, such as markdown-exec's ``exec`` and ``source``."""
        try:
            words = shlex.split(self.info)[1:]
        except ValueError:
            return {}
        return dict(w.split("=", 1) for w in words if "=" in w)

    def include_targets(self) -> list[str] | None:
        """The files this fence includes, or ``None`` when its body is not purely includes."""
        lines = [line.strip() for line in self.body if line.strip()]
        matches = [INCLUDE_LINE.match(line) for line in lines]
        if not lines or not all(matches):
            return None
        return [m.group("target") for m in matches if m]


def open_containers(lines: list[str]) -> list[str]:
    """The lines with admonition/details/tab bodies dedented in place (and their opening lines blanked), so that
    a CommonMark parser reads them as pymdownx reads them; line numbers are unchanged."""
    out = list(lines)
    for i in range(len(out)):
        match = _CONTAINER.match(out[i])
        if not match:
            continue
        inner = " " * (len(match.group("indent")) + 4)
        out[i] = ""
        j = i + 1
        while j < len(out) and (not out[j].strip() or out[j].startswith(inner)):
            if out[j].strip():
                cut = len(match.group("indent"))
                out[j] = out[j][:cut] + out[j][cut + 4 :]
            j += 1
    return out


# The parsers are imported where the lint runs, not when the module loads: the About page renders RULES at build
# time, and the site builds with the docs extra alone, which has neither (pytest-codeblocks is a test dependency).
def _parse(text: str) -> tuple[list[str], list[Any]]:
    from markdown_it import MarkdownIt

    lines = open_containers(text.splitlines())
    tokens = MarkdownIt("commonmark").parse("\n".join(lines) + "\n")
    return lines, tokens


def _collected(text: str) -> dict[int, tuple[str | None, tuple[str, ...], bool]]:
    """What pytest-codeblocks collects from the text: line -> (language, marks, expected output)."""
    import io

    from pytest_codeblocks.main import extract_from_buffer

    try:
        blocks = extract_from_buffer(io.StringIO(text))
    except RuntimeError:
        return {}
    return {b.lineno: (b.syntax, tuple(b.marks), b.expected_output is not None) for b in blocks}


def _unclosed(path: Path, lines: list[str], token: Any) -> bool:
    """Whether a fence token runs to the end of the text without its closing marker (CommonMark allows it)."""
    last = token.map[1] - 1
    if last <= token.map[0]:
        return True
    closing = lines[last].strip()
    return not (closing.startswith(token.markup) and closing.strip(token.markup[0]) == "")


def _fences(path: Path, text: str) -> Iterator[Fence]:
    lines, tokens = _parse(text)
    runs = _collected(text)
    for token in tokens:
        if token.type != "fence":
            continue
        start = token.map[0]
        if _unclosed(path, lines, token):
            raise LintError(f"{path}:{start + 1}", "unclosed-fence", f"fence {token.markup} is never closed")
        before = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        end = token.map[1]
        after = next((lines[j].strip() for j in range(end, len(lines)) if lines[j].strip()), "")
        yield Fence(
            Path(path),
            start + 1,
            token.markup,
            token.info.strip(),
            token.content.splitlines(),
            before,
            after,
            runs.get(start + 1),
        )


def iter_fences(path: Path) -> Iterator[Fence]:
    """Yield every fenced block of a Markdown file, nested ones (admonitions, tabs, lists) included.

    Raises:
        LintError: If a fence is never closed, naming the file and line.
    """
    yield from _fences(Path(path), Path(path).read_text(encoding="utf-8"))


# --- render blocks ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RenderCall:
    """One ``print(function(...))`` of a render block, with its arguments evaluated."""

    module: str
    function: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    prefix: str = ""


_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Pow: lambda a, b: a**b, ast.Div: lambda a, b: a / b}  # fmt: skip


def literal(node: ast.expr) -> Any:
    """The value of a literal argument: constants, lists, tuples, dicts, sets, signed numbers, arithmetic on
    numbers (``1.05 * 2.0**-127``) and ``float("inf")``/``float("nan")``.

    Raises:
        ValueError: For anything else (a name, an attribute, any other call).
    """
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float":
        one = len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant)
        if one and str(node.args[0].value).strip().lower() in ("inf", "-inf", "nan", "+inf"):
            return float(node.args[0].value)
        raise ValueError("float() takes only 'inf', '-inf' or 'nan' here")
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = literal(node.left), literal(node.right)
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (left, right)):
            raise ValueError("arithmetic only on numbers")
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = [literal(e) for e in node.elts]
        return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("no ** in a dict")
        return {literal(k): literal(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = literal(node.operand)
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ValueError("a sign only before a number")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Constant):
        return node.value
    raise ValueError(f"{ast.unparse(node)!r} is not a literal")


def _call(node: ast.expr, imported: dict[str, str]) -> tuple[str, str, tuple, dict]:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in imported):
        raise ValueError(f"prints {ast.unparse(node)!r}: print only a page-layer function imported above, called")
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise ValueError("no *args or **kwargs")
    try:
        args = tuple(literal(a) for a in node.args)
        kwargs = {k.arg: literal(k.value) for k in node.keywords if k.arg}
    except (ValueError, TypeError, SyntaxError) as err:
        raise ValueError(f"arguments of {node.func.id}() must be literals ({err})") from None
    return imported[node.func.id], node.func.id, args, kwargs


def render_calls(fence: Fence) -> list[RenderCall]:
    """The page-layer calls a render block prints, with their literal arguments evaluated.

    Raises:
        LintError: If the block does anything else (rule ``render-block``), naming the line.
    """
    layers = page_layer_modules()
    source = "\n".join(fence.body)
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        raise LintError(f"{fence.path}:{fence.line}", "render-block", f"does not parse: {err.msg}") from None
    imported: dict[str, str] = {}
    calls: list[RenderCall] = []
    for stmt in tree.body:
        where = f"{fence.path}:{fence.line + stmt.lineno}"
        try:
            if isinstance(stmt, ast.ImportFrom):
                if stmt.level or stmt.module not in layers or any(a.asname or a.name == "*" for a in stmt.names):
                    raise ValueError(f"imports from {stmt.module}: only names from a page layer {sorted(layers)}")
                imported.update({a.name: stmt.module for a in stmt.names})
                continue
            if not (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name)
                and stmt.value.func.id == "print"
                and not stmt.value.keywords
                and len(stmt.value.args) <= 1
            ):
                raise ValueError(f"{ast.unparse(stmt)!r}: only imports from a page layer and print(f(...)) lines")
            if not stmt.value.args:
                continue  # print(): a blank line between two tables
            arg, prefix = stmt.value.args[0], ""
            if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Add) and isinstance(arg.left, ast.Constant):
                if not isinstance(arg.left.value, str):
                    raise ValueError("only a string may be put before a call")
                prefix, arg = arg.left.value, arg.right
            calls.append(RenderCall(*_call(arg, imported), prefix=prefix))
        except ValueError as err:
            raise LintError(where, "render-block", str(err)) from None
    if not calls:
        raise LintError(f"{fence.path}:{fence.line}", "render-block", "prints nothing from a page layer")
    return calls


def render_imports(fence: Fence) -> list[str]:
    """The modules a render block imports from (``from gpukb.gemm.pages import x`` gives ``gpukb.gemm.pages``)."""
    found = []
    for line in fence.body:
        match = re.match(r"\s*(?:from\s+(?P<source>[\w.]+)\s+import\b|import\s+(?P<module>[\w.]+))", line)
        if match:
            found.append(match.group("source") or match.group("module"))
    return found


# --- classifying fences -------------------------------------------------------------------------------------


def _is_render(fence: Fence) -> bool:
    options = fence.options()
    return fence.language == "python" and options.get("exec") == "on" and "source" not in options


def classify(fence: Fence, root: Path | None = None) -> str:
    """Say how a fence is tested: ``"include"``, ``"codeblock"``, ``"render"`` or ``"cli"``.

    Args:
        fence: The fence.
        root: The repository root, to check that included files exist and are checked (default: not checked
            here; :func:`gpukb.site.includes.check_include` does it for the whole site).

    Raises:
        LintError: If nothing tests it, saying where it is, the rule and what is allowed.
    """
    where = f"{fence.path}:{fence.line}"
    what = f"fence {fence.marker}{fence.info}"
    targets = fence.include_targets()
    if targets is not None:
        for target in targets:
            problem = include_problem(target, root)
            if problem:
                rule, message = problem
                raise LintError(where, rule, f"{what}: {message}")
        runs = fence.runs
        if runs is not None and runs[0] in CODEBLOCK_LANGUAGES and fence.marker.startswith("`"):
            raise LintError(where, "include-run", f"{what}: pytest-codeblocks runs a block whose info string is "
                            f"exactly {runs[0]}, so it would run the include line itself; give the include a title "
                            '(```python title="snippets/...")')  # fmt: skip
        return "include"
    if _is_render(fence):
        render_calls(fence)
        return "render"
    options = fence.options()
    if fence.language == "console" and options.get("exec") == "on":
        commands = [line.strip() for line in fence.body if line.strip()]
        if commands and all(_CLI_LINE.match(line) for line in commands):
            return "cli"
        raise LintError(where, "cli-block", f"{what}: a build-time console block may only run '$ gpukb ...' commands")
    runs = fence.runs
    if runs is not None and runs[0] in CODEBLOCK_LANGUAGES and fence.marker.startswith("`"):
        language, marks, expected = runs
        if any(_SKIP_MARK.search(m) for m in marks):
            raise LintError(where, "skipped-fence", f"{what} is marked skip, so nothing runs it")
        if language == "python" and not expected and not any(re.match(r"\s*assert\b", x) for x in fence.body):
            raise LintError(where, "checks-nothing", f"{what} runs but checks nothing: add an assert or an "
                            "expected-output block")  # fmt: skip
        return "codeblock"
    raise LintError(
        where,
        "untested-fence",
        f"{what} is untested (pytest-codeblocks does not run it): use an include of a file under snippets/ or "
        f"src/, or a block whose info string is exactly one of {list(CODEBLOCK_LANGUAGES)}",
    )


# --- pages --------------------------------------------------------------------------------------------------


def _is_expected_output(fence: Fence, previous: Fence | None) -> bool:
    """Whether a fence is the expected output of the block above it, which pytest-codeblocks runs and compares."""
    if not _EXPECTED_OUTPUT.search(fence.before) or fence.runs is not None or previous is None:
        return False
    runs = previous.runs
    return runs is not None and runs[0] in CODEBLOCK_LANGUAGES and runs[2] and previous.marker.startswith("`")


def check_text(path: Path, text: str, root: Path | None = None, _including: tuple[Path, ...] = ()) -> list[str]:
    """Every problem with the code of one Markdown text (a page, or a notebook cell).

    An include of a Markdown file puts that file's text on the page, where it is rendered like the page's own:
    with ``root`` given, its code is held to the same rules (its problems name it and the include line).
    """
    problems: list[str] = []
    try:
        fences = list(_fences(path, text))
    except LintError as err:
        return [str(err)]
    previous: Fence | None = None
    for fence in fences:
        if _is_expected_output(fence, previous):
            continue  # asserted data: pytest-codeblocks compares it with the output of the block above
        previous = fence
        try:
            classify(fence, root)
        except LintError as err:
            problems.append(str(err))
    lines, tokens = _parse(text)
    for token in tokens:
        line = (token.map[0] + 1) if token.map else 0
        if token.type == "code_block":
            problems.append(str(LintError(f"{path}:{line}", "indented-code", "an indented code block; nothing runs "
                                          "it: use an include of a file under snippets/")))  # fmt: skip
        html = [token] if token.type == "html_block" else [c for c in token.children or [] if c.type == "html_inline"]
        for node in html:
            if _HTML_CODE.search(node.content):
                problems.append(str(LintError(f"{path}:{line}", "html-code", "raw <pre>/<code> HTML; nothing runs "
                                              "it: use an include of a file under snippets/")))  # fmt: skip
    for number, text_line in enumerate(lines, start=1):
        if BLOCK_MARKER.match(text_line):
            problems.append(str(LintError(f"{path}:{number}", "include-path", "the block form of an include: write "
                                          'one line per file, --8<-- "snippets/..."')))  # fmt: skip
        match = INCLUDE_LINE.match(text_line.strip())
        if match:
            problem = include_problem(match.group("target"), root)
            if problem and not any(p.startswith(f"{path}:{number}:") for p in problems):
                problems.append(str(LintError(f"{path}:{number}", problem[0], problem[1])))
            elif problem is None and root is not None:
                problems += _included_problems(Path(path), number, match.group("target"), Path(root), _including)
    return problems


def _included_problems(page: Path, number: int, target: str, root: Path, including: tuple[Path, ...]) -> list[str]:
    """The problems of a Markdown file (or section) that ``page`` includes at line ``number``; ``[]`` for code."""
    name, section = parse_target(target)
    if Path(name).suffix.lower() not in PAGE_SUFFIXES or name.lower().endswith(".ipynb"):
        return []
    file = root / name
    if file in including or len(including) >= 8:
        return [str(LintError(f"{page}:{number}", "include-file", f"{name} includes itself (through {len(including)} "
                              "includes); pymdownx.snippets would stop there"))]  # fmt: skip
    text = sections(file)[section] if section else file.read_text(encoding="utf-8")
    shown = Path(f"{name}:{section}") if section else Path(name)  # line numbers count from the section's start
    return [f"{problem} (included by {page}:{number})" for problem in check_text(shown, text, root, (*including, file))]


def check_notebook(path: Path, tests: Path | None = None) -> list[str]:
    """Problems of a notebook: any code in its Markdown cells, and (given ``tests``) no test that names it."""
    notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    problems = []
    for number, cell in enumerate(notebook.get("cells", []), start=1):
        if cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else source
        _, tokens = _parse(text)
        for token in tokens:
            html = token.type == "html_block" and _HTML_CODE.search(token.content)
            inline = any(c.type == "html_inline" and _HTML_CODE.search(c.content) for c in token.children or [])
            if token.type in ("fence", "code_block") or html or inline:
                where = f"{path}:cell {number}:{token.map[0] + 1 if token.map else 0}"
                message = "code in a Markdown cell, which nothing runs: put it in a code cell, which its test runs"
                problems.append(str(LintError(where, "notebook-markdown", message)))
    if tests is not None:
        name = Path(path).name
        named = any(name in p.read_text(encoding="utf-8") for p in Path(tests).rglob("*.py"))
        if not named:
            problems.append(str(LintError(f"{path}:1", "notebook-untested", f"no test under {tests} names {name}")))
    return problems


def check_page(path: Path, root: Path | None = None) -> list[str]:
    """Every problem with the code of one page; an empty list means every piece of code on it is tested.

    Args:
        path: A page (``.md``; a notebook is read with :func:`check_notebook`).
        root: The repository root, to resolve includes (default: not resolved).
    """
    path = Path(path)
    if path.suffix == ".ipynb":
        return check_notebook(path, root / "tests" if root else None)
    problems = check_text(path, path.read_text(encoding="utf-8"), root)
    if path.suffix != ".md":
        problems.insert(0, str(LintError(f"{path}:1", "page-suffix", f"a page named {path.name}: pytest-codeblocks "
                                         "collects only .md, so rename it to .md")))  # fmt: skip
    return problems


def page_files(docs: Path) -> list[Path]:
    """Every file under ``docs`` that MkDocs renders as a page (:data:`PAGE_SUFFIXES`), sorted."""
    return sorted(p for p in Path(docs).rglob("*") if p.is_file() and p.suffix.lower() in PAGE_SUFFIXES)


def check_docs(docs: Path, root: Path | None = None) -> list[str]:
    """Every problem of every page under ``docs``."""
    return [problem for page in page_files(docs) for problem in check_page(page, root)]


def expected_output_blocks(path: Path) -> set[int]:
    """Line numbers of fences that hold the expected output of the block before them."""
    fences = list(iter_fences(path))
    return {f.line for f, prev in zip(fences, [None, *fences], strict=False) if _is_expected_output(f, prev)}
