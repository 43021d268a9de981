"""Run a snippet the way a reader would: a Python script in a fresh interpreter, a CUDA file through nvcc.

The one place that finds ``nvcc`` (:func:`find_nvcc`) and the one runner for ``.cu`` snippets
(:func:`run_cuda_snippet`): tests, bench scripts and the environment report call these rather than looking for
the compiler themselves. A ``.cu`` snippet is compiled with the ``nvcc`` line its header comment shows the
reader (``//   nvcc -O2 ... snippets/x.cu -o x -lcublasLt``), so the command a reader copies is the one tested.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from gpukb.environment import DEFAULT_CUDA_PREFIX, find_nvcc, gpu_present

#: Where :func:`find_nvcc` looks after ``$NVCC`` and ``PATH``: the toolkit named by ``$CUDA_HOME`` /
#: ``$CUDA_PATH``, then the default install prefix of NVIDIA's packages.

#: The flags used when a ``.cu`` snippet's header shows no ``nvcc`` line.
DEFAULT_NVCC_FLAGS = ("-O2", "-std=c++17")

_NVCC_LINE = re.compile(r"^\s*//\s*(?:\$\s*)?nvcc\s+(?P<args>.+?)\s*$")


class SnippetError(RuntimeError):
    """A snippet exited with an error, or failed to compile; the message carries its stderr."""


class UnavailableError(RuntimeError):
    """This machine cannot run the snippet; the message says what is missing."""


class NoGpuError(UnavailableError):
    """No CUDA GPU here. Tests skip (CI has no GPU), even under ``GPUKB_REQUIRE_ALL=1``."""


class MissingToolError(UnavailableError):
    """A tool (``nvcc``) is missing. Tests skip, or fail where ``GPUKB_REQUIRE_ALL=1`` demands every test run."""


def nvcc_flags(path: Path) -> list[str]:
    """The flags of the ``nvcc`` line in a ``.cu`` file's header comment, without the file and its ``-o``.

    ``//   nvcc -O2 -std=c++17 snippets/gemm/x.cu -o x -lcublasLt`` gives ``["-O2", "-std=c++17",
    "-lcublasLt"]``; a file with no such line gets :data:`DEFAULT_NVCC_FLAGS`.
    """
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        match = _NVCC_LINE.match(line)
        if not match:
            continue
        words, flags = shlex.split(match.group("args")), []
        skip = False
        for word in words:
            if skip:
                skip = False
            elif word == "-o":
                skip = True
            elif not word.endswith(".cu"):
                flags.append(word)
        return flags
    return list(DEFAULT_NVCC_FLAGS)


def compile_cuda(
    path: Path, output: Path, *, flags: Sequence[str] | None = None, compile_only: bool = False
) -> list[str]:
    """Compile a ``.cu`` file with :func:`find_nvcc`; return the command that ran.

    Args:
        path: The ``.cu`` file.
        output: The executable (or object file, with ``compile_only``) to write.
        flags: nvcc flags; by default those of the file's own ``nvcc`` line (:func:`nvcc_flags`).
        compile_only: Pass ``-c`` and leave out the link flags (``-l...``): checks the code, needs no GPU.

    Raises:
        MissingToolError: If there is no nvcc.
        SnippetError: If nvcc reports an error.
    """
    nvcc = find_nvcc()
    if nvcc is None:
        where = f"$NVCC, PATH, $CUDA_HOME/bin, {DEFAULT_CUDA_PREFIX}/bin"
        raise MissingToolError(f"no nvcc to compile {path} (looked at {where})")
    chosen = list(nvcc_flags(path) if flags is None else flags)
    libs = [] if compile_only else [f for f in chosen if f.startswith("-l")]  # after the source, as a reader's
    options = [*(["-c"] if compile_only else []), *(f for f in chosen if not f.startswith("-l"))]
    command = [nvcc, *options, str(path), "-o", str(output), *libs]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise SnippetError(f"nvcc failed on {path} (status {proc.returncode}):\n{' '.join(command)}\n{proc.stderr}")
    return command


def run_cuda_snippet(path: Path, args: Sequence[str] = (), timeout: float = 300) -> str:
    """Compile a ``.cu`` snippet with its own ``nvcc`` line, run it on the GPU, return what it printed.

    Raises:
        NoGpuError: If no CUDA GPU is visible (checked first: without one, a missing nvcc does not matter).
        MissingToolError: If there is no nvcc.
        SnippetError: If it fails to compile or exits with a non-zero status.
    """
    path = Path(path)
    if not gpu_present():
        raise NoGpuError(f"{path} runs on a CUDA GPU and none is visible here")
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / path.stem
        compile_cuda(path, exe)
        proc = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout, cwd=path.parent)
    if proc.returncode != 0:
        raise SnippetError(f"{path} exited with status {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


# --8<-- [start:run-snippet]
def run_snippet(path: Path, timeout: float = 300, args: Sequence[str] = ()) -> str:
    """Run a snippet and return what it printed: ``python path`` for ``.py``, nvcc + the GPU for ``.cu``.

    Args:
        path: The snippet file.
        timeout: Seconds before the run is abandoned.
        args: Command-line arguments for the snippet.

    Raises:
        FileNotFoundError: If the file does not exist.
        ValueError: For a suffix this runner does not know.
        SnippetError: If the snippet exits with a non-zero status (or does not compile).
        UnavailableError: If this machine lacks what a ``.cu`` snippet needs (:class:`NoGpuError`,
            :class:`MissingToolError`).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no snippet at {path}")
    if path.suffix == ".cu":
        return run_cuda_snippet(path, args, timeout)
    if path.suffix != ".py":
        raise ValueError(f"{path}: no runner for {path.suffix!r} snippets (known: '.py', '.cu')")
    proc = subprocess.run(
        [sys.executable, str(path), *args], capture_output=True, text=True, timeout=timeout, cwd=path.parent
    )
    if proc.returncode != 0:
        raise SnippetError(f"{path} exited with status {proc.returncode}:\n{proc.stderr}")
    return proc.stdout
    # --8<-- [end:run-snippet]
