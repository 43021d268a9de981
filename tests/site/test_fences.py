"""No untested code reaches a page: every piece of code in docs/ is an include, a block that runs, or a render block.

Each way of putting untested code on a page that an adversarial review tried (the "ways to put untested code on a
page" of issue 10) is a case below: the page is written in a temporary folder and the lint must refuse it with
the file, the line and the rule; the ways that pytest-codeblocks really runs must pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpukb.site.fences import (
    PAGE_SUFFIXES,
    RULES,
    LintError,
    check_docs,
    check_page,
    classify,
    iter_fences,
    page_files,
    page_layer_modules,
    render_calls,
    render_imports,
)
from tests.helpers import ROOT

PAGES = [p.relative_to(ROOT).as_posix() for p in page_files(ROOT / "docs")]


@pytest.mark.parametrize("page", PAGES)
def test_every_piece_of_code_on_the_page_is_tested(page: str) -> None:
    assert check_page(ROOT / page, ROOT) == []


def test_the_site_has_pages_with_fences() -> None:
    kinds = {classify(f, ROOT) for page in PAGES if page.endswith(".md") for f in iter_fences(ROOT / page)}
    assert {"include", "render", "cli", "codeblock"} <= kinds


def test_mkdocs_renders_no_page_suffix_the_lint_does_not_read() -> None:
    from mkdocs.utils import markdown_extensions

    assert set(markdown_extensions) <= set(PAGE_SUFFIXES)


def _tree(tmp_path: Path, text: str, name: str = "page.md") -> Path:
    """A repository with one page, a checked snippet and a library module, as the lint's includes need."""
    (tmp_path / "snippets" / "t").mkdir(parents=True)
    (tmp_path / "snippets" / "t" / "a.py").write_text("# --8<-- [start:s]\nprint(1)\n# --8<-- [end:s]\n")
    (tmp_path / "src" / "gpukb").mkdir(parents=True)
    (tmp_path / "src" / "gpukb" / "m.py").write_text("x = 1\n")
    (tmp_path / "src" / "gpukb" / "notes.txt").write_text("print('untested')\n")
    (tmp_path / "README.md").write_text("x\n")
    for shown in ("tests/test_snippets.py", "bench/formats_codec_speed.py"):  # real files, refused by their path
        (tmp_path / shown).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / shown).write_text(
            "# --8<-- [start:collector]\n# --8<-- [start:describe-run]\nx = 1\n"
            "# --8<-- [end:describe-run]\n# --8<-- [end:collector]\n"
        )
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / name
    page.write_text(text)
    return page


# The ways pytest-codeblocks or the build really checks, which the lint must accept.
GOOD = {
    "include": '```python title="a.py"\n--8<-- "snippets/t/a.py:s"\n```\n',
    "include of a library module": '```python title="src/gpukb/m.py"\n--8<-- "src/gpukb/m.py"\n```\n',
    "include in a tab": (
        '=== "NumPy"\n\n    ```python exec="on" source="above"\n    --8<-- "snippets/t/a.py"\n    ```\n'
    ),
    "run by pytest-codeblocks: python that asserts": "```python\nx = 1 + 1\nassert x == 2\n```\n",
    "run by pytest-codeblocks: python with expected output": (
        "```python\nprint(2)\n```\n\n<!--pytest-codeblocks:expected-output-->\n\n```text\n2\n```\n"
    ),
    "run by pytest-codeblocks: bash": "```bash\necho hi\n```\n",
    "run by pytest-codeblocks: python in an admonition": '!!! note "n"\n\n    ```python\n    assert 1\n    ```\n',
    "cli": '```console exec="on" source="above" result="text"\n$ gpukb format 0x63 --as e4m3\n```\n',
    "render": '```python exec="on" idprefix=""\nfrom gpukb.site.pages import errata\nprint(errata())\n```\n',
    "render with literal arguments": (
        '```python exec="on"\nfrom gpukb.formats.pages import cast_table\n'
        'print(cast_table("e4m3", [448, -0.0, float("inf"), 1.05 * 2.0**-127]))\n```\n'
    ),
    "admonition prose": '??? note "A claim"\n    Four spaces of prose in a note are not code.\n\n    More prose.\n',
}

# The ways to put untested code on a page: (page text, rule, line of the problem, page name).
BAD = {
    # slipped through the old lint
    "space before the language": ("``` python\nassert 1\n```\n", "untested-fence", 1, "page.md"),
    "render prints an expression": (
        '```python exec="on"\nfrom gpukb.site.pages import errata\nprint(__import__("os").getcwd())\n```\n',
        "render-block", 3, "page.md",
    ),
    "render prints a page function with a computed argument": (
        '```python exec="on"\nfrom gpukb.site.pages import errata\nprint(errata(open("x").read()))\n```\n',
        "render-block", 3, "page.md",
    ),
    "include with ..": ('```python\n--8<-- "snippets/../README.md"\n```\n', "include-path", 1, "page.md"),
    "include outside snippets/ and src/": ('```python\n--8<-- "README.md"\n```\n', "include-path", 1, "page.md"),
    "include of a non-.py file under src/": (
        '```text\n--8<-- "src/gpukb/notes.txt"\n```\n', "include-file", 1, "page.md",
    ),
    "include of a test module, as a titled block": (
        '```python title="tests/test_snippets.py"\n--8<-- "tests/test_snippets.py:collector"\n```\n',
        "include-path", 2, "page.md",
    ),
    "include of a bench script": (
        '```python\n--8<-- "bench/formats_codec_speed.py:describe-run"\n```\n', "include-path", 2, "page.md",
    ),
    "include line outside a fence, single quotes": ("Text.\n\n-8<- 'README.md'\n", "include-path", 3, "page.md"),
    "include in block form": ('```python\n--8<--\nREADME.md\n--8<--\n```\n', "include-path", 2, "page.md"),
    "page with a .markdown suffix": ("# Title\n", "page-suffix", 1, "page.markdown"),
    "indented code block": ("Text.\n\n    import os\n    os.remove('x')\n", "indented-code", 3, "page.md"),
    "indented code in an admonition": ('!!! note "n"\n\n        import os\n', "indented-code", 3, "page.md"),
    "raw pre/code HTML": ("<pre><code>x = 42.5  # becomes 44\n</code></pre>\n", "html-code", 1, "page.md"),
    "hand-typed output under a block that never runs": (
        '```python exec="on"\nfrom gpukb.site.pages import errata\nprint(errata())\n```\n\n'
        "<!--pytest-codeblocks:expected-output-->\n\n```text\n42\n```\n",
        "untested-fence", 8, "page.md",
    ),
    # caught before, and still
    "py info string": ("```py\nassert 1\n```\n", "untested-fence", 1, "page.md"),
    "titled inline python": ('```python title="a.py"\nassert 1\n```\n', "untested-fence", 1, "page.md"),
    "tilde fence": ("~~~python\nassert 1\n~~~\n", "untested-fence", 1, "page.md"),
    "skipped block": ("<!--pytest.mark.skip-->\n```python\nassert 1\n```\n", "skipped-fence", 2, "page.md"),
    "python that checks nothing": ("```python\nprint(1)\n```\n", "checks-nothing", 1, "page.md"),
    "hand-typed output": ("```text\n42.5 -> 44\n```\n", "untested-fence", 1, "page.md"),
    "hidden exec with logic": ('```python exec="on"\nimport os\nprint(os.getcwd())\n```\n', "render-block", 2,
                               "page.md"),
    "console block": ("```console\n$ make test\n```\n", "untested-fence", 1, "page.md"),
    "console exec of another command": ('```console exec="on"\n$ rm -rf /tmp/x\n```\n', "cli-block", 1, "page.md"),
    "unclosed fence": ("```python\nassert 1\n", "unclosed-fence", 1, "page.md"),
    "include that pytest-codeblocks runs": (
        '```python\n--8<-- "snippets/t/a.py:s"\n```\n', "include-run", 1, "page.md"
    ),
    "include that pytest-codeblocks runs, in an admonition": (
        '??? note "n"\n\n    ```python\n    --8<-- "snippets/t/a.py:s"\n    ```\n', "include-run", 3, "page.md",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", GOOD)
def test_accepted_code(tmp_path: Path, name: str) -> None:
    assert check_page(_tree(tmp_path, GOOD[name]), tmp_path) == []


@pytest.mark.parametrize("name", BAD)
def test_refused_code_names_file_line_and_rule(tmp_path: Path, name: str) -> None:
    text, rule, line, page_name = BAD[name]
    page = _tree(tmp_path, text, page_name)
    problems = check_page(page, tmp_path)
    assert problems, f"{name}: the lint let it through"
    assert any(f"{page}:{line}: [{rule}]" in problem for problem in problems), problems


def test_every_page_suffix_mkdocs_renders_is_read(tmp_path: Path) -> None:
    for suffix in (".markdown", ".mdown", ".mkd", ".mkdn", ".MD"):
        (tmp_path / f"p{suffix}").write_text("```py\nx\n```\n")
    names = [p.name for p in page_files(tmp_path)]
    assert sorted(names) == ["p.MD", "p.markdown", "p.mdown", "p.mkd", "p.mkdn"]
    assert len(check_docs(tmp_path)) >= 5


def _notebook(path: Path, markdown: str) -> Path:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": markdown.splitlines(keepends=True)}]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_code_in_a_notebook_markdown_cell_is_refused(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_nb.py").write_text("NOTEBOOK = 'nb.ipynb'\n")
    page = _notebook(tmp_path / "nb.ipynb", "Some text.\n\n```python\nprint(42)\n```\n")
    problems = check_page(page, tmp_path)
    assert len(problems) == 1
    assert f"{page}:cell 1:3: [notebook-markdown]" in problems[0]
    assert check_page(_notebook(page, "Only prose, `inline` code."), tmp_path) == []


def test_a_notebook_no_test_names_is_refused(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    page = _notebook(tmp_path / "lost.ipynb", "Prose.")
    assert "[notebook-untested]" in check_page(page, tmp_path)[0]


def test_render_calls_are_evaluated(tmp_path: Path) -> None:
    text = (
        '```python exec="on"\nfrom gpukb.gemm.pages.type_tables import type_answers, type_library\n'
        'print(type_answers())\nprint()\nprint("- " + type_library("cublaslt", groups=["a"]))\n```\n'
    )
    (fence,) = iter_fences(_tree(tmp_path, text))
    assert classify(fence) == "render"
    assert render_imports(fence) == ["gpukb.gemm.pages.type_tables"]
    calls = render_calls(fence)
    assert [(c.function, c.args, c.kwargs, c.prefix) for c in calls] == [
        ("type_answers", (), {}, ""),
        ("type_library", ("cublaslt",), {"groups": ["a"]}, "- "),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "from gpukb.tables import markdown_table",  # not a page layer
        "from gpukb.site.pages import errata as e",  # renamed
        "print(errata(x))",  # a name as argument
        "print(errata(*[1]))",
        "print(errata().upper())",
        "print(1 + errata())",
        'print(errata(float("1e999999")))',
        "errata()",
    ],
)
def test_render_blocks_do_nothing_but_call_page_functions(tmp_path: Path, line: str) -> None:
    text = f'```python exec="on"\nfrom gpukb.site.pages import errata\n{line}\nprint(errata())\n```\n'
    (fence,) = iter_fences(_tree(tmp_path, text))
    with pytest.raises(LintError, match=r"page\.md:3: \[render-block\]"):
        classify(fence)


def test_every_rule_has_a_refused_case() -> None:
    tested = {rule for _, rule, _, _ in BAD.values()} | {"notebook-markdown", "notebook-untested", "page-suffix"}
    assert set(RULES) == tested


def test_every_chapter_maps_to_a_pages_module() -> None:
    assert all(m.startswith("gpukb.") and (m.endswith(".pages") or ".pages." in m) for m in page_layer_modules())


# --- Markdown brought in by an include is held to the page's rules ---------------------------------------------

MARKDOWN_SNIPPETS = {
    "hand-typed output": ("Prose.\n\n```text\n42.5 becomes 44 in E4M3\n```\n", "untested-fence", 3),
    "python that checks nothing": ("```python\nprint(1)\n```\n", "checks-nothing", 1),
    "indented code": ("Prose.\n\n    import os\n", "indented-code", 3),
    "raw HTML code": ("<pre>x = 1</pre>\n", "html-code", 1),
    "an include out of bounds": ('--8<-- "README.md"\n', "include-path", 1),
}


@pytest.mark.parametrize("name", MARKDOWN_SNIPPETS)
@pytest.mark.parametrize("fenced", [False, True])
def test_included_markdown_meets_the_page_rules(tmp_path: Path, name: str, fenced: bool) -> None:
    text, rule, line = MARKDOWN_SNIPPETS[name]
    include = '--8<-- "snippets/t/notes.md"\n'
    body = "```markdown\n" + include + "```\n" if fenced else include
    page = _tree(tmp_path, "# Page\n\n" + body)
    (tmp_path / "snippets" / "t" / "notes.md").write_text(text)
    problems = check_page(page, tmp_path)
    at = 4 if fenced else 3
    assert any(p.startswith(f"snippets/t/notes.md:{line}: [{rule}]") and p.endswith(f"(included by {page}:{at})")
               for p in problems), problems  # fmt: skip


def test_included_markdown_sections_and_nested_includes_are_read(tmp_path: Path) -> None:
    page = _tree(tmp_path, '# Page\n\n--8<-- "snippets/t/outer.md:part"\n')
    (tmp_path / "snippets" / "t" / "outer.md").write_text(
        'Not shown.\n\n```text\n1\n```\n<!-- --8<-- [start:part] -->\nShown.\n\n--8<-- "snippets/t/inner.md"\n'
        "<!-- --8<-- [end:part] -->\n"
    )
    (tmp_path / "snippets" / "t" / "inner.md").write_text("```text\n7 -> 8\n```\n")
    problems = check_page(page, tmp_path)
    assert len(problems) == 1, problems  # the fence outside the section is not on the page
    assert problems[0].startswith("snippets/t/inner.md:1: [untested-fence]")
    assert problems[0].endswith(f"(included by snippets/t/outer.md:part:3) (included by {page}:3)")


def test_markdown_that_includes_itself_is_refused(tmp_path: Path) -> None:
    page = _tree(tmp_path, '--8<-- "snippets/t/loop.md"\n')
    (tmp_path / "snippets" / "t" / "loop.md").write_text('Text.\n--8<-- "snippets/t/loop.md"\n')
    problems = check_page(page, tmp_path)
    assert any("[include-file] snippets/t/loop.md includes itself" in p for p in problems), problems


def test_included_markdown_with_tested_code_is_accepted(tmp_path: Path) -> None:
    page = _tree(tmp_path, '# Page\n\n--8<-- "snippets/t/good.md"\n')
    (tmp_path / "snippets" / "t" / "good.md").write_text(
        "Prose with `inline code`.\n\n```python\nassert 1 + 1 == 2\n```\n\n"
        '```python title="a.py"\n--8<-- "snippets/t/a.py:s"\n```\n'
    )
    assert check_page(page, tmp_path) == []
