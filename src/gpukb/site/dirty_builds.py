"""``make serve`` rebuilds only the pages that changed (``mkdocs serve --dirty``), and everything when more changed.

MkDocs' dirty build re-renders a page only when its Markdown file is newer than the page it built before. An
edit of one page's prose then costs one page, not the site's ~190 (a few seconds instead of tens). But the pages
also show what code computes, includes of snippets and source files, and data files: after an edit of any of
those, a dirty build would keep serving pages built from the old code. :class:`DirtyBuilds` notices such an edit
between two builds (anything under :data:`WATCHED` whose size or modification time changed, or a file added or
removed) and empties the site folder, so that every page is built again (the render cache still answers the code
blocks whose inputs did not change).

MkDocs counts a page that a plugin generates (the API reference, ~145 pages) as changed in every build. Its
content comes from the package alone, and a change there empties the site first, so while the site is kept
:meth:`DirtyBuilds.keep_generated_pages` lets those pages stand as they were built.

What a dirty build still does not redo after a prose edit: other pages' navigation (a changed page title shows in
the other pages' nav after the next full build) and the link check of pages that link to the edited one. The
strict ``mkdocs build`` of the tests and CI always builds everything.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: What the pages depend on besides their own Markdown, relative to the folder of ``mkdocs.yml``.
WATCHED = ("src", "snippets", "mkdocs.yml", "pyproject.toml")


def inputs_digest(root: Path, watched: tuple[str, ...] = WATCHED) -> str:
    """A hash of the path, size and modification time of every file under ``watched`` (cheap: no file is read).

    Raises:
        ValueError: If ``root`` is not a folder.
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be the folder of mkdocs.yml, got {root!s}, which is not a folder")
    digest = hashlib.sha256()
    for name in watched:
        top = root / name
        paths = sorted(top.rglob("*")) if top.is_dir() else [top]
        for path in paths:
            if "__pycache__" in path.parts or not path.is_file():
                continue
            stat = path.stat()
            digest.update(f"{path.relative_to(root).as_posix()} {stat.st_size} {stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


@dataclass
class DirtyBuilds:
    """Decides, before each build of one ``mkdocs serve --dirty`` session, whether the last build's pages may stay.

    Args:
        root: The folder of ``mkdocs.yml``.
    """

    root: Path
    previous: str | None = None
    #: Whether the coming build renders every page: the first of the session, or one after a watched change.
    full: bool = True

    def before_build(self, site_dir: Path) -> bool:
        """Empty ``site_dir`` when a watched input changed since the previous build; return whether it did."""
        current = inputs_digest(self.root)
        changed = self.previous is not None and current != self.previous
        self.full = self.previous is None or changed
        self.previous = current
        if changed and Path(site_dir).is_dir():
            for entry in Path(site_dir).iterdir():  # the folder itself stays: the server serves from it
                if entry.is_dir():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
        return changed

    def keep_generated_pages(self, files: Iterable[Any]) -> int:
        """Mark the generated pages (MkDocs ``File`` objects with ``generated_by`` set) that the kept site already
        has as unchanged, so that a dirty build does not render them again; return how many. Does nothing in a
        build that renders every page."""
        if self.full:
            return 0
        kept = 0
        for file in files:
            if file.generated_by and file.is_documentation_page() and Path(file.abs_dest_path).is_file():
                file.is_modified = _unchanged
                kept += 1
        return kept


def _unchanged() -> bool:
    return False
