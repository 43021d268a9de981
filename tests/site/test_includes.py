"""Every include resolves, every snippet is included somewhere, and a broken include stops the build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpukb.site.includes import (
    check_include,
    include_problem,
    orphans,
    page_includes,
    parse_target,
    sections,
    snippet_files,
)
from tests.helpers import ROOT

PAGES = sorted((ROOT / "docs").rglob("*.md"))


def test_every_include_resolves() -> None:
    includes = [inc for page in PAGES for inc in page_includes(page)]
    assert includes, "the site includes no file at all"
    assert [p for inc in includes if (p := check_include(inc, ROOT))] == []


def test_no_snippet_is_orphaned() -> None:
    assert orphans(ROOT) == []


def _tree(tmp_path: Path, page: str, snippets: dict[str, str]) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(page)
    for name, text in snippets.items():
        path = tmp_path / "snippets" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


SECTIONED = "# --8<-- [start:demo]\nprint(1)\n# --8<-- [end:demo]\n"


def test_orphan_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, '```py\n--8<-- "snippets/t/used.py:demo"\n```\n', {"t/used.py": SECTIONED, "t/lost.py": ""})
    assert orphans(root) == ["snippets/t/lost.py"]


def test_cuda_and_other_snippets_count_too(tmp_path: Path) -> None:
    page = '```cpp\n--8<-- "snippets/t/used.cu"\n```\n'
    files = {"t/used.cu": "", "t/lost.cu": "", "t/data.csv": "", "t/__pycache__/x.cpython-311.pyc": ""}
    root = _tree(tmp_path, page, files)
    assert snippet_files(root) == ["snippets/t/data.csv", "snippets/t/lost.cu", "snippets/t/used.cu"]
    assert orphans(root) == ["snippets/t/data.csv", "snippets/t/lost.cu"]


def test_missing_file_and_section_are_reported(tmp_path: Path) -> None:
    page = '```py\n--8<-- "snippets/t/used.py:nope"\n```\n```py\n--8<-- "snippets/t/gone.py"\n```\n'
    root = _tree(tmp_path, page, {"t/used.py": SECTIONED})
    problems = [check_include(inc, root) for inc in page_includes(root / "docs" / "index.md")]
    assert "has no section 'nope' (has ['demo'])" in problems[0]
    assert "snippets/t/gone.py does not exist" in problems[1]


def test_sections_strip_their_marks(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text("x = 0\n" + SECTIONED)
    assert sections(path) == {"demo": "print(1)\n"}
    path.write_text("# --8<-- [start:open]\nx = 1\n")
    with pytest.raises(ValueError, match="start but never end"):
        sections(path)


@pytest.mark.parametrize("target", ["snippets/a.py:3:9", "snippets/a.py:12"])
def test_line_ranges_are_refused(target: str) -> None:
    with pytest.raises(ValueError, match="named section"):
        parse_target(target)


def test_a_missing_include_breaks_the_build(tmp_path: Path) -> None:
    """pymdownx.snippets with check_paths: true, as in mkdocs.yml, turns a missing file into a build error."""
    root = _tree(tmp_path, '```text\n--8<-- "snippets/missing.py"\n```\n', {})
    (root / "mkdocs.yml").write_text(
        "site_name: t\nmarkdown_extensions:\n  - pymdownx.superfences\n"
        "  - pymdownx.snippets:\n      base_path: ['.']\n      check_paths: true\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=root, capture_output=True, text=True
    )
    assert proc.returncode != 0
    assert "missing.py" in proc.stderr + proc.stdout


@pytest.mark.parametrize(
    ("target", "rule"),
    [
        ("snippets/../README.md", "include-path"),
        ("../secrets.py", "include-path"),
        ("/etc/passwd", "include-path"),
        ("snippets\\..\\x.py", "include-path"),
        ("./snippets/a.py", "include-path"),
        ("README.md", "include-path"),
        ("tests/helpers.py", "include-path"),
        # the files the contributing page used to show: a test module and a bench script are not includes
        ("tests/test_snippets.py:collector", "include-path"),
        ("tests/gemm/test_snippets.py:checks", "include-path"),
        ("bench/formats_codec_speed.py:describe-run", "include-path"),
        ("docs/contributing/contributing.md", "include-path"),
        ("mkdocs.yml", "include-path"),
        ("srcx/gpukb/a.py", "include-path"),
        ("snippetsx/a.py", "include-path"),
        ("https://example.com/x.py", "include-path"),
        ("snippets/a.py:3:9", "include-path"),
        ("snippets/gone.py", "include-file"),
        ("src/gpukb/py.typed.txt", "include-file"),
    ],
)
def test_include_targets_are_refused(tmp_path: Path, target: str, rule: str) -> None:
    (tmp_path / "src" / "gpukb").mkdir(parents=True)
    (tmp_path / "src" / "gpukb" / "py.typed.txt").write_text("x")
    problem = include_problem(target, tmp_path)
    assert problem is not None
    assert problem[0] == rule


def test_include_targets_that_resolve(tmp_path: Path) -> None:
    root = _tree(tmp_path, "", {"t/used.py": SECTIONED, "t/k.cu": ""})
    (root / "src" / "gpukb" / "data").mkdir(parents=True)
    (root / "src" / "gpukb" / "data" / "f.toml").write_text("")
    for target in ("snippets/t/used.py:demo", "snippets/t/k.cu", "src/gpukb/data/f.toml"):
        assert include_problem(target, root) is None, target
    assert include_problem("snippets/t/used.py:nope", root) == (
        "include-file",
        "snippets/t/used.py has no section 'nope' (has ['demo'])",
    )
