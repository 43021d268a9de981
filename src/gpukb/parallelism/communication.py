"""The bytes each rank sends per training step under each scheme, as formulas.

Each function returns the collectives one rank takes part in during one training step (forward and backward) as
:class:`Traffic` rows: how many of which kind, the size of each whole, on how many ranks. :func:`sent_bytes` adds
what the rank sends under the ring algorithms (:func:`gpukb.parallelism.traffic.ring_sent_bytes`). The counts are
those of the papers and of PyTorch's engines, which the chapter's tests check against a log of what ran:

* tensor parallelism (Shoeybi et al. 2019, §3): per block, one all-reduce of the activations ``b·s·h`` after the
  attention and one after the MLP in forward (their ``g``), and the same two in backward (their ``f``);
* sequence parallelism (Korthikanti et al. 2022, §4.2.2): each all-reduce becomes an all-gather before the
  column-parallel layer and a reduce-scatter after the row-parallel one, the same bytes; the LayerNorms' gradients
  are partial sums, all-reduced once per step;
* context parallelism (ring attention, Liu et al. 2023): each attention layer passes its key and value shards
  ``p − 1`` times around the ring in forward, and their gradients ``p − 1`` times in backward (the reference of
  :mod:`gpukb.parallelism.ring_attention`); the replicated parameters' gradients are all-reduced as under data
  parallelism;
* pipeline parallelism (Huang et al. 2019): each stage but the last sends every micro-batch's activations to the
  next, each stage but the first sends the gradients back;
* expert parallelism (Lepikhin et al. 2020): two all-to-alls in forward (dispatch, combine) and two in backward;
* FSDP (Zhao et al. 2023): all-gather the parameters in forward and again in backward (resharded after forward),
  reduce-scatter the gradients.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpukb.arguments import choice, flag, given, non_negative_int, positive_int
from gpukb.parallelism.traffic import KINDS, ring_sent_bytes


@dataclass(frozen=True)
class Traffic:
    """``count`` collectives of one kind, each on a whole of ``whole_bytes`` over ``ranks`` ranks.

    Attributes:
        what: What moves (for the tables).
        to_others: For an all-to-all, the bytes this rank addresses to other ranks (``None``: an even split).
    """

    what: str
    kind: str
    count: int
    whole_bytes: int
    ranks: int
    to_others: int | None = None

    def __post_init__(self) -> None:
        choice("kind", self.kind, KINDS)
        non_negative_int("count", self.count)
        non_negative_int("whole_bytes", self.whole_bytes)
        positive_int("ranks", self.ranks)
        if self.to_others is not None:  # checked now, not when the bytes are first added up
            ring_sent_bytes(self.kind, self.whole_bytes, self.ranks, self.to_others)

    @property
    def sent_bytes(self) -> int:
        """What this rank sends for all ``count`` collectives."""
        return self.count * ring_sent_bytes(self.kind, self.whole_bytes, self.ranks, self.to_others)


def _rows(traffic: object) -> list[Traffic]:
    if isinstance(traffic, str | bytes) or not isinstance(traffic, list | tuple):
        raise TypeError(f"traffic must be a list of Traffic rows (as tensor_parallel returns); got {given(traffic)}")
    for row in traffic:
        if not isinstance(row, Traffic):
            raise TypeError(f"traffic must hold Traffic rows; got {given(row)}")
    return list(traffic)


def sent_bytes(traffic: list[Traffic]) -> int:
    """Bytes one rank sends over every row of ``traffic``.

    Raises:
        TypeError: For something other than a list (or tuple) of :class:`Traffic` rows.
    """
    return sum(t.sent_bytes for t in _rows(traffic))


def collective_counts(traffic: list[Traffic]) -> dict[str, int]:
    """How many collectives of each kind ``traffic`` holds (rows of count 0 left out).

    Raises:
        TypeError: For something other than a list (or tuple) of :class:`Traffic` rows.
    """
    counts: dict[str, int] = {}
    for t in _rows(traffic):
        if t.count:
            counts[t.kind] = counts.get(t.kind, 0) + t.count
    return counts


def _sizes(**sizes: object) -> dict[str, int]:
    return {name: positive_int(name, value) for name, value in sizes.items()}


# --8<-- [start:tensor-parallel]
def tensor_parallel(
    batch: int,
    seq: int,
    hidden: int,
    tp: int,
    element_bytes: int = 2,
    layers: int = 1,
    sequence: bool = False,
) -> list[Traffic]:
    """One rank's collectives for a training step of ``layers`` transformer blocks split ``tp`` ways.

    Args:
        batch: Sequences (``b``).
        seq: Tokens per sequence (``s``).
        hidden: Width (``h``); each collective moves the activations ``b·s·h`` (whole, before splitting).
        tp: The tensor-parallel degree.
        element_bytes: Bytes per activation element.
        layers: Blocks.
        sequence: Sequence parallelism: all-gather and reduce-scatter instead of all-reduce, plus an all-reduce
            of each LayerNorm weight's and bias's gradient (``hidden`` elements, two LayerNorms per block).

    Raises:
        ValueError: For a size below 1, or a sequence not divisible by ``tp`` under ``sequence``.
    """
    s = _sizes(batch=batch, seq=seq, hidden=hidden, tp=tp, element_bytes=element_bytes, layers=layers)
    whole = s["batch"] * s["seq"] * s["hidden"] * s["element_bytes"]
    n = s["layers"]
    if not flag("sequence", sequence):
        return [Traffic("activations (forward g, backward f)", "all_reduce", 4 * n, whole, s["tp"])]
    if s["seq"] % s["tp"]:
        raise ValueError(f"sequence parallelism needs seq divisible by tp; got seq {seq}, tp {tp}")
    return [
        Traffic("activations into the column-parallel layers", "all_gather", 4 * n, whole, s["tp"]),
        Traffic("activations out of the row-parallel layers", "reduce_scatter", 4 * n, whole, s["tp"]),
        Traffic("LayerNorm gradients (partial sums)", "all_reduce", 4 * n, s["hidden"] * s["element_bytes"], s["tp"]),
    ]
    # --8<-- [end:tensor-parallel]


def tp_all_reduces_per_block(naive_attention_plan: bool = False) -> dict[str, int]:
    """All-reduces per block and step under tensor parallelism: Megatron's two in forward and two in backward.

    ``naive_attention_plan``: PyTorch's plan with ``ColwiseParallel`` on Q, K and V and no ``PrepareModuleInput`` on
    the attention gives each projection its own replicated input, so backward all-reduces the input gradient three
    times instead of once (4 in backward).
    """
    backward = 4 if flag("naive_attention_plan", naive_attention_plan) else 2
    return {"forward": 2, "backward": backward, "step": 2 + backward}


def context_parallel(
    batch: int,
    seq: int,
    hidden: int,
    cp: int,
    element_bytes: int = 2,
    layers: int = 1,
    kv_hidden: int | None = None,
    implementation: str = "reference",
) -> list[Traffic]:
    """One rank's ring traffic for a step of ``layers`` attention layers over ``cp`` sequence shards.

    Each of the ``cp − 1`` ring steps sends the key and the value shard, ``b·(s/cp)·h_kv`` elements each, to the next
    rank (one message holding both). Backward depends on the implementation: ``"reference"``
    (:func:`gpukb.parallelism.ring_attention.ring_attention`, differentiated by autograd) sends their gradients the
    other way ``cp − 1`` times; ``"pytorch"`` (``context_parallel`` with the all-to-all rotation,
    ``_templated_ring_attention_backward`` in torch 2.13) passes K and V around again ``cp − 1`` times and the
    gradients of K and V ``cp`` times. ``kv_hidden`` is the width of K and V (``hidden`` for multi-head attention,
    less under grouped-query attention).

    Raises:
        ValueError: For a size below 1, a sequence not divisible by ``cp`` or an unknown implementation.
    """
    s = _sizes(batch=batch, seq=seq, hidden=hidden, cp=cp, element_bytes=element_bytes, layers=layers)
    kv = s["hidden"] if kv_hidden is None else positive_int("kv_hidden", kv_hidden)
    choice("implementation", implementation, ("reference", "pytorch"))
    if s["seq"] % s["cp"]:
        raise ValueError(f"context parallelism needs seq divisible by cp; got seq {seq}, cp {cp}")
    pair = 2 * s["batch"] * (s["seq"] // s["cp"]) * kv * s["element_bytes"]
    steps = (s["cp"] - 1) * s["layers"]
    rows = [Traffic("K and V shards, forward", "send", steps, pair, s["cp"])]
    if implementation == "reference":
        return [*rows, Traffic("their gradients, backward", "send", steps, pair, s["cp"])]
    return [
        *rows,
        Traffic("K and V shards again, backward", "send", steps, pair, s["cp"]),
        Traffic("their gradients, backward", "send", s["cp"] * s["layers"], pair, s["cp"]),
    ]


def pipeline_parallel(
    micro_batch: int, seq: int, hidden: int, stages: int, micro_batches: int, stage: int, element_bytes: int = 2
) -> list[Traffic]:
    """What ``stage`` sends in one step of ``micro_batches`` micro-batches through ``stages`` stages.

    Raises:
        ValueError: For a size below 1 or a stage outside ``[0, stages)``.
    """
    s = _sizes(micro_batch=micro_batch, seq=seq, hidden=hidden, stages=stages, micro_batches=micro_batches)
    from gpukb.arguments import integer

    r = integer("stage", stage, minimum=0, maximum=s["stages"] - 1)
    act = s["micro_batch"] * s["seq"] * s["hidden"] * positive_int("element_bytes", element_bytes)
    m = s["micro_batches"]
    return [
        Traffic("activations to the next stage", "send", m if r < s["stages"] - 1 else 0, act, s["stages"]),
        Traffic("gradients to the previous stage", "send", m if r > 0 else 0, act, s["stages"]),
    ]


def expert_parallel(
    tokens: int,
    hidden: int,
    ep: int,
    top_k: int,
    experts: int,
    element_bytes: int = 2,
    routed_away: int | None = None,
    routed_here: int | None = None,
) -> list[Traffic]:
    """One rank's all-to-alls for a step of one mixture-of-experts layer whose experts are spread over ``ep`` ranks.

    The rank holds ``tokens`` tokens, each sent to ``top_k`` experts: ``tokens·top_k`` rows of ``hidden``. Before the
    dispatch the ranks exchange how many rows each expert gets from each rank (``experts`` int64 counts). The
    dispatch sends the ``routed_away`` rows bound for other ranks' experts, and the backward of the combine sends
    their gradients the same way; the combine sends back the ``routed_here`` rows other ranks sent to this rank's
    experts, and the backward of the dispatch sends their gradients back. By default routing is even:
    ``(ep − 1)/ep`` of the rows go away and as many come in.

    Raises:
        ValueError: For a size below 1, ``experts`` not divisible by ``ep``, ``top_k`` above ``experts``, more rows
            routed away than there are, or an even split that is not whole.
    """
    s = _sizes(tokens=tokens, hidden=hidden, ep=ep, top_k=top_k, experts=experts, element_bytes=element_bytes)
    if s["experts"] % s["ep"] or s["top_k"] > s["experts"]:
        raise ValueError(f"experts must be divisible by ep and ≥ top_k; got experts {experts}, ep {ep}, top_k {top_k}")
    rows = s["tokens"] * s["top_k"]
    if (routed_away is None or routed_here is None) and rows * (s["ep"] - 1) % s["ep"]:
        raise ValueError(f"an even split of tokens·top_k = {rows} rows over ep = {ep} ranks is not whole")
    away = rows * (s["ep"] - 1) // s["ep"] if routed_away is None else non_negative_int("routed_away", routed_away)
    here = rows * (s["ep"] - 1) // s["ep"] if routed_here is None else non_negative_int("routed_here", routed_here)
    if away > rows:
        raise ValueError(f"routed_away must be ≤ tokens·top_k = {rows}; got {away}")
    row = s["hidden"] * s["element_bytes"]
    arrived = rows - away + here
    return [
        Traffic("rows per expert (int64 counts)", "all_to_all", 1, s["experts"] * 8, s["ep"]),
        Traffic("dispatch; combine's gradient", "all_to_all", 2, rows * row, s["ep"], away * row),
        Traffic("combine; dispatch's gradient", "all_to_all", 2, arrived * row, s["ep"], here * row),
    ]


def fsdp(
    parameters: int, dp: int, param_bytes: int = 2, grad_bytes: int | None = None, reshard_after_forward: bool = True
) -> list[Traffic]:
    """One rank's FSDP collectives for a step over ``parameters`` parameters sharded ``dp`` ways: gathered for
    forward, gathered again for backward if they were resharded after forward (FSDP2 never reshards the root
    module, whose backward starts at once), gradients reduce-scattered once.

    Raises:
        ValueError: For a size below 1, or parameters not divisible by ``dp``.
    """
    s = _sizes(parameters=parameters, dp=dp, param_bytes=param_bytes)
    g = s["param_bytes"] if grad_bytes is None else positive_int("grad_bytes", grad_bytes)
    if s["parameters"] % s["dp"]:
        raise ValueError(f"parameters must be divisible by dp; got {parameters} parameters, dp {dp}")
    return [
        Traffic(
            "parameters",
            "all_gather",
            2 if flag("reshard_after_forward", reshard_after_forward) else 1,
            s["parameters"] * s["param_bytes"],
            s["dp"],
        ),
        Traffic("gradients", "reduce_scatter", 1, s["parameters"] * g, s["dp"]),
    ]


def fsdp_tp(
    split_parameters: int,
    replicated_parameters: int,
    batch: int,
    seq: int,
    hidden: int,
    dp: int,
    tp: int,
    element_bytes: int = 2,
    layers: int = 1,
    reshard_after_forward: bool = True,
) -> list[Traffic]:
    """One rank's collectives on a ``(dp, tp)`` mesh: tensor parallelism over the ``tp`` ranks of a replica
    (``batch`` is one replica's batch), FSDP over the ``dp`` ranks that hold the same tensor-parallel shard: the
    ``split_parameters / tp`` of the split matrices plus the ``replicated_parameters`` (the LayerNorms).

    Raises:
        ValueError: For a size below 1, or a shard not divisible by ``dp``.
    """
    s = _sizes(split_parameters=split_parameters, dp=dp, tp=tp)
    replicated = non_negative_int("replicated_parameters", replicated_parameters)
    if s["split_parameters"] % s["tp"]:
        raise ValueError(f"split_parameters must be divisible by tp; got {split_parameters}, tp {tp}")
    shard = s["split_parameters"] // s["tp"] + replicated
    return fsdp(shard, s["dp"], element_bytes, reshard_after_forward=reshard_after_forward) + tensor_parallel(
        batch, seq, hidden, s["tp"], element_bytes, layers
    )
