"""Copies and kernels overlapping on streams: the lower bound a pipeline of chunks can reach, and the timeline of a
recorded run laid out by engine.

A buffer processed as host-to-device copy, kernel, device-to-host copy can be cut into chunks: while chunk ``i`` is
computed, chunk ``i + 1`` is copied in and chunk ``i - 1`` copied out, on GPUs whose copy engines work alongside
the SMs (``asyncEngineCount`` of 2 or more for both directions at once). These functions need no GPU.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpukb.arguments import choice, given, non_negative_int, real

#: The three stages of every chunk, in order.
STAGES = ("H2D", "kernel", "D2H")


def _check_stages(h2d: Sequence[float], kernel: Sequence[float], d2h: Sequence[float]) -> None:
    for stage, values in zip(STAGES, (h2d, kernel, d2h), strict=True):
        if isinstance(values, str | bytes) or not isinstance(values, Sequence):
            raise TypeError(f"{stage} durations must be a sequence of numbers, one per chunk; got {given(values)}")
    if not (len(h2d) == len(kernel) == len(d2h)) or not h2d:
        raise ValueError(
            f"one duration per chunk for each stage, at least one chunk; got {len(h2d)}, {len(kernel)} and {len(d2h)}"
        )
    for stage, values in zip(STAGES, (h2d, kernel, d2h), strict=True):
        for i, v in enumerate(values):
            real(f"{stage} duration [{i}]", v, minimum=0)  # finite, not negative


def sequential_time(h2d: Sequence[float], kernel: Sequence[float], d2h: Sequence[float]) -> float:
    """Every operation one after the other: the sum of all durations."""
    _check_stages(h2d, kernel, d2h)
    return float(sum(h2d) + sum(kernel) + sum(d2h))


# --8<-- [start:bound]
def pipeline_bound(h2d: Sequence[float], kernel: Sequence[float], d2h: Sequence[float]) -> float:
    """A lower bound on the time three engines (one per stage) need to finish the chunks, processed in order.

    Each engine does its stage of every chunk, one chunk at a time, and a chunk's stage starts only after its
    previous stage ended. No engine can finish before its total work plus what must happen before it can start
    (the first chunk's earlier stages) and after it ends (the last chunk's later stages):
    ``max(ΣH + k_last + d_last, h_1 + ΣK + d_last, h_1 + k_1 + ΣD)``, the machine bound of a three-machine flow
    shop. With equal chunks it is exact, the time of the in-order schedule: the largest stage total plus one chunk
    of each other stage, so more chunks bring it closer to the largest stage total. With unequal chunks an engine may
    also wait in the middle (the schedule's time follows ``end[i][s] = max(end[i-1][s], end[i][s-1]) +
    duration[i][s]``), and the time can exceed the bound.
    """
    _check_stages(h2d, kernel, d2h)
    return float(
        max(
            sum(h2d) + kernel[-1] + d2h[-1],
            h2d[0] + sum(kernel) + d2h[-1],
            h2d[0] + kernel[0] + sum(d2h),
        )
    )
    # --8<-- [end:bound]


def engine_lanes(ops: Sequence[tuple[str, int, float, float]]) -> dict[str, list[tuple[int, float, float]]]:
    """The operations of one run, ``(stage, chunk, start, end)`` with ``start`` the time an event before it on its
    stream completed, laid out one lane per stage: ``{stage: [(chunk, start, end), ...]}`` in order of end.

    An event marks when its stream reached it, not when the engine took the operation up: on several streams an
    operation may have waited for the previous one of its stage. Each lane therefore starts an operation no earlier
    than the previous one of that lane ended (one copy per direction and one kernel at a time, which holds when
    every kernel fills the GPU and a copy alone fills the link).
    """
    if isinstance(ops, str | bytes) or not isinstance(ops, Sequence):
        raise TypeError(f"ops must be a sequence of (stage, chunk, start, end) tuples; got {given(ops)}")
    for i, op in enumerate(ops):
        if not isinstance(op, tuple | list) or len(op) != 4:
            raise TypeError(f"ops[{i}] must be a (stage, chunk, start, end) tuple; got {given(op)}")
        choice(f"ops[{i}] stage", op[0], STAGES)
        non_negative_int(f"ops[{i}] chunk", op[1])
        for j, what in ((2, "start"), (3, "end")):
            real(f"ops[{i}] {what}", op[j], minimum=0)  # seconds after the run's first event
    lanes: dict[str, list[tuple[int, float, float]]] = {}
    for stage in STAGES:
        mine = sorted((o for o in ops if o[0] == stage), key=lambda o: (o[3], o[2]))
        lane, last_end = [], 0.0
        for _, chunk, start, end in mine:
            if end < start:
                raise ValueError(f"{stage} of chunk {chunk} ends ({end}) before it starts ({start})")
            begin = min(max(start, last_end), end)
            lane.append((chunk, begin, end))
            last_end = end
        lanes[stage] = lane
    return lanes
