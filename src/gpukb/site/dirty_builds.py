"""``make serve`` rebuilds only the pages that changed (``mkdocs serve --dirty``), and everything when more changed.

MkDocs' dirty build re-renders a page only when its Markdown file is newer than the page it built before. An
edit of one page's prose then costs one page, not the site's ~190 (a few seconds instead of tens). But the pages
also show what code computes, includes of snippets and source files, and data files: after an edit of any of
those, a dirty build would keep serving pages built from the old code. :class:`DirtyBuilds` notices such an edit
between two builds (anything under :data:`WATCHED` whose size or modification time changed, or a file added or
removed) and empties the site folder, so that every page is built again (the render cache still answers the code
blocks whose inputs did not change).

What a dirty build still does not redo after a prose edit: other pages' navigation (a changed page title shows in
the other pages' nav after the next full build) and the link check of pages that link to the edited one. The
strict ``mkdocs build`` of the tests and CI always builds everything.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

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

    def before_build(self, site_dir: Path) -> bool:
        """Empty ``site_dir`` when a watched input changed since the previous build; return whether it did."""
        current = inputs_digest(self.root)
        changed = self.previous is not None and current != self.previous
        self.previous = current
        if changed and Path(site_dir).is_dir():
            for entry in Path(site_dir).iterdir():  # the folder itself stays: the server serves from it
                if entry.is_dir():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
        return changed
