"""The ground-up page's tables checked: BLAS counts and blocking recomputed, cuBLASLt and batched products read raw
from record ``gemm/ground-up-h100``.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable
from typing import Any

import pytest

from tests.gemm.pages import DASH, _ground, _record, _rounds, _sig
from tests.helpers import h100_ceilings_json, markdown_tables


def check_batched(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    records = _ground()["batched"]
    cases = sorted({(r["m"], r["batch"]) for r in records})
    assert [(row["m = n = k"], row["batch"]) for row in table] == [(f"{m}³", f"{b:,}") for m, b in cases]
    columns = {"loop": "loop of torch.mm (µs)", "loop_graph": "same loop, CUDA graph (µs)", "bmm": "torch.bmm (µs)",
               "one_gemm": "one torch.mm (shared B) (µs)"}  # fmt: skip
    for row, (m, batch) in zip(table, cases, strict=True):
        by = {r["variant"]: r for r in records if (r["m"], r["batch"]) == (m, batch)}
        for variant, header in columns.items():
            if variant not in by:
                assert row[header] == DASH
                continue
            r = by[variant]
            assert (r["m"], r["n"], r["k"]) == (m, m, m)
            us = r["ms"]["median"] * 1e3
            total, extra = re.fullmatch(r"([\d,.]+) \((.*)\)", row[header]).groups()
            if variant.startswith("loop"):
                assert _rounds(total, us, 0), row
                assert extra.endswith(" per product"), row
                assert _rounds(extra.removesuffix(" per product"), us / batch, 1), row
            else:
                assert _rounds(total, us, 1), row
                assert extra.endswith(" TFLOP/s"), row
                assert _sig(extra.removesuffix(" TFLOP/s"), 2 * m**3 * batch / (us * 1e-6) / 1e12, 3), row
        ratio = row["loop time / bmm time"]
        if "loop" in by and "bmm" in by:
            assert _rounds(ratio, by["loop"]["ms"]["median"] / by["bmm"]["ms"]["median"], 0), row
        else:
            assert ratio == DASH


def _spread_cell(cell: str, rates: list[float]) -> None:
    if not rates:
        assert cell == DASH
    elif len(rates) == 1:
        assert _rounds(cell, rates[0], 0)
    else:
        middle, low, high = re.fullmatch(r"(\d+) \((\d+)–(\d+)\)", cell).groups()
        assert _rounds(middle, statistics.median(rates), 0), (cell, rates)
        assert _rounds(low, min(rates), 0), (cell, rates)
        assert _rounds(high, max(rates), 0), (cell, rates)


def check_cublaslt_speed(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    c = _ground()["cublaslt"]
    snippet: dict[tuple[int, int, int], list[float]] = {}
    for run in c["runs"][1:]:  # the first run is the check at the default size
        shape = tuple(int(x) for x in re.search(r"M=(\d+) N=(\d+) K=(\d+)", run["stdout"]).groups())
        ms = float(re.search(r"median ([\d.]+) ms", run["stdout"]).group(1))
        rate = float(re.search(r"([\d.]+) TFLOP/s", run["stdout"]).group(1))
        assert rate == pytest.approx(2 * math.prod(shape) / (ms * 1e-3) / 1e12, rel=1e-2)  # the snippet's own sum
        snippet.setdefault(shape, []).append(rate)
    assert [row["bf16 M×N×K"] for row in table] == [f"{m}×{n}×{k}" for m, n, k in sorted(snippet)]
    for row, shape in zip(table, sorted(snippet), strict=True):
        assert int(row["rounds"]) == len(snippet[shape])
        _spread_cell(row["snippet (cublasLtMatmul), TFLOP/s"], snippet[shape])
        for library, header in (("cublas", "torch.mm, cuBLAS preferred"), ("cublaslt", "torch.mm, cuBLASLt preferred")):
            rates = [2 * math.prod(shape) / (r["ms"]["median"] * 1e-3) / 1e12 for r in c["torch_mm"]
                     if (r["m"], r["n"], r["k"]) == shape and r["library"] == library]  # fmt: skip
            _spread_cell(row[header], rates)


#: Per routine: (FLOPs, elements read or written) at size n, from each operation's definition.
BLAS_COUNTS = {
    "axpy": (lambda n: 2 * n, lambda n: 3 * n),  # y ← αx + y: read x and y, write y
    "dot": (lambda n: 2 * n, lambda n: 2 * n + 1),  # xᵀy: read x and y, write one scalar
    "gemv": (lambda n: 2 * n * n, lambda n: n * n + 3 * n),  # y ← αAx + βy: read A, x, y, write y
    "gemm": (lambda n: 2 * n**3, lambda n: 4 * n * n),  # C ← αAB + βC: read A, B, C, write C
    "trsm": (lambda n: n**3, lambda n: n * (n + 1) // 2 + 2 * n * n),  # X ← αT⁻¹X: read T's triangle, read and write X
}


ELEMENT_BYTES = {"fp32": 4, "fp64": 8, "fp16": 2, "bf16": 2}


def _routine(name: str, dtype: str) -> str:
    """BLAS's name for a routine of a type it has (``sgemm``), else the operation and the type."""
    prefix = {"fp32": "s", "fp64": "d"}.get(dtype)
    return f"`{prefix}{name}`" if prefix else f"`{name} ({dtype})`"


def check_blas_examples(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    n, dtype = kwargs["args"][0], kwargs["args"][1] if len(kwargs["args"]) > 1 else "fp32"
    size = ELEMENT_BYTES[dtype]
    assert [row["routine"] for row in table] == [_routine(r, dtype) for r in BLAS_COUNTS]
    levels = {"axpy": 1, "dot": 1, "gemv": 2, "gemm": 3, "trsm": 3}
    for row, (routine, (flops, elements)) in zip(table, BLAS_COUNTS.items(), strict=True):
        assert int(row["level"]) == levels[routine]
        assert int(row["FLOPs"].replace(",", "")) == flops(n), row
        assert int(row["bytes"].replace(",", "")) == elements(n) * size, row
        assert _rounds(row["FLOP/element"], flops(n) / elements(n), 2), row
        assert _rounds(row["FLOP/byte"], flops(n) / (elements(n) * size), 2), row
        growth = (flops(2 * n) / elements(2 * n)) / (flops(n) / elements(n))
        assert _rounds(row["× when n doubles"], growth, 2), row


def check_blas_roofline(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    sizes, dtype = kwargs["args"][0], kwargs["args"][1]
    sweep = _record("performance/h100-sweep")
    quoted = h100_ceilings_json()  # the H100's quoted copy and fp16/bf16 ceilings; other types: the sweep's best
    best = max(r["tflops"] for r in sweep["gemm"] if r["dtype"] == dtype and r["tflops"] is not None)
    peak = quoted.get(dtype, best) * 1e12
    bandwidth = quoted["bandwidth"] * 1e9
    expected = [(n, routine) for n in sizes for routine in BLAS_COUNTS]
    assert [(int(row["n"].replace(",", "")), row["routine"]) for row in table] == [
        (n, _routine(routine, dtype)) for n, routine in expected
    ]
    for row, (n, routine) in zip(table, expected, strict=True):
        flops, nbytes = BLAS_COUNTS[routine][0](n), BLAS_COUNTS[routine][1](n) * ELEMENT_BYTES[dtype]
        compute, memory = flops / peak, nbytes / bandwidth
        floor = max(compute, memory)
        assert _rounds(row["FLOP/byte"], flops / nbytes, 2), row
        assert _sig(row["floor (µs)"], floor * 1e6, 3), (row, floor)
        assert _rounds(row["at most TFLOP/s"], flops / floor / 1e12, 2), row
        assert row["limited by"] == ("compute" if compute > memory else "memory"), row
    assert markdown.endswith(
        f"|\n\nCeilings: {peak / 1e12:.1f} TFLOP/s ({dtype} matrix product) and {bandwidth / 1e9:,.0f} GB/s (copy), "
        f"ridge point {peak / bandwidth:.0f} FLOP/byte."
    )


def check_blocking_traffic(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    n, sizes = kwargs["args"]
    assert [int(row["block size b"]) for row in table] == list(sizes)
    for row, b in zip(table, sizes, strict=True):
        blocks = n // b
        moves = 0  # the explicit scheme: per C tile, load it, load a row of A tiles and a column of B tiles, store it
        for _ in range(blocks * blocks):
            moves += b * b + blocks * 2 * b * b + b * b
        assert int(row["blocks per side N"]) == blocks
        assert int(row["moves counted"].replace(",", "")) == moves == int(row["(2N+2)·n²"].replace(",", ""))
        assert moves == (2 * blocks + 2) * n * n
        assert int(row["fast memory 3b²"].replace(",", "")) == 3 * b * b
        assert _rounds(row["q = 2n³ / moves"], 2 * n**3 / moves, 2), row


def check_blocking_levels(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    m, n, k, tiles = kwargs["args"]
    outer_bk = k
    assert len(table) == len(tiles)
    for level, (row, (bm, bn, bk)) in enumerate(zip(table, tiles, strict=True), start=1):
        # A is read once per column of C tiles, B once per row of them; the C tile stays while the enclosing
        # level's k step runs, so C is read and written once per step of the level above (once in all at level 1)
        a_loads, b_loads = m * k * (n // bn), k * n * (m // bm)
        c_moves = m * n * (k // outer_bk)
        assert row["level"] == str(level)
        assert row["tile bm×bn×bk"] == f"{bm}×{bn}×{bk}"
        assert row["A loads (counted / formula)"] == f"{a_loads:,} / {a_loads:,}", row
        assert row["B loads"] == f"{b_loads:,} / {b_loads:,}", row
        assert row["C loads + stores"] == f"{c_moves:,} + {c_moves:,} / {c_moves:,} + {c_moves:,}", row
        assert int(row["held"].replace(",", "")) == bm * bk + bk * bn + bm * bn
        assert _rounds(row["q"], 2 * m * n * k / (a_loads + b_loads + 2 * c_moves), 1), row
        outer_bk = bk


def _lru_moves(n: int, b: int, capacity: int) -> int:
    """Loads plus stores of the blocked n×n×n product (b×b×b tiles, ``p, i, j`` inside a tile) through a fully
    associative LRU cache of ``capacity`` elements, write-back."""
    from collections import OrderedDict

    cache_: OrderedDict[tuple[str, int, int], bool] = OrderedDict()
    moves = 0

    def touch(key: tuple[str, int, int], write: bool) -> None:
        nonlocal moves
        if key in cache_:
            cache_.move_to_end(key)
            cache_[key] = cache_[key] or write
            return
        moves += 1
        cache_[key] = write
        if len(cache_) > capacity:
            _, dirty = cache_.popitem(last=False)
            moves += dirty

    for i0 in range(0, n, b):
        for j0 in range(0, n, b):
            for p0 in range(0, n, b):
                for p in range(p0, p0 + b):
                    for i in range(i0, i0 + b):
                        for j in range(j0, j0 + b):
                            touch(("A", i, p), False)
                            touch(("B", p, j), False)
                            touch(("C", i, j), True)
    return moves + sum(cache_.values())


def check_blocking_capacity(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    (sizes,) = kwargs["args"]
    assert [int(row["block size b"]) for row in table] == list(sizes)
    for row in table:
        b = int(row["block size b"])
        need = int(row["LRU cache needs"].replace(",", ""))
        assert int(row["three tiles, 3b²"].replace(",", "")) == 3 * b * b
        assert _rounds(row["LRU need / one tile b²"], need / (b * b), 2)
        if b <= 8:  # replayed here on a 2b × 2b × 2b product: the smallest cache that moves what the formula says
            n, blocks = 2 * b, 2
            target = (2 * blocks + 2) * n * n
            assert _lru_moves(n, b, need) <= target < _lru_moves(n, b, need - 1), (b, need)


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "batched_table": check_batched,
    "cublaslt_speed": check_cublaslt_speed,
    "blas_examples": check_blas_examples,
    "blas_roofline": check_blas_roofline,
    "blocking_traffic": check_blocking_traffic,
    "blocking_levels": check_blocking_levels,
    "blocking_capacity": check_blocking_capacity,
}


def test_the_batched_figure_plots_loop_over_bmm_per_size_against_batch_count() -> None:
    """batched_figure: one line per size, a point per batch count where both the loop and bmm were timed, at the
    loop's median time over bmm's (the record read raw), on log axes (base 2 along the batch count)."""
    import matplotlib.colors
    import numpy as np

    from gpukb.gemm.pages import ground_up as page
    from tests.helpers import drawn

    fig = drawn(page.batched_figure)
    (ax,) = fig.axes
    times = {(r["m"], r["batch"], r["variant"]): r["ms"]["median"] for r in _ground()["batched"]}
    sizes = sorted({m for m, _, _ in times})
    lines = ax.get_lines()
    *curves, parity = lines
    assert [line.get_label() for line in curves] == [f"{m}×{m}×{m}" for m in sizes]
    for line, m in zip(curves, sizes, strict=True):
        points = sorted((b, times[m, b, "loop"] / times[m, b, "bmm"]) for mm, b, v in times
                        if mm == m and v == "bmm" and (m, b, "loop") in times)  # fmt: skip
        assert np.allclose(np.column_stack([line.get_xdata(), line.get_ydata()]), points, rtol=1e-12), m
        assert line.get_marker() == "o"
    assert (list(parity.get_ydata()), parity.get_linestyle()) == ([1.0, 1.0], ":")
    assert matplotlib.colors.to_rgba(parity.get_color()) == matplotlib.colors.to_rgba("grey")
    assert (ax.get_xscale(), ax.xaxis.get_transform().base, ax.get_yscale()) == ("log", 2, "log")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("matrices in the batch", "loop time / bmm time")
    assert ax.get_title() == "One batched call against a loop of GEMMs (bf16)"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [line.get_label() for line in curves]
    assert legend.get_title().get_text() == "each product"
    assert {t.get_fontsize() for t in legend.get_texts()} == {8}
    assert list(fig.get_size_inches()) == [6.5, 3.6]
