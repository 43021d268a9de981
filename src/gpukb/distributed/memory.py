"""Memory of data-parallel training: bytes per parameter for model states, and activation bytes of a block.

Model states follow Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
Models" (SC20, arXiv:1910.02054, section 3 and figure 1): mixed-precision Adam keeps 2 bytes of fp16 parameters,
2 bytes of fp16 gradients and K = 12 bytes of optimizer state (fp32 master copy, momentum, variance) per parameter;
ZeRO stage 1 shards the optimizer state over N ranks, stage 2 also the gradients, stage 3 also the parameters.

FSDP2 (``fully_shard``) keeps a different set: the sharded parameters stay in their own dtype (float32 here) and the
optimizer steps on them, so there is no separate master copy; the sharded gradients come back in the parameters'
dtype after the reduce-scatter (``_fsdp_collectives.foreach_reduce`` casts to ``orig_dtype``). ``mixed_precision``
therefore changes only the transient buffers of the unit being computed, never the persistent bytes per parameter.

Activations follow Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"
(arXiv:2205.05198, section 4.1): a block saves ``sbh(34 + 5as/h)`` bytes with 16-bit activations, of which
``sbh(2 + 3as/h)`` are dropout masks and outputs; without dropout that is ``sbh(32 + 2as/h)`` = 16·b·s·h + a·b·s²
elements, plus the LayerNorm statistics. With a checkpoint around each block only the block input (b·s·h) is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpukb.arguments import choice, flag, given, non_negative_int, positive_int, real
from gpukb.distributed.model import ATTENTION, ModelConfig

#: Bytes per element of each dtype name used here.
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}

#: The ZeRO paper's optimizer-state bytes per parameter for mixed-precision Adam (K in the paper).
ZERO_K = 12

# --8<-- [start:schemes]
#: Every scheme :func:`state_bytes_per_param` knows, and what it keeps.
SCHEMES = {
    "ddp": "DDP, mixed-precision Adam as in the ZeRO paper: fp16 params and grads, K=12 optimizer bytes, replicated",
    "ddp_fp32": "DDP (or one GPU) training in float32 with Adam: fp32 params, fp32 grads, two fp32 moments",
    "zero1": "ZeRO stage 1 (P_os): optimizer state sharded over N ranks",
    "zero2": "ZeRO stage 2 (P_os+g): optimizer state and gradients sharded",
    "zero3": "ZeRO stage 3 (P_os+g+p): optimizer state, gradients and parameters sharded",
    "fsdp2": "FSDP2 fully_shard with float32 parameters and Adam: everything sharded, no master copy",
}
# --8<-- [end:schemes]


def state_bytes_per_param(scheme: str, world_size: int) -> dict[str, float]:
    """Persistent bytes per parameter on each rank: ``{"params", "grads", "optimizer", "total"}``.

    Raises:
        ValueError: For an unknown scheme (the message lists them) or ``world_size`` < 1.
    """
    choice("scheme", scheme, tuple(SCHEMES))
    n = positive_int("world_size", world_size)
    params, grads, optimizer = {
        "ddp": (2, 2, ZERO_K),
        "ddp_fp32": (4, 4, 8),
        "zero1": (2, 2, ZERO_K / n),
        "zero2": (2, 2 / n, ZERO_K / n),
        "zero3": (2 / n, 2 / n, ZERO_K / n),
        "fsdp2": (4 / n, 4 / n, 8 / n),
    }[scheme]
    return {"params": params, "grads": grads, "optimizer": optimizer, "total": params + grads + optimizer}


def fsdp2_unit_transient_bytes_per_param(param_dtype: str | None, reduce_dtype: str | None) -> int:
    """Bytes per parameter of the unit being computed that FSDP2 holds only transiently: the all-gathered
    parameter (``param_dtype``), its unsharded gradient (``param_dtype``) and the reduce-scatter input
    (``reduce_dtype``, which defaults to the gradient's dtype). ``None`` means float32 parameters.
    """
    param = DTYPE_BYTES[choice("param_dtype", param_dtype or "float32", tuple(DTYPE_BYTES))]
    reduce = DTYPE_BYTES[choice("reduce_dtype", reduce_dtype or param_dtype or "float32", tuple(DTYPE_BYTES))]
    return 2 * param + reduce


def states_table(world_size: int, parameters: float = 7.5e9) -> tuple[list[str], list[list[object]]]:
    """Bytes per parameter for every scheme at ``world_size`` ranks, and the GB per rank for ``parameters``
    (the ZeRO paper's figure 1 uses 7.5 billion parameters on 64 GPUs: 120, 31.4, 16.6 and 1.9 GB).

    Raises:
        TypeError: For a ``world_size`` that is not an int, or ``parameters`` that is not a real number.
        ValueError: For ``world_size`` < 1, or ``parameters`` that is NaN, infinite or not positive.
    """
    positive_int("world_size", world_size)
    parameters = real("parameters", parameters, positive=True)
    headers = ["scheme", "params B/param", "grads B/param", "optimizer B/param", "total B/param", "GB per rank"]
    rows = []
    for scheme in SCHEMES:
        b = state_bytes_per_param(scheme, world_size)
        cells = [_fmt(b[k]) for k in ("params", "grads", "optimizer", "total")]
        rows.append([scheme, *cells, f"{b['total'] * parameters / 1e9:.3g}"])
    return headers, rows


def _fmt(x: float) -> str:
    return f"{x:.3g}"


# --8<-- [start:activations]
def block_activation_bytes(
    batch: int, seq: int, hidden: int, heads: int, element_bytes: int, stats_bytes: int = 4,
    attention: str = "written-out",
) -> int:  # fmt: skip
    """Bytes one :class:`gpukb.distributed.model` block saves for backward, without checkpointing.

    ``16·b·s·h`` elements (LayerNorm inputs and outputs, Q/K/V, the attention output, the MLP's two 4h-wide
    tensors), at ``element_bytes`` each, plus the mean and reciprocal standard deviation of both LayerNorms
    (``4·b·s`` values of ``stats_bytes``), plus what attention keeps: with ``attention="written-out"`` the softmax
    output, ``a·b·s²`` elements; with ``"fused"`` (``scaled_dot_product_attention``, as FlashAttention) one float32
    log-sum-exp per row, ``a·b·s`` values of 4 bytes, from which backward recomputes the probabilities.
    """
    b, s, h, a = (positive_int(n, v) for n, v in (("batch", batch), ("seq", seq), ("hidden", hidden), ("heads", heads)))
    e = positive_int("element_bytes", element_bytes)
    kept = {"written-out": e * a * b * s * s, "fused": 4 * a * b * s}
    return (
        e * 16 * b * s * h
        + kept[choice("attention", attention, ATTENTION)]
        + 4 * b * s * non_negative_int("stats_bytes", stats_bytes)
    )


def checkpointed_block_bytes(batch: int, seq: int, hidden: int, element_bytes: int) -> int:
    """Bytes kept per block when the block is checkpointed: its input, ``b·s·h`` elements."""
    b, s, h = (positive_int(n, v) for n, v in (("batch", batch), ("seq", seq), ("hidden", hidden)))
    return positive_int("element_bytes", element_bytes) * b * s * h


# --8<-- [end:activations]


def korthikanti_bytes(batch: int, seq: int, hidden: int, heads: int) -> int:
    """The paper's per-layer count with 16-bit activations and dropout: ``sbh(34 + 5as/h)`` bytes."""
    batch, seq, hidden, heads = (
        positive_int(n, v) for n, v in (("batch", batch), ("seq", seq), ("hidden", hidden), ("heads", heads))
    )
    return seq * batch * hidden * 34 + 5 * heads * seq * seq * batch


def model_activation_bytes(
    config, batch: int, element_bytes: int, checkpointing: bool, stats_bytes: int = 4
) -> dict[str, int]:
    """Activation bytes of the whole :class:`Transformer` training step, by part.

    ``blocks``: what the blocks keep during forward (all of it, or only their inputs when checkpointed);
    ``recompute``: one block's full activations, alive while it is recomputed in backward (0 without
    checkpointing); ``head``: final LayerNorm input and output, its statistics, the float32 log-softmax output
    of the loss (``b·s·V·4``) and the int64 indices the embeddings and the loss keep (positions and a contiguous
    copy of the targets); ``total``: their sum.
    """
    checkpointing = flag("checkpointing", checkpointing)
    b, s, h, a, layers, v = batch, config.seq, config.hidden, config.heads, config.layers, config.vocab
    e, stats = positive_int("element_bytes", element_bytes), non_negative_int("stats_bytes", stats_bytes)
    full = block_activation_bytes(b, s, h, a, element_bytes, stats_bytes)
    blocks = layers * (checkpointed_block_bytes(b, s, h, element_bytes) if checkpointing else full)
    recompute = full if checkpointing else 0
    head = 2 * b * s * h * e + 2 * b * s * stats + b * s * v * 4 + (b * s + s) * 8
    return {"blocks": blocks, "recompute": recompute, "head": head, "total": blocks + recompute + head}


#: The FSDP2 mixed-precision modes (Composer's names) and the bytes of the activations each computes in: FULL keeps
#: float32, DEFAULT and PURE compute in bfloat16.
FSDP2_ACTIVATION_BYTES = {"FULL": 4, "DEFAULT": 2, "PURE": 2}


@dataclass(frozen=True)
class TrainingMemory:
    """Predicted bytes per GPU of one training step (see :func:`training_memory`).

    Attributes:
        parameters: The model's parameter count.
        params: Bytes of parameters on each GPU (the scheme's bytes per parameter × ``parameters``).
        grads: Bytes of gradients on each GPU.
        optimizer: Bytes of optimizer state on each GPU.
        states: ``params + grads + optimizer``, computed as the scheme's total bytes per parameter × ``parameters``.
        blocks: Activations the blocks keep in forward (only their inputs when checkpointed).
        head: The final LayerNorm, the float32 log-softmax of the loss and the int64 indices.
        recompute: One block's activations, alive while it is recomputed in backward (0 without checkpointing).
        activation_bytes: Bytes per element of the activations.
    """

    parameters: int
    params: float
    grads: float
    optimizer: float
    states: float
    blocks: int
    head: int
    recompute: int
    activation_bytes: int

    @property
    def kept(self) -> int:
        """What one forward keeps: ``blocks + head``."""
        return self.blocks + self.head

    @property
    def peak(self) -> float:
        """The predicted peak: states + what forward keeps + one block recomputed."""
        return self.states + self.kept + self.recompute


def activation_element_bytes(scheme: str, mixed_precision: str | None) -> int:
    """Bytes per activation element of a scheme: FSDP2 by its mixed-precision mode, ``ddp_fp32`` 4, and the ZeRO
    paper's mixed-precision schemes (``ddp``, ``zero1``-``zero3``) 2.

    Raises:
        ValueError: For an unknown scheme, an FSDP2 run without a known mode, or a mode given to another scheme.
    """
    choice("scheme", scheme, tuple(SCHEMES))
    if scheme == "fsdp2":
        if mixed_precision is None:
            raise ValueError(f"scheme 'fsdp2' needs a mixed_precision mode, one of {list(FSDP2_ACTIVATION_BYTES)}")
        return FSDP2_ACTIVATION_BYTES[choice("mixed_precision", mixed_precision, tuple(FSDP2_ACTIVATION_BYTES))]
    if mixed_precision is not None:
        raise ValueError(f"mixed_precision applies to scheme 'fsdp2' only; scheme {scheme!r} got {mixed_precision!r}")
    return 4 if scheme == "ddp_fp32" else 2


# --8<-- [start:training-memory]
def training_memory(
    config: ModelConfig,
    batch: int,
    scheme: str,
    world_size: int,
    mixed_precision: str | None = None,
    checkpointing: bool = False,
) -> TrainingMemory:
    """Bytes per GPU of one training step of :class:`~gpukb.distributed.model.Transformer`: model states by the
    scheme (:func:`state_bytes_per_param`) and activations by the model's shape (:func:`model_activation_bytes`).

    Args:
        config: The model's sizes.
        batch: Sequences per GPU.
        scheme: One of :data:`SCHEMES`.
        world_size: GPUs the states are sharded over.
        mixed_precision: The FSDP2 mode (``"FULL"``, ``"DEFAULT"``, ``"PURE"``) for ``fsdp2``; ``None`` otherwise.
        checkpointing: A checkpoint around each block.

    Raises:
        ValueError: For an unknown scheme or mode, a mode given to a scheme other than ``fsdp2``, or a size below 1.
        TypeError: For a size that is not an int or a ``checkpointing`` that is not a bool.
    """
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config must be a ModelConfig; got {given(config)}")
    per_param = state_bytes_per_param(scheme, world_size)
    element = activation_element_bytes(scheme, mixed_precision)
    acts = model_activation_bytes(config, positive_int("batch", batch), element, flag("checkpointing", checkpointing))
    n = config.parameter_count()
    return TrainingMemory(
        parameters=n,
        params=per_param["params"] * n,
        grads=per_param["grads"] * n,
        optimizer=per_param["optimizer"] * n,
        states=per_param["total"] * n,
        blocks=acts["blocks"],
        head=acts["head"],
        recompute=acts["recompute"],
        activation_bytes=element,
    )
    # --8<-- [end:training-memory]
