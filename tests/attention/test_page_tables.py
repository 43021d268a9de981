"""Every table the attention pages render, read back by header and checked against an independent computation
(first principles for the counts, the committed record read with ``json`` for the benchmark)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from typing import Any

import pytest

from gpukb.attention import pages
from tests.helpers import ROOT, markdown_tables
from tests.site.test_page_tables import page_calls, rendered

RECORD = ROOT / "src" / "gpukb" / "data" / "results" / "attention" / "flash-forward-h100.json"


def _raw() -> dict[str, Any]:
    return json.loads(RECORD.read_text(encoding="utf-8"))


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


def _by_case(raw: dict[str, Any]) -> dict[tuple, dict[str, Any]]:
    return {(c["group"], c["head_dim"], c["causal"], c["seq"]): c for c in raw["cases"]}


def _rates(case: dict[str, Any]) -> dict[str, float | None]:
    return {t["name"]: t["tflops"] for t in [case["triton"], *case["backends"]]}


def check_flash_standard(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw()
    standard = [c for c in raw["cases"] if c["group"] == "standard"]
    # the record's order: each standard case, the kernel first, then every SDPA backend it timed
    expected = [(c, t) for c in standard for t in [c["triton"], *c["backends"]]]
    assert len(table) == len(expected) == 4 * len(standard)
    for r, (case, timing) in zip(table, expected, strict=True):
        assert r["causal"] == ("yes" if case["causal"] else "no")
        name = timing["name"]
        assert r["implementation"] == (f"Triton kernel ({case['config']})" if name == "triton" else f"SDPA {name}")
        if timing["ms"] is None:
            assert [r[h] for h in ("median ms", "IQR %", "TFLOP/s", "kernel ÷ this")] == ["-"] * 4
            assert r["difference from kernel"] == (timing["error"] or "-")
            continue
        ms = timing["ms"]
        assert r["median ms"] == f"{ms['median']:.3f}"
        assert r["IQR %"] == f"{(ms['q3'] - ms['q1']) / ms['median'] * 100:.1f}"
        pairs = case["seq"] * (case["seq"] + 1) // 2 if case["causal"] else case["seq"] ** 2
        rate = 4 * case["batch"] * case["heads"] * pairs * case["head_dim"] / (ms["median"] * 1e-3) / 1e12
        assert timing["tflops"] == pytest.approx(rate, rel=1e-9)
        assert r["TFLOP/s"] == f"{timing['tflops']:.0f}"
        assert r["kernel ÷ this"] == f"{case['triton']['tflops'] / timing['tflops']:.2f}"
        difference = timing["difference"]
        assert r["difference from kernel"] == ("-" if difference is None else f"{difference:.1e}"), r


def check_flash_sweep(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    cases = _by_case(_raw())
    assert len(table) == sum(1 for k in cases if k[0] == "sweep") > 0
    for r in table:
        case = cases[("sweep", int(r["D"]), r["causal"] == "yes", int(r["S"]))]
        assert int(r["B"]) * int(r["S"]) == 16384
        assert int(r["H"]) * int(r["D"]) == 2048
        rates = _rates(case)
        for name in ("flash", "efficient", "cudnn"):
            assert r[name] == ("-" if rates[name] is None else f"{rates[name]:.0f}")
        assert float(r["kernel"]) == pytest.approx(rates["triton"], abs=0.6)
        assert float(r["kernel ÷ flash"]) == pytest.approx(rates["triton"] / rates["flash"], abs=0.006)
        best = max(v for k, v in rates.items() if k != "triton" and v)
        assert float(r["kernel ÷ best"].split()[0]) == pytest.approx(rates["triton"] / best, abs=0.006)


def check_flash_tuning(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    raw = _raw()
    assert len(table) == len(raw["candidates"])
    assert markdown.startswith(f"Tuning shape: {raw['tuning_shape']}.")
    used = {(c["head_dim"], c["causal"]): c["config"] for c in raw["cases"]}
    for r, c in zip(table, raw["candidates"], strict=True):
        assert (r["D"], r["causal"]) == (str(c["head_dim"]), "yes" if c["causal"] else "no")
        assert r["tiling (BLOCK_M×BLOCK_N, warps, stages)"] == c["config"] == _label(c)
        assert r["TFLOP/s"] == ("-" if c["tflops"] is None else f"{c['tflops']:.0f}")
        assert r["registers"] == ("-" if c["registers"] is None else str(c["registers"]))
        assert r["spills"] == ("-" if c["spills"] is None else str(c["spills"]))
        pick = "chosen" if used.get((c["head_dim"], c["causal"])) == c["config"] else ""
        assert r["note"] == (c["error"] or pick), r
    for d, causal in {(c["head_dim"], c["causal"]) for c in raw["candidates"]}:
        tried = [c for c in raw["candidates"] if (c["head_dim"], c["causal"]) == (d, causal) and c["tflops"]]
        fastest = max(tried, key=lambda c: c["tflops"])["config"]
        chosen = [r for r in table if r["note"] == "chosen" and (int(r["D"]), r["causal"] == "yes") == (d, causal)]
        assert [r["tiling (BLOCK_M×BLOCK_N, warps, stages)"] for r in chosen] == [fastest]


def _label(t: dict[str, Any]) -> str:
    """A tiling as the record's ``config`` spells it: ``"64x64 w4 s3 tma"`` (blocks, warps, stages, TMA)."""
    return f"{t['block_m']}x{t['block_n']} w{t['num_warps']} s{t['num_stages']}{' tma' if t['tma'] else ''}"


def check_flash_defaults(markdown: str, kwargs: dict[str, Any]) -> None:
    # the kernel's table of defaults, as data (its fields, not its label property), rows sorted by (D, causal)
    from gpukb.kernels.flash_attention import DEFAULT_CONFIGS

    (table,) = markdown_tables(markdown)
    raw = _raw()
    assert all(c["config"] == _label(c) for c in raw["candidates"])  # the record's spelling of a tiling
    keys = sorted(DEFAULT_CONFIGS)
    assert [(r["D"], r["causal"]) for r in table] == [(str(d), "yes" if causal else "no") for d, causal in keys]
    for r, key in zip(table, keys, strict=True):
        assert r["default tiling"] == _label(dataclasses.asdict(DEFAULT_CONFIGS[key])), r
    used = {(c["head_dim"], c["causal"]): c["config"] for c in raw["cases"]}
    assert {(int(r["D"]), r["causal"] == "yes") for r in table} >= set(used)
    for r in table:
        key = (int(r["D"]), r["causal"] == "yes")
        if key in used:  # the head dims the run measured: the code's default is what the run chose
            assert r["default tiling"] == used[key], r


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
    "flash_standard": check_flash_standard,
    "flash_sweep": check_flash_sweep,
    "flash_tuning": check_flash_tuning,
    "flash_defaults": check_flash_defaults,
}

CALLS = [c for c in page_calls() if c.module == "gpukb.attention.pages" and c.function in CHECKS]


@pytest.mark.parametrize("call", CALLS, ids=lambda c: f"{c.page}:{c.line}:{c.function}")
def test_page_table_cells_match(call: Any) -> None:
    CHECKS[call.function](rendered(call), {**call.kwargs, "args": call.args})


def test_a_rate_that_does_not_follow_from_its_time_fails_the_check() -> None:
    markdown = pages.cost_table()
    row = markdown.splitlines()[2]
    cells = row.split(" | ")
    cells[2] = str(float(cells[2]) * 2)
    with pytest.raises(AssertionError):
        check_cost_table(markdown.replace(row, " | ".join(cells)), {})
    assert math.isfinite(float(cells[2]))
