"""How long the writer waits: a cold site build, a full build with the render cache warm, and the rebuilds of
``make serve`` (``mkdocs serve --dirty``) after an edit of one page's prose and after an edit of the package.

Run from the repository root with the environment that builds the site::

    python tools/site_build_times.py            # prose edit of docs/formats/anatomy.md, code edit of gpukb/tables.py

It builds in this one process, the way ``mkdocs serve`` does (load the config, build; again after each change),
into a temporary folder and with an empty render cache of its own (``GPUKB_RENDER_CACHE``), so your cache and
``site/`` are left alone. Steps, each timed with a wall clock:

1. cold: a full build with an empty cache, every code block runs (what CI and a fresh checkout pay once);
2. full, warm cache: a full build again, every block from the cache (``mkdocs build``, the first page of
   ``make serve`` once the cache is warm);
3. serve, prose edit: a paragraph added to one page (removed again afterwards), a dirty rebuild, and a check that
   the rebuilt page shows it;
4. serve, code edit: a comment added to one module of the package (removed afterwards): every page is built
   again, and the blocks that import the module, directly or not, run again.

Each step prints its wall-clock time, the CPU time of this process and that of its child processes (the console
blocks' ``gpukb`` commands, and the second process that runs pages' code blocks ahead of the build while the cache
misses: ``gpukb.site.page_helper``): on a busy machine the wall clock grows and the CPU times much less. A separate
process's ``mkdocs build`` also pays for starting Python and importing the libraries; the serve loop does not.
The figures depend on the machine and on what else runs on it: say both when you quote them.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _build(site_dir: Path, *, dirty: bool, startup: bool = False) -> tuple[float, float, float]:
    """Build once; return (wall-clock seconds, CPU seconds of this process, CPU seconds of its children)."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    start, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(site_dir), strict=not dirty)
    if startup:  # `mkdocs serve` starts its plugins once: those with on_startup (hooks, search) live on
        config.plugins.on_startup(command="serve" if dirty else "build", dirty=dirty)
    build(config, dirty=dirty)
    return time.perf_counter() - start, time.process_time() - cpu, _children_cpu() - children


class _Edit:
    """Append ``text`` to ``path`` for the duration of a ``with`` block; the file is restored byte for byte."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text = path, text

    def __enter__(self) -> None:
        self.original = self.path.read_bytes()
        self.path.write_bytes(self.original + self.text.encode("utf-8"))

    def __exit__(self, *exc: object) -> None:
        self.path.write_bytes(self.original)


def _stats() -> str:
    from gpukb.site import render_cache

    cache = render_cache.ACTIVE
    if cache is None:
        return "cache off"
    ahead = f" ({cache.ahead} of them run ahead by a second process)" if cache.ahead else ""
    return f"{cache.hits} blocks from the cache{ahead}, {cache.misses} run"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--page", default="docs/formats/anatomy.md", help="the page whose prose is edited")
    parser.add_argument("--module", default="src/gpukb/tables.py", help="the module whose code is edited")
    args = parser.parse_args(argv)
    page, module = ROOT / args.page, ROOT / args.module
    for path in (page, module):
        if not path.is_file():
            parser.error(f"{path} is not a file")
    os.chdir(ROOT)
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    sys.path.insert(0, str(ROOT / "src"))
    token = f"build-time-check-{os.getpid()}"
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpukb-build-times-") as tmp:
        os.environ["GPUKB_RENDER_CACHE"] = str(Path(tmp) / "cache")
        site = Path(tmp) / "site"
        rows.append(("cold: full build, empty cache", _build(site, dirty=False, startup=True), _stats()))
        rows.append(("full build, warm cache", _build(site, dirty=False), _stats()))
        _build(site, dirty=True, startup=True)  # serve starts on the full build (its first build renders all)
        with _Edit(page, f"\n\nA paragraph added by the benchmark: {token}.\n"):
            rows.append((f"serve: rebuild after a prose edit of {args.page}", _build(site, dirty=True), _stats()))
            built = site / page.relative_to(ROOT / "docs").with_suffix("") / "index.html"
            if page.name == "index.md":
                built = site / page.relative_to(ROOT / "docs").with_suffix(".html")
            if token not in built.read_text(encoding="utf-8"):
                sys.exit(f"the rebuilt {built} does not show the edit: the build served a stale page")
        with _Edit(module, f"\n# {token}\n"):
            rows.append((f"serve: rebuild after a code edit of {args.module}", _build(site, dirty=True), _stats()))
    width = max(len(r[0]) for r in rows)
    print(f"{'step'.ljust(width)}  wall s   CPU s  child CPU s  blocks")
    for name, (seconds, cpu, children), stats in rows:
        print(f"{name.ljust(width)}  {seconds:6.1f}  {cpu:6.1f}  {children:11.1f}  {stats}")
    print(f"cores: {os.cpu_count()}, load average before the last step: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
