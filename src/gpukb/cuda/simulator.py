"""Warp shuffles for numba's CUDA simulator, which lacks them (numba-cuda 0.30).

:func:`install` gives the simulator a ``cuda.shfl_down_sync`` with the hardware's meaning: lane ``l`` receives the
value of lane ``l + delta`` of its warp, or keeps its own where ``l + delta`` is past the warp's last lane. The
simulator runs a block's threads as Python threads, so the exchange goes through a per-block table and two
``syncthreads``: it is correct only where every thread of the block makes the same shuffle calls (uniform control
flow), which the chapter's warp reduction keeps to. On a GPU nothing is installed; the real instruction runs.
"""

from __future__ import annotations

import threading

WARP = 32


def _shfl_down_sync(self, mask, value, delta):
    thread = threading.current_thread()
    table = thread._manager.__dict__.setdefault("_gpukb_shuffle", {})
    me = thread.thread_id
    table[me] = value
    thread.syncthreads()
    lane = me % WARP
    result = table[me + delta] if lane + delta < WARP and (me + delta) in table else value
    thread.syncthreads()
    return type(value)(result) if not isinstance(result, type(value)) else result


def install() -> bool:
    """Add ``shfl_down_sync`` to the simulator's ``cuda`` module where the simulator is on and lacks it; returns
    whether it did."""
    from numba import config

    if not config.ENABLE_CUDASIM:
        return False
    from numba.cuda.simulator.kernelapi import FakeCUDAModule

    if hasattr(FakeCUDAModule, "shfl_down_sync"):
        return False
    FakeCUDAModule.shfl_down_sync = _shfl_down_sync
    return True
