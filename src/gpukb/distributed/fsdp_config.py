"""Translate a Composer-style ``fsdp_config`` dict into the PyTorch objects it implies.

The keys and the three ``mixed_precision`` names (``FULL``, ``DEFAULT``, ``PURE``) are MosaicML Composer's
(``composer/utils/parallelism.py`` and ``composer/distributed/mosaic_parallelism.py`` at v0.32.1, see the sources
table of the FSDP page). :func:`plan` validates a config and returns an :class:`FsdpPlan`, which builds the FSDP2
objects (``MixedPrecisionPolicy``, ``OffloadPolicy``, the arguments of ``fully_shard``), the FSDP1 ones
(``MixedPrecision``, ``ShardingStrategy``, ``BackwardPrefetch``) and the activation-checkpointing wrapper.

An unknown key, a value of the wrong type or an unknown name is a ``TypeError``/``ValueError`` that names what was
given and lists what is allowed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpukb.arguments import _show, choice, flag, given, integer
from gpukb.distributed.options import facts
from gpukb.dtypes import torch_dtype, torch_name

#: What each ``mixed_precision`` name sets, as Composer's ``get_mixed_precision`` does, read from the chapter's data
#: file: ``"compute"`` is the dtype of the trainer's ``precision`` (bfloat16 for ``amp_bf16``), ``None`` leaves the
#: tensor in its own dtype.
MODES: dict[str, dict[str, str | None]] = {
    m.mode: {
        k: None if getattr(m, k) == "none" else getattr(m, k) for k in ("param_dtype", "reduce_dtype", "buffer_dtype")
    }
    for m in facts().composer_mode
}

#: Composer's trainer ``precision`` values and the dtype each makes ``"compute"`` (``_get_torch_dtype``).
PRECISIONS = {"fp32": "float32", "amp_fp16": "float16", "amp_bf16": "bfloat16"}

#: Dtypes a gradient reduction may use here: the ones Composer's precisions name and FSDP's mixed precision is
#: built for. Both gloo and NCCL reduce them; gloo refuses float8 ("Invalid scalar type"), so float8 is left out
#: even though NCCL 2.28 accepted a float8 all-reduce on one GPU.
REDUCE_DTYPES = ("float32", "bfloat16", "float16")

#: FSDP1 ``ShardingStrategy`` names → (FSDP2 ``reshard_after_forward``, mesh has a replicate dimension).
#: ``NO_SHARD`` has no ``fully_shard`` equivalent but a mesh whose shard dimension has size 1.
SHARDING = {
    "FULL_SHARD": (True, False),
    "SHARD_GRAD_OP": (False, False),
    "HYBRID_SHARD": (True, True),
    "_HYBRID_SHARD_ZERO2": (False, True),
    "NO_SHARD": (True, None),
}

BACKWARD_PREFETCH = ("BACKWARD_PRE", "BACKWARD_POST", "NONE")

# --8<-- [start:keys]
#: Every key :func:`plan` accepts, with its default (Composer's ``FSDPConfig`` defaults at v0.32.1).
DEFAULTS: dict[str, Any] = {
    "mixed_precision": "DEFAULT",
    "precision": "amp_bf16",  # the trainer's precision, not an fsdp_config key in Composer
    "activation_checkpointing": False,
    "activation_checkpointing_reentrant": True,
    "sharding_strategy": "FULL_SHARD",
    "cpu_offload": False,
    "backward_prefetch": "BACKWARD_POST",
    "keep_low_precision_grads": False,
    "data_parallel_shard_degree": -1,
    "data_parallel_replicate_degree": None,
}
# --8<-- [end:keys]


def _dtype(name: str | None):
    return None if name is None else torch_dtype(name)


def _dtype_name(where: str, value: object) -> str:
    """A dtype given as ``torch.bfloat16`` or as its name (``"bfloat16"``, ``"bf16"``, ``"fp32"``...)."""
    import torch

    if isinstance(value, torch.dtype):
        name = str(value).removeprefix("torch.")
    elif isinstance(value, str):
        try:
            name = torch_name(value)
        except ValueError:
            name = value  # refused below, with the dtypes a collective takes
    else:
        raise TypeError(f"{where} must be a torch.dtype or a dtype name; got {given(value)}")
    if name not in REDUCE_DTYPES:
        raise ValueError(f"{where} {_show(value)} is not supported; choose one of {list(REDUCE_DTYPES)}")
    return name


def check_reduce_dtype(dtype: object, backend: str = "nccl") -> str:
    """The name of ``dtype`` if ``backend`` can reduce it (``"float32"``...), else a clear error.

    gloo (in torch 2.13) answers a float8 all-reduce with ``RuntimeError: Invalid scalar type``; this check
    refuses what gpukb does not reduce (:data:`REDUCE_DTYPES`) before a collective is started.

    Raises:
        ValueError: For an unknown backend or a dtype outside :data:`REDUCE_DTYPES`.
        TypeError: If ``dtype`` is neither a ``torch.dtype`` nor a string.
    """
    choice("backend", backend, ("nccl", "gloo"))
    return _dtype_name(f"reduce dtype for {backend}", dtype)


@dataclass(frozen=True)
class FsdpPlan:
    """A validated config: dtypes by name (``None`` = the parameter's own dtype) and the options it implies."""

    mixed_precision: str
    precision: str
    param_dtype: str | None
    reduce_dtype: str | None
    buffer_dtype: str | None
    keep_low_precision_grads: bool
    activation_checkpointing: bool
    reentrant: bool
    sharding_strategy: str
    cpu_offload: bool
    backward_prefetch: str
    shard_degree: int
    replicate_degree: int | None

    @property
    def autocast_dtype(self) -> str | None:
        """The dtype Composer's trainer autocasts to for this ``precision`` (``None`` for fp32)."""
        return None if self.precision == "fp32" else PRECISIONS[self.precision]

    @property
    def reshard_after_forward(self) -> bool:
        """FSDP2's equivalent of the sharding strategy (torchtitan ``docs/fsdp.md``): free params after forward?"""
        return SHARDING[self.sharding_strategy][0]

    # --8<-- [start:fsdp2]
    def mp_policy(self):
        """FSDP2's ``MixedPrecisionPolicy``: Composer's FSDP2 path passes ``param_dtype`` and ``reduce_dtype``
        only (``composer/distributed/fsdp2.py``); FSDP2 has no ``buffer_dtype``."""
        from torch.distributed.fsdp import MixedPrecisionPolicy

        return MixedPrecisionPolicy(param_dtype=_dtype(self.param_dtype), reduce_dtype=_dtype(self.reduce_dtype))

    def offload_policy(self):
        """``CPUOffloadPolicy()`` when ``cpu_offload`` is set, else the no-offload ``OffloadPolicy()``."""
        from torch.distributed.fsdp import CPUOffloadPolicy, OffloadPolicy

        return CPUOffloadPolicy() if self.cpu_offload else OffloadPolicy()

    def fully_shard_kwargs(self, mesh=None) -> dict[str, Any]:
        """Keyword arguments for ``fully_shard(module, **kwargs)``."""
        return {
            "mesh": mesh,
            "reshard_after_forward": self.reshard_after_forward,
            "mp_policy": self.mp_policy(),
            "offload_policy": self.offload_policy(),
        }

    # --8<-- [end:fsdp2]

    def fsdp1_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for FSDP1's ``FullyShardedDataParallel`` (``mixed_precision`` with its
        ``buffer_dtype``, ``sharding_strategy``, ``cpu_offload``, ``backward_prefetch``)."""
        from torch.distributed.fsdp import BackwardPrefetch, CPUOffload, MixedPrecision, ShardingStrategy

        return {
            "mixed_precision": MixedPrecision(
                param_dtype=_dtype(self.param_dtype),
                reduce_dtype=_dtype(self.reduce_dtype),
                buffer_dtype=_dtype(self.buffer_dtype),
                keep_low_precision_grads=self.keep_low_precision_grads,
            ),
            "sharding_strategy": getattr(ShardingStrategy, self.sharding_strategy),
            "cpu_offload": CPUOffload(offload_params=True) if self.cpu_offload else None,
            "backward_prefetch": None
            if self.backward_prefetch == "NONE"
            else getattr(BackwardPrefetch, self.backward_prefetch),
        }

    def checkpoint_impl(self):
        """``CheckpointImpl.REENTRANT`` / ``NO_REENTRANT`` as Composer's FSDP1 path picks it, or ``None`` when
        activation checkpointing is off (then ``activation_checkpointing_reentrant`` has no effect)."""
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointImpl

        if not self.activation_checkpointing:
            return None
        return CheckpointImpl.REENTRANT if self.reentrant else CheckpointImpl.NO_REENTRANT

    def wrap_block(self, block):
        """``block`` wrapped with ``checkpoint_wrapper`` as this plan says (unchanged when checkpointing is off)."""
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

        impl = self.checkpoint_impl()
        return block if impl is None else checkpoint_wrapper(block, checkpoint_impl=impl)

    def mesh_shape(self, world_size: int) -> tuple[int, ...]:
        """The device-mesh shape for ``world_size`` ranks: ``(shard,)``, or ``(replicate, shard)`` for hybrid
        sharding and ``NO_SHARD``.

        Raises:
            ValueError: If the degrees do not multiply to ``world_size``.
        """
        world_size = integer("world_size", world_size, minimum=1)
        hybrid = SHARDING[self.sharding_strategy][1]
        shard = self.shard_degree
        replicate = self.replicate_degree
        if hybrid is None:  # NO_SHARD: everything replicated
            if shard not in (-1, 1):
                raise ValueError(f"NO_SHARD shards nothing; data_parallel_shard_degree must be 1 or -1, got {shard}")
            return (world_size, 1)
        if replicate is None:
            replicate = 1
            if hybrid:
                raise ValueError(f"{self.sharding_strategy} needs data_parallel_replicate_degree (an int ≥ 1)")
        if shard == -1:
            if world_size % replicate:
                raise ValueError(
                    f"world size {world_size} is not divisible by data_parallel_replicate_degree {replicate}"
                )
            shard = world_size // replicate
        if shard * replicate != world_size:
            raise ValueError(
                f"data_parallel_shard_degree {shard} × data_parallel_replicate_degree {replicate} = "
                f"{shard * replicate} ranks, but the world size is {world_size}"
            )
        return (replicate, shard) if hybrid or replicate > 1 else (shard,)


def device_mesh(plan: FsdpPlan, world_size: int, device_type: str = "cuda"):
    """The ``DeviceMesh`` for ``fully_shard(..., mesh=...)``: :meth:`FsdpPlan.mesh_shape` over the current process
    group, with dimensions named ``("shard",)`` or ``("replicate", "shard")``.

    Raises:
        ValueError: If the degrees do not fit ``world_size``, or it is not the process group's size.
    """
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    shape = plan.mesh_shape(world_size)
    if dist.is_initialized() and dist.get_world_size() != world_size:
        raise ValueError(f"world_size {world_size} is not the process group's size {dist.get_world_size()}")
    names = ("shard",) if len(shape) == 1 else ("replicate", "shard")
    return init_device_mesh(device_type, shape, mesh_dim_names=names)


def _mixed_precision(value: object, compute: str) -> tuple[str, str | None, str | None, str | None]:
    if isinstance(value, Mapping):
        allowed = ("param_dtype", "reduce_dtype", "buffer_dtype")
        unknown = sorted(set(value) - set(allowed), key=str)
        if unknown:
            raise ValueError(f"unknown mixed_precision keys {unknown}; valid keys are {list(allowed)}")
        names = {k: None if value.get(k) is None else _dtype_name(f"mixed_precision.{k}", value[k]) for k in allowed}
        return "custom", names["param_dtype"], names["reduce_dtype"], names["buffer_dtype"]
    if not isinstance(value, str):
        raise TypeError(f"mixed_precision must be one of {list(MODES)} or a dict of dtypes; got {given(value)}")
    mode = value.upper()  # Composer upper-cases the name
    if mode not in MODES:
        raise ValueError(f"unknown mixed_precision {_show(value)}; choose one of {list(MODES)} or a dict of dtypes")
    dtypes = [compute if d == "compute" else d for d in MODES[mode].values()]
    return mode, *dtypes


def plan(config: Mapping[str, Any] | None = None, **overrides: Any) -> FsdpPlan:
    """Validate a Composer-style ``fsdp_config`` (plus the trainer's ``precision``) and return its plan.

    Args:
        config: Keys of :data:`DEFAULTS`; missing keys take their defaults.
        **overrides: The same keys, applied after ``config``.

    Raises:
        TypeError: If ``config`` is not a mapping or a value has the wrong type.
        ValueError: For an unknown key (the message lists the valid ones), an unknown name, or a degree < 1
            other than -1.
    """
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise TypeError(f"fsdp_config must be a dict; got {given(config)}")
    merged = {**config, **overrides}
    unknown = sorted((k for k in merged if k not in DEFAULTS), key=str)
    if unknown:
        raise ValueError(f"unknown fsdp_config keys {unknown}; valid keys are {sorted(DEFAULTS)}")
    c = {**DEFAULTS, **merged}
    precision = choice("precision", c["precision"], tuple(PRECISIONS))
    mode, param, reduce, buffer = _mixed_precision(c["mixed_precision"], PRECISIONS[precision])
    replicate = c["data_parallel_replicate_degree"]
    if replicate is not None:
        replicate = integer("data_parallel_replicate_degree", replicate, minimum=1)
    shard = integer("data_parallel_shard_degree", c["data_parallel_shard_degree"], minimum=-1)
    if shard == 0:
        raise ValueError("data_parallel_shard_degree must be -1 (all remaining ranks) or an int ≥ 1; got 0")
    return FsdpPlan(
        mixed_precision=mode,
        precision=precision,
        param_dtype=param,
        reduce_dtype=reduce,
        buffer_dtype=buffer,
        keep_low_precision_grads=flag("keep_low_precision_grads", c["keep_low_precision_grads"]),
        activation_checkpointing=flag("activation_checkpointing", c["activation_checkpointing"]),
        reentrant=flag("activation_checkpointing_reentrant", c["activation_checkpointing_reentrant"]),
        sharding_strategy=choice("sharding_strategy", c["sharding_strategy"], tuple(SHARDING)),
        cpu_offload=flag("cpu_offload", c["cpu_offload"]),
        backward_prefetch=choice("backward_prefetch", c["backward_prefetch"], BACKWARD_PREFETCH),
        shard_degree=shard,
        replicate_degree=replicate,
    )


def mode_dtypes(precision: str = "amp_bf16") -> list[tuple[str, str | None, str | None, str | None]]:
    """``(mode, param, reduce, buffer)`` dtype names for FULL, DEFAULT and PURE under ``precision``."""
    rows = []
    for mode in MODES:
        p = plan(mixed_precision=mode, precision=precision)
        rows.append((mode, p.param_dtype, p.reduce_dtype, p.buffer_dtype))
    return rows


def describe(plans: Iterable[FsdpPlan]) -> tuple[list[str], list[list[str]]]:
    """A table of plans: mode, precision, the three dtypes (``-`` = the parameter's own), checkpointing."""
    headers = ["mixed_precision", "precision", "param_dtype", "reduce_dtype", "buffer_dtype", "checkpointing"]
    rows = []
    for p in plans:
        impl = p.checkpoint_impl()
        rows.append(
            [
                p.mixed_precision,
                p.precision,
                p.param_dtype or "-",
                p.reduce_dtype or "-",
                p.buffer_dtype or "-",
                "off" if impl is None else impl.name,
            ]
        )
    return headers, rows
