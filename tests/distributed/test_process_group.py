"""Two processes, one gloo process group, started once for this module: FSDP2's dtypes under FULL/DEFAULT/PURE
captured with hooks and asserted against the mapping in the chapter's data file (Composer's get_mixed_precision),
the collective benchmark's values and arithmetic, and the dtype gloo refuses to reduce."""

from __future__ import annotations

import math
import sys
import tomllib

import pytest

from gpukb.distributed.collectives import bus_factor
from gpukb.distributed.ddp import gradient_storage
from gpukb.distributed.demos import run_all
from gpukb.distributed.launch import run_spawned
from tests.helpers import ROOT

WORLD = 2


@pytest.fixture(scope="module")
def ranks() -> list[dict]:
    """Every rank's results; one process group for the whole module, killed after 90 s at most."""
    import torch

    fork = sys.platform == "linux" and not torch.cuda.is_initialized()
    return run_spawned(run_all, WORLD, "gloo", timeout=90, start_method="fork" if fork else "spawn")


def _documented() -> dict[str, dict[str, str]]:
    """The data file read with tomllib: mode → dtypes, with "compute" = bfloat16 (amp_bf16), "none" = float32."""
    raw = tomllib.loads((ROOT / "src/gpukb/data/distributed/fsdp.toml").read_text(encoding="utf-8"))
    names = {"compute": "bfloat16", "none": "float32", "float32": "float32"}
    return {m["mode"]: {k: names[m[k]] for k in ("param_dtype", "reduce_dtype")} for m in raw["composer_mode"]}


def test_fsdp2_runs_on_gloo_in_this_torch(ranks) -> None:
    import torch

    assert [r["world_size"] for r in ranks] == [WORLD, WORLD]
    assert {r["backend"] for r in ranks} == {"gloo"}
    assert ranks[0]["torch"] == torch.__version__
    assert ranks[0]["dtypes"]["FULL"]["param_type"] == "DTensor"  # parameters are sharded DTensors


@pytest.mark.parametrize("mode", ["FULL", "DEFAULT", "PURE"])
def test_mixed_precision_dtypes_match_composer(ranks, mode) -> None:
    want = _documented()[mode]
    for rank in ranks:
        got = rank["dtypes"][mode]
        # forward: both layers compute with param_dtype, and their inputs are cast to it
        assert got["forward_params"] == [want["param_dtype"]] * 2
        assert got["forward_inputs"] == [want["param_dtype"]] * 2
        # the all-gathers move param_dtype (forward, then again in backward after resharding)
        gathers = [d for name, d in got["collectives"] if name.startswith("all_gather")]
        assert gathers == [want["param_dtype"]] * 4
        # gradients are computed in param_dtype, reduce-scattered in reduce_dtype, one collective per layer
        assert got["unsharded_grads"] == [want["param_dtype"]] * 2
        scatters = [d for name, d in got["collectives"] if name.startswith("reduce_scatter")]
        assert scatters == [want["reduce_dtype"]] * 2
        # the optimizer sees float32 sharded parameters and gradients in every mode
        assert got["sharded_params"] == got["sharded_grads"] == ["float32"]


def test_pure_differs_from_default_only_in_the_reduce_scatter(ranks) -> None:
    default, pure = ranks[0]["dtypes"]["DEFAULT"], ranks[0]["dtypes"]["PURE"]
    for key in ("forward_params", "forward_inputs", "unsharded_grads", "sharded_params", "sharded_grads"):
        assert default[key] == pure[key]
    assert [c for c in default["collectives"] if c[0].startswith("reduce")] != [
        c for c in pure["collectives"] if c[0].startswith("reduce")
    ]


def test_collectives_compute_the_right_values(ranks) -> None:
    for rank in ranks:
        assert rank["values_ok"] == {"all_reduce": True, "reduce_scatter": True, "all_gather": True}


def test_benchmark_arithmetic_is_nccl_tests(ranks) -> None:
    rows = ranks[0]["bandwidth"]
    assert {r["op"] for r in rows} == {"all_reduce", "reduce_scatter", "all_gather"}
    factors = {
        "all_reduce": 2 * (WORLD - 1) / WORLD,
        "reduce_scatter": (WORLD - 1) / WORLD,
        "all_gather": (WORLD - 1) / WORLD,
    }
    for row in rows:
        assert row["ranks"] == WORLD
        assert math.isclose(row["algbw"], row["size_bytes"] / (row["ms"]["median"] * 1e-3), rel_tol=1e-12)
        assert math.isclose(row["busbw"], row["algbw"] * factors[row["op"]], rel_tol=1e-12)
        assert bus_factor(row["op"], WORLD) == factors[row["op"]]
    # every rank reports the same (slowest rank's) time
    assert [r["ms"] for r in ranks[0]["bandwidth"]] == [r["ms"] for r in ranks[1]["bandwidth"]]


def test_gloo_cannot_reduce_float8(ranks) -> None:
    from gpukb.distributed.fsdp_config import check_reduce_dtype

    assert ranks[0]["refused"] == {"float8_e4m3fn": "RuntimeError: Invalid scalar type"}
    with pytest.raises(ValueError, match=r"float8_e4m3fn.*choose one of \['float32', 'bfloat16', 'float16'\]"):
        check_reduce_dtype("float8_e4m3fn", "gloo")


def test_fsdp2_training_step_on_two_ranks(ranks) -> None:
    # the tiny transformer, PURE, non-reentrant checkpointing: each rank its own batch, the loss falls on both
    for rank in ranks:
        first, last = rank["train_losses"]
        assert 0 < last < first
    assert ranks[0]["train_losses"][0] != ranks[1]["train_losses"][0]  # different data per rank


def test_a_hybrid_mesh_from_the_config(ranks) -> None:
    # data_parallel_replicate_degree = world size: a (replicate, shard) mesh with a shard dimension of 1
    assert ranks[0]["hybrid_mesh"] == {"shape": [WORLD, 1], "names": ["replicate", "shard"]}


def test_a_mesh_for_another_world_size_is_refused(ranks) -> None:
    assert ranks[0]["mesh_error"] == f"world_size {WORLD + 1} is not the process group's size {WORLD}"


def test_ddp_buckets_hold_a_second_copy_of_the_gradients_unless_they_are_views(ranks) -> None:
    """DDP's documented cost, measured on two gloo ranks: by default the buckets are a second copy of every gradient
    (twice the bytes in all); with ``gradient_as_bucket_view=True`` the gradients are views into the buckets."""
    for rank in ranks:
        copied, viewed = rank["ddp_gradients"][False], rank["ddp_gradients"][True]
        for measured in (copied, viewed):
            assert measured["bucket_bytes"] == measured["gradient_bytes"] > 0
            assert measured["buckets"] >= 2  # bucket_cap_mb is small enough for several
        assert copied["distinct_bytes"] == 2 * copied["gradient_bytes"]
        assert viewed["distinct_bytes"] == viewed["gradient_bytes"]


def test_gradient_storage_refuses_bad_arguments() -> None:
    with pytest.raises(TypeError, match="gradient_as_bucket_view must be True or False"):
        gradient_storage("yes")
    with pytest.raises(ValueError, match="bucket_cap_mb must be positive; got 0"):
        gradient_storage(True, bucket_cap_mb=0)
