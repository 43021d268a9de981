"""What the collectives of a step moved: every collective PyTorch dispatches, with the bytes each rank sent.

:class:`CollectiveLog` is a ``TorchDispatchMode`` (the mechanism ``torch.distributed.tensor.debug.CommDebugMode``
counts collectives with) that also keeps each collective's size. DTensor, the pipelining engine and plain
``torch.distributed`` calls all reach the dispatcher as ``c10d`` or ``_c10d_functional`` operators, so one log sees
tensor, sequence, pipeline and expert parallelism alike. The bytes a rank sends are those of the ring algorithm
(:mod:`gpukb.distributed.collectives`): ``2(p − 1)/p · S`` for an all-reduce of ``S`` bytes, ``(p − 1)/p · S`` for an
all-gather or a reduce-scatter of a whole of ``S`` bytes; an all-to-all sends what it addresses to the other ranks;
a point-to-point send sends its tensor.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

#: Operator name (without namespace and overload) → (kind, where the whole is: the index of the argument or
#: ``"out"``, the index of the input split sizes of an all-to-all). Signatures from
#: ``torch/csrc/distributed/c10d/Ops.cpp`` (``c10d::``) and ``Functional.cpp`` (``_c10d_functional::``).
OPERATORS: dict[str, tuple[str, int | str, int | None]] = {
    "all_reduce": ("all_reduce", 0, None),
    "allreduce_": ("all_reduce", 0, None),
    "all_gather_into_tensor": ("all_gather", "out", None),
    "_allgather_base_": ("all_gather", 0, None),
    "allgather_": ("all_gather", 0, None),
    "reduce_scatter_tensor": ("reduce_scatter", 0, None),
    "_reduce_scatter_base_": ("reduce_scatter", 1, None),
    "reduce_scatter_": ("reduce_scatter", 1, None),
    "all_to_all_single": ("all_to_all", 0, 2),
    "alltoall_base_": ("all_to_all", 1, 4),
    "send": ("send", 0, None),
    "recv_": ("recv", 0, None),
    "broadcast": ("broadcast", 0, None),
    "broadcast_": ("broadcast", 0, None),
}

#: The kinds of collective the log tells apart.
KINDS = tuple(sorted({kind for kind, _, _ in OPERATORS.values()}))


@dataclass(frozen=True)
class Collective:
    """One collective as one rank saw it.

    Attributes:
        kind: ``all_reduce``, ``all_gather``, ``reduce_scatter``, ``all_to_all``, ``send``, ``recv`` or
            ``broadcast``.
        ranks: The size of the group it ran on.
        whole_bytes: The size ``S`` of the whole: the reduced tensor, the gathered output, the scattered input, the
            all-to-all's input, the point-to-point tensor.
        sent_bytes: What this rank sent to other ranks under the ring algorithm (exact, an integer).
    """

    kind: str
    ranks: int
    whole_bytes: int
    sent_bytes: int


def ring_sent_bytes(kind: str, whole_bytes: int, ranks: int, to_others: int | None = None) -> int:
    """Bytes one rank sends for one collective of ``whole_bytes`` on ``ranks`` ranks (ring algorithms).

    ``to_others`` is, for an all-to-all, what this rank addresses to the other ranks (its input less the part it
    keeps); without it the split is taken as even. A ``recv`` sends nothing.

    Raises:
        TypeError: For a size or ``to_others`` that is not an int.
        ValueError: For an unknown kind, a size that is not a whole number of bytes per rank's share, or
            ``to_others`` given for a collective other than an all-to-all (where it does not apply).
    """
    from gpukb.arguments import choice, non_negative_int, positive_int

    choice("kind", kind, KINDS)
    s = non_negative_int("whole_bytes", whole_bytes)
    p = positive_int("ranks", ranks)
    if to_others is not None and kind != "all_to_all":
        raise ValueError(f"to_others applies to an all_to_all only; got to_others={to_others!r} for {kind}")
    if kind == "recv":
        return 0
    if kind == "send":
        return s
    if kind == "all_to_all" and to_others is not None:
        return non_negative_int("to_others", to_others)
    if kind == "broadcast":
        return s  # a ring broadcast passes the whole on once per rank
    share = Fraction(s * (p - 1), p) * (2 if kind == "all_reduce" else 1)
    if share.denominator != 1:
        raise ValueError(f"{kind} of {s} bytes on {ranks} ranks: {s} is not divisible by {ranks}")
    return int(share)


def _group(args, kwargs):
    """The ProcessGroup a dispatched collective runs on: a boxed ``ScriptObject`` (``c10d::`` operators) or a group
    name (``_c10d_functional::`` operators)."""
    import torch
    import torch.distributed as dist
    from torch.distributed.distributed_c10d import _resolve_process_group

    values = list(args) + list(kwargs.values())
    for value in values:
        if isinstance(value, dist.ProcessGroup):
            return value
        if isinstance(value, torch.ScriptObject) and "ProcessGroup" in str(value._type()):
            return dist.ProcessGroup.unbox(value)
    for value in values:
        if isinstance(value, str):
            try:
                return _resolve_process_group(value)
            except (ValueError, RuntimeError, KeyError):
                continue
    return None


def _nbytes(value) -> int:
    import torch

    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, list | tuple):
        return sum(_nbytes(v) for v in value)
    return 0


def _record(name: str, args, kwargs, out) -> Collective | None:
    if name not in OPERATORS:
        return None
    kind, where, split_at = OPERATORS[name]
    group = _group(args, kwargs)
    if group is None:
        raise ValueError(f"cannot tell the process group of {name}")
    p = group.size()
    source = out if where == "out" else args[where]
    whole = _nbytes(source)
    to_others = None
    splits = args[split_at] if split_at is not None and len(args) > split_at else None
    if splits:
        rows = source.shape[0]
        row_bytes = whole // rows if rows else 0
        to_others = row_bytes * (sum(splits) - splits[group.rank()])
    return Collective(kind, p, whole, ring_sent_bytes(kind, whole, p, to_others))


class CollectiveLog:
    """A dispatch mode that logs every collective run inside it (``with CollectiveLog() as log: ...``).

    Attributes:
        collectives: Each collective, in the order this rank issued it.
    """

    def __init__(self) -> None:
        from torch.utils._python_dispatch import TorchDispatchMode

        log = self
        self.collectives: list[Collective] = []

        class _Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                out = func(*args, **kwargs)
                name = func._overloadpacket.__name__ if hasattr(func, "_overloadpacket") else ""
                if "c10d" in str(func):
                    found = _record(name, args, kwargs, out)
                    if found is not None:
                        log.collectives.append(found)
                return out

        self._mode = _Mode()

    def __enter__(self) -> CollectiveLog:
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._mode.__exit__(*exc)

    def counts(self) -> dict[str, int]:
        """How many collectives of each kind ran."""
        return dict(Counter(c.kind for c in self.collectives))

    def sent_bytes(self) -> int:
        """Bytes this rank sent, over every collective logged."""
        return sum(c.sent_bytes for c in self.collectives)
