"""The fsdp_config translator: Composer's modes, the torch objects each key implies, and the errors."""

from __future__ import annotations

import inspect
import tomllib

import pytest
import torch
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointImpl, CheckpointWrapper
from torch.distributed.fsdp import (
    BackwardPrefetch,
    CPUOffload,
    CPUOffloadPolicy,
    FSDPModule,
    MixedPrecision,
    MixedPrecisionPolicy,
    OffloadPolicy,
    ShardingStrategy,
    fully_shard,
)

from gpukb.distributed import options
from gpukb.distributed.fsdp_config import DEFAULTS, check_reduce_dtype, describe, mode_dtypes, plan
from gpukb.distributed.pages.options import fully_shard_signature
from tests.helpers import ROOT


def _raw() -> dict:
    return tomllib.loads((ROOT / "src/gpukb/data/distributed/fsdp.toml").read_text(encoding="utf-8"))


def test_modes_under_each_precision() -> None:
    # composer/distributed/mosaic_parallelism.py v0.32.1, get_mixed_precision, with _get_torch_dtype(precision)
    assert mode_dtypes("amp_bf16") == [
        ("FULL", None, None, None),
        ("DEFAULT", "bfloat16", "float32", "bfloat16"),
        ("PURE", "bfloat16", "bfloat16", "bfloat16"),
    ]
    assert mode_dtypes("amp_fp16")[2] == ("PURE", "float16", "float16", "float16")
    assert mode_dtypes("fp32")[1] == ("DEFAULT", "float32", "float32", "float32")


def test_defaults_are_composers() -> None:
    p = plan()
    assert (p.mixed_precision, p.activation_checkpointing, p.reentrant) == ("DEFAULT", False, True)
    assert p.checkpoint_impl() is None  # reentrant=True has no effect while checkpointing is off
    keys = {k["key"]: k["default"] for k in _raw()["composer_key"]}
    for key, default in keys.items():
        assert str(DEFAULTS[key]).lower() == default.lower()


def test_fsdp2_objects() -> None:
    p = plan({"mixed_precision": "pure", "cpu_offload": True, "sharding_strategy": "SHARD_GRAD_OP"})
    kwargs = p.fully_shard_kwargs()
    assert kwargs["mp_policy"] == MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16)
    assert isinstance(kwargs["offload_policy"], CPUOffloadPolicy)
    assert kwargs["reshard_after_forward"] is False  # SHARD_GRAD_OP = ZeRO-2
    assert type(plan().offload_policy()) is OffloadPolicy
    mesh = object()  # fully_shard(module, **kwargs) takes the mesh under its own keyword
    assert plan().fully_shard_kwargs(mesh)["mesh"] is mesh
    assert set(plan().fully_shard_kwargs()) <= set(inspect.signature(fully_shard).parameters)
    assert plan(mixed_precision="FULL").mp_policy() == MixedPrecisionPolicy()


def test_fsdp1_objects() -> None:
    kwargs = plan(backward_prefetch="BACKWARD_PRE", keep_low_precision_grads=True).fsdp1_kwargs()
    assert kwargs["mixed_precision"] == MixedPrecision(
        param_dtype=torch.bfloat16,
        reduce_dtype=torch.float32,
        buffer_dtype=torch.bfloat16,
        keep_low_precision_grads=True,
    )
    assert kwargs["sharding_strategy"] is ShardingStrategy.FULL_SHARD
    assert kwargs["backward_prefetch"] is BackwardPrefetch.BACKWARD_PRE
    assert kwargs["cpu_offload"] is None
    offload = plan(cpu_offload=True).fsdp1_kwargs()["cpu_offload"]
    assert isinstance(offload, CPUOffload)
    assert offload.offload_params is True
    assert plan(backward_prefetch="NONE").fsdp1_kwargs()["backward_prefetch"] is None


def test_checkpointing_choice() -> None:
    on = plan(activation_checkpointing=True)
    assert on.checkpoint_impl() is CheckpointImpl.REENTRANT  # Composer's FSDP1 default
    assert plan(activation_checkpointing=True, activation_checkpointing_reentrant=False).checkpoint_impl() is (
        CheckpointImpl.NO_REENTRANT
    )
    inner = torch.nn.Linear(2, 2)
    wrapped = on.wrap_block(inner)
    assert isinstance(wrapped, CheckpointWrapper)
    assert wrapped._checkpoint_wrapped_module is inner  # the block given, not a fresh one
    assert wrapped.checkpoint_impl is CheckpointImpl.REENTRANT
    lin = torch.nn.Linear(2, 2)
    assert plan().wrap_block(lin) is lin


def test_custom_dtype_dict() -> None:
    p = plan(mixed_precision={"param_dtype": torch.float16, "reduce_dtype": "fp32"})
    assert (p.mixed_precision, p.param_dtype, p.reduce_dtype, p.buffer_dtype) == ("custom", "float16", "float32", None)


def test_mesh_shapes() -> None:
    assert plan().mesh_shape(8) == (8,)
    assert plan().mesh_shape(1) == (1,)  # one rank is a mesh too
    shape = plan(data_parallel_replicate_degree=2).mesh_shape(6)
    assert shape == (2, 3)
    assert all(type(n) is int for n in shape)  # DeviceMesh takes ints, not 3.0
    assert plan(data_parallel_replicate_degree=2).mesh_shape(8) == (2, 4)
    assert plan(sharding_strategy="HYBRID_SHARD", data_parallel_replicate_degree=2).mesh_shape(8) == (2, 4)
    assert plan(sharding_strategy="NO_SHARD").mesh_shape(4) == (4, 1)


def test_describe_table() -> None:
    headers, rows = describe([plan(mixed_precision=m) for m in ("FULL", "DEFAULT", "PURE")])
    # the columns are named by the keys that set them (Composer's fsdp_config, the trainer's precision)
    assert headers == ["mixed_precision", "precision", "param_dtype", "reduce_dtype", "buffer_dtype", "checkpointing"]
    assert {headers[0], headers[1]} <= set(DEFAULTS)
    assert rows[0][2:] == ["-", "-", "-", "off"]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: plan({"mixed_precison": "PURE"}),
            ValueError,
            r"unknown fsdp_config keys \['mixed_precison'\]; valid keys are \['activation_checkpointing'",
        ),
        (
            lambda: plan(mixed_precision="HALF"),
            ValueError,
            r"unknown mixed_precision 'HALF'; choose one of \['FULL', 'DEFAULT', 'PURE'\]",
        ),
        (lambda: plan(mixed_precision=16), TypeError, "mixed_precision must be one of"),
        (lambda: plan(mixed_precision={"param": "bf16"}), ValueError, r"unknown mixed_precision keys \['param'\]"),
        (lambda: plan(mixed_precision={"reduce_dtype": "float8_e4m3fn"}), ValueError, "choose one of"),
        (
            lambda: plan(precision="amp_fp8"),
            ValueError,
            r"unknown precision 'amp_fp8'; choose one of \['fp32', 'amp_fp16', 'amp_bf16'\]",
        ),
        (lambda: plan(activation_checkpointing="yes"), TypeError, "activation_checkpointing must be True or False"),
        (lambda: plan(sharding_strategy="ZERO3"), ValueError, "unknown sharding_strategy 'ZERO3'"),
        (lambda: plan(data_parallel_shard_degree=0), ValueError, "-1 .* or an int ≥ 1; got 0"),
        (lambda: plan("PURE"), TypeError, "fsdp_config must be a dict"),
        (lambda: plan(data_parallel_shard_degree=3).mesh_shape(8), ValueError, "= 3 ranks, but the world size is 8"),
        (
            lambda: plan(data_parallel_replicate_degree=3).mesh_shape(8),
            ValueError,
            "8 is not divisible by data_parallel_replicate_degree 3",
        ),
        (
            lambda: plan(sharding_strategy="HYBRID_SHARD").mesh_shape(8),
            ValueError,
            "needs data_parallel_replicate_degree",
        ),
        (
            lambda: plan(sharding_strategy="NO_SHARD", data_parallel_shard_degree=2).mesh_shape(8),
            ValueError,
            "NO_SHARD shards nothing",
        ),
        (
            lambda: check_reduce_dtype(torch.int8, "nccl"),
            ValueError,
            r"^reduce dtype for nccl torch.int8 is not supported",
        ),
        (lambda: check_reduce_dtype("int8"), ValueError, r"^reduce dtype for nccl 'int8' is not supported"),  # NCCL's
        (lambda: check_reduce_dtype("fp8", "gloo"), ValueError, r"^reduce dtype for gloo 'fp8' is not supported"),
        (lambda: check_reduce_dtype("bfloat16", "mpi"), ValueError, "unknown backend 'mpi'"),
        (lambda: check_reduce_dtype(3, "gloo"), TypeError, r"^reduce dtype for gloo must be a .* name; got 3 \(int\)"),
        (lambda: plan().mesh_shape(0), ValueError, "^world_size must be an int ≥ 1; got 0"),
    ],
)
def test_bad_input(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


def test_data_file_sources_are_cited_and_pinned() -> None:
    facts = options.facts()
    import datetime

    for s in facts.source:  # a date in the days this chapter was written and measured
        assert datetime.date(2026, 11, 23) <= datetime.date.fromisoformat(s.checked) <= datetime.date(2026, 11, 27)
    for s in facts.source:
        assert s.url.startswith("https://")
        assert s.version
    assert options.source("composer-mixed-precision").path == "composer/distributed/mosaic_parallelism.py"


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (
            lambda t: t.replace('mode = "PURE"', 'mode = "DEFAULT"'),
            r"composer_mode entry 3 \(DEFAULT\): mode 'DEFAULT' repeats entry 2",
        ),
        (lambda t: t.replace('reduce_dtype = "float32"', 'reduce_dtype = "fp8"', 1), r"composer_mode.*reduce_dtype"),
        (lambda t: t.replace('source = "torchtitan-fsdp"', 'source = "nowhere"', 1), "cites unknown source 'nowhere'"),
        (lambda t: t + "\n[[extra]]\nx = 1\n", r"unknown top-level keys \['extra'\]"),
        (
            lambda t: t.replace('key = "activation_checkpointing"', 'key = "mixed_precision"', 1),
            r"composer_key entry 2 \(mixed_precision\): key 'mixed_precision' repeats entry 1",
        ),
        (lambda t: t.replace("[[fsdp_map]]", "[[fsdp_map]]\nbogus = 1", 1), r"fsdp_map\[0\]\.bogus: Extra inputs"),
        (lambda t: "x = [", "not valid TOML"),
        (
            lambda t: t.replace('checked = "2026-11-23"\n', "", 1),
            r"source entry 1 \(composer-parallelism\): checked: Field required",
        ),
    ],
)
def test_corrupted_data_file(edit, match) -> None:
    text = (ROOT / "src/gpukb/data/distributed/fsdp.toml").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match=f"^distributed/fsdp.toml: .*{match}"):  # the message names the file
        options.parse(edit(text))
    with pytest.raises(ValueError, match="unknown source 'x'"):
        options.source("x")


def test_the_options_page_names_every_fully_shard_keyword_and_the_prefetch_setters() -> None:
    """The page renders the signature with ``inspect`` and explains each keyword in prose: a torch that adds one fails
    here until the page says what it does. The prefetch and gradient-accumulation setters it names exist."""
    page = (ROOT / "docs" / "distributed" / "options.md").read_text(encoding="utf-8")
    prose = page.split("## FSDP2 (`fully_shard`) and FSDP1")[1].split("FSDP1 (`FullyShardedDataParallel`)")[0]
    keywords = [p.name for p in inspect.signature(fully_shard).parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert {"shard_placement_fn", "ignored_params"} <= set(keywords)
    for name in keywords:
        assert f"`{name}`" in prose, name
        assert name in fully_shard_signature()
    for setter in ("set_modules_to_forward_prefetch", "set_modules_to_backward_prefetch", "set_reshard_after_backward",
                   "set_requires_gradient_sync"):  # fmt: skip
        assert callable(getattr(FSDPModule, setter))
        assert f"`{setter}`" in prose
    assert "always prefetches" not in page


def test_a_device_mesh_from_the_plan_on_a_one_rank_group() -> None:
    """The mesh over this process's group, its dimensions named as fully_shard's HSDP expects, and a world size
    other than the group's refused (one gloo rank in this process; the two-rank run is test_process_group's)."""
    import torch.distributed as dist

    from gpukb.distributed.fsdp_config import device_mesh

    if not dist.is_available() or dist.is_initialized():
        pytest.skip("torch.distributed is unavailable or already initialized in this process")
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        flat = device_mesh(plan(), 1, "cpu")
        assert (tuple(flat.shape), flat.mesh_dim_names) == ((1,), ("shard",))
        hybrid = device_mesh(plan(data_parallel_replicate_degree=1, sharding_strategy="HYBRID_SHARD"), 1, "cpu")
        assert (tuple(hybrid.shape), hybrid.mesh_dim_names) == ((1, 1), ("replicate", "shard"))
        with pytest.raises(ValueError, match=r"^world_size 2 is not the process group's size 1$"):
            device_mesh(plan(), 2, "cpu")
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize(
    ("config", "error", "message"),
    [
        ({"data_parallel_shard_degree": -2}, ValueError, "data_parallel_shard_degree must be an int ≥ -1; got -2"),
        ({"data_parallel_shard_degree": 0}, ValueError,
         "data_parallel_shard_degree must be -1 .* or an int ≥ 1; got 0$"),
        ({"data_parallel_replicate_degree": 0}, ValueError,
         "data_parallel_replicate_degree must be an int ≥ 1; got 0"),
        *(({key: "y"}, TypeError, f"{key} must be True or False; got 'y'") for key in (
            "keep_low_precision_grads", "activation_checkpointing", "activation_checkpointing_reentrant", "cpu_offload",
        )),
        ({"backward_prefetch": "X"}, ValueError, r"unknown backward_prefetch 'X'; choose one of \['BACKWARD_PRE'"),
        ({"mixed_precision": {"param_dtype": "int8"}}, ValueError,
         "mixed_precision.param_dtype 'int8' is not supported"),
        ({"mixed_precision": 3.5}, TypeError,
         r"mixed_precision must be one of .* or a dict of dtypes; got 3.5 \(float\)"),
        # keys of several types are listed, not a TypeError from sorting them
        ({"mixed_precision": {1: 2, "b": 3}}, ValueError, r"unknown mixed_precision keys \[1, 'b'\]; valid keys are"),
        ({1: 2, "b": 3}, ValueError, r"unknown fsdp_config keys \[1, 'b'\]; valid keys are"),
    ],
)  # fmt: skip
def test_each_refusal_names_the_key(config, error, message) -> None:
    with pytest.raises(error, match=f"^{message}"):
        plan(config)


def test_the_modes_default_to_the_trainers_default_precision() -> None:
    assert mode_dtypes() == mode_dtypes(DEFAULTS["precision"])
