"""Pipeline schedules: the bubble as a formula, and as it follows from the order the engine ran.

A pipeline of ``p`` stages runs ``m`` micro-batches; a stage waits while the first micro-batch reaches it and
while the last one's gradient comes back. With a forward taking ``t_f`` and a backward ``t_b`` on every stage, GPipe
(Huang et al. 2019) and 1F1B (Narayanan et al. 2019, 2021) both take ``(m + p − 1)(t_f + t_b)``, of which each stage
computes ``m(t_f + t_b)``: the idle fraction, the bubble, is ``(p − 1)/(m + p − 1)``. 1F1B does not shrink the
bubble; it bounds the micro-batches whose activations a stage holds by ``p`` instead of ``m``.

:func:`replay` takes the order in which each stage actually ran its forwards and backwards (recorded from
``torch.distributed.pipelining`` in the chapter's demonstration) and computes when each would run if forwards took
``t_f`` and backwards ``t_b``, each waiting for its input from the neighbouring stage: the bubble that the order
implies, whatever the machine's speed.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from gpukb.arguments import array_size, positive_int

#: The schedules this module knows.
SCHEDULES = ("GPipe", "1F1B")
#: The most steps (forwards and backwards of all stages) a schedule is listed or replayed with: far beyond any
#: pipeline run (a few dozen stages, hundreds of micro-batches), and small enough to list in a second.
MAX_STEPS = 1 << 20


def bubble_fraction(stages: int, micro_batches: int) -> Fraction:
    """``(p − 1)/(m + p − 1)``: the idle share of a GPipe or 1F1B step (exact)."""
    p = positive_int("stages", stages)
    m = positive_int("micro_batches", micro_batches)
    return Fraction(p - 1, m + p - 1)


def interleaved_bubble_fraction(stages: int, micro_batches: int, chunks: int) -> Fraction:
    """The interleaved 1F1B schedule's bubble (Narayanan et al. 2021, §2.2.2): each stage holds ``v = chunks`` model
    chunks, the bubble time shrinks ``v``-fold to ``(p − 1)/v`` of a micro-batch's time, so the share of the step is
    ``(p − 1)/(v·m + p − 1)``."""
    p = positive_int("stages", stages)
    m = positive_int("micro_batches", micro_batches)
    v = positive_int("chunks", chunks)
    return Fraction(p - 1, v * m + p - 1)


def in_flight(schedule: str, stages: int, micro_batches: int, stage: int = 0) -> int:
    """Micro-batches whose activations ``stage`` holds at its peak: ``m`` under GPipe, ``min(m, p − stage)`` under
    1F1B."""
    from gpukb.arguments import choice, integer

    choice("schedule", schedule, SCHEDULES)
    p = positive_int("stages", stages)
    m = positive_int("micro_batches", micro_batches)
    r = integer("stage", stage, minimum=0, maximum=p - 1)
    return m if schedule == "GPipe" else min(m, p - r)


def schedule_order(schedule: str, stages: int, micro_batches: int) -> list[list[str]]:
    """The order in which each stage runs its forwards (``"F"``) and backwards (``"B"``).

    GPipe: every forward, then every backward. 1F1B: stage ``r`` first runs ``min(p − 1 − r, m)`` forwards, then
    alternates one forward and one backward while forwards remain, then the remaining backwards (the order
    ``torch.distributed.pipelining``'s ``Schedule1F1B`` runs, which the chapter's tests record).

    Raises:
        ValueError: For an unknown schedule, a size below 1, or a schedule of more than :data:`MAX_STEPS` steps.
    """
    from gpukb.arguments import choice

    choice("schedule", schedule, SCHEDULES)
    p = positive_int("stages", stages)
    m = positive_int("micro_batches", micro_batches)
    array_size(f"a schedule of {p} stages and {m} micro-batches", (p, 2 * m), MAX_STEPS)
    orders = []
    for r in range(p):
        if schedule == "GPipe":
            orders.append(["F"] * m + ["B"] * m)
            continue
        warmup = min(p - 1 - r, m)
        order = ["F"] * warmup
        for _ in range(m - warmup):
            order += ["F", "B"]
        orders.append(order + ["B"] * warmup)
    return orders


@dataclass(frozen=True)
class Replay:
    """When each stage ran what, given the order it ran it in.

    Attributes:
        makespan: When the last backward ends.
        busy: Each stage's computing time.
        slots: Each stage's ``(start, end, "F" or "B", micro-batch)``.
        peak_in_flight: Each stage's most micro-batches forwarded and not yet backwarded.
    """

    makespan: Fraction
    busy: list[Fraction]
    slots: list[list[tuple[Fraction, Fraction, str, int]]]
    peak_in_flight: list[int]

    @property
    def bubble(self) -> Fraction:
        """The idle share of the stages' time: ``1 − Σ busy / (p · makespan)``."""
        return 1 - sum(self.busy) / (len(self.busy) * self.makespan)


def _check_orders(orders: list[list[str]]) -> int:
    if not isinstance(orders, list) or not orders:
        raise ValueError(f"orders must be a non-empty list of lists of 'F'/'B'; got {orders!r}")
    counts = set()
    total = 0
    for r, order in enumerate(orders):
        if not isinstance(order, list) or any(a not in ("F", "B") for a in order):
            raise ValueError(f"orders[{r}] must be a list of 'F' and 'B'; got {order!r:.200}")
        total += len(order)
        if total > MAX_STEPS:
            raise ValueError(f"orders hold more than {MAX_STEPS:,} steps; at most {MAX_STEPS:,} are replayed here")
        ahead = 0  # forwards run less backwards run so far: never negative in a valid order
        for a in order:
            ahead += 1 if a == "F" else -1
            if ahead < 0:
                break
        if ahead != 0:
            raise ValueError(f"orders[{r}] runs a backward before its forward or leaves one out: {order!r:.200}")
        counts.add(order.count("F"))
    if len(counts) != 1 or 0 in counts:
        raise ValueError(f"every stage must run the same number (≥ 1) of micro-batches; got {sorted(counts)}")
    return counts.pop()


def replay(orders: list[list[str]], forward: int = 1, backward: int = 2) -> Replay:
    """Times for each stage's recorded order (``orders[stage]``, a list of ``"F"``/``"B"``; micro-batches in order).

    Forward ``i`` on stage ``r`` starts when stage ``r − 1`` has finished forward ``i``; backward ``i`` on stage
    ``r`` starts when stage ``r + 1`` has finished backward ``i`` (the last stage: its own forward ``i``); each stage
    runs one thing at a time, in its order. Communication is taken as free.

    Raises:
        ValueError: For orders that are not a valid schedule (a backward before its forward, unequal counts) or
            that deadlock.
    """
    m = _check_orders(orders)
    tf, tb = Fraction(positive_int("forward", forward)), Fraction(positive_int("backward", backward))
    p = len(orders)
    done: dict[tuple[str, int, int], Fraction] = {}  # (kind, stage, micro-batch) → end time
    position = [0] * p
    clock = [Fraction(0)] * p
    nxt = [{"F": 0, "B": 0} for _ in range(p)]
    slots: list[list[tuple[Fraction, Fraction, str, int]]] = [[] for _ in range(p)]
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for r in range(p):
            if position[r] == len(orders[r]):
                continue
            kind = orders[r][position[r]]
            i = nxt[r][kind]
            need = ("F", r - 1, i) if kind == "F" else (("B", r + 1, i) if r < p - 1 else ("F", r, i))
            if kind == "F" and r == 0:
                ready = Fraction(0)
            elif need in done:
                ready = done[need]
            else:
                continue
            start = max(clock[r], ready)
            end = start + (tf if kind == "F" else tb)
            done[(kind, r, i)] = end
            slots[r].append((start, end, kind, i))
            clock[r] = end
            nxt[r][kind] += 1
            position[r] += 1
            remaining -= 1
            progressed = True
        if not progressed:
            raise ValueError(f"these orders deadlock: {orders}")
    peaks = []
    for order in orders:
        level = peak = 0
        for a in order:
            level += 1 if a == "F" else -1
            peak = max(peak, level)
        peaks.append(peak)
    busy = [m * (tf + tb)] * p
    return Replay(max(clock), busy, slots, peaks)
