"""The cell checks of docs/attention/cost.md (``gpukb.attention.page.cost``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from gpukb.attention.pages import cost as page
from tests.helpers import markdown_tables


def check_scaling(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert [int(r["d"]) for r in table] == [16, 64, 128, 512]
    previous = 0.0
    for r in table:
        d = int(r["d"])
        assert int(r["Var(q·k), analytic"]) == d
        assert abs(float(r["Var(q·k), measured"]) / d - 1) < 0.05
        assert abs(float(r["Var(q·k/√d), measured"]) - 1) < 0.05
        unscaled = float(r["largest of 64 weights, unscaled"])
        assert unscaled > previous
        assert unscaled > 2 * float(r["largest weight, scaled"])
        previous = unscaled


def check_cost_table(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    b, h, d, size = 4, 32, 128, 2
    assert len(table) == 6
    for r in table:
        seq, causal = int(r["L"]), r["causal"] == "yes"
        pairs = seq * (seq + 1) // 2 if causal else seq * seq
        flops = 4 * b * h * pairs * d
        fused = b * h * d * size * 4 * seq
        scores = b * h * seq * seq * size
        assert float(r["GFLOP"]) == pytest.approx(flops / 1e9, abs=0.051)
        assert float(r["pairs kept"]) == pytest.approx(pairs / seq**2, abs=5e-5)
        assert float(r["fused MB"]) == pytest.approx(fused / 1e6, abs=0.051)
        assert float(r["score matrix MB"]) == pytest.approx(scores / 1e6, abs=0.051)
        assert int(r["FLOP/B fused"]) == round(flops / fused)
        assert float(r["FLOP/B unfused"]) == pytest.approx(flops / (fused + 4 * scores), abs=0.051)
        # K and V read by every block of 128 queries (top-left causal: the keys up to the block's last row)
        keys = sum(min(start + 128, seq) if causal else seq for start in range(0, seq, 128))
        reread = b * h * d * size * (2 * seq + 2 * keys)
        assert int(r["FLOP/B, K and V read per 128 queries"]) == round(flops / reread)


def check_kv_cache(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert [r["attention"] for r in table] == ["multi-head", "grouped-query", "multi-query"]
    for r in table:
        kv = int(r["kv heads"])
        bf16 = 2 * 32 * 8192 * kv * 128 * 2  # layers, tokens, kv heads, head dim, bytes
        assert float(r["bf16 GiB"]) == pytest.approx(bf16 / 2**30, abs=5e-5)
        assert float(r["fp8 GiB"]) == pytest.approx(bf16 / 2 / 2**30, abs=5e-5)
        assert int(r["per token, bf16 KiB"]) == bf16 // 8192 // 1024


def check_decode(markdown: str, kwargs: dict[str, Any]) -> None:
    """One decoding step of 32 layers, 32 query heads of 128, 8192 cached tokens, bf16, from first principles; the
    time at the bandwidth the note under the table states."""
    (table,) = markdown_tables(markdown)
    tbps = float(markdown.split("Times at ")[1].split(" TB/s")[0])
    assert [r["attention"] for r in table] == ["multi-head", "grouped-query", "multi-query"]
    for r in table:
        kv = int(r["kv heads"])
        flops = 32 * 4 * 32 * 8192 * 128
        moved = 32 * 128 * 2 * (2 * 32 * 1 + 2 * kv * 8192)  # layers, d, bytes: Q and O of one token, the cache
        assert float(r["GFLOP"]) == pytest.approx(flops / 1e9, abs=0.006)
        assert float(r["MB read"]) == pytest.approx(moved / 1e6, abs=0.06)
        assert float(r["FLOP/B"]) == pytest.approx(flops / moved, abs=0.006)
        assert int(r["µs at the bandwidth"]) == pytest.approx(moved / (tbps * 1e12) * 1e6, rel=0.01)


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "decode": check_decode,
    "scaling": check_scaling,
    "cost_table": check_cost_table,
    "kv_cache": check_kv_cache,
}


def test_a_rate_that_does_not_follow_from_its_time_fails_the_check() -> None:
    markdown = page.cost_table()
    row = markdown.splitlines()[2]
    cells = row.split(" | ")
    cells[2] = str(float(cells[2]) * 2)
    with pytest.raises(AssertionError):
        check_cost_table(markdown.replace(row, " | ".join(cells)), {})
    assert math.isfinite(float(cells[2]))
