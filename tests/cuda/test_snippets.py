"""The CUDA chapter's snippets, run as a reader runs them, and what they print asserted.

The numba snippets run on a GPU where there is one and on numba's simulator (``NUMBA_ENABLE_CUDASIM=1``) where
there is not; the Triton snippet on Triton's interpreter without a GPU. The ``.cu`` snippets are compiled with the
``nvcc`` line their header shows and run on the GPU (skipped without one). ``tests/test_snippets.py`` collects
``CHECKS`` to prove every snippet has exactly one check.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable

import numpy as np
import pytest

from gpukb.site.snippets import gpu_present, run_snippet
from tests.cuda.numba_target import unavailable_reason
from tests.helpers import ROOT


def check_occupancy(out: str) -> None:
    lines = out.splitlines()
    # 256 threads = 8 warps; 64 warps per SM -> 8 blocks. 32 regs x 32 lanes = 1024 regs per warp; a quarter of
    # the 65536-register file (16384) holds 16 warps, 4 quarters 64 warps -> 8 blocks: both limits meet.
    assert lines[0] == "256 threads, 32 regs: 8 blocks/SM, 100%, limited by ('warps', 'registers')"
    # 64 regs -> 2048 per warp -> 8 warps per quarter, 32 per SM -> 4 blocks of 8 warps = 32 of 64 warps.
    assert lines[1] == "256 threads, 64 regs: 4 blocks/SM, 50%, limited by ('registers',)"
    # 102400 + 1024 reserved = 103424 bytes (a multiple of 128); 233472 // 103424 = 2 blocks = 16 of 64 warps.
    assert 233472 // (100 * 1024 + 1024) == 2
    assert lines[2] == (
        "+100 KiB shared: 2 blocks/SM, 25%, limited by ('shared memory',), 103424 bytes allocated per block"
    )
    # 128 regs x 32 = 4096 per warp, x 32 warps = 131072 > 65536 registers per block.
    assert lines[3].startswith("refused: 1024 threads at 128 registers need 131072 registers per block")
    assert "limit of 65536 registers per block" in lines[3]
    assert len(lines) == 4


def check_thread_index(out: str) -> None:
    fields = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert fields["global index"] == str(2 * 8 + 5) == "21"
    assert fields["blocks for 50,000 elements"] == str(-(-50_000 // 256)) == "196"
    assert fields["threads"] == str(3 * 2 * 4 * 3) == "72"
    assert fields["distinct row-major indices"] == "72"
    # block (1, 1) of 4x3 threads, thread (2, 1): global x = 1*4+2 = 6, y = 1*3+1 = 4; row width 3*4 = 12.
    assert out.splitlines()[-1] == f"block (1, 1), thread (2, 1) -> row-major index {4 * 12 + 6}"


def check_hello_numba(out: str) -> None:
    assert out.splitlines()[-1] == "indices written: [0, 1, 2, 3, 4, 5, 6, 7]"
    assert out.count("hello from block") == 8  # one line per thread (the simulator may interleave the pieces)
    if gpu_present():  # device printf writes whole lines
        found = sorted(re.findall(r"^hello from block (\d) thread (\d) global index (\d)$", out, re.M))
        assert found == sorted((str(b), str(t), str(4 * b + t)) for b in range(2) for t in range(4))


def check_vector_add_numba(out: str) -> None:
    lines = out.splitlines()
    assert lines[0] == "vector add: 2 blocks of 64 threads, max |c - (a + b)| = 0.0"  # ceil(100/64) = 2
    assert lines[1] == "2D add (13, 7): max |z - (x + y)| = 0.0"
    assert len(lines) == 2


def check_matmul_tiled(out: str) -> None:
    m = re.fullmatch(r"C \(7, 6\): max \|C - A@B\| = (\S+) \(largest \|A@B\| (\S+)\)\n", out)
    assert m, out
    rng = np.random.default_rng(0)  # the snippet's operands, rebuilt
    a, b = rng.standard_normal((7, 10), dtype=np.float32), rng.standard_normal((10, 6), dtype=np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert float(m.group(2)) == pytest.approx(np.abs(exact).max(), abs=0.005)
    # 10 float32 products and sums: error within 10 ulps of the largest partial sums, far below 1e-4.
    assert 0 <= float(m.group(1)) < 1e-4


def check_reductions(out: str) -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(1, 100, 200).astype(np.float32)
    total = f"{int(x.sum(dtype=np.int64))}.0"
    lines = out.splitlines()
    assert lines[:4] == [
        f"atomic sum = {total}",
        f"shared sum = {total}",
        f"warp   sum = {total}",
        f"numpy  sum = {total}",
    ]
    values = rng.integers(0, 8, 100).astype(np.int32)
    counts = str(np.bincount(values, minlength=8).tolist())
    assert lines[4] == f"histogram (global atomics): {counts}"
    assert lines[5] == f"histogram (shared atomics): {counts}"
    assert sum(np.bincount(values, minlength=8)) == 100
    assert len(lines) == 7


def check_bit_cast(out: str) -> None:
    lines = out.splitlines()
    assert len(lines) == 4
    for line, value in zip(lines, [1.0, -2.5, 0.1, float("inf")], strict=True):
        (bits,) = struct.unpack("<I", struct.pack("<f", value))
        assert line.endswith(f"numpy 0x{bits:08X}, struct 0x{bits:08X}, device 0x{bits:08X}"), line
    assert lines[0].endswith("0x3F800000, device 0x3F800000")  # 1.0: exponent 127, mantissa 0


def check_vector_add_triton(out: str) -> None:
    assert out == "n = 3000, programs = 3, max |c - (a + b)| = 0.0\n"


def check_hello_cu(out: str) -> None:
    lines = out.splitlines()
    assert lines[0] == "Hello from CPU"
    found = sorted(re.findall(r"^Hello from GPU: block (\d+), thread (\d+), global index (\d+)$", out, re.M))
    assert found == sorted((str(b), str(t), str(4 * b + t)) for b in range(2) for t in range(4))
    assert len(lines) == 9


def check_scalar_add_cu(out: str) -> None:
    assert out == "2 + 7 = 9\n"


def check_vector_add_cu(out: str) -> None:
    assert out.splitlines() == [
        "vector add of 50000 elements: 196 blocks of 256 threads",
        "mismatches: 0 of 50000",
        "Test PASSED",
    ]


# --8<-- [start:checks]
CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/cuda/bit_cast.py": check_bit_cast,
    "snippets/cuda/hello.cu": check_hello_cu,
    "snippets/cuda/hello_numba.py": check_hello_numba,
    "snippets/cuda/matmul_tiled.py": check_matmul_tiled,
    "snippets/cuda/occupancy.py": check_occupancy,
    "snippets/cuda/reductions.py": check_reductions,
    "snippets/cuda/scalar_add.cu": check_scalar_add_cu,
    "snippets/cuda/thread_index.py": check_thread_index,
    "snippets/cuda/vector_add.cu": check_vector_add_cu,
    "snippets/cuda/vector_add_numba.py": check_vector_add_numba,
    "snippets/cuda/vector_add_triton.py": check_vector_add_triton,
}


@pytest.mark.parametrize("snippet", sorted(CHECKS))
def test_snippet_output(snippet: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if not snippet.endswith(".cu") and not gpu_present():  # the CPU stand-ins for the GPU
        monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
        monkeypatch.setenv("TRITON_INTERPRET", "1")
    elif "numba" in snippet and unavailable_reason() is not None:
        pytest.skip(unavailable_reason())
    CHECKS[snippet](run_snippet(ROOT / snippet))
    # --8<-- [end:checks]
