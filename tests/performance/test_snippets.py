"""The performance chapter's snippets (``snippets/performance/``): each is run as a reader runs it, and what it
prints is asserted against the library that computes it (FastAPI's one test per tutorial).

``tests/test_snippets.py`` collects ``CHECKS`` from every ``tests/<topic>/test_snippets.py`` and fails for a snippet
that has no check.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest


def _fields(out: str) -> dict[str, str]:
    """``name   value`` lines as a dict (names may hold single spaces; two or more end the name)."""
    return dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in out.splitlines() if line.strip())


def check_bound_a_layer(out: str) -> None:
    from gpukb.measuring.counting import conv2d_counts

    fields = _fields(out)
    layer = conv2d_counts((1, 3, 416, 480), out_channels=16, kernel=(3, 3), stride=2, padding=1)
    assert fields["output shape"] == "(1, 16, 208, 240)"
    assert fields["parameters"] == "448"
    assert fields["FLOPs"] == f"{layer.flops:,}" == "43,929,600"
    assert fields["bytes"] == "5,592,832"
    assert fields["compute bound"] == "43.93 µs"  # microseconds: the notes say 44.8 ns
    assert fields["memory bound"] == "5.59 µs"
    assert fields["limited by"] == "compute"


def check_time_a_matmul(out: str) -> None:
    import torch

    fields = _fields(out)
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu (no CUDA GPU found)"
    assert fields["device"] == gpu
    assert fields["FLOPs"] == f"{2 * 512**3:,}"
    calls, warmup = map(int, re.fullmatch(r"(\d+) timed after (\d+) warm-up calls", fields["calls"]).groups())
    assert calls >= 10
    assert warmup >= 2
    median, low, high = map(float, re.match(r"([\d.]+) ms \(min ([\d.]+), max ([\d.]+)", fields["median"]).groups())
    assert low <= median <= high
    rate = float(fields["rate"].removesuffix(" GFLOP/s"))
    # the median is printed to 0.0001 ms: on a GPU (about 0.02 ms) that rounding alone moves the rate by 0.3%
    assert rate == pytest.approx(2 * 512**3 / (median * 1e-3) / 1e9, rel=max(1e-3, 0.6e-4 / median), abs=0.1)


def check_ceilings(out: str) -> None:
    from gpukb.performance.results import H100_SWEEP, SweepRecord
    from gpukb.records import load

    record = load(H100_SWEEP, SweepRecord)  # recomputed from the record, not through gpukb.performance.ceilings
    best_bf16 = max(r.tflops for r in record.gemm if r.dtype == "bf16" and r.tflops is not None)
    bandwidth = max(r.gbps for r in record.copies if r.bytes >= 2**28)
    fields = _fields(out)
    assert fields["measured bf16 peak"] == f"{best_bf16:.1f} TFLOP/s"
    assert fields["measured bandwidth"] == f"{bandwidth:.0f} GB/s"
    assert fields["ridge point"] == f"{best_bf16 * 1e3 / bandwidth:.0f} FLOP/byte"
    big, small = (line for line in out.splitlines() if line.startswith("M="))
    assert big.startswith("M=4096")
    assert big.endswith("(compute-bound)")
    assert f"at most {best_bf16:6.1f} TFLOP/s" in big
    assert small.startswith("M=16")
    assert small.endswith("(memory-bound)")


CHECKS: dict[str, Callable[[str], None]] = {
    "snippets/performance/bound_a_layer.py": check_bound_a_layer,
    "snippets/performance/ceilings.py": check_ceilings,
    "snippets/performance/time_a_matmul.py": check_time_a_matmul,
}
