"""No untested code reaches a page: every fence in docs/ is an include, a block that runs, or a render block."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpukb.site.fences import PAGE_LAYERS, check_page, classify, iter_fences, render_imports
from tests.helpers import ROOT

PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))


@pytest.mark.parametrize("page", PAGES)
def test_every_fence_on_the_page_is_tested(page: str) -> None:
    assert check_page(ROOT / page) == []


def test_the_site_has_pages_with_fences() -> None:
    kinds = {classify(f) for page in PAGES for f in iter_fences(ROOT / page)}
    assert {"include", "render"} <= kinds


def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text)
    return page


GOOD = {
    "include": '```python title="x.py"\n--8<-- "snippets/formats/float32_fields.py:example"\n```\n',
    "include of a test's section": '```python title="tests/t/x.py"\n--8<-- "tests/t/x.py:c"\n```\n',
    "include in a tab": '=== "NumPy"\n\n    ```python exec="on" source="above"\n    --8<-- "snippets/a.py"\n    ```\n',
    "python that asserts": "```python\nx = 1 + 1\nassert x == 2\n```\n",
    "python with expected output": (
        "```python\nprint(2)\n```\n\n<!--pytest-codeblocks:expected-output-->\n\n```text\n2\n```\n"
    ),
    "bash": "```bash\necho hi\n```\n",
    "cli": '```console exec="on" source="above" result="text"\n$ gpukb format 0x63 --as e4m3\n```\n',
    "render": '```python exec="on" idprefix=""\nfrom gpukb.site.pages import errata\nprint(errata())\n```\n',
}

BAD = {
    "py info string": ("```py\nassert 1\n```\n", "untested"),
    "titled inline python": ('```python title="a.py"\nassert 1\n```\n', "untested"),
    "tilde fence": ("~~~python\nassert 1\n~~~\n", "untested"),
    "skipped block": ("<!--pytest.mark.skip-->\n```python\nassert 1\n```\n", "marked skip"),
    "python that checks nothing": ("```python\nprint(1)\n```\n", "checks nothing"),
    "hand-typed output": ("```text\n42.5 -> 44\n```\n", "untested"),
    "include from outside": ('```text\n--8<-- "README.md"\n```\n', "includes must come from"),
    "hidden exec with logic": ('```python exec="on"\nimport os\nprint(os.getcwd())\n```\n', "hidden build-time"),
    "console block": ("```console\n$ make test\n```\n", "untested"),
    "console exec of another command": ('```console exec="on"\n$ rm -rf /tmp/x\n```\n', "only run '$ gpukb"),
}


@pytest.mark.parametrize("name", GOOD)
def test_accepted_fences(tmp_path: Path, name: str) -> None:
    assert check_page(_page(tmp_path, GOOD[name])) == []


@pytest.mark.parametrize("name", BAD)
def test_rejected_fences(tmp_path: Path, name: str) -> None:
    text, message = BAD[name]
    problems = check_page(_page(tmp_path, text))
    assert len(problems) == 1
    assert message in problems[0]
    assert "page.md:" in problems[0]


def test_unclosed_fence_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="never closed"):
        check_page(_page(tmp_path, "```python\nassert 1\n"))


def test_render_imports_names_the_modules(tmp_path: Path) -> None:
    text = (
        '```python exec="on"\nfrom gpukb.gemm.pages import fp8_acceptance\nimport gpukb.tables\n'
        "print(fp8_acceptance())\n```\n"
    )
    (fence,) = iter_fences(_page(tmp_path, text))
    assert classify(fence) == "render"
    assert render_imports(fence) == ["gpukb.gemm.pages", "gpukb.tables"]


def test_every_chapter_maps_to_a_pages_module() -> None:
    assert all(module.startswith("gpukb.") and module.endswith(".pages") for module in PAGE_LAYERS.values())
