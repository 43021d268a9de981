"""Which files the pages include, and which snippets no page includes.

Pages pull code in with pymdownx.snippets lines such as ``--8<-- "snippets/formats/x.py:example"``. Paths are
written from the repository root; ``:name`` selects the section between ``# --8<-- [start:name]`` and
``# --8<-- [end:name]``. Line-number ranges are refused: they silently drift when the file changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: An include line as pymdownx.snippets reads it: any number of dashes around ``8<``, either quote.
INCLUDE_LINE = re.compile(r"""^-+8<-+[ \t]+(?P<quote>["'])(?P<target>.+?)(?P=quote)\s*$""")
_INCLUDE = re.compile(r"""^\s*-+8<-+[ \t]+(?P<quote>["'])(?P<target>.+?)(?P=quote)\s*$""")
#: pymdownx.snippets' block form (a ``--8<--`` line, paths, a ``--8<--`` line): refused, the one-line form is checked.
BLOCK_MARKER = re.compile(r"^\s*;*-+8<-+\s*$")

#: Where included files may come from, and nowhere else: snippets (each has a check in tests/<topic>/test_snippets.py,
#: whatever its suffix) and the library (its modules are tested; its data files are validated by the schema models).
#: A page that explains a test or a bench script describes it in prose and names its path; it does not show it.
INCLUDE_ROOTS = ("snippets/", "src/gpukb/")

_SECTION_MARK = re.compile(r"--8<--\s*\[(?P<edge>start|end):(?P<name>[\w-]+)\]")


@dataclass(frozen=True)
class Include:
    """One ``--8<--`` line of a page.

    Attributes:
        page: The Markdown file holding the line.
        line: 1-based line number.
        path: The included file, relative to the repository root.
        section: The named section, or ``None`` for the whole file.
    """

    page: Path
    line: int
    path: str
    section: str | None


def parse_target(target: str) -> tuple[str, str | None]:
    """Split ``"snippets/a.py:name"`` into path and section name.

    Raises:
        ValueError: For a line-number range such as ``"a.py:3:9"``, which drifts when the file changes.
    """
    path, _, section = target.partition(":")
    if (section and not re.fullmatch(r"[\w-]+", section)) or section.isdigit():
        raise ValueError(f"include {target!r}: use a named section (path.py:name), not line numbers")
    return path, section or None


def page_includes(page: Path) -> list[Include]:
    """Every include line of one page, in order."""
    found = []
    for number, text in enumerate(Path(page).read_text(encoding="utf-8").splitlines(), start=1):
        match = _INCLUDE.match(text)
        if match:
            path, section = parse_target(match.group("target"))
            found.append(Include(Path(page), number, path, section))
    return found


def sections(file: Path) -> dict[str, str]:
    """The named sections of a file, each as the text between its start and end marks.

    Raises:
        ValueError: If a section is opened and not closed, or closed without being opened.
    """
    open_at: dict[str, int] = {}
    lines = Path(file).read_text(encoding="utf-8").splitlines(keepends=True)
    found: dict[str, str] = {}
    for index, text in enumerate(lines):
        mark = _SECTION_MARK.search(text)
        if not mark:
            continue
        name = mark.group("name")
        if mark.group("edge") == "start":
            open_at[name] = index
        elif name not in open_at:
            raise ValueError(f"{file}:{index + 1}: section {name!r} ends but never starts")
        else:
            body = [line for line in lines[open_at.pop(name) + 1 : index] if not _SECTION_MARK.search(line)]
            found[name] = "".join(body)
    if open_at:
        raise ValueError(f"{file}: sections {sorted(open_at)} start but never end")
    return found


def include_problem(target: str, root: Path | None = None) -> tuple[str, str] | None:
    """What is wrong with an include target, as ``(rule, message)`` of :data:`gpukb.site.fences.RULES`, or
    ``None``: rule ``include-path`` for ``..``, absolute paths, line ranges and roots other than
    :data:`INCLUDE_ROOTS`; with ``root`` given, ``include-file`` for a missing file or section, or a file under
    src/ that is neither a gpukb module nor a data file."""
    try:
        path, section = parse_target(target)
    except ValueError as err:
        return "include-path", str(err)
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "\\")) or "\\" in path or ".." in parts or "." in parts or re.match(r"^\w+:", path):
        return "include-path", f"include {target!r}: write the path from the repository root, without '..' or '.'"
    if not path.startswith(INCLUDE_ROOTS):
        return "include-path", f"include {target!r}: includes must come from {list(INCLUDE_ROOTS)}"
    if root is None:
        return None
    file = Path(root) / path
    if not file.is_file():
        return "include-file", f"included file {path} does not exist"
    if path.startswith("src/") and not (path.endswith(".py") or path.startswith("src/gpukb/data/")):
        return "include-file", f"{path} is neither a gpukb module nor a data file under src/gpukb/data/"
    if section is not None and section not in sections(file):
        return "include-file", f"{path} has no section {section!r} (has {sorted(sections(file))})"
    return None


def check_include(include: Include, root: Path) -> str | None:
    """A problem with one include (missing file or section), or ``None`` when it resolves."""
    target = root / include.path
    where = f"{include.page}:{include.line}"
    if not target.is_file():
        return f"{where}: included file {include.path} does not exist"
    if include.section is not None and include.section not in sections(target):
        return f"{where}: {include.path} has no section {include.section!r} (has {sorted(sections(target))})"
    return None


def snippet_files(root: Path) -> list[str]:
    """Every file under ``snippets/`` (``.py``, ``.cu`` or any other suffix), relative to ``root``, sorted.

    Python's byte-code caches (``__pycache__``) are left out: running a snippet may write them.
    """
    found = (p for p in (Path(root) / "snippets").rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return sorted(p.relative_to(root).as_posix() for p in found)


def orphans(root: Path, docs: Path | None = None) -> list[str]:
    """Snippet files (any suffix, see :func:`snippet_files`) that no page under ``docs`` includes."""
    docs = docs or root / "docs"
    included = {inc.path for page in sorted(docs.rglob("*.md")) for inc in page_includes(page)}
    return [path for path in snippet_files(root) if path not in included]
