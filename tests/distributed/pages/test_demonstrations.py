"""The demonstrations page's tables checked: dtypes and checkpointing behaviour probed again here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.distributed.pages import _table


def check_dtype_flow(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = {r["mode"]: r for r in _table(markdown)}
    expect = {
        "`FULL`": ("float32", "float32"),
        "`DEFAULT`": ("bfloat16", "float32"),
        "`PURE`": ("bfloat16", "bfloat16"),
    }
    assert set(rows) == set(expect)
    for mode, (compute, reduce) in expect.items():
        row = rows[mode]
        assert row["params in forward"] == row["all-gather"] == row["unsharded grads"] == compute
        assert row["reduce-scatter"] == reduce
        assert row["sharded grads (optimizer)"] == row["sharded params (optimizer)"] == "float32"


def check_checkpoint_behaviours(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = {r["behaviour"]: r for r in _table(markdown)}
    assert rows["torch.autograd.grad(out, x)"]["use_reentrant=True"].startswith("RuntimeError")
    assert rows["torch.autograd.grad(out, x)"]["use_reentrant=False"] == "works"
    assert rows["keyword arguments to the function"]["use_reentrant=True"].startswith("ValueError: Unexpected keyword")
    assert rows["inputs that do not require grad"]["use_reentrant=False"] == "parameters get gradients"
    nested = rows["nested checkpoints"]
    assert (
        nested["use_reentrant=True"] == nested["use_reentrant=False"] == "correct gradients, inner function run 3 times"
    )
    early = rows["recomputation stops once the needed tensors exist"]
    assert (early["use_reentrant=True"], early["use_reentrant=False"]) == (
        "2 of 2 lines after the saving op re-run",
        "0 of 2 lines after the saving op re-run",
    )


def check_checkpoint_memory(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = {r["checkpointing"]: r for r in _table(markdown)}
    b, s, h, a, layers = 2, 16, 32, 4, 3
    block = 4 * (16 * b * s * h + a * b * s * s) + 4 * b * s * 4
    assert int(rows["none"]["bytes held after forward"]) == int(rows["none"]["formula"]) == layers * block + 4
    for impl in ("reentrant", "non-reentrant"):
        assert int(rows[impl]["bytes held after forward"]) == int(rows[impl]["formula"]) == layers * b * s * h * 4 + 4
        assert int(rows[impl]["peak bytes"]) < int(rows["none"]["peak bytes"])
        assert rows[impl]["block forward calls"] == str(2 * layers)
    assert rows["none"]["block forward calls"] == str(layers)


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "dtype_flow_markdown": check_dtype_flow,
    "checkpoint_behaviours_markdown": check_checkpoint_behaviours,
    "checkpoint_memory_markdown": check_checkpoint_memory,
}
