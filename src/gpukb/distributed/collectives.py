"""Collectives: the ring algorithms simulated in numpy, and bandwidth as nccl-tests reports it.

Simulation. ``p`` ranks hold one array each, cut into ``p`` chunks. The ring reduce-scatter takes ``p − 1`` steps:
in step ``t`` rank ``r`` sends its running sum of chunk ``(r − t) mod p`` to rank ``r + 1``, which adds its own; after
them rank ``r`` holds the full sum of chunk ``(r + 1) mod p``. The ring all-gather passes finished chunks on for
``p − 1`` more steps. Every step each rank sends one chunk (``S/p`` bytes), so the all-reduce (reduce-scatter then
all-gather) sends ``2(p − 1)/p · S`` bytes per rank, and each half sends ``(p − 1)/p · S``.

Bandwidth (nccl-tests ``doc/PERFORMANCE.md``): the algorithm bandwidth is ``algbw = S / t``; the bus bandwidth
multiplies it by a factor that makes it comparable with the hardware's link bandwidth whatever the rank count:
``2(n − 1)/n`` for all-reduce, ``(n − 1)/n`` for reduce-scatter and all-gather (where ``S`` is the size of the
whole, gathered array: ``count per rank × element size × n``), 1 for broadcast and reduce.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpukb.arguments import array_size, choice, given, integer, positive_int, real

# --8<-- [start:bus-factor]
#: nccl-tests' bus-bandwidth correction factor for each collective, as a function of the rank count n.
BUS_FACTORS = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "all_to_all": lambda n: (n - 1) / n,
}


def bus_factor(op: str, ranks: int) -> float:
    """The factor ``busbw / algbw`` for ``op`` on ``ranks`` ranks."""
    return BUS_FACTORS[choice("op", op, tuple(BUS_FACTORS))](positive_int("ranks", ranks))


def bandwidths(op: str, size_bytes: int, seconds: float, ranks: int) -> tuple[float, float]:
    """``(algbw, busbw)`` in bytes per second for one operation of ``size_bytes`` (nccl-tests' ``S``) taking
    ``seconds`` on ``ranks`` ranks."""
    size = positive_int("size_bytes", size_bytes)
    t = real("seconds", seconds, positive=True)
    algbw = size / t
    return algbw, algbw * bus_factor(op, ranks)


# --8<-- [end:bus-factor]


@dataclass(frozen=True)
class RingResult:
    """What each rank ends with, the bytes each rank sent, and the number of steps."""

    outputs: list[np.ndarray]
    bytes_sent_per_rank: list[int]
    steps: int


def _check_arrays(arrays) -> list[np.ndarray]:
    if isinstance(arrays, np.ndarray) or not hasattr(arrays, "__len__"):
        raise TypeError(f"arrays must be a list of 1-D numpy arrays, one per rank; got {type(arrays).__name__}")
    arrays = [np.asarray(a) for a in arrays]
    p = positive_int("number of ranks", len(arrays))
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1 or arrays[0].ndim != 1:
        raise ValueError(f"every rank needs a 1-D array of the same length; got shapes {sorted(shapes)}")
    if arrays[0].size % p:
        raise ValueError(f"array length {arrays[0].size} is not divisible by the {p} ranks")
    return arrays


# --8<-- [start:ring]
def ring_reduce_scatter(arrays) -> RingResult:
    """Ring reduce-scatter: rank ``r`` ends with the sum over ranks of chunk ``(r + 1) mod p``."""
    arrays = _check_arrays(arrays)
    p = len(arrays)
    chunks = [np.split(a.copy(), p) for a in arrays]  # chunks[rank][chunk]
    sent = [0] * p
    for t in range(p - 1):
        outgoing = [(r, (r - t) % p, chunks[r][(r - t) % p].copy()) for r in range(p)]  # all sends of a step at once
        for r, c, data in outgoing:
            chunks[(r + 1) % p][c] += data
            sent[r] += data.nbytes
    return RingResult([chunks[r][(r + 1) % p] for r in range(p)], sent, p - 1)


def ring_all_gather(pieces) -> RingResult:
    """Ring all-gather: rank ``r`` starts with chunk ``(r + 1) mod p`` (``pieces[r]``), every rank ends with all
    chunks in order."""
    pieces = _check_arrays([np.concatenate([x] * len(pieces)) for x in pieces])  # validates equal 1-D pieces
    p = len(pieces)
    n = pieces[0].size // p
    have = [{(r + 1) % p: pieces[r][:n].copy()} for r in range(p)]
    sent = [0] * p
    for t in range(p - 1):
        outgoing = [(r, (r + 1 - t) % p) for r in range(p)]
        data = [have[r][c] for r, c in outgoing]
        for (r, c), d in zip(outgoing, data, strict=True):
            have[(r + 1) % p][c] = d
            sent[r] += d.nbytes
    return RingResult([np.concatenate([have[r][c] for c in range(p)]) for r in range(p)], sent, p - 1)


def ring_all_reduce(arrays) -> RingResult:
    """Ring all-reduce = reduce-scatter then all-gather: ``2(p − 1)`` steps, ``2(p − 1)/p · S`` bytes per rank."""
    rs = ring_reduce_scatter(arrays)
    ag = ring_all_gather(rs.outputs)
    sent = [a + b for a, b in zip(rs.bytes_sent_per_rank, ag.bytes_sent_per_rank, strict=True)]
    return RingResult(ag.outputs, sent, rs.steps + ag.steps)


# --8<-- [end:ring]


def ring_traffic_table(size_bytes: int, ranks: list[int]) -> tuple[list[str], list[list[object]]]:
    """Bytes each rank sends in the simulated ring all-reduce of ``size_bytes`` float32 bytes, against
    ``2(p − 1)/p · S``, for each rank count.

    Raises:
        TypeError: For a size that is not an int or ranks that are not a list of ints.
        ValueError: For a size that is not a positive multiple of 4, rank counts outside 1 to 1024, or arrays past
            :data:`gpukb.arguments.MAX_ARRAY_ELEMENTS` in all.
    """
    size = positive_int("size_bytes", size_bytes)
    if size % 4:
        raise ValueError(f"size_bytes must be a multiple of 4 (float32 elements); got {size}")
    if isinstance(ranks, str | bytes) or not isinstance(ranks, list | tuple):
        raise TypeError(f"ranks must be a list of rank counts; got {given(ranks)}")
    headers = ["ranks p", "steps", "bytes sent per rank", "2(p−1)/p · S", "busbw factor"]
    rows = []
    for i, p in enumerate(ranks):
        p = integer(f"ranks[{i}]", p, minimum=1, maximum=1024)  # simulated in this process: a ring of arrays
        array_size(f"the simulated arrays of size_bytes={size} on {p} ranks", (p, size // 4))
        n = size // 4
        if n % p:
            raise ValueError(f"{n} float32 elements are not divisible by {p} ranks")
        result = ring_all_reduce([np.full(n, r + 1, np.float32) for r in range(p)])
        rows.append(
            [
                p,
                result.steps,
                result.bytes_sent_per_rank[0],
                int(2 * (p - 1) * size // p),
                f"{bus_factor('all_reduce', p):.4g}",
            ]
        )
    return headers, rows


# --8<-- [start:alpha-beta]
def alpha_beta_time(size_bytes: float, alpha: float, bus_bandwidth: float, factor: float) -> float:
    """The α-β (latency-bandwidth) model of one collective: ``t = α + factor · S / B``.

    ``α`` is the fixed cost of a call (every step's latency, plus the software's own), ``B`` the bandwidth the
    links sustain (a bus bandwidth, in bytes per second) and ``factor`` the collective's bus factor, so that
    ``factor · S`` is the bytes each rank's link carries. Below ``S½ = α · B / factor`` the fixed cost is more than
    half of the time: there the size hardly matters.
    """
    return real("alpha", alpha, minimum=0.0) + real("factor", factor, positive=True) * real(
        "size_bytes", size_bytes, minimum=0.0
    ) / real("bus_bandwidth", bus_bandwidth, positive=True)


def fit_alpha_beta(sizes: list[int], seconds: list[float], factor: float) -> tuple[float, float]:
    """``(α, B)`` of :func:`alpha_beta_time` fitted to measured times by least squares on the *relative* error (each
    point weighted by 1/t), so microsecond calls count as much as millisecond ones.

    Raises:
        ValueError: For fewer than two sizes, lists of different lengths, or a fit that gives no positive
            bandwidth (times that do not grow with the size).
    """
    if len(sizes) != len(seconds) or len(sizes) < 2:
        raise ValueError(f"need two or more sizes with one time each; got {len(sizes)} sizes, {len(seconds)} times")
    s = np.array([real("size", x, positive=True) for x in sizes])
    t = np.array([real("seconds", x, positive=True) for x in seconds])
    # t ≈ α + c·S with c = factor / B; divided by t: 1 ≈ α/t + c·S/t
    (alpha, slope), *_ = np.linalg.lstsq(np.stack([1 / t, s / t], axis=1), np.ones_like(t), rcond=None)
    if slope <= 0:
        raise ValueError("the times do not grow with the size: no bandwidth to fit")
    return float(alpha), float(real("factor", factor, positive=True) / slope)
    # --8<-- [end:alpha-beta]
