"""What the GPU is: name, multiprocessors, memory, L2, driver and clocks.

Versions of Python and the libraries come from :func:`gpukb.environment.collect`, the one place that reads them;
this module adds what only the device and ``nvidia-smi`` know. Clocks are read, never set.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

#: The ``nvidia-smi --query-gpu`` fields recorded as clocks and power state.
CLOCK_QUERY = (
    "clocks.sm",
    "clocks.mem",
    "clocks.max.sm",
    "clocks.max.mem",
    "power.draw",
    "power.limit",
    "temperature.gpu",
    "pstate",
)


def parse_smi_csv(text: str, names: tuple[str, ...]) -> dict[str, str | float] | None:
    """Parse one line of ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits`` output.

    Numbers become floats; ``[N/A]`` and similar stay strings. Returns ``None`` when the line does not have one
    value per name.
    """
    if not text.strip():
        return None
    line = text.strip().splitlines()[0]
    values = [v.strip() for v in line.split(",")]
    if len(values) != len(names):
        return None
    parsed: dict[str, str | float] = {}
    for name, value in zip(names, values, strict=True):
        try:
            parsed[name] = float(value)
        except ValueError:
            parsed[name] = value
    return parsed


def _smi(names: tuple[str, ...]) -> dict[str, str | float] | None:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        proc = subprocess.run(
            [smi, f"--query-gpu={','.join(names)}", "--format=csv,noheader,nounits", "--id=0"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_smi_csv(proc.stdout, names) if proc.returncode == 0 else None


def clocks() -> dict[str, str | float] | None:
    """Current and maximum SM and memory clocks (MHz), power (W), temperature (°C) and P-state of GPU 0, as
    ``nvidia-smi`` reports them; ``None`` where it cannot be read."""
    return _smi(CLOCK_QUERY)


def driver_version() -> str | None:
    """The driver version ``nvidia-smi`` reports, or ``None``."""
    found = _smi(("driver_version",))
    return None if found is None else str(found["driver_version"])


def describe(torch: Any) -> dict[str, Any]:
    """The device fields of a results file's ``meta``: name, SMs, compute capability, memory, L2, driver."""
    props = torch.cuda.get_device_properties(0)
    return {
        "gpu": props.name,
        "sm_count": int(props.multi_processor_count),
        "compute_capability": f"{props.major}.{props.minor}",
        "memory_bytes": int(props.total_memory),
        "l2_bytes": int(getattr(props, "L2_cache_size", 0)),
        "driver": driver_version(),
    }
