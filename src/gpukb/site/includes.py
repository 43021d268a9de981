"""Which files the pages include, and which snippets no page includes.

Pages pull code in with pymdownx.snippets lines such as ``--8<-- "snippets/formats/x.py:example"``. Paths are
written from the repository root; ``:name`` selects the section between ``# --8<-- [start:name]`` and
``# --8<-- [end:name]``. Line-number ranges are refused: they silently drift when the file changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_INCLUDE = re.compile(r'^\s*--8<--\s+"(?P<target>[^"]+)"\s*$')
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
