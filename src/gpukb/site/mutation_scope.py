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


def scope() -> tuple[list[str], list[str]]:
    """``(files to mutate, tests to run)``, each in declaration order without repeats."""
    files = [*BASE_FILES, *(f for c in chapters.chapters() for f in c.mutation)]
    tests = [*BASE_TESTS, *(t for c in chapters.chapters() for t in c.mutation_tests)]
    return list(dict.fromkeys(files)), list(dict.fromkeys(tests))


def _toml_list(key: str, values: list[str]) -> str:
    return f"{key} = [\n" + "".join(f'    "{v}",\n' for v in values) + "]\n"


def write(pyproject: Path) -> bool:
    """Write the scope into ``pyproject``'s ``[tool.mutmut]``; returns whether the file changed.

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
    files, tests = scope()
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
    args = parser.parse_args(argv)
    if args.write is not None:
        try:
            changed = write(args.write)
        except (ValueError, OSError) as err:  # a missing file, a folder, a pipe, another TOML: one line, status 2
            parser.error(str(err))
        print(f"{args.write}: {'updated' if changed else 'already up to date'}")
        return 0
    files, tests = scope()
    print(_toml_list("only_mutate", files) + _toml_list("pytest_add_cli_args_test_selection", tests), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
