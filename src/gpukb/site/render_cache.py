"""A cache of what the pages' build-time code blocks print, so that a rebuild runs only the blocks whose code changed.

Every ``exec="on"`` block of markdown-exec (render blocks, snippets shown with their output, ``$ gpukb ...`` console
blocks) is run when the site is built: about 300 of them, most of the build's time. A rebuild after an edit to one
page's prose would run them all again. This module keeps each block's printed output on disk under a key made of
everything the output may depend on, and hands it back while none of that has changed:

* the block's code and its markdown-exec options (language, title, expected return code, ...);
* the source of every module of the package that the block imports, followed through the package's imports
  transitively (imports inside functions, relative imports and module names written as strings count too, and a
  module's parent packages, whose ``__init__`` runs first); a console block depends on the whole package;
* every file under the package that is not Python (the data files and recorded results), all of them;
* the interpreter, every installed distribution and its version, and the environment variables that steer
  torch, Triton, numba and CUDA (:data:`ENVIRONMENT_PREFIXES`) as they are when the block runs;
* the files and folder listings under the repository that the block read while it ran (seen through an audit
  hook), checked by content on every hit.

When in doubt the key changes: an edit to a docstring of an imported module re-runs the block. What a block did to
``os.environ`` (a snippet that sets ``TRITON_INTERPRET``) is stored too and done again on a hit, so later blocks of
the page see the same environment as in an uncached build (the hooks undo it before the next page:
:func:`restore_environ`). A block in a markdown-exec ``session`` shares state with other blocks and is never
cached; a block that fails is never stored.

In ``mkdocs serve`` the Python process lives on between builds: at its first build, and whenever the package's
source has changed since the previous one, the package's modules are dropped from ``sys.modules`` before anything
runs, so a block never runs old code (and never stores old output under a new key).

``GPUKB_RENDER_CACHE=off`` turns the cache off (the test suite's build does), ``GPUKB_RENDER_CACHE=/some/folder``
moves it; by default it lives in ``.cache/render/`` beside ``mkdocs.yml`` (ignored by git).
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

#: Environment variable: ``off`` (or ``0``, ``no``, ``false``) turns the cache off; any other value is its folder.
CACHE_ENV = "GPUKB_RENDER_CACHE"
#: The default folder, relative to the folder of ``mkdocs.yml``.
DEFAULT_FOLDER = Path(".cache") / "render"
#: Environment variables that can change what a block prints, by prefix (plus ``PATH``, which picks the ``gpukb``
#: a console block runs). Others (the terminal's, the shell's) are left out so that a new shell keeps the cache.
ENVIRONMENT_PREFIXES = (
    "TRITON_",
    "NUMBA_",
    "CUDA_",
    "TORCH",
    "PYTORCH_",
    "NVIDIA_",
    "OMP_",
    "MKL_",
    "OPENBLAS_",
    "GPUKB_",
    "PYTHON",
    "LANG",
    "LC_",
    "TZ",
    "COLUMNS",
    "MPL",
    "GITHUB_",
)
#: Variables that steer how the site is built, not what a block prints: ``GPUKB_PAGE_HELPER``, which the helper
#: process of ``gpukb.site.page_helper`` runs with (its blocks are stored for the build under the build's keys).
BUILD_ONLY_VARIABLES = frozenset({"GPUKB_PAGE_HELPER"})
#: The file of the cache folder that holds what each page's blocks cost (:meth:`RenderCache.page_costs`).
PAGE_COSTS = "page-costs.json"
#: Bump to drop every stored entry (a change of what an entry holds or of how keys are made).
FORMAT = 1
#: Entries unused for this long are deleted after a build.
KEEP_SECONDS = 7 * 24 * 3600
#: Module names written in a string ("gpukb.formats.pages" in a table of page layers) count as imports.
_MODULE_STRING = r"\b{package}(?:\.[A-Za-z_]\w*)*"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _imports(tree: ast.AST, module: str, is_package: bool, package: str) -> set[str]:
    """Every dotted name a module's syntax tree may import (absolute names; not all are modules of ``package``)."""
    names: set[str] = set()
    base = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from . import x, from ..y import z
                parts = base.split(".") if base else []
                parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                origin = ".".join([*parts, node.module] if node.module else parts)
            else:
                origin = node.module or ""
            names.add(origin)
            names.update(f"{origin}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and package in node.value:
            names.update(re.findall(_MODULE_STRING.format(package=re.escape(package)), node.value))
    return names


@dataclass(frozen=True)
class _Module:
    path: Path
    digest: str
    imports: frozenset[str]


@dataclass
class SourceIndex:
    """The modules of one package as found on disk: each module's content hash and what it may import.

    Args:
        src: The folder that holds the package (``src``).
        package: The package's import name (``gpukb``).
    """

    src: Path
    package: str = "gpukb"
    modules: dict[str, _Module] = field(default_factory=dict)
    data_digest: str = ""
    _closures: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def scan(cls, src: Path, package: str = "gpukb", previous: SourceIndex | None = None) -> SourceIndex:
        """Read the package under ``src``; files whose size and mtime are unchanged since ``previous`` are not
        parsed again (their content is still hashed).

        Raises:
            ValueError: If ``src/package`` is not a package folder.
        """
        root = Path(src) / package
        if not (root / "__init__.py").is_file():
            raise ValueError(f"{root} is not a package folder (no __init__.py); give the folder that holds it")
        index = cls(Path(src), package)
        seen = previous.modules if previous else {}
        data = hashlib.sha256()
        for path in sorted(root.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            content = path.read_bytes()
            if path.suffix != ".py":
                data.update(path.relative_to(root).as_posix().encode() + b"\0" + _sha(content).encode())
                continue
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            digest = _sha(content)
            old = seen.get(name)
            if old is not None and old.digest == digest:
                index.modules[name] = old
                continue
            try:
                tree = ast.parse(content, filename=str(path))
            except SyntaxError:  # the block that imports it fails and is not stored; depend on everything
                imports = frozenset({package})
            else:
                imports = frozenset(_imports(tree, name, is_package, package))
            index.modules[name] = _Module(path, digest, imports)
        index.data_digest = data.hexdigest()
        return index

    @property
    def digest(self) -> str:
        """One hash of the whole package: every module and every data file."""
        text = "\n".join(f"{name} {m.digest}" for name, m in sorted(self.modules.items()))
        return _sha(f"{text}\ndata {self.data_digest}".encode())

    def resolve(self, name: str) -> set[str]:
        """The package's modules that importing ``name`` runs: the longest prefix of ``name`` that is a module,
        and its parent packages (``gpukb.records.load`` -> ``gpukb.records``, ``gpukb``). Empty for other names."""
        parts = name.split(".")
        if parts[0] != self.package:
            return set()
        while parts and ".".join(parts) not in self.modules:
            parts.pop()
        return {".".join(parts[:n]) for n in range(1, len(parts) + 1)}

    def closure(self, names: Iterable[str]) -> frozenset[str]:
        """The package's modules reachable from the imported ``names``, transitively (a superset of what runs)."""
        out: set[str] = set()
        for name in names:
            for module in self.resolve(name):
                if module not in out:
                    out |= self._closure_of(module)
        return frozenset(out)

    def _closure_of(self, module: str) -> frozenset[str]:
        if module in self._closures:
            return self._closures[module]
        seen, todo = set(), [module]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            for name in self.modules[current].imports:
                todo.extend(self.resolve(name) - seen)
        self._closures[module] = frozenset(seen)
        return self._closures[module]

    def code_imports(self, code: str) -> frozenset[str] | None:
        """The package's modules a block of Python code may run, or None when the code does not parse."""
        try:
            tree = ast.parse(code)
        except SyntaxError:
            return None
        return self.closure(_imports(tree, "__block__", False, self.package))


_installed: tuple[tuple, str] | None = None


def installed_digest() -> str:
    """A hash of the interpreter and of every installed distribution with its version.

    Reading every distribution's metadata takes a noticeable part of a one-page rebuild, so the hash is kept while
    no folder on ``sys.path`` changed (installing, upgrading or removing a package changes its folder's mtime).
    """
    global _installed
    stamp = tuple((p, os.stat(p).st_mtime_ns) for p in sys.path if os.path.isdir(p))
    if _installed is None or _installed[0] != stamp:
        dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions() if d.metadata["Name"])
        _installed = (stamp, _sha("\n".join([f"format {FORMAT}", sys.version, sys.platform, *dists]).encode()))
    return _installed[1]


def variables_digest(environ: Mapping[str, str] | None = None) -> str:
    """A hash of the environment variables named by :data:`ENVIRONMENT_PREFIXES` (and ``PATH``), as they are when
    a block runs (an earlier block may have set one), but for :data:`BUILD_ONLY_VARIABLES`."""
    env = os.environ if environ is None else environ
    names = [k for k in env if (k == "PATH" or k.startswith(ENVIRONMENT_PREFIXES)) and k not in BUILD_ONLY_VARIABLES]
    return _sha("\n".join(sorted(f"{k}={env[k]}" for k in names)).encode())


class _Reads:
    """Files and folder listings under the repository that the running block touches (an audit hook sees them).

    One hook per process (audit hooks cannot be removed); it records only while a block runs.
    """

    installed = False
    active: list[tuple[str, str]] | None = None

    @classmethod
    def install(cls) -> None:
        if not cls.installed:
            sys.addaudithook(cls._hook)
            cls.installed = True

    @classmethod
    def _hook(cls, event: str, args: tuple) -> None:
        if cls.active is None:
            return
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
            if "r" in mode or "+" in mode:
                cls.active.append(("file", os.fsdecode(args[0])))
        elif event in ("os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
            cls.active.append(("dir", os.fsdecode(args[0])))


def _listing(path: Path) -> str:
    return _sha("\n".join(sorted(p.name for p in path.iterdir())).encode())


@dataclass
class RenderCache:
    """The cache of one site (one repository checkout). See the module's docstring for what a key holds.

    Args:
        folder: Where entries are stored (created when needed).
        root: The repository (the folder of ``mkdocs.yml``); reads under it are tracked.
        src: The folder that holds the package.
        package: The package's import name.
    """

    folder: Path
    root: Path
    src: Path
    package: str = "gpukb"
    index: SourceIndex | None = None
    environment: str = ""
    hits: int = 0
    misses: int = 0
    uncached: int = 0
    #: Blocks that a helper process ran for this build (``gpukb.site.page_helper``); the build found them stored.
    ahead: int = 0
    _used: set[str] = field(default_factory=set)
    #: (seconds, title or first line) of each block this build ran, for the report of the slowest.
    durations: list[tuple[float, str]] = field(default_factory=list)
    #: The page whose blocks run now (the hooks say it before each page), and for each page of this build the
    #: seconds its blocks ran and how many of them the cache answered (:meth:`take_page_runs`, :meth:`page_costs`).
    page: str | None = None
    _page_runs: dict[str, list[float]] = field(default_factory=dict)

    def begin_build(self) -> None:
        """Before a build: re-read the package, and when its source may have changed since its modules were
        imported (the first build of this cache, or a change since the previous one), drop them from
        ``sys.modules`` so that the blocks import the code as it is now."""
        previous = self.index
        self.index = SourceIndex.scan(self.src, self.package, previous)
        if previous is None or previous.digest != self.index.digest:
            forget_modules(self.package)
        self.environment = installed_digest()
        self.hits = self.misses = self.uncached = self.ahead = 0
        self._used = set()
        self.durations = []
        self.page, self._page_runs = None, {}
        _Reads.install()

    def _inputs_stamp(self) -> str:
        return _sha(f"{self.index.digest if self.index else ''}\n{self.environment}\n{variables_digest()}".encode())

    def inputs_unchanged(self) -> bool:
        """Whether the package, the installed libraries and the variables are as they were at the end of the last
        build that :meth:`mark_built` recorded in this folder: a hint that most blocks are stored (the key of each
        block decides; this only tells whether running blocks ahead, in a second process, is worth it)."""
        try:
            return (self.folder / "last-build").read_text(encoding="utf-8") == self._inputs_stamp()
        except OSError:
            return False

    def mark_built(self, page_runs: Mapping[str, Sequence[float]] | None = None) -> None:
        """Record, after a build, the inputs :meth:`inputs_unchanged` compares with, and what each page's blocks
        cost where this process, or the other, ran all of them (see :meth:`page_costs`).

        Args:
            page_runs: What another process ran for this build (its :meth:`take_page_runs`). The build finds the
                blocks of a page the other process ran in the cache; the other process's run of the page counts.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "last-build").write_text(self._inputs_stamp(), encoding="utf-8")
        costs = self.page_costs()
        for runs in (self.take_page_runs(), page_runs or {}):
            costs.update({page: round(seconds, 3) for page, (seconds, hits) in runs.items() if not hits and seconds})
        temporary = self.folder / f"{PAGE_COSTS}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(costs, indent=0, sort_keys=True), encoding="utf-8")
        os.replace(temporary, self.folder / PAGE_COSTS)

    def take_page_runs(self) -> dict[str, list[float]]:
        """For each page whose blocks went through the cache since the last call: ``[seconds its blocks ran, blocks
        the cache answered]``; the tally starts again."""
        runs, self._page_runs = self._page_runs, {}
        return runs

    def page_costs(self) -> dict[str, float]:
        """Seconds each page's code blocks took the last time a build ran all of them (none from the cache), from
        earlier builds with this folder: how ``gpukb.site.page_helper`` shares out the pages. Empty for a new folder.
        """
        try:
            costs = json.loads((self.folder / PAGE_COSTS).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(costs, dict):
            return {}
        numbers = {str(p): c for p, c in costs.items() if isinstance(c, (int, float)) and not isinstance(c, bool)}
        return {p: float(c) for p, c in numbers.items() if math.isfinite(c) and c >= 0}  # a damaged entry is none

    def _tally(self, seconds: float, hit: bool) -> None:
        if self.page is not None:
            run = self._page_runs.setdefault(self.page, [0.0, 0])
            run[0] += seconds
            run[1] += hit

    def key(self, language: str, code: str, options: Mapping[str, Any]) -> str | None:
        """The key of a block's output, or None when the block must not be cached (a session shares state)."""
        if self.index is None:
            raise RuntimeError("begin_build() was not called: the cache has no view of the source yet")
        if options.get("session"):
            return None
        modules = self.index.code_imports(code) if language in ("python", "py") else None
        if modules is None:  # a console or shell block (or code that does not parse) may run any of the package
            modules = frozenset(self.index.modules)
        parts = [
            f"format {FORMAT}",
            f"installed {self.environment}",
            f"variables {variables_digest()}",
            f"data {self.index.data_digest}",
            f"language {language}",
            "options " + json.dumps(options, sort_keys=True, default=str),
            *(f"module {m} {self.index.modules[m].digest}" for m in sorted(modules)),
            "code",
            code,
        ]
        return _sha("\n".join(parts).encode())

    def _entry_path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The stored entry of ``key`` if it is there and every file and listing it read is unchanged."""
        path = self._entry_path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        for kind, name, digest in entry.get("reads", []):
            target = self.root / name
            try:
                current = _listing(target) if kind == "dir" else _sha(target.read_bytes())
            except OSError:
                return None
            if current != digest:
                return None
        os.utime(path)  # kept by prune() while it is used
        return entry

    def put(self, key: str, output: str, environ: dict[str, str | None], reads: list[tuple[str, str]]) -> None:
        """Store a block's output, what it did to the environment and the repository files it read."""
        records = []
        package_folder = (self.src / self.package).resolve()
        # The package is in the key already, installed libraries are in the environment's digest (a virtual
        # environment inside the repository too), and the cache and git's own files are no input.
        skip = [package_folder, self.folder.resolve(), self.root.resolve() / ".git", Path(sys.prefix).resolve()]
        for kind, raw in dict.fromkeys(reads):  # in order, once each
            path = Path(raw) if os.path.isabs(raw) else Path.cwd() / raw
            try:
                path = path.resolve()
                relative = path.relative_to(self.root.resolve())
            except (OSError, ValueError):
                continue  # outside the repository: the interpreter's and the libraries' files
            if any(path == s or s in path.parents for s in skip) or {"__pycache__", "site-packages"} & set(path.parts):
                continue
            try:
                digest = _listing(path) if kind == "dir" else _sha(path.read_bytes())
            except OSError:
                continue
            records.append([kind, relative.as_posix(), digest])
        entry = {"output": output, "environ": environ, "reads": records}
        target = self._entry_path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(entry), encoding="utf-8")
        os.replace(temporary, target)

    def wrap(self, language: str, run: Callable[..., str]) -> Callable[..., str]:
        """markdown-exec's ``run`` function for ``language``, answered from the cache where it can be."""

        def cached_run(
            code: str, returncode: int | None = None, session: str | None = None, id: str | None = None, **extra: Any
        ) -> str:
            options = {"returncode": returncode, "session": session, "id": id, **extra}
            key = self.key(language, code, options)
            if key is None:
                self.uncached += 1
                return run(code, returncode=returncode, session=session, id=id, **extra)
            self._used.add(key)
            entry = self.get(key)
            if entry is not None:
                self.hits += 1
                self._tally(0.0, hit=True)
                _apply_environ(entry["environ"])
                return entry["output"]
            self.misses += 1
            before = dict(os.environ)
            _Reads.active = reads = []
            start = time.perf_counter()
            try:
                output = run(code, returncode=returncode, session=session, id=id, **extra)
            finally:
                _Reads.active = None
                changes = _environ_changes(before)
            label = extra.get("title") or next((line for line in code.splitlines() if line.strip()), "")
            seconds = time.perf_counter() - start
            self.durations.append((seconds, f"{language}: {label.strip()[:100]}"))
            self._tally(seconds, hit=False)
            self.put(key, output, changes, reads)
            return output

        return cached_run

    def prune(self, now: float | None = None) -> int:
        """Delete entries not used by this build and untouched for :data:`KEEP_SECONDS`; return how many."""
        now = time.time() if now is None else now
        removed = 0
        for path in self.folder.glob("*/*.json"):
            if path.stem not in self._used and now - path.stat().st_mtime > KEEP_SECONDS:
                path.unlink(missing_ok=True)
                removed += 1
        return removed


def _environ_changes(before: Mapping[str, str]) -> dict[str, str | None]:
    """What changed in ``os.environ`` since ``before`` (None: removed)."""
    changes: dict[str, str | None] = {k: v for k, v in os.environ.items() if before.get(k) != v}
    changes.update({k: None for k in before if k not in os.environ})
    return changes


def restore_environ(snapshot: Mapping[str, str]) -> dict[str, str | None]:
    """Put ``os.environ`` back as it was in ``snapshot``; return what had changed (None: had been removed).

    The hooks call it before each page and after the build: what one page's blocks do to the environment (a
    snippet that sets ``TRITON_INTERPRET``) stays on that page. A page then prints the same in a full build, in
    ``mkdocs serve``'s rebuild of that page alone and in a later build of the same process, and a block's key
    (which holds the variables as they are when it runs) is the same in all three.
    """
    changed = _environ_changes(snapshot)
    _apply_environ({k: snapshot.get(k) for k in changed})
    return changed


def _apply_environ(changes: Mapping[str, str | None]) -> None:
    for name, value in changes.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def forget_modules(package: str) -> list[str]:
    """Drop ``package`` and its modules from ``sys.modules`` (the next import runs their current code), all but
    this module, whose cache object lives on between the builds of ``mkdocs serve``."""
    names = [n for n in sys.modules if (n == package or n.startswith(f"{package}.")) and n != __name__]
    for name in names:
        del sys.modules[name]
    return names


def folder_for(config_dir: Path, environ: Mapping[str, str] | None = None) -> Path | None:
    """The cache folder :data:`CACHE_ENV` asks for, or the default under ``config_dir``; None when it is off."""
    env = os.environ if environ is None else environ
    value = env.get(CACHE_ENV, "").strip()
    if value.lower() in ("off", "0", "no", "false"):
        return None
    return Path(value).expanduser() if value else Path(config_dir) / DEFAULT_FOLDER


#: The cache of the build in progress (None: off). markdown-exec's formatters are global, so the cache is too.
ACTIVE: RenderCache | None = None


def install(config_dir: Path, src: Path, package: str = "gpukb") -> RenderCache | None:
    """Route markdown-exec's ``python`` and ``console`` blocks through a cache for the site in ``config_dir`` (or
    through none, when :data:`CACHE_ENV` turns it off). Called on every config load; keeps the cache of the same
    site between the builds of ``mkdocs serve``."""
    global ACTIVE
    folder = folder_for(config_dir)
    if folder is None:
        ACTIVE = None
    elif ACTIVE is None or ACTIVE.folder != folder or ACTIVE.root != Path(config_dir):
        ACTIVE = RenderCache(folder=folder, root=Path(config_dir), src=Path(src), package=package)
    _route_formatters()
    return ACTIVE


def _route_formatters() -> None:
    import markdown_exec
    from markdown_exec import base_format

    # markdown-exec's own run functions (not public API; markdown-exec is pinned below 2 in pyproject.toml).
    from markdown_exec._internal.formatters.console import _transform_source
    from markdown_exec._internal.formatters.python import _run_python
    from markdown_exec._internal.formatters.sh import _run_sh

    def run_for(language: str, run: Callable[..., str]) -> Callable[..., str]:
        return ACTIVE.wrap(language, run) if ACTIVE is not None else run

    def python(**kwargs: Any) -> Any:
        return base_format(language="python", run=run_for("python", _run_python), **kwargs)

    def console(**kwargs: Any) -> Any:
        return base_format(
            language="console", run=run_for("console", _run_sh), transform_source=_transform_source, **kwargs
        )

    markdown_exec.formatters["python"] = python
    markdown_exec.formatters["console"] = console
