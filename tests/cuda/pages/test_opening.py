"""The cell checks of docs/cuda/index.md (``gpukb.cuda.page.index``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.cuda.pages import _int, _record
from tests.helpers import markdown_tables, size_text


def _bytes_in(cell: str) -> int:
    return _int(re.search(r"\(([\d,]+) B\)", cell).group(1))


#: What the device-facts table calls each runtime field (the label of its row), in the table's order.
DEVICE_LABELS = {
    "major.minor": "compute capability",
    "multiProcessorCount": "streaming multiprocessors (SMs)",
    "warpSize": "warp size (threads)",
    "maxThreadsPerBlock": "max threads per block",
    "maxThreadsPerMultiProcessor": "max threads per SM",
    "maxBlocksPerMultiProcessor": "max resident blocks per SM",
    "regsPerMultiprocessor": "32-bit registers per SM",
    "regsPerBlock": "32-bit registers per block",
    "sharedMemPerMultiprocessor": "shared memory per SM",
    "sharedMemPerBlock": "shared memory per block (default)",
    "sharedMemPerBlockOptin": "shared memory per block (opt-in)",
    "reservedSharedMemPerBlock": "shared memory reserved per block",
    "l2CacheSize": "L2 cache",
    "persistingL2CacheMaxSize": "L2 set-aside for persisting accesses (max)",
    "totalConstMem": "constant memory",
    "totalGlobalMem": "global memory",
    "memoryBusWidth": "memory bus width",
    "ClockRate": "SM clock (max)",
    "MemoryClockRate": "memory clock (max)",
    "asyncEngineCount": "copy engines",
    "clusterLaunch": "thread-block cluster launch",
}


def check_device_facts(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    data = _record("device-h100")
    values = {**data["properties"], **data["attributes"]}
    # every row's label names the field its value was read from, in order
    assert [(row[""], row["reported as"]) for row in table] == [(v, f"`{k}`") for k, v in DEVICE_LABELS.items()]
    # each field shown in its unit (cudaDeviceProp: sizes in bytes, clocks in kHz, the bus width in bits, the cluster
    # launch a flag), the counts as plain integers
    units = {
        "sharedMemPerMultiprocessor": "bytes", "sharedMemPerBlock": "bytes", "sharedMemPerBlockOptin": "bytes",
        "reservedSharedMemPerBlock": "bytes", "l2CacheSize": "bytes", "persistingL2CacheMaxSize": "bytes",
        "totalConstMem": "bytes", "totalGlobalMem": "bytes", "memoryBusWidth": "bits", "ClockRate": "kHz",
        "MemoryClockRate": "kHz", "clusterLaunch": "flag",
    }  # fmt: skip
    seen = 0
    for row in table:
        field = row["reported as"].strip("`")
        unit = units.get(field)
        if field == "major.minor":
            assert row["value"] == f"{values['major']}.{values['minor']}"
        elif unit == "bytes":
            assert _bytes_in(row["value"]) == values[field], row
            assert row["value"] == f"{size_text(values[field])} ({values[field]:,} B)", row
        elif unit == "kHz":
            assert row["value"] == f"{values[field] / 1000:,.0f} MHz", row
        elif unit == "bits":
            assert row["value"] == f"{values[field]:,} bits", row
        elif unit == "flag":
            assert row["value"] == ("yes" if values[field] else "no"), row
        else:
            assert row["value"] == f"{values[field]:,}", row
        seen += 1
    assert seen >= 20
    assert "Measured on an NVIDIA H100" in markdown


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "device_facts": check_device_facts,
}
