"""The cell checks of docs/formats/mixed-precision.md (``gpukb.formats.pages.mixed_precision``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.helpers import markdown_tables


def check_autocast(markdown: str, kwargs: dict[str, Any]) -> None:
    """The op lists against autocast.toml read with tomllib, and every op a name torch really has."""
    import tomllib

    import torch
    from torch.nn import functional

    from tests.helpers import ROOT

    (table,) = markdown_tables(markdown)
    raw = tomllib.loads((ROOT / "src" / "gpukb" / "data" / "autocast.toml").read_text(encoding="utf-8"))
    lists = {entry["id"]: entry["ops"] for entry in raw["list"]}
    runs_in = {"float16 / bfloat16": "lower-precision", "float32": "float32", "the widest input type": "widest"}
    assert list(table[0]) == ["autocast runs them in", "ops (CUDA)", "why"]
    assert [row["autocast runs them in"] for row in table] == list(runs_in)
    assert all(row["why"] for row in table)
    for row in table:
        ops = [op.strip().strip("`") for op in row["ops (CUDA)"].split(", ")]
        assert ops == lists[runs_in[row["autocast runs them in"]]], row
        namespaces = (torch, functional, torch.Tensor, torch.nn, torch.linalg)
        assert all(any(hasattr(ns, op) for ns in namespaces) for op in ops), [
            op for op in ops if not any(hasattr(ns, op) for ns in namespaces)
        ]


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "autocast_table": check_autocast,
}
