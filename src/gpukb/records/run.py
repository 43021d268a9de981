"""The description of a run: which machine, GPU, clocks, software and command produced a results file.

:func:`describe_run` is the only code that builds one, so every results file states the same facts in the same
format (the day as ``YYYY-MM-DD`` in UTC, the command exactly as typed, clocks in MHz and power in W), and
:func:`measured_on` is the only sentence that reports it on a page.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from gpukb.arguments import flag
from gpukb.schema import StrictModel
from gpukb.tables import markdown_table


class ClockReading(StrictModel):
    """One ``nvidia-smi`` reading of GPU 0: clocks in MHz, power in W, temperature in °C; ``None`` where the
    driver reported nothing (``[N/A]``)."""

    sm_mhz: float | None = None
    mem_mhz: float | None = None
    max_sm_mhz: float | None = None
    max_mem_mhz: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    temperature_c: float | None = None
    pstate: str | None = None


class Gpu(StrictModel):
    """The CUDA device a run measured, as torch and the driver report it."""

    name: str
    sm_count: int = Field(gt=0)
    compute_capability: str = Field(pattern=r"^\d+\.\d+$")
    memory_bytes: int = Field(gt=0)
    l2_bytes: int = Field(ge=0)
    driver: str | None


class Versions(StrictModel):
    """Software versions; ``None`` where a library is not installed (or, for ``torch_cuda``, a CPU build)."""

    python: str
    numpy: str | None = None
    torch: str | None = None
    torch_cuda: str | None = None
    triton: str | None = None
    cudnn: str | None = None
    nvcc: str | None = None
    ml_dtypes: str | None = None
    numba: str | None = None
    cublaslt: str | None = None


class Run(StrictModel):
    """Where, when and how a results file was produced.

    Attributes:
        date: The UTC day the run started.
        started: The UTC time it started, where recorded (files converted from the first format lack it).
        command: The command line, as a reader would type it.
        duration_s: Seconds from start to the file being written, where recorded.
        machine: ``platform.machine()`` of the host, where recorded.
        cpu_count: Logical CPUs of the host, where recorded.
        gpu: The device measured, or ``None`` for a CPU-only run.
        versions: Software versions.
        clocks: ``nvidia-smi`` readings by when they were taken (``"start"``, ``"after_gemm"``, ...).
        notes: How the run was made, in words (methods, deviations, failures).
    """

    date: dt.date
    started: dt.datetime | None = None
    command: str
    duration_s: float | None = Field(default=None, ge=0)
    machine: str | None
    cpu_count: int | None = Field(gt=0)
    gpu: Gpu | None
    versions: Versions
    clocks: dict[str, ClockReading] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


#: ``nvidia-smi --query-gpu`` field → :class:`ClockReading` field.
SMI_FIELDS = {
    "clocks.sm": "sm_mhz",
    "clocks.mem": "mem_mhz",
    "clocks.max.sm": "max_sm_mhz",
    "clocks.max.mem": "max_mem_mhz",
    "power.draw": "power_w",
    "power.limit": "power_limit_w",
    "temperature.gpu": "temperature_c",
    "pstate": "pstate",
}


def clock_reading(smi: dict[str, str | float] | None) -> ClockReading | None:
    """A parsed ``nvidia-smi`` line (:func:`gpukb.measuring.device.clocks`) as a reading; ``[N/A]`` becomes ``None``."""
    if smi is None:
        return None
    values = {}
    for query, field in SMI_FIELDS.items():
        value = smi.get(query)
        if field == "pstate":
            values[field] = value if isinstance(value, str) and value.startswith("P") else None
        else:
            values[field] = float(value) if isinstance(value, int | float) else None
    return ClockReading(**values)


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command that started this process, as a reader would type it (``python -m gpukb bench --quick``)."""
    argv = list(sys.argv if argv is None else argv)
    if not argv:
        return ""
    first, rest = argv[0], argv[1:]
    if first.endswith("__main__.py"):
        words = ["python", "-m", Path(first).parent.name, *rest]
    elif first.endswith(".py"):
        words = ["python", first, *rest]
    else:
        words = [Path(first).name, *rest]
    ranks = os.environ.get("LOCAL_WORLD_SIZE")  # set by torchrun in every process it starts
    if ranks and words[0] == "python":
        words = ["torchrun", f"--nproc_per_node={ranks}", *words[1:]]
    return shlex.join(words)


def _cudnn_version(torch) -> str | None:
    version = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    if not version:
        return None
    major, minor, patch = version // 10000, version // 100 % 100, version % 100  # cuDNN 9 encodes 90100 as 9.1.0
    return f"{major}.{minor}.{patch}" if version >= 10000 else str(version)


def describe_run(command: str | None = None, notes: Sequence[str] = ()) -> Run:
    """Describe this process's run: host, GPU 0 (if torch sees one), software versions, a first clock reading.

    Args:
        command: The command line to record; the one that started this process when omitted.
        notes: How the run is made, in words.
    """
    from gpukb import environment
    from gpukb.measuring import device

    env = environment.collect()
    gpu = None
    cudnn = None
    clocks: dict[str, ClockReading] = {}
    if env.cuda_gpu is not None:
        import torch

        info = device.describe(torch)
        gpu = Gpu(
            name=info["gpu"],
            sm_count=info["sm_count"],
            compute_capability=info["compute_capability"],
            memory_bytes=info["memory_bytes"],
            l2_bytes=info["l2_bytes"],
            driver=info["driver"],
        )
        cudnn = _cudnn_version(torch)
        reading = clock_reading(device.clocks())
        if reading is not None:
            clocks["start"] = reading
    libs = env.libraries
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    return Run(
        date=now.date(),
        started=now,
        command=command if command is not None else command_line(),
        machine=platform.machine(),
        cpu_count=os.cpu_count() or 1,
        gpu=gpu,
        versions=Versions(
            python=env.python,
            numpy=libs.get("numpy"),
            torch=libs.get("torch"),
            torch_cuda=env.torch_cuda,
            triton=libs.get("triton"),
            cudnn=cudnn,
            nvcc=env.nvcc,
            ml_dtypes=libs.get("ml_dtypes"),
            numba=libs.get("numba"),
        ),
        clocks=clocks,
        notes=list(notes),
    )


def finished(run: Run, started: float, clocks: dict[str, ClockReading] | None = None, **changes) -> Run:
    """The run with its duration (``time.perf_counter()`` at the start is ``started``), its further clock readings
    and any field changes. A GPU run gets a last reading, ``"end"``, unless ``clocks`` already holds one.
    """
    import time

    from gpukb.measuring import device

    readings = {**run.clocks, **(clocks or {})}
    if run.gpu is not None and "end" not in readings:
        end = clock_reading(device.clocks())
        if end is not None:
            readings["end"] = end
    return run.model_copy(update={"duration_s": time.perf_counter() - started, "clocks": readings, **changes})


def clock_text(reading: ClockReading) -> str:
    """One reading in words: ``SM 1980/1980 MHz, memory 2619 MHz, 339 W of 700 W, 48 °C, P0``."""
    parts = []
    if reading.sm_mhz is not None:
        top = f"/{reading.max_sm_mhz:.0f}" if reading.max_sm_mhz is not None else ""
        parts.append(f"SM {reading.sm_mhz:.0f}{top} MHz")
    if reading.mem_mhz is not None:
        parts.append(f"memory {reading.mem_mhz:.0f} MHz")
    if reading.power_w is not None:
        limit = f" of {reading.power_limit_w:.0f} W" if reading.power_limit_w is not None else ""
        parts.append(f"{reading.power_w:.0f} W{limit}")
    if reading.temperature_c is not None:
        parts.append(f"{reading.temperature_c:.0f} °C")
    if reading.pstate:
        parts.append(reading.pstate)
    return ", ".join(parts) or "not reported"


def measured_on(run: Run, command: bool = True, notes: bool = False) -> str:
    """The one sentence that says where a recorded result comes from (Markdown: the command is code), with the
    run's notes after it when ``notes`` is true.

    ``Measured on an NVIDIA H100 80GB HBM3 (132 SMs, driver 580.159.04), torch 2.11.0+cu130 (CUDA 13.0),
    triton 3.6.0, Python 3.12.3, on 2026-11-22, by `python bench/x.py`.``
    """
    v = run.versions
    if run.gpu is not None:
        article = "an" if run.gpu.name[:1].upper() in "AEIOU" or run.gpu.name.startswith("NVIDIA") else "a"
        driver = f", driver {run.gpu.driver}" if run.gpu.driver else ""
        where = f"{article} {run.gpu.name} ({run.gpu.sm_count} SMs{driver})"
    else:
        cpus = f" ({run.cpu_count} logical CPUs)" if run.cpu_count else ""
        where = f"the CPU of an {run.machine or 'unrecorded'} machine{cpus}"
    software = []
    if v.torch:
        software.append(f"torch {v.torch}" + (f" (CUDA {v.torch_cuda})" if v.torch_cuda and run.gpu else ""))
    for name in ("triton", "cudnn", "cublaslt", "nvcc", "numpy", "ml_dtypes"):
        value = getattr(v, name)
        if value and (name not in ("cudnn", "cublaslt", "nvcc") or run.gpu is not None):
            software.append(f"{'cuDNN' if name == 'cudnn' else 'cuBLASLt' if name == 'cublaslt' else name} {value}")
    software.append(f"Python {v.python}")
    by = f", by `{run.command}`" if command else ""
    told = "".join(f" {note}" for note in run.notes) if notes else ""
    return f"Measured on {where}, {', '.join(software)}, on {run.date.isoformat()}{by}.{told}"


def measured_table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], run: Run, note: str = "", command: bool = True
) -> str:
    """A Markdown table of recorded results with its provenance under it: the table, then ``note`` (what the table
    does not say about how it was measured; end it with a space, or a blank line for a paragraph of its own) and
    :func:`measured_on`, one paragraph.

    Raises:
        TypeError: If ``run`` is not a :class:`Run`, ``note`` not a string, ``command`` not a bool, or the
            headers and rows not lists (:func:`gpukb.tables.markdown_table`).
        ValueError: If a row's length differs from the header's.
    """
    if not isinstance(run, Run):
        raise TypeError(f"run must be a gpukb.records.Run; got {type(run).__name__}")
    if not isinstance(note, str):
        raise TypeError(f"note must be a string; got {type(note).__name__}")
    command = flag("command", command)  # a truthy "no" printed the command
    return markdown_table(headers, rows) + "\n\n" + note + measured_on(run, command)
