"""A dirty ``make serve`` rebuild keeps the other pages only while nothing but Markdown changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpukb.site.dirty_builds import DirtyBuilds, inputs_digest


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    for name, text in [
        ("mkdocs.yml", "site_name: x\n"),
        ("src/pkg/a.py", "A = 1\n"),
        ("snippets/s.py", "print(1)\n"),
        ("docs/index.md", "# x\n"),
        ("site/index.html", "old"),
        ("site/assets/x.css", ""),
    ]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path, tmp_path / "site"


def _bump(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a later mtime on any filesystem


def test_a_prose_edit_keeps_the_pages_and_a_code_edit_empties_the_site(tmp_path: Path) -> None:
    root, site = _repo(tmp_path)
    dirty = DirtyBuilds(root)
    assert dirty.before_build(site) is False, "the first build of a session keeps what is there"
    _bump(root / "docs/index.md", "# y\n")
    assert dirty.before_build(site) is False
    assert (site / "index.html").exists()
    _bump(root / "src/pkg/a.py", "A = 2\n")
    assert dirty.before_build(site) is True
    assert site.is_dir()
    assert list(site.iterdir()) == [], "every page is built again"
    assert dirty.before_build(site) is False


@pytest.mark.parametrize("change", ["edit a snippet", "add a data file", "remove a module", "edit mkdocs.yml"])
def test_every_kind_of_change_outside_the_pages_counts(tmp_path: Path, change: str) -> None:
    root, _ = _repo(tmp_path)
    before = inputs_digest(root)
    if change == "edit a snippet":
        _bump(root / "snippets/s.py", "print(2)\n")
    elif change == "add a data file":
        (root / "src/pkg/data.toml").write_text("", encoding="utf-8")
    elif change == "remove a module":
        (root / "src/pkg/a.py").unlink()
    else:
        _bump(root / "mkdocs.yml", "site_name: y\n")
    assert inputs_digest(root) != before


def test_a_root_that_is_no_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"root must be the folder of mkdocs.yml, got .*missing, which is not"):
        inputs_digest(tmp_path / "missing")


class _File:
    """The parts of a MkDocs ``File`` that the dirty build reads."""

    def __init__(self, dest: Path, generated_by: str | None, page: bool = True) -> None:
        self.abs_dest_path, self.generated_by, self.page = str(dest), generated_by, page

    def is_documentation_page(self) -> bool:
        return self.page

    def is_modified(self) -> bool:
        return True


def test_generated_pages_stand_only_while_the_site_is_kept(tmp_path: Path) -> None:
    root, site = _repo(tmp_path)
    built, unbuilt = site / "index.html", site / "missing.html"
    files = [
        _File(built, "api-autonav"),
        _File(unbuilt, "api-autonav"),
        _File(built, None),
        _File(built, "hooks", page=False),
    ]
    dirty = DirtyBuilds(root)
    dirty.before_build(site)
    assert dirty.keep_generated_pages(files) == 0, "the first build of a session renders every page"
    dirty.before_build(site)
    assert dirty.keep_generated_pages(files) == 1
    assert [f.is_modified() for f in files] == [False, True, True, True]
    _bump(root / "src/pkg/a.py", "A = 3\n")
    dirty.before_build(site)
    assert dirty.keep_generated_pages([_File(built, "api-autonav")]) == 0, "after a code change they render again"
