"""The mutation-testing scope, from the chapters' declarations: the files mutmut mutates and the tests it runs
against each mutant. mutmut reads them from ``pyproject.toml``; ``python -m gpukb.site.mutation_scope --write``
writes them there, and ``tests/test_chapters.py`` fails when the two differ.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from gpukb import arguments, chapters

#: Layers below the chapters in the scope: the argument checks, tested by the fuzz tests and the CLI's.
BASE_FILES = ("src/gpukb/arguments.py",)
BASE_TESTS = ("tests/fuzz", "tests/test_cli.py")
#: What every chapter's part runs besides its own tests: the page-table inventory, which renders each page's tables
#: and runs its chapter's cell checks on them (a chapter without it leaves its page layer untested: the GEMM, formats
#: and performance runs lacked it).
CHAPTER_TESTS = ("tests/site/test_page_tables.py",)
#: Layers below the chapters run on their own like a chapter (``--chapter records``): name → (files, tests).
LAYERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "records": (
        ("src/gpukb/records/run.py", "src/gpukb/records/store.py", "src/gpukb/records/script.py"),
        ("tests/records/test_records.py", "tests/records/test_write_safety.py", "tests/records/test_script.py"),
    ),
}


def parts() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Each chapter with a mutation scope, then each layer of :data:`LAYERS`: name → (files, tests)."""
    declared = {c.name: (c.mutation, CHAPTER_TESTS + c.mutation_tests) for c in chapters.chapters() if c.mutation}
    return {**declared, **LAYERS}


def scope(chapter: str | None = None) -> tuple[list[str], list[str]]:
    """``(files to mutate, tests to run)``, each in declaration order without repeats.

    Args:
        chapter: A chapter's (or a layer's) name for its part alone (its files, the base tests and its own tests:
            what a run of one chapter mutates and selects), or ``None`` for the whole scope.

    Raises:
        ValueError: For a name that is not a chapter with a mutation scope nor a layer (naming those there are).
    """
    named = parts()
    if chapter is not None and chapter not in named:
        raise ValueError(
            f"chapter must be one with a mutation scope, one of {list(named)}; got {arguments.given(chapter)}"
        )
    everything = [(c.mutation, CHAPTER_TESTS + c.mutation_tests) for c in chapters.chapters()] + list(LAYERS.values())
    chosen = everything if chapter is None else [named[chapter]]  # a chapter may add tests alone (the About pages)
    files = [*(BASE_FILES if chapter is None else ()), *(f for fs, _ in chosen for f in fs)]
    tests = [*BASE_TESTS, *(t for _, ts in chosen for t in ts)]
    return list(dict.fromkeys(files)), list(dict.fromkeys(tests))


def _toml_list(key: str, values: list[str]) -> str:
    return f"{key} = [\n" + "".join(f'    "{v}",\n' for v in values) + "]\n"


def write(pyproject: Path, chapter: str | None = None) -> bool:
    """Write the scope (of one chapter, see :func:`scope`) into ``pyproject``'s ``[tool.mutmut]``; returns whether
    the file changed.

    Raises:
        FileNotFoundError: If there is no file at ``pyproject``.
        ValueError: If something other than a regular file is there (a folder, a named pipe: refused before it is
            opened), it is not UTF-8 text, or it has no ``[tool.mutmut]`` lists to replace.
    """
    pyproject = arguments.regular_file("pyproject", pyproject)
    try:
        text = pyproject.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{pyproject}: not UTF-8 text ({err.reason})") from None
    files, tests = scope(chapter)
    new = text
    for key, values in (("only_mutate", files), ("pytest_add_cli_args_test_selection", tests)):
        new, count = re.subn(rf"^{key} = \[\n?(?:.*\n)*?\]\n", _toml_list(key, values), new, count=1, flags=re.M)
        if count != 1:
            raise ValueError(f"{pyproject}: no `{key} = [...]` list under [tool.mutmut]")
    if new != text:
        pyproject.write_text(new, encoding="utf-8")
    return new != text


def main(argv: Sequence[str] | None = None) -> int:
    """Print the scope, or write it into ``pyproject.toml`` with ``--write``."""
    parser = argparse.ArgumentParser(prog="python -m gpukb.site.mutation_scope", description=__doc__)
    parser.add_argument("--write", type=Path, nargs="?", const=Path("pyproject.toml"), help="the pyproject.toml")
    parser.add_argument(
        "--chapter", help="one chapter's part only (for a run of that chapter in a copy of the checkout)"
    )
    args = parser.parse_args(argv)
    try:
        if args.write is not None:  # a missing file, a folder, a pipe, another TOML, a chapter: one line, status 2
            changed = write(args.write, args.chapter)
            print(f"{args.write}: {'updated' if changed else 'already up to date'}")
            return 0
        files, tests = scope(args.chapter)
    except (ValueError, OSError) as err:
        parser.error(str(err))
    print(_toml_list("only_mutate", files) + _toml_list("pytest_add_cli_args_test_selection", tests), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
