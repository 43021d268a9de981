"""A chapter is declared once: everything that lists chapters reads the declarations.

Each chapter package (``gpukb/<name>/__init__.py``) holds one :class:`Chapter` named ``CHAPTER``: its pages under
``docs/<name>/``, the page layer(s) that render them, the test module that checks their tables, its command-line
subcommand, its results kinds, its data files, the kernels it measures against a peer, its part of the mutation
scope and the GPU runs that re-record its results. The render-block allow-list, the cell-check inventory, the CLI,
the records' kinds, the data-file checks, the mutation scope, the re-record script and the home page's chapter
table are all derived from these declarations (:func:`chapters`), so a new chapter is added in one place.

This module sits on the lowest floor: it imports no chapter. Chapters are found by walking ``gpukb``'s
subpackages, and the modules a declaration names are given as strings, imported only when used.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import gpukb
from gpukb.arguments import flag, given, integer, text

#: ``"module:attribute"``: a dotted module path and an attribute name.
_TARGET = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")
#: A chapter's name: one lowercase word (a folder under docs/, snippets/, tests/ and a package under gpukb/).
_NAME = re.compile(r"[a-z][a-z0-9_]*")


def _target(name: str, value: object) -> str:
    value = text(name, value, max_length=200)
    if not _TARGET.fullmatch(value):
        raise ValueError(f"{name} must be 'module:attribute' (e.g. 'gpukb.tables:bytes_text'); got {given(value)}")
    return value


def _strings(name: str, value: object) -> None:
    if isinstance(value, str | bytes) or not isinstance(value, tuple | list):
        raise TypeError(f"{name} must be a tuple of strings; got {given(value)}")
    for item in value:
        text(f"an item of {name}", item)


@dataclass(frozen=True)
class DataFile:
    """A data file under ``gpukb/data/`` and how it is read.

    Attributes:
        parser: ``"module:function"``; the function takes ``(text, file)`` and returns the validated model, raising
            ``ValueError`` that names the file for a bad one.
        table: The array of tables whose entries the data-file tests corrupt one field at a time.
        schemas: What the site publishes a JSON Schema of: ``(table, "module:Model")`` pairs, the table ``""``
            where one model reads the whole file.
    """

    parser: str
    table: str
    schemas: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        _target("parser", self.parser)
        text("table", self.table)
        if isinstance(self.schemas, str | bytes) or not isinstance(self.schemas, tuple | list):
            raise TypeError(f"schemas must be (table, 'module:Model') pairs; got {given(self.schemas)}")
        for pair in self.schemas:
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                raise TypeError(f"schemas must be (table, 'module:Model') pairs; got {given(pair)}")
            text("a schema's table", pair[0])
            _target("a schema's model", pair[1])


@dataclass(frozen=True)
class GpuRun:
    """One GPU run that re-records a committed results file (``bench/rerecord.py`` runs the declared ones).

    Attributes:
        command: The command, run from the repository root; ``{out}`` is replaced by the output file.
        record: The id of the results file the output replaces.
        limit_s: The run's time limit in seconds on the GPU machine.
    """

    command: str
    record: str
    limit_s: int

    def __post_init__(self) -> None:
        if "{out}" not in text("command", self.command):
            raise ValueError(f"a GPU run's command writes its output to {{out}}; got {given(self.command)}")
        record = text("record", self.record, max_length=200)
        if not re.fullmatch(r"[a-z0-9_-]+(/[a-z0-9_.-]+)+", record) or ".." in record.split("/"):
            raise ValueError(f"record must be a results id such as 'gemm/fp8-h100'; got {given(record)}")
        integer("limit_s", self.limit_s, minimum=1, maximum=600)


@dataclass(frozen=True)
class Chapter:
    """One chapter of the site, declared once in its package as ``CHAPTER``.

    Attributes:
        name: One word used everywhere: ``docs/<name>/``, ``snippets/<name>/``, ``tests/<name>/``, the results
            folder ``data/results/<name>/`` and the prefix of its results kinds (``<name>.<kind>``). The one
            exception is the site's own pages (``docs/about/``, ``docs/contributing/``), whose code is the
            ``gpukb.site`` package: its kinds and results folder are named ``site``, after the package.
        folders: Every folder under ``docs/`` that holds the chapter's pages: ``(name,)`` unless declared; the
            site's pages are in two, one for readers (``about``) and one for contributors (``contributing``).
            ``start`` is in the first.
        title: The chapter's title, as in the navigation.
        summary: What the chapter answers, in one sentence (the home page's chapter table).
        start: The page a reader starts on, relative to ``docs/<name>/``.
        position: Order on the home page and in the command line's help.
        package: The Python package; ``gpukb.<name>`` unless the chapter's code lives elsewhere.
        page_layers: The modules that return Markdown for the chapter's pages (the only modules a render block on
            them may import).
        checks: The test module whose ``CHECKS`` verify the cells of the page layers' tables; or, for a chapter with
            one page module per page, each page layer → its own check module (``tests/<name>/pages/test_<page>.py``
            beside ``<package>.pages.<page>``); ``None`` for a chapter whose pages print no table.
        cli: Whether ``<package>.cli`` registers a subcommand through ``add_parser(subparsers)``.
        kinds: Results kinds (``"<name>.<kind>"``) → ``"module:Model"``.
        data_files: Data files (path under ``gpukb/data/``) → how each is read.
        kernel_pairs: ``"module:function"`` returning the chapter's kernels paired with their peers, which
            ``gpukb bench`` measures; ``None`` for a chapter without kernels.
        mutation: Source files (under ``src/``) in the mutation-testing scope.
        mutation_tests: The tests that run against each mutant of those files.
        gpu_runs: Named GPU runs that re-record the chapter's committed results.
    """

    name: str
    title: str
    summary: str
    start: str = "index.md"
    folders: tuple[str, ...] = ()
    position: int = 100
    package: str = ""
    page_layers: tuple[str, ...] = ()
    checks: str | Mapping[str, str] | None = None
    cli: bool = True
    kinds: Mapping[str, str] = field(default_factory=dict)
    data_files: Mapping[str, DataFile] = field(default_factory=dict)
    kernel_pairs: str | None = None
    mutation: tuple[str, ...] = ()
    mutation_tests: tuple[str, ...] = ()
    gpu_runs: Mapping[str, GpuRun] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(text("name", self.name, max_length=40)):
            raise ValueError(f"a chapter's name is one lowercase word (e.g. 'formats'); got {given(self.name)}")
        for name in ("title", "summary", "start", "package"):
            text(name, getattr(self, name))
        integer("position", self.position)
        flag("cli", self.cli)
        for name in ("folders", "page_layers", "mutation", "mutation_tests"):
            _strings(name, getattr(self, name))
        for folder in self.folders:
            if not _NAME.fullmatch(folder):
                raise ValueError(f"a chapter's docs folder is one lowercase word (e.g. 'about'); got {given(folder)}")
        if len(set(self.folders)) != len(self.folders):
            raise ValueError(f"chapter {self.name!r} names a docs folder twice: {list(self.folders)}")
        if self.kernel_pairs is not None:
            text("kernel_pairs", self.kernel_pairs)
        if isinstance(self.checks, Mapping):
            for layer, module in self.checks.items():
                text("a key of checks", layer)
                text(f"checks[{layer!r}]", module)
        elif self.checks is not None:
            text("checks", self.checks)
        if self.kernel_pairs is not None:
            _target("kernel_pairs", self.kernel_pairs)
        for name, kind in (("kinds", str), ("data_files", DataFile), ("gpu_runs", GpuRun)):
            mapping = getattr(self, name)
            if not isinstance(mapping, Mapping):
                raise TypeError(f"{name} must be a mapping; got {given(mapping)}")
            for key, value in mapping.items():
                text(f"a key of {name}", key)
                if not isinstance(value, kind):
                    raise TypeError(f"{name}[{key!r}] must be a {kind.__name__}; got {given(value)}")
        for target in self.kinds.values():
            _target("a kind's model", target)
        if not self.folders:
            object.__setattr__(self, "folders", (self.name,))
        elif self.folders[0] != self.name:
            raise ValueError(f"chapter {self.name!r}: its first docs folder is its name; got {list(self.folders)}")
        if not self.package:
            object.__setattr__(self, "package", f"gpukb.{self.name}")
        if not self.page_layers:
            object.__setattr__(self, "page_layers", (f"{self.package}.pages",))
        if isinstance(self.checks, Mapping) and not set(self.checks) <= set(self.page_layers):
            unknown = sorted(set(self.checks) - set(self.page_layers))
            raise ValueError(f"chapter {self.name!r}: checks name modules that are no page layer: {unknown}")
        prefix = self.package.rsplit(".", 1)[-1]
        for kind in self.kinds:
            if not kind.startswith(f"{prefix}."):
                raise ValueError(f"chapter {self.name!r}: results kind {kind!r} must start with '{prefix}.'")


def resolve(target: str) -> Any:
    """``"module:attribute"`` → the object (imported now).

    Raises:
        TypeError: If ``target`` is not a string.
        ValueError: If it is not ``"module:attribute"``, or no such module or attribute exists (naming it).
    """
    module, _, attribute = _target("target", target).partition(":")
    try:
        found = importlib.import_module(module)
    except ModuleNotFoundError as err:
        raise ValueError(f"{target!r}: no module {err.name!r} to import") from None
    if not hasattr(found, attribute):
        raise ValueError(f"{target!r}: module {module!r} has no attribute {attribute!r}")
    return getattr(found, attribute)


@cache
def chapters() -> tuple[Chapter, ...]:
    """Every declared chapter, in their declared order (then by name).

    Raises:
        ValueError: If two declarations use one name, or a package's ``CHAPTER`` is not a :class:`Chapter`.
    """
    found: dict[str, Chapter] = {}
    for info in pkgutil.iter_modules(gpukb.__path__):
        if not info.ispkg:
            continue
        declared = getattr(importlib.import_module(f"gpukb.{info.name}"), "CHAPTER", None)
        if declared is None:
            continue
        if not isinstance(declared, Chapter):
            raise ValueError(f"gpukb.{info.name}.CHAPTER is a {type(declared).__name__}, not a Chapter")
        if declared.name in found:
            raise ValueError(f"two packages declare the chapter {declared.name!r}")
        found[declared.name] = declared
    return tuple(sorted(found.values(), key=lambda c: (c.position, c.name)))


def chapter(name: str) -> Chapter:
    """The chapter declared under ``name``.

    Raises:
        TypeError: If ``name`` is not a string.
        ValueError: For a name no package declares (the message lists the names there are).
    """
    text("name", name, max_length=200)
    for declared in chapters():
        if declared.name == name:
            return declared
    raise ValueError(f"no chapter is named {name!r}; chapters: {[c.name for c in chapters()]}")


def page_layers() -> dict[str, tuple[str, ...]]:
    """Each chapter's docs folder → the modules its render blocks may import."""
    return {c.name: c.page_layers for c in chapters()}


def docs_folders() -> dict[str, str]:
    """Every folder under ``docs/`` that holds a chapter's pages → the chapter's name.

    Raises:
        ValueError: If two chapters declare one folder.
    """
    owners: dict[str, str] = {}
    for c in chapters():
        for folder in c.folders:
            if folder in owners:
                raise ValueError(f"docs/{folder}/ is declared by chapters {owners[folder]!r} and {c.name!r}")
            owners[folder] = c.name
    return owners


def check_modules() -> dict[str, str]:
    """Each page layer → the test module that checks the cells of its tables."""
    found: dict[str, str] = {}
    for c in chapters():
        if isinstance(c.checks, Mapping):
            found.update(c.checks)
        elif c.checks:
            found.update(dict.fromkeys(c.page_layers, c.checks))
    return found


def kinds() -> dict[str, str]:
    """Every results kind → ``"module:Model"``."""
    return {kind: target for c in chapters() for kind, target in c.kinds.items()}


def data_files() -> dict[str, DataFile]:
    """Every declared data file (path under ``gpukb/data/``) → how it is read."""
    return {path: spec for c in chapters() for path, spec in c.data_files.items()}


def kernel_pair_factories() -> list[Callable[[], Any]]:
    """Each chapter's function returning its kernel pairs, in chapter order."""
    return [resolve(c.kernel_pairs) for c in chapters() if c.kernel_pairs]
