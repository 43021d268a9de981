"""What a reader needs to run a page's snippets outside the repository, said once on the page.

Every snippet imports ``gpukb``; a reader who copies one needs the package (one ``pip`` line from the repository,
no clone), the other libraries the page's snippets import, and without a GPU the CPU stand-ins the snippets use
(Triton's interpreter, numba's CUDA simulator). The MkDocs hook puts :func:`note` once on every page that includes
a snippet, just before the first one (:func:`with_note`), so no page types it. ``tests/test_snippets.py`` runs
every snippet the way the note says: from the built wheel, installed outside the repository.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from gpukb.arguments import given, text
from gpukb.site.includes import INCLUDE_LINE, parse_target


@dataclass(frozen=True)
class StandIn:
    """An environment variable that runs a snippet's GPU kernels on the CPU.

    Attributes:
        variable: The variable, set to ``"1"``.
        library: The import name of the library it belongs to.
        effect: What it does, in a few words.
    """

    variable: str
    library: str
    effect: str


#: The CPU stand-ins the snippets use, by the library whose kernels they run (``gpukb.environment`` asks the same
#: of Triton through ``triton_interpreting``).
STAND_INS = (
    StandIn("TRITON_INTERPRET", "triton", "Triton kernels run in Triton's interpreter on the CPU"),
    StandIn("NUMBA_ENABLE_CUDASIM", "numba", "numba's CUDA kernels run in its CUDA simulator on the CPU"),
)

#: Libraries a snippet may import beyond ``gpukb``'s own dependencies → how a reader installs them.
EXTRA_PACKAGES = {
    "torch": "`torch` (without a GPU the CPU build: `pip install torch --index-url https://download.pytorch.org/whl/cpu`)",
    "triton": "`triton` (Linux; the pages used 3.6.0)",
    "numba": "`numba-cuda`",
    "ml_dtypes": "`ml_dtypes`",
    "sacrebleu": "`sacrebleu`",
}
#: ``gpukb``'s dependencies (pyproject.toml): pip installs them with it.
DEPENDENCIES = ("numpy", "pydantic", "pydantic_core")

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(```|~~~)")


@lru_cache(maxsize=1024)
def _module_imports(source: str) -> frozenset[str]:
    """The modules a file imports when it runs: at module level, and under module-level ``if``/``try`` blocks.

    Kept by the file's text: every page with snippets follows the same ``gpukb`` modules, and parsing them for
    each page took about a second of a build; a changed file is a new text, parsed again.
    """
    found: set[str] = set()
    nodes = list(ast.parse(source).body)
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            if node.module == "gpukb":
                found.update(f"gpukb.{a.name}" for a in node.names)
        elif isinstance(node, ast.If | ast.Try):
            nodes.extend(ast.iter_child_nodes(node))
        elif isinstance(node, ast.ExceptHandler):
            nodes.extend(node.body)
    return frozenset(found)


@cache
def _gpukb_module_file(src: Path, module: str) -> Path | None:
    path = src.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def libraries(snippet: Path, src: Path) -> set[str]:
    """The top-level libraries other than the standard library and ``gpukb`` that running ``snippet`` imports:
    its own imports and, through every ``gpukb`` module it reaches, theirs (module-level imports only: a lazy
    import inside a function is an optional one).

    Args:
        snippet: A ``.py`` file.
        src: The folder holding the ``gpukb`` package.
    """
    seen: set[str] = set()
    found: set[str] = set()
    files = [Path(snippet)]
    while files:
        for module in _module_imports(files.pop().read_text(encoding="utf-8")):
            top = module.split(".")[0]
            if top != "gpukb":
                if top not in sys.stdlib_module_names and top != "__future__":
                    found.add(top)
                continue
            # a package's modules run their package's __init__ first
            parts = module.split(".")
            for end in range(1, len(parts) + 1):
                name = ".".join(parts[:end])
                if name not in seen:
                    seen.add(name)
                    file = _gpukb_module_file(Path(src), name)
                    if file is not None:
                        files.append(file)
    return found


def included_snippets(markdown: str) -> list[str]:
    """The snippet files (``snippets/...``) a page's include lines name, in order, each once."""
    found: list[str] = []
    for line in markdown.splitlines():
        match = INCLUDE_LINE.match(line.strip())
        if match:
            path, _ = parse_target(match.group("target"))
            if path.startswith("snippets/") and path not in found:
                found.append(path)
    return found


def note(snippets: Iterable[str], root: Path, repository: str | None) -> str:
    """The note for a page whose snippets are ``snippets`` (paths from the repository root): the install line,
    the libraries they import besides ``gpukb``'s dependencies, the stand-ins they use without a GPU, and what a
    ``.cu`` file needs. A collapsed admonition, so it costs a reader one line.

    Args:
        snippets: The page's snippet files.
        root: The repository root.
        repository: The repository's URL (``https://...``), or ``None`` where the build does not know it.

    Raises:
        ValueError: For an empty list, a path outside ``snippets/``, or a library this note does not know how to
            install (add it to :data:`EXTRA_PACKAGES`).
    """
    paths = [text("a snippet", s) for s in snippets]
    if not paths:
        raise ValueError("a note needs at least one snippet; got none")
    outside = [p for p in paths if not p.startswith("snippets/")]
    if outside:
        raise ValueError(f"snippets are files under snippets/; got {outside}")
    if repository is not None and not re.fullmatch(r"https://[\w.-]+(/[\w.-]+)+", repository):
        raise ValueError(f"repository must be an https:// URL or None; got {given(repository)}")
    used: set[str] = set()
    for path in paths:
        if path.endswith(".py"):
            used |= libraries(Path(root) / path, Path(root) / "src")
    unknown = sorted(used - set(EXTRA_PACKAGES) - set(DEPENDENCIES))
    if unknown:
        raise ValueError(f"{paths}: snippets import {unknown}; known: {sorted(EXTRA_PACKAGES)}")
    url = repository or "<repository URL>"
    lines = [
        '??? tip "Run these snippets yourself"',
        "    Install the library straight from the repository, no clone needed (Python 3.11 or newer):",
        "",
        f'    `python -m pip install "gpukb @ git+{url}"`',
        "",
    ]
    if repository is None:
        lines += [
            "    (this build does not know the repository's address; the hosted site shows it here and at the "
            "foot of every page)",
            "",
        ]
    extras = [EXTRA_PACKAGES[name] for name in EXTRA_PACKAGES if name in used]
    if extras:
        lines += ["    This page's snippets also import " + ", ".join(extras) + ".", ""]
    stand_ins = [s for s in STAND_INS if s.library in used]
    if stand_ins:
        lines.append(
            "    Without a CUDA GPU, set " + "; ".join(f"`{s.variable}=1`: {s.effect}" for s in stand_ins) + "."
        )
        if any(s.library == "triton" for s in stand_ins):
            lines.append("    (The Triton snippets set `TRITON_INTERPRET` themselves when torch sees no GPU.)")
        lines.append("")
    if any(p.endswith(".cu") for p in paths):
        lines += ["    The `.cu` files need `nvcc` and a CUDA GPU; each file's header shows its `nvcc` line.", ""]
    lines.append(
        "    Every snippet is run this way by the test suite: from the built wheel, installed outside the repository."
    )
    return "\n".join(lines) + "\n"


def with_note(markdown: str, root: Path, repository: str | None) -> str:
    """The page with :func:`note` inserted once, just before the fence of its first snippet include, at that
    fence's indentation (inside a tab or an admonition it stays there); a page that includes no snippet is
    returned as it is."""
    snippets = included_snippets(markdown)
    if not snippets:
        return markdown
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        match = INCLUDE_LINE.match(line.strip())
        if not match or not parse_target(match.group("target"))[0].startswith("snippets/"):
            continue
        fence = next((j for j in range(i - 1, -1, -1) if _FENCE.match(lines[j])), None)
        if fence is None:
            raise ValueError(f"an include of a snippet outside a fence, at line {i + 1}: {line.strip()!r}")
        indent = _FENCE.match(lines[fence]).group("indent")
        block = [indent + row if row else "" for row in note(snippets, root, repository).split("\n")]
        return "\n".join([*lines[:fence], *block, *lines[fence:]])
    return markdown
