"""The two-GPU page's tables checked against the records read raw: DDP buckets and FSDP's dtypes."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.distributed.pages import _arg, _by_id, _config, _table


def check_fsdp_dtypes(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _by_id(_arg(kwargs, "record_id", 0))
    order = ["FULL", "DEFAULT", "PURE"]
    captures = sorted(raw["captures"], key=lambda c: (order.index(c["mode"]), c["rank"]))
    assert [(r["mode"], r["rank"]) for r in rows] == [(f"`{c['mode']}`", str(c["rank"])) for c in captures]
    assert sorted({c["rank"] for c in captures}) == list(range(raw["world_size"]))
    # what each mode sets (Composer under amp_bf16): compute dtype, reduce-scatter dtype
    want = {"FULL": ("float32", "float32"), "DEFAULT": ("bfloat16", "float32"), "PURE": ("bfloat16", "bfloat16")}
    for row, c in zip(rows, captures, strict=True):
        compute, reduce = want[c["mode"]]
        gathers = [x["dtype"] for x in c["collectives"] if x["op"].startswith("all_gather")]
        scatters = [x["dtype"] for x in c["collectives"] if x["op"].startswith("reduce_scatter")]
        assert set(c["forward_params"]) == set(c["unsharded_grads"]) == set(gathers) == {compute}
        assert set(scatters) == {reduce}
        assert row["params in forward"] == row["unsharded grads"] == compute
        assert row["all-gathers"] == f"{len(gathers)} × {compute}"
        assert row["reduce-scatters"] == f"{len(scatters)} × {reduce}"
        assert row["sharded grads (optimizer)"] == "float32" == " / ".join(sorted(set(c["sharded_grads"])))
    assert f"{raw['world_size']} ranks, {raw['backend'].upper()}" in markdown


def check_ddp_buckets(markdown: str, kwargs: dict[str, Any]) -> None:
    """The DDP run's extra peak over plain training on one GPU, and the 4 bytes per parameter of its buckets, from
    the two records read with json; the buckets are half of it, to within a percent."""
    raw, alone = _by_id(_arg(kwargs, "record_id", 0)), _by_id(_arg(kwargs, "one_gpu_id", 1))
    ddp = next(r for r in raw["runs"] if not r["fsdp"] and r["autocast"] is None)
    plain = next(r for r in alone["runs"] if _config(r) == _config(ddp))
    extra, buckets = ddp["peak_bytes"] - plain["peak_bytes"], 4 * raw["parameters"]
    numbers = [float(x) for x in re.findall(r"(\d+\.\d+) GiB", markdown)]
    assert numbers == [round(extra / 2**30, 3), round(buckets / 2**30, 3), round((extra - buckets) / 2**30, 3)]
    assert f"({buckets / extra:.0%})" in markdown
    assert f"a float32 copy of the {raw['parameters'] / 1e6:.0f} M gradients" in markdown
    assert abs(buckets / extra - 0.5) < 0.01


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "ddp_buckets_markdown": check_ddp_buckets,
    "fsdp_dtypes_markdown": check_fsdp_dtypes,
}


def test_records_of_another_model_or_batch_are_not_compared() -> None:
    """A one-GPU record of another model gives no "saved" or "× one GPU" column: the error names both records."""
    from gpukb.distributed.pages import memory_markdown, throughput_markdown

    with pytest.raises(ValueError, match=r"^distributed/fsdp-modes-h100x4 trained \{.*'hidden': 2048.*\} with batch "
                                         r"\d+, not \{.*'hidden': 768.*\} with batch 8$"):  # fmt: skip
        throughput_markdown("distributed/fsdp-h100x2", one_gpu_id="distributed/fsdp-modes-h100x4")
    with pytest.raises(ValueError, match=r"^distributed/fsdp-modes-h100x4 trained"):
        memory_markdown("distributed/fsdp-memory-h100x2", one_gpu_id="distributed/fsdp-modes-h100x4")
