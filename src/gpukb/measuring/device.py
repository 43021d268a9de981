"""What the GPU is: name, multiprocessors, memory, L2, driver and clocks.

Versions of Python and the libraries come from :func:`gpukb.environment.collect`, the one place that reads them;
this module adds what only the device and ``nvidia-smi`` know, and samples SM clock and power while a measurement
runs (:class:`ClockSampler`, through NVML where ``pynvml`` is installed). Clocks are read, never set.
"""

from __future__ import annotations

import contextlib
import shutil
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import Field

from gpukb.schema import StrictModel

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


# --- clocks and power during a timed window ----------------------------------------------------------------


class WindowClocks(StrictModel):
    """SM clock and board power sampled while a measurement's timed calls ran (and the untimed flushes between
    them), by a background thread.

    Attributes:
        source: ``"nvml"`` (``pynvml``, the NVIDIA Management Library) or ``"nvidia-smi"`` (one process per
            sample: far fewer samples).
        samples: How many readings were taken (one at the start and one at the end at least).
        seconds: How long the window lasted (from before the first call was queued to after the last ended).
        sm_mhz_min: The lowest SM clock read, MHz.
        sm_mhz_median: The median SM clock, MHz.
        power_w_median: The median power reading, W (``None`` where the driver gave none).
        power_w_max: The highest, W.
        power_reading: What the power figure is: ``"instant"`` (NVML's instantaneous field) or ``"average"`` (the
            driver's running average, about one second on recent GPUs, so it trails a short window).
    """

    source: Literal["nvml", "nvidia-smi"]
    samples: int = Field(ge=1)
    seconds: float = Field(ge=0, allow_inf_nan=False)
    sm_mhz_min: float = Field(ge=0, allow_inf_nan=False)
    sm_mhz_median: float = Field(ge=0, allow_inf_nan=False)
    power_w_median: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    power_w_max: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    power_reading: Literal["instant", "average"] | None = None


def window_clocks(
    source: str, readings: Sequence[tuple[float, float | None]], seconds: float, power_reading: str | None
) -> WindowClocks | None:
    """Summarize ``(sm_mhz, power_w)`` readings of one window; ``None`` when there are none.

    Raises:
        ValueError: For a negative or non-finite reading (the model refuses it, naming the field).
    """
    if not readings:
        return None
    sm = [float(r[0]) for r in readings]
    power = [float(r[1]) for r in readings if r[1] is not None]
    return WindowClocks(
        source=source,
        samples=len(readings),
        seconds=max(0.0, seconds),
        sm_mhz_min=min(sm),
        sm_mhz_median=float(statistics.median(sm)),
        power_w_median=float(statistics.median(power)) if power else None,
        power_w_max=max(power) if power else None,
        power_reading=power_reading if power else None,
    )


def nvml_reader() -> tuple[Callable[[], tuple[float, float | None]], str] | None:
    """A function reading GPU 0's SM clock (MHz) and power (W) through ``pynvml``, and what its power figure is
    (``"instant"`` or ``"average"``); ``None`` when ``pynvml`` or the driver's library is absent."""
    try:
        import pynvml  # nvidia-ml-py

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
    except Exception:  # no package, no driver library, no GPU: the caller falls back
        return None
    instant = getattr(pynvml, "NVML_FI_DEV_POWER_INSTANT", None)

    def instant_w() -> float | None:
        (value,) = pynvml.nvmlDeviceGetFieldValues(handle, [instant])
        if value.nvmlReturn != 0:
            return None
        return float(value.value.uiVal) / 1000.0

    use_instant = False
    if instant is not None:
        try:
            use_instant = instant_w() is not None
        except Exception:
            use_instant = False

    def read() -> tuple[float, float | None]:
        sm = float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))
        try:
            power = instant_w() if use_instant else pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0
        except Exception:
            power = None
        return sm, power

    return read, "instant" if use_instant else "average"


def smi_reader() -> Callable[[], tuple[float, float | None]] | None:
    """A function reading SM clock and power through ``nvidia-smi`` (slow: one process per reading), or ``None``
    when it is absent or answers nothing usable."""
    if _smi(("clocks.sm", "power.draw")) is None:
        return None

    def read() -> tuple[float, float | None]:
        found = _smi(("clocks.sm", "power.draw"))
        if found is None or not isinstance(found["clocks.sm"], float):
            raise RuntimeError("nvidia-smi gave no SM clock")
        power = found["power.draw"]
        return found["clocks.sm"], power if isinstance(power, float) else None

    return read


class ClockSampler:
    """Samples SM clock and power in a background thread between :meth:`start` and :meth:`stop`.

    ``stop`` returns a :class:`WindowClocks` (``None`` when nothing could be read). A reading is taken at the
    start and at the end, and every ``interval_s`` in between. Use :func:`sampler` to get one with the best
    reader present.

    Args:
        read: Returns ``(sm_mhz, power_w or None)``.
        source: ``"nvml"`` or ``"nvidia-smi"``.
        power_reading: ``"instant"`` or ``"average"`` (see :class:`WindowClocks`).
        interval_s: Seconds between readings.
    """

    def __init__(
        self,
        read: Callable[[], tuple[float, float | None]],
        source: str = "nvml",
        power_reading: str | None = "average",
        interval_s: float = 0.005,
    ) -> None:
        if not callable(read):
            raise TypeError(f"read must be callable; got {type(read).__name__}")
        if not interval_s > 0:
            raise ValueError(f"interval_s must be > 0; got {interval_s}")
        self.read, self.source, self.power_reading, self.interval_s = read, source, power_reading, interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._readings: list[tuple[float, float | None]] = []
        self._started = 0.0

    def _take(self) -> None:
        with contextlib.suppress(Exception):  # a failed reading is skipped, never fatal to the measurement
            self._readings.append(self.read())

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._take()

    def start(self) -> None:
        """Take a first reading and start sampling."""
        self._readings = []
        self._stop.clear()
        self._started = time.perf_counter()
        self._take()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def stop(self) -> WindowClocks | None:
        """Stop sampling, take a last reading, and summarize the window."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._take()
        return window_clocks(self.source, self._readings, time.perf_counter() - self._started, self.power_reading)


def sampler(interval_s: float = 0.005) -> ClockSampler | None:
    """A :class:`ClockSampler` of GPU 0 through NVML, else through ``nvidia-smi`` (every 0.1 s at the most
    often), else ``None``: measurements then carry no window clocks."""
    found = nvml_reader()
    if found is not None:
        read, power_reading = found
        return ClockSampler(read, "nvml", power_reading, interval_s)
    smi = smi_reader()
    if smi is not None:
        return ClockSampler(smi, "nvidia-smi", "average", max(interval_s, 0.1))
    return None
