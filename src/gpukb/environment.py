"""What this machine has: library versions, a CUDA GPU, ``nvcc``.

The site's "How this site is verified" page (through ``snippets/site/environment.py``) and ``gpukb info`` both
render this report, so the versions a page claims are the versions it was built with.
"""

from __future__ import annotations

import importlib
import os
import platform
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

#: Variables naming a CUDA installation, looked at in this order, then :data:`DEFAULT_CUDA_PREFIX`.
CUDA_PREFIXES = ("CUDA_HOME", "CUDA_PATH")
DEFAULT_CUDA_PREFIX = "/usr/local/cuda"

#: Libraries whose versions the report lists, in display order.
LIBRARIES = ("numpy", "torch", "triton", "numba", "ml_dtypes", "mkdocs", "material")


# --- the one place that looks for a GPU and for nvcc ---------------------------------------------------------


def find_nvcc() -> str | None:
    """The ``nvcc`` to use, or ``None`` where there is none.

    Looks at ``$NVCC`` (a path or a name on ``PATH``), then ``PATH``, then ``bin/nvcc`` under ``$CUDA_HOME``,
    ``$CUDA_PATH`` and ``/usr/local/cuda`` (where NVIDIA's packages install it without touching ``PATH``).
    """
    named = os.environ.get("NVCC")
    if named:
        found = shutil.which(named)
        if found:
            return found
    found = shutil.which("nvcc")
    if found:
        return found
    prefixes = [os.environ[v] for v in CUDA_PREFIXES if os.environ.get(v)] + [DEFAULT_CUDA_PREFIX]
    for prefix in prefixes:
        candidate = Path(prefix) / "bin" / "nvcc"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def gpu_present() -> bool:
    """Whether a CUDA GPU is visible: through torch where it is installed, else through ``nvidia-smi -L``."""
    try:
        import torch
    except ImportError:
        smi = shutil.which("nvidia-smi")
        if smi is None:
            return False
        try:
            proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return proc.returncode == 0 and "GPU" in proc.stdout
    return bool(torch.cuda.is_available())


def triton_interpreting() -> bool:
    """Whether Triton runs kernels on the CPU (``TRITON_INTERPRET=1``) rather than compiling them: the one answer
    every Triton kernel of the project asks for."""
    import triton

    return bool(triton.knobs.runtime.interpret)


@dataclass(frozen=True)
class Environment:
    """A snapshot of the software and hardware a result came from.

    Attributes:
        python: Python version, e.g. ``"3.11.7"``.
        libraries: Library name to version, or ``None`` where it is not installed.
        cuda_gpu: Name of CUDA device 0 as torch reports it, or ``None`` without one.
        torch_cuda: CUDA version torch was built with, or ``None`` for a CPU build.
        nvcc: ``nvcc`` release (e.g. ``"13.0"``), or ``None`` where it is not on ``PATH``.
    """

    python: str
    libraries: dict[str, str | None]
    cuda_gpu: str | None
    torch_cuda: str | None
    nvcc: str | None

    def as_dict(self) -> dict:
        """The snapshot as plain JSON-ready data."""
        return asdict(self)


def library_version(name: str) -> str | None:
    """Version of an importable library, or ``None`` where it is missing.

    Args:
        name: Import name, e.g. ``"numpy"``.
    """
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    version = getattr(module, "__version__", None)
    if version is None:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        try:
            version = dist_version(name)
        except PackageNotFoundError:
            version = "unknown"
    return str(version)


def nvcc_release() -> str | None:
    """The release printed by ``nvcc --version`` (``"13.0"``), or ``None`` where nvcc is absent."""
    nvcc = find_nvcc()
    if nvcc is None:
        return None
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"release (\d+\.\d+)", out)
    return match.group(1) if match else "unknown"


def collect() -> Environment:
    """Take a snapshot of this machine."""
    libraries = {name: library_version(name) for name in LIBRARIES}
    cuda_gpu = torch_cuda = None
    if libraries["torch"] is not None:
        import torch

        torch_cuda = torch.version.cuda
        if torch.cuda.is_available():
            cuda_gpu = torch.cuda.get_device_name(0)
    return Environment(
        python=platform.python_version(),
        libraries=libraries,
        cuda_gpu=cuda_gpu,
        torch_cuda=torch_cuda,
        nvcc=nvcc_release(),
    )


def rows(env: Environment) -> list[tuple[str, str]]:
    """The snapshot as (item, value) rows, missing items spelled out."""
    out = [("python", env.python)]
    out += [(name, version or "not installed") for name, version in env.libraries.items()]
    out.append(("torch built for CUDA", env.torch_cuda or "no (CPU build)"))
    out.append(("CUDA GPU", env.cuda_gpu or "none"))
    out.append(("nvcc", env.nvcc or "not found"))
    return out


def as_text(env: Environment) -> str:
    """The snapshot as aligned plain text, as ``gpukb info`` prints it."""
    table = rows(env)
    width = max(len(item) for item, _ in table)
    return "\n".join(f"{item:<{width}}  {value}" for item, value in table)
