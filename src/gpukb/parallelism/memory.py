"""Memory per GPU under tensor, sequence and pipeline parallelism and FSDP: model state and activations.

Model state: a GPU holds ``P / (tp · pp)`` of the parameters, with the bytes per parameter of the data-parallel
scheme over the ``dp`` replicas (:func:`gpukb.distributed.memory.state_bytes_per_param`: 16 bytes for
mixed-precision Adam replicated, 16/dp fully sharded).

Activations (Korthikanti et al. 2022, Table 2, 16-bit activations with dropout): a transformer layer keeps
``sbh(34 + 5as/h)`` bytes with no parallelism; tensor parallelism splits all but the ``10·sbh`` that the LayerNorms,
dropouts and the inputs of the attention and MLP keep whole: ``sbh(10 + 24/t + 5as/(ht))``; sequence parallelism
splits those too: ``sbh/t · (34 + 5as/h)``. Selective recomputation drops the ``5as/h`` attention terms; full
recomputation keeps only the layer's input, ``2sbh``. A pipeline stage holds ``L/p`` layers for as many
micro-batches as are in flight (:func:`gpukb.parallelism.pipeline.in_flight`).
"""

from __future__ import annotations

from fractions import Fraction

from gpukb.arguments import choice, flag, positive_int
from gpukb.distributed.memory import SCHEMES, state_bytes_per_param
from gpukb.parallelism.pipeline import SCHEDULES, in_flight

#: Activation recomputation choices (Korthikanti et al. 2022, §5).
RECOMPUTE = ("none", "selective", "full")


# --8<-- [start:activations]
def activation_bytes_per_layer(
    seq: int, batch: int, hidden: int, heads: int, tp: int = 1, sequence: bool = False, recompute: str = "none"
) -> Fraction:
    """Activation bytes one transformer layer keeps on one GPU (Korthikanti et al. 2022, Table 2).

    Raises:
        ValueError: For a size below 1 or an unknown ``recompute`` (the message lists the choices).
    """
    s, b, h, a, t = (
        positive_int(n, v)
        for n, v in (("seq", seq), ("batch", batch), ("hidden", hidden), ("heads", heads), ("tp", tp))
    )
    choice("recompute", recompute, RECOMPUTE)
    sbh = s * b * h
    if recompute == "full":
        return Fraction(2 * sbh)
    attention = 0 if recompute == "selective" else Fraction(5 * a * s, h)
    if flag("sequence", sequence):
        return sbh * (34 + attention) / t
    return sbh * (10 + Fraction(24, t) + attention / t)
    # --8<-- [end:activations]


def activation_bytes_per_gpu(
    seq: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    layers: int,
    tp: int = 1,
    pp: int = 1,
    micro_batches: int = 1,
    schedule: str = "1F1B",
    sequence: bool = False,
    recompute: str = "none",
) -> Fraction:
    """Activation bytes on the first pipeline stage (the one holding the most): its ``layers/pp`` layers times the
    micro-batches in flight.

    Raises:
        ValueError: For a size below 1, ``layers`` not divisible by ``pp``, or an unknown schedule or recompute.
    """
    n, p = positive_int("layers", layers), positive_int("pp", pp)
    if n % p:
        raise ValueError(f"layers must be divisible by pp; got layers {layers}, pp {pp}")
    choice("schedule", schedule, SCHEDULES)
    per_layer = activation_bytes_per_layer(seq, micro_batch, hidden, heads, tp, sequence, recompute)
    return per_layer * (n // p) * in_flight(schedule, p, micro_batches)


def state_bytes_per_gpu(parameters: int, tp: int = 1, pp: int = 1, dp: int = 1, scheme: str = "ddp") -> Fraction:
    """Bytes of parameters, gradients and optimizer state on one GPU: ``P/(tp·pp)`` parameters at the scheme's bytes
    per parameter over ``dp`` replicas (``"ddp"``: 16, replicated; ``"zero3"``: 16/dp; see
    :data:`gpukb.distributed.memory.SCHEMES`).

    Raises:
        ValueError: For a size below 1 or an unknown scheme.
    """
    share = Fraction(positive_int("parameters", parameters), positive_int("tp", tp) * positive_int("pp", pp))
    choice("scheme", scheme, tuple(SCHEMES))
    per_param = Fraction(state_bytes_per_param(scheme, positive_int("dp", dp))["total"]).limit_denominator(1 << 20)
    return share * per_param
