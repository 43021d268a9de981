"""The numba kernels' host functions refuse bad input before launching, and the simulator's warp shuffle has the
hardware's meaning (run in a fresh interpreter, since the simulator must be chosen before numba is imported)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tests.helpers import ROOT

SHUFFLE = """
import numpy as np
from numba import cuda
from gpukb.cuda import kernels  # installs the shuffle on the simulator

@cuda.jit
def probe(out, delta):
    t = cuda.threadIdx.x
    out[t] = cuda.shfl_down_sync(0xFFFFFFFF, t * 10, delta)

for delta in (1, 3, 16):
    out = np.zeros(64, dtype=np.int64)
    probe[1, 64](out, delta)
    print(delta, " ".join(map(str, out)))

# The loads-first kernels, full tiles and a ragged tail, a grid smaller than the array (grid-stride) and larger.
from numba import float64
rng = np.random.default_rng(3)
for n in (1, 100, 2 * 4 * 32 + 6):
    a, b = rng.random(n, dtype=np.float32) + 1, rng.random(n, dtype=np.float32) + 1
    for per, grid in ((1, 1), (4, 1), (4, 3), (2, 6)):
        c, s = np.zeros_like(a), np.zeros_like(a)
        kernels.copy_ilp(per)[grid, 32](a, c)
        kernels.vector_add_ilp(per)[grid, 32](a, b, s)
        print("ilp", n, per, grid, int((c != a).sum()), int((s != a + b).sum()))
    if n % 2 == 0:  # 8-byte words: the float32 pairs travel together
        c = np.zeros_like(a)
        kernels.copy_ilp(4, float64)[2, 32](a.view(np.float64), c.view(np.float64))
        print("ilp64", n, int((c != a).sum()))
x = rng.random(50, dtype=np.float32) + 0.5
y = np.zeros_like(x)
kernels.iterate_kernel[2, 32](x, y, 40)
print("iterate", float(np.abs(y - kernels.iterate_reference(x, 40)).max()), float(np.abs(y - x).min()))
"""


def test_simulated_shuffle_and_the_loads_first_kernels() -> None:
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", SHUFFLE], capture_output=True, text=True, env=env, timeout=120, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    ilp = [line.split() for line in lines if line.startswith("ilp ")]
    assert len(ilp) == 12
    assert all(fields[-2:] == ["0", "0"] for fields in ilp), ilp  # no element differs
    ilp64 = [line.split() for line in lines if line.startswith("ilp64")]
    assert ilp64 == [["ilp64", "100", "0"], ["ilp64", "262", "0"]]
    (iterate,) = [line.split() for line in lines if line.startswith("iterate")]
    assert float(iterate[1]) == 0.0  # the host reference
    assert float(iterate[2]) > 0  # and the values did change
    for line in lines:
        if line.startswith(("ilp", "iterate")):
            continue
        delta, *values = map(int, line.split())
        # lane l of each warp of 32 gets lane l + delta's value, or keeps its own past the warp's last lane
        want = [10 * (t + delta) if t % 32 + delta < 32 else 10 * t for t in range(64)]
        assert values == want, delta


def test_host_functions_refuse_bad_shapes() -> None:
    from gpukb.cuda import kernels as k

    a = np.zeros(4, dtype=np.float32)
    with pytest.raises(ValueError, match=r"two 1D arrays of one length; got shapes \(4,\) and \(5,\)"):
        k.vector_add(a, np.zeros(5, dtype=np.float32))
    with pytest.raises(ValueError, match="two 2D arrays of one shape"):
        k.add_2d(a, a)
    with pytest.raises(ValueError, match=r"\(m, k\) and \(k, n\) arrays; got \(2, 3\) and \(2, 3\)"):
        k.tiled_matmul(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="unknown reduction 'tree'; choose from"):
        k.reduce_sum(a, "tree")
    with pytest.raises(ValueError, match=r"values must lie in 0 \.\. 7; got 0 \.\. 8"):
        k.histogram(np.array([0, 8], dtype=np.int32), 8)
    assert k.blocks(1000, 256) == 4
