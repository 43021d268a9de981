"""Record what the CUDA runtime reports about device 0: ``cudaGetDeviceProperties`` and a few attributes.

Usage: PYTHONPATH=src python bench/cuda_device.py OUTPUT.json

Uses cuda-bindings (``cuda.bindings.runtime``); the pages render the architecture facts (SM count, warp size,
L2, shared memory, registers, clocks, memory bus) from this record, never from hand-typed numbers.
"""

from __future__ import annotations

from gpukb.cuda.results import DeviceFacts
from gpukb.records.script import Script, main

#: cudaDeviceProp fields recorded (those absent in a CUDA version are skipped).
FIELDS = (
    "name",
    "major",
    "minor",
    "multiProcessorCount",
    "warpSize",
    "maxThreadsPerBlock",
    "maxThreadsPerMultiProcessor",
    "maxBlocksPerMultiProcessor",
    "regsPerBlock",
    "regsPerMultiprocessor",
    "sharedMemPerBlock",
    "sharedMemPerMultiprocessor",
    "sharedMemPerBlockOptin",
    "reservedSharedMemPerBlock",
    "l2CacheSize",
    "persistingL2CacheMaxSize",
    "totalGlobalMem",
    "totalConstMem",
    "memoryBusWidth",
    "asyncEngineCount",
    "canMapHostMemory",
    "concurrentManagedAccess",
    "pageableMemoryAccess",
    "unifiedAddressing",
    "managedMemory",
    "maxThreadsDim",
    "maxGridSize",
    "clusterLaunch",
    "pciBusID",
    "accessPolicyMaxWindowSize",
)
#: cudaDeviceAttr names (without the cudaDevAttr prefix) recorded as attributes.
ATTRIBUTES = (
    "ClockRate",
    "MemoryClockRate",
    "GlobalMemoryBusWidth",
    "MaxSharedMemoryPerMultiprocessor",
    "MaxSharedMemoryPerBlockOptin",
    "MaxBlocksPerMultiprocessor",
    "L2CacheSize",
    "MultiProcessorCount",
)


def measure(script: Script) -> DeviceFacts:
    from cuda.bindings import runtime

    script.note("cudaGetDeviceProperties(0) and cudaDeviceGetAttribute through cuda.bindings.runtime.")
    err, prop = runtime.cudaGetDeviceProperties(0)
    assert err == runtime.cudaError_t.cudaSuccess, err
    properties: dict[str, int | str] = {}
    for name in FIELDS:
        if not hasattr(prop, name):
            print(f"cudaDeviceProp has no {name} in this CUDA version", flush=True)
            continue
        value = getattr(prop, name)
        if isinstance(value, bytes):
            value = value.split(b"\0", 1)[0].decode()
        elif isinstance(value, list | tuple):
            value = " x ".join(str(v) for v in value)
        else:
            value = int(value)
        properties[name] = value
    attributes = {}
    for name in ATTRIBUTES:
        attr = getattr(runtime.cudaDeviceAttr, f"cudaDevAttr{name}", None)
        if attr is None:
            continue
        err, value = runtime.cudaDeviceGetAttribute(attr, 0)
        if err == runtime.cudaError_t.cudaSuccess:
            attributes[name] = int(value)
    for key, value in {**properties, **attributes}.items():
        print(f"{key}: {value}", flush=True)
    return DeviceFacts(run=script.finished(), api="cuda.bindings.runtime", properties=properties, attributes=attributes)


if __name__ == "__main__":
    raise SystemExit(main(measure, __doc__))
