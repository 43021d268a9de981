"""The collectives page's tables checked: ring traffic and bus factors recomputed, bandwidths against the records
read raw.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.distributed.pages import _arg, _by_id, _table
from tests.helpers import markdown_tables


def check_ring_traffic(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    size = 1 << 20
    assert [r["ranks p"] for r in rows] == ["2", "4", "8", "16"]
    for row in rows:
        p = int(row["ranks p"])
        assert int(row["steps"]) == 2 * (p - 1)
        assert int(row["bytes sent per rank"]) == int(row["2(p−1)/p · S"]) == 2 * (p - 1) * size // p
        assert float(row["busbw factor"]) == pytest.approx(2 * (p - 1) / p, rel=1e-3)


def check_bus_factors(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = {r["collective"].strip("`"): r for r in _table(markdown)}
    for n in (2, 4, 8):
        # nccl-tests doc/PERFORMANCE.md, "Summary"
        want = {
            "all_reduce": 2 * (n - 1) / n,
            "reduce_scatter": (n - 1) / n,
            "all_gather": (n - 1) / n,
            "broadcast": 1,
            "reduce": 1,
            "all_to_all": (n - 1) / n,
        }
        assert {k: float(r[f"n = {n}"]) for k, r in rows.items()} == pytest.approx(want, rel=1e-3)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


_OPS = {"all_reduce": "all-reduce", "reduce_scatter": "reduce-scatter", "all_gather": "all-gather"}


def _bytes(label: str) -> int:
    number, unit = label.split(" ")
    return int(number) * _UNITS[unit]


def _label(size: int) -> str:
    """A power-of-two size as the page writes it: whole, in the largest unit it fills."""
    unit = max((u for u, b in _UNITS.items() if size >= b), key=_UNITS.get)
    assert size % _UNITS[unit] == 0
    return f"{size // _UNITS[unit]} {unit}"


def check_collective_bandwidth(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _by_id(_arg(kwargs, "record_id", 0))
    factor = _arg(kwargs, "factor", 1, 4)
    n = raw["world_size"]
    by = {(r["op"], r["size_bytes"]): r for r in raw["rows"]}
    sizes = sorted({r["size_bytes"] for r in raw["rows"]})
    shown = [s for s in sizes if s in {sizes[0] * factor**k for k in range(64)}]
    assert [_bytes(r["size S"]) for r in rows] == shown
    assert len(rows[0]) == 1 + 3 * len(_OPS)
    # nccl-tests doc/PERFORMANCE.md: busbw = algbw × 2(n-1)/n for all-reduce, × (n-1)/n for the other two
    bus = {"all_reduce": 2 * (n - 1) / n, "reduce_scatter": (n - 1) / n, "all_gather": (n - 1) / n}
    for row in rows:
        size = _bytes(row["size S"])
        for op, name in _OPS.items():
            r = by[op, size]
            seconds = r["ms"]["median"] / 1e3
            assert float(row[f"{name} µs"]) == pytest.approx(seconds * 1e6, abs=0.051)
            algbw, busbw = float(row[f"{name} algbw (GB/s)"]), float(row[f"{name} busbw (GB/s)"])
            assert algbw == pytest.approx(size / seconds / 1e9, abs=0.0051)
            assert busbw == pytest.approx(r["busbw"] / 1e9, abs=0.0051)
            assert busbw == pytest.approx(algbw * bus[op], abs=0.011)
    assert f"{raw['dtype']}, {n} ranks, {raw['backend'].upper()}; {raw['warmup']} warm-up calls" in markdown
    assert f"the mean of {raw['iters']} calls" in markdown
    windows = f", in each of {raw['repeats']} windows: the median window" if raw["repeats"] != 1 else ""
    assert (
        f"the mean of {raw['iters']} calls of the slowest rank{windows}. Measured at {len(sizes)} sizes from "
        f"{_label(sizes[0])} to {_label(sizes[-1])}; shown: each size {factor} times the one before." in markdown
    )


def check_link_comparison(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _by_id(_arg(kwargs, "record_id", 0))
    links = int(re.search(r"\bNV(\d+)\b", _ANSI.sub("", raw["topology"])).group(1))
    assert links == 18
    line, nccl = 450, 370  # NVIDIA/nccl-tests#212: H100's 450 GB/s line rate, less ~20% protocol overhead
    largest = max(r["size_bytes"] for r in raw["rows"])
    top = [r for r in raw["rows"] if r["size_bytes"] == largest]
    assert [r["collective"] for r in rows] == [_OPS[r["op"]] for r in top]
    for row, r in zip(rows, top, strict=True):
        assert _bytes(row["size S"]) == largest
        busbw = r["busbw"] / 1e9
        assert float(row["busbw (GB/s)"]) == pytest.approx(busbw, abs=0.051)
        assert int(row[f"of the line rate, {line} GB/s"].removesuffix("%")) == round(100 * busbw / line)
        assert int(row[f"of NCCL's ~{nccl} GB/s"].removesuffix("%")) == round(100 * busbw / nccl)


def check_alpha_beta(markdown: str, kwargs: dict[str, Any]) -> None:
    """Each row's α and B, as printed, reproduce the record's times (2 KiB and up) within the printed worst error,
    and that worst error is where it says; α is the 28-42 µs floor the small sizes show."""
    raw = _by_id(_arg(kwargs, "record_id", 0))
    names = {"all-reduce": "all_reduce", "reduce-scatter": "reduce_scatter", "all-gather": "all_gather"}
    n = raw["world_size"]
    factors = {"all_reduce": 2 * (n - 1) / n, "reduce_scatter": (n - 1) / n, "all_gather": (n - 1) / n}
    (table,) = markdown_tables(markdown)
    for row in table:
        op = names[row["collective"]]
        alpha, bandwidth = float(row["α (µs)"]) * 1e-6, float(row["B (GB/s)"]) * 1e9
        assert 28e-6 <= alpha <= 42e-6
        measured = sorted((r for r in raw["rows"] if r["op"] == op), key=lambda r: r["size_bytes"])[1:]
        errors = [(alpha + factors[op] * r["size_bytes"] / bandwidth) / (r["ms"]["median"] / 1e3) - 1 for r in measured]
        worst = float(row["worst error of the model"].split("%")[0]) / 100
        assert max(abs(e) for e in errors) == pytest.approx(abs(worst), abs=0.02)
        assert float(row["S½ (MiB)"]) == pytest.approx(alpha * bandwidth / factors[op] / 2**20, rel=0.01)
        # what the prose says of them: about 30 µs, 270 to 330 GB/s, S½ of about 10 to 15 MiB, worst at 4 or 8 MiB
        assert 265e9 <= bandwidth <= 335e9
        assert 9.5 <= float(row["S½ (MiB)"]) <= 15.5
        assert row["worst error of the model"].startswith("+")
        assert row["worst error of the model"].endswith(("at 4 MiB", "at 8 MiB"))
        # the fit, made a second way: a line t = α + β·S by numpy's polyfit, each point weighted by 1/t
        s = np.array([r["size_bytes"] for r in measured], dtype=float)
        tt = np.array([r["ms"]["median"] / 1e3 for r in measured])
        beta, a0 = np.polyfit(s, tt, 1, w=1 / tt)
        assert row["α (µs)"] == f"{a0 * 1e6:.1f}"
        assert row["B (GB/s)"] == f"{factors[op] / beta / 1e9:.0f}"
        assert row["S½ (MiB)"] == f"{a0 / beta / 2**20:.1f}"
        at = max(zip(errors, measured, strict=True), key=lambda e: abs(e[0]))[1]["size_bytes"]
        assert row["worst error of the model"].endswith(f" at {_label(at)}")
    sizes = sorted({r["size_bytes"] for r in raw["rows"]})
    assert markdown.endswith(
        f"\n\nFitted to the {len(sizes) - 1} sizes from {_label(sizes[1])} to {_label(sizes[-1])} of each collective "
        f"({_label(sizes[0])} left out: the run's first call, an all-reduce of that size, was slower than the calls "
        "after it).\n"
    )


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "alpha_beta_markdown": check_alpha_beta,
    "collective_bandwidth_markdown": check_collective_bandwidth,
    "link_comparison_markdown": check_link_comparison,
    "ring_traffic_markdown": check_ring_traffic,
    "bus_factors_markdown": check_bus_factors,
}
