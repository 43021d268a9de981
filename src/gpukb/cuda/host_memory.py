"""Host memory a kernel can read: pinned, mapped (zero-copy) and managed allocations through the CUDA runtime.

The allocations go through ``cuda.bindings.runtime`` (NVIDIA's Python bindings, whose functions carry the C API's
names) and come back as a numpy view for the host and a numba device array for kernels, both over the same bytes.
Everything here except :func:`check_managed_size` needs a CUDA GPU; ``cuda.bindings`` and numba are imported when
a function is called.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpukb.arguments import integer, real

#: The most of the GPU's free memory a managed allocation may take (the rest stays free for the device buffers).
MANAGED_SHARE = 0.5


def check_managed_size(nbytes: int, free_bytes: int, share: float = MANAGED_SHARE) -> int:
    """``nbytes`` if a managed allocation of that size leaves the GPU room, else ``ValueError``.

    Managed memory can be larger than the GPU (the driver evicts pages to the host when the device fills), which is
    legal and slow; the chapter's measurements never ask for more than ``share`` of what ``cudaMemGetInfo`` reports
    free, so what they time is migration, not eviction.
    """
    nbytes = integer("nbytes", nbytes, minimum=1)
    free_bytes = integer("free_bytes", free_bytes, minimum=0)
    share = real("share", share, positive=True, maximum=1)  # a share of what is free: (0, 1]
    if nbytes > share * free_bytes:
        raise ValueError(
            f"a managed allocation of {nbytes:,} bytes is more than {share:.0%} of the {free_bytes:,} bytes the GPU "
            "has free; allocate less"
        )
    return nbytes


def _ok(result: Any) -> Any:
    """The value(s) of a ``cuda.bindings.runtime`` call, which returns ``(error, *values)``; raise on an error."""
    from cuda.bindings import runtime

    err, *values = result if isinstance(result, tuple) else (result,)
    if err != runtime.cudaError_t.cudaSuccess:
        _, name = runtime.cudaGetErrorName(err)
        raise RuntimeError(f"CUDA runtime error {name.decode() if isinstance(name, bytes) else name}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def free_device_bytes() -> int:
    """Bytes free on the current GPU, as ``cudaMemGetInfo`` reports them."""
    from cuda.bindings import runtime

    free, _total = _ok(runtime.cudaMemGetInfo())
    return int(free)


@dataclass
class HostBuffer:
    """One allocation: ``host`` (a numpy view for the CPU), ``device`` (a numba device array over the address a
    kernel uses), its size, kind, and ``free`` (call it once, when no kernel uses the buffer any more)."""

    kind: str
    nbytes: int
    host: np.ndarray
    device: Any
    free: Callable[[], None]
    host_pointer: int
    device_pointer: int


def _views(host_ptr: int, dev_ptr: int, n: int, dtype: np.dtype, owner: Any) -> tuple[np.ndarray, Any]:
    import ctypes

    from numba import cuda

    nbytes = n * dtype.itemsize
    host = np.frombuffer((ctypes.c_char * nbytes).from_address(host_ptr), dtype=dtype, count=n)
    device = cuda.from_cuda_array_interface(
        {"shape": (n,), "typestr": dtype.str, "data": (dev_ptr, False), "version": 3, "strides": None},
        owner=owner,
        sync=False,
    )
    return host, device


# --8<-- [start:mapped]
def mapped(n: int, dtype: Any = np.float32) -> HostBuffer:
    """``n`` elements of pinned host memory mapped into the GPU's address space (zero-copy): a kernel that reads
    ``.device`` reads host memory over the bus, with no copy before the launch."""
    from cuda.bindings import runtime

    dtype = np.dtype(dtype)
    nbytes = n * dtype.itemsize
    host_ptr = _ok(runtime.cudaHostAlloc(nbytes, runtime.cudaHostAllocMapped))
    dev_ptr = _ok(runtime.cudaHostGetDevicePointer(host_ptr, 0))  # the same value on a 64-bit system (UVA)
    host, device = _views(int(host_ptr), int(dev_ptr), n, dtype, owner=None)
    return HostBuffer(
        "mapped", nbytes, host, device, lambda: _ok(runtime.cudaFreeHost(host_ptr)), int(host_ptr), int(dev_ptr)
    )
    # --8<-- [end:mapped]


# --8<-- [start:managed]
def managed(n: int, dtype: Any = np.float32) -> HostBuffer:
    """``n`` elements of managed (unified) memory: one address for the CPU and the GPU; the driver moves each page
    to the processor that touches it (a page fault, then a migration), unless it was prefetched."""
    from cuda.bindings import runtime

    dtype = np.dtype(dtype)
    nbytes = check_managed_size(n * dtype.itemsize, free_device_bytes())
    ptr = _ok(runtime.cudaMallocManaged(nbytes, runtime.cudaMemAttachGlobal))
    host, device = _views(int(ptr), int(ptr), n, dtype, owner=None)
    return HostBuffer("managed", nbytes, host, device, lambda: _ok(runtime.cudaFree(ptr)), int(ptr), int(ptr))


def prefetch_to_device(buffer: HostBuffer, device: int = 0, stream: int = 0) -> None:
    """Enqueue the migration of a managed buffer to GPU ``device`` on ``stream`` (``cudaMemPrefetchAsync``, CUDA 13
    signature: a ``cudaMemLocation`` and flags), so a kernel after it in the stream finds its pages resident."""
    from cuda.bindings import runtime

    if buffer.kind != "managed":
        raise ValueError(f"only managed memory can be prefetched; got a {buffer.kind} buffer")
    location = runtime.cudaMemLocation()
    location.type = runtime.cudaMemLocationType.cudaMemLocationTypeDevice
    location.id = device
    _ok(runtime.cudaMemPrefetchAsync(buffer.device_pointer, buffer.nbytes, location, 0, stream))
    # --8<-- [end:managed]
