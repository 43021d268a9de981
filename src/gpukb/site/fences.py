"""Find every code fence on a page and decide whether something tests it.

A fence may reach a page in one of four ways, and only these:

* **include**: its body is nothing but ``--8<-- "snippets/..."`` or ``--8<-- "src/..."`` lines, so the code
  shown is a file that the test suite runs and asserts; the contributing page also shows sections of real
  ``tests/`` files (the suite runs them) and ``bench/`` scripts (the code that wrote the committed records,
  held to ``gpukb.records`` by tests/site/test_architecture.py).
* **codeblock**: its info string is exactly ``python``, ``bash`` or ``sh``, so pytest-codeblocks runs it. A
  ``python`` block must assert something itself or be followed by an expected-output block.
* **render**: a markdown-exec block that shows no source (``exec="on"`` without ``source=``) and only imports
  from ``gpukb`` and prints: it turns tested library code into a table or figure at build time. The module it
  imports from is a chapter's page layer (:data:`PAGE_LAYERS`); tests/site/test_architecture.py holds that.
* **cli**: a markdown-exec ``console`` block whose every line is a ``$ gpukb ...`` command: the page shows the
  command line's real output, produced at build time (the CLI has its own tests).

pytest-codeblocks silently skips ``~~~`` fences, titled blocks, ``py`` and skip markers; such a fence that is
not an include is reported, so nothing untested reaches a page.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CODEBLOCK_LANGUAGES = ("python", "bash", "sh")
INCLUDE_ROOTS = ("snippets/", "src/", "tests/", "bench/")

# --8<-- [start:page-layers]
#: Each chapter (a folder of pages under docs/) and its page layer: the one module that returns Markdown for
#: it, and the only module a render block may import from. A new chapter adds its line here.
PAGE_LAYERS = {
    "formats": "gpukb.formats.pages",
    "gemm": "gpukb.gemm.pages",  # the Triton page too
    "performance": "gpukb.bench.pages",
    "datasets": "gpukb.datasets.pages",
    "about": "gpukb.site.pages",
}
#: Folders of pages that render nothing from code, and why.
NO_PAGE_LAYER = {"reference": "the API reference, rendered from docstrings by mkdocstrings"}
# --8<-- [end:page-layers]

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>`{3,}|~{3,})(?P<info>.*)$")
INCLUDE_LINE = re.compile(r'^--8<--\s+"(?P<target>[^"]+)"\s*$')
_SKIP_MARK = re.compile(r"<!--\s*(pytest\.mark\.skip|pytest-codeblocks:\s*skip)")
_EXPECTED_OUTPUT = re.compile(r"<!--\s*pytest-codeblocks:\s*expected-output")
_CLI_LINE = re.compile(r"^\$ gpukb( [\w.,:=+-]+)*$")
_RENDER_LINE = re.compile(r"^(from gpukb(\.\w+)* import [\w, ]+|import gpukb(\.\w+)*|print\(.*\))$")


@dataclass(frozen=True)
class Fence:
    """One fenced block of a Markdown file.

    Attributes:
        path: The file it is in.
        line: 1-based line number of the opening fence.
        marker: The fence characters, e.g. ```` ``` ```` or ``~~~``.
        info: The info string after the marker, stripped.
        body: The lines between the fences, dedented by the fence's indent.
        before: The nearest non-blank line above the fence.
        after: The nearest non-blank line below the closing fence.
    """

    path: Path
    line: int
    marker: str
    info: str
    body: list[str]
    before: str
    after: str

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


def iter_fences(path: Path) -> Iterator[Fence]:
    """Yield every fenced block of a Markdown file, nested ones (admonitions, tabs) included.

    Raises:
        ValueError: If a fence is never closed, naming the file and line.
    """
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE_OPEN.match(lines[i])
        if not match:
            i += 1
            continue
        indent, marker = match.group("indent"), match.group("marker")
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith(marker) and stripped.strip(marker[0]) == "":
                break
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        else:
            raise ValueError(f"{path}:{start + 1}: fence {marker} is never closed")
        before = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        after = next((lines[j].strip() for j in range(i + 1, len(lines)) if lines[j].strip()), "")
        yield Fence(Path(path), start + 1, marker, match.group("info").strip(), body, before, after)
        i += 1


def classify(fence: Fence) -> str:
    """Say how a fence is tested: ``"include"``, ``"codeblock"``, ``"render"`` or ``"cli"``.

    Raises:
        ValueError: If nothing tests it, saying where it is and what is allowed.
    """
    where = f"{fence.path}:{fence.line}: fence {fence.marker}{fence.info}"
    targets = fence.include_targets()
    if targets is not None:
        outside = [t for t in targets if not t.startswith(INCLUDE_ROOTS)]
        if outside:
            raise ValueError(f"{where} includes {outside}; includes must come from {list(INCLUDE_ROOTS)}")
        return "include"
    options = fence.options()
    if fence.language == "python" and options.get("exec") == "on" and "source" not in options:
        code = [line.strip() for line in fence.body if line.strip()]
        if code and all(_RENDER_LINE.match(line) for line in code):
            return "render"
        raise ValueError(f"{where}: a hidden build-time block may only import from gpukb and print")
    if fence.language == "console" and options.get("exec") == "on":
        commands = [line.strip() for line in fence.body if line.strip()]
        if commands and all(_CLI_LINE.match(line) for line in commands):
            return "cli"
        raise ValueError(f"{where}: a build-time console block may only run '$ gpukb ...' commands")
    if fence.marker.startswith("`") and fence.info in CODEBLOCK_LANGUAGES:
        if _SKIP_MARK.search(fence.before):
            raise ValueError(f"{where} is marked skip, so nothing runs it")
        if fence.info == "python":
            asserts = any(re.match(r"\s*assert\b", line) for line in fence.body)
            if not asserts and not _EXPECTED_OUTPUT.search(fence.after):
                raise ValueError(f"{where} runs but checks nothing: add an assert or an expected-output block")
        return "codeblock"
    raise ValueError(
        f"{where} is untested: use an include of a file under {list(INCLUDE_ROOTS)}, "
        f"or a block whose info string is exactly one of {list(CODEBLOCK_LANGUAGES)} (pytest-codeblocks runs it)"
    )


def render_imports(fence: Fence) -> list[str]:
    """The modules a render block imports from (``from gpukb.gemm.pages import x`` gives ``gpukb.gemm.pages``)."""
    found = []
    for line in fence.body:
        match = re.match(r"\s*(?:from\s+(?P<source>[\w.]+)\s+import\b|import\s+(?P<module>[\w.]+))", line)
        if match:
            found.append(match.group("source") or match.group("module"))
    return found


def expected_output_blocks(path: Path) -> set[int]:
    """Line numbers of fences that hold the expected output of the block before them."""
    fences = list(iter_fences(path))
    return {fence.line for fence in fences if _EXPECTED_OUTPUT.search(fence.before)}


def check_page(path: Path) -> list[str]:
    """Every problem with the fences of one page; an empty list means every fence is tested."""
    problems = []
    expected = expected_output_blocks(path)
    for fence in iter_fences(path):
        if fence.line in expected:  # asserted data: pytest-codeblocks compares it with the output above
            continue
        try:
            classify(fence)
        except ValueError as err:
            problems.append(str(err))
    return problems
