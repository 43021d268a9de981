"""What cuBLAS ran: the tile of an ``nvjet`` kernel, read from its name, and how its tiles fill rounds of programs.

The cuBLAS that PyTorch 2.11 (CUDA 13.0) calls on an H100 runs kernels named like
``nvjet_sm90_tst_192x192_64x3_2x1_v_bz_coopB_NTN``. NVIDIA does not document these names. Read here: the first pair
of numbers as the output tile, the second as the K step and the number of pipeline stages, the third as the
thread-block cluster, and ``splitK`` as a product cut along K. The tile reading is checked against the products
themselves (:func:`fill`): cuBLAS stores matrices column by column (https://docs.nvidia.com/cuda/cublas/index.html,
"Data layout"), so PyTorch's row-major ``C = A @ B`` is, to cuBLAS, ``Cᵀ = Bᵀ Aᵀ``: the tile's first number runs
along N, its second along M. Read that way, the tiles of the products cuBLAS won by most come to just under a whole
number of rounds of 132 (the Triton GEMM page, step 13, shows it). Torch-free.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from gpukb.arguments import positive_int
from gpukb.gemm.triton.configs import tile_rounds
from gpukb.gemm.triton.results import SweepRow, TritonGemmSweep, sweep_committed

#: An nvjet kernel's name, up to the fields read here (``sm`` and the variant letters are not read); a field of more
#: than six digits is no kernel's (tiles, steps and clusters are hundreds at most).
NVJET = re.compile(r"nvjet_sm(\d{1,6})_[a-z]+_(\d{1,6})x(\d{1,6})_(\d{1,6})x(\d{1,6})_(\d{1,6})x(\d{1,6})_")


@dataclass(frozen=True)
class NvjetKernel:
    """An ``nvjet`` kernel, as its name reads (see the module's docstring for the reading).

    Attributes:
        tile_n: The output tile's extent along N of a row-major C (the name's first number).
        tile_m: Its extent along M (the name's second number).
        block_k: The K step (the second pair's first number).
        stages: The pipeline stages (the second pair's second number).
        cluster: The thread-block cluster (the third pair).
        split_k: The name says ``splitK``: the product is cut along K (how many slices, the name does not say).
    """

    tile_n: int
    tile_m: int
    block_k: int
    stages: int
    cluster: tuple[int, int]
    split_k: bool

    @property
    def tile(self) -> str:
        """``"MxN"``, the tile as this project writes its own (rows of C first)."""
        return f"{self.tile_m}x{self.tile_n}"

    @property
    def powers_of_two(self) -> bool:
        """Both sides of the tile are powers of two (the only tiles a Triton block can be)."""
        return all(side & (side - 1) == 0 for side in (self.tile_m, self.tile_n))


def parse_nvjet(name: str) -> NvjetKernel | None:
    """The nvjet kernel a profiler's kernel name names, or ``None`` for any other kernel (a CUTLASS kernel, cuBLAS's
    split-K reduction, a memset).

    Raises:
        TypeError: For a name that is not a str.
        ValueError: For an nvjet name with a zero in a field read here (no tile, stage or cluster is empty).
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str; got {type(name).__name__}")
    match = NVJET.match(name)
    if match is None:
        return None
    _, tile_n, tile_m, block_k, stages, cx, cy = (int(g) for g in match.groups())
    if 0 in (tile_n, tile_m, block_k, stages, cx, cy):
        raise ValueError(f"an nvjet name's tile, K step, stages and cluster are all at least 1; got {name!r}")
    return NvjetKernel(tile_n, tile_m, block_k, stages, (cx, cy), "_splitK_" in name)


def peer_gemm(kernels: list[str] | None) -> NvjetKernel | None:
    """The nvjet kernel among a call's kernels (the first one), or ``None`` where the call ran none.

    Raises:
        TypeError: For ``kernels`` that are not a list of str (or ``None``).
    """
    if kernels is None:
        return None
    if not isinstance(kernels, list):
        raise TypeError(f"kernels must be a list of kernel names or None; got {type(kernels).__name__}")
    return next((k for k in map(parse_nvjet, kernels) if k is not None), None)


@dataclass(frozen=True)
class Fill:
    """How an m×n output's tiles fill rounds of ``sms`` programs.

    Attributes:
        tiles: The tiles (times the K slices, for a split product).
        rounds: ceil(tiles / sms).
        fill: tiles / (rounds × sms): 1 where every round is full.
        useful: The share of the multiply-adds the rounds could do (every slot a whole tile) that are the product's:
            m × n × slices / (rounds × sms × tile_m × tile_n). Below ``fill`` where tiles hang over the edge of C.
    """

    tiles: int
    rounds: int
    fill: float
    useful: float


def fill(m: int, n: int, tile_m: int, tile_n: int, sms: int, slices: int = 1) -> Fill:
    """The :class:`Fill` of an m×n output in ``tile_m``×``tile_n`` tiles, each cut into ``slices`` along K.

    Raises:
        TypeError, ValueError: For sizes that are not ints ≥ 1 (an empty output has no rounds to fill), or tiles,
            multiprocessors or slices that are not ints ≥ 1.
    """
    positive_int("m", m)
    positive_int("n", n)
    positive_int("slices", slices)
    tiles, _ = tile_rounds(m, n, tile_m, tile_n, sms)
    units = tiles * slices
    rounds = -(-units // sms)
    return Fill(units, rounds, units / (rounds * sms), m * n * slices / (rounds * sms * tile_m * tile_n))


#: The run that named every bf16 product's kernels on both sides: the fourth and fifth held-out draws, re-measured
#: with the look-up of step 10 (both draws seen before; no tuning followed).
PEER_TILES_ID = "gemm/triton-gemm-sweep-h100-peer-tiles"


@dataclass(frozen=True)
class PeerTileRow:
    """One bf16 product of a sweep whose cuBLAS call ran an nvjet kernel: the tiles of both sides.

    Attributes:
        row: The sweep's row (shape, ratio, the look-up's configuration, the kernels' names).
        peer: cuBLAS's nvjet kernel.
        peer_fill: How cuBLAS's tiles fill rounds of the GPU's multiprocessors (``None`` for a split-K kernel, whose
            slices the name does not count).
        own_fill: How the look-up's tiles fill them (tiles times K slices, for its split-K kernel).
    """

    row: SweepRow
    peer: NvjetKernel
    peer_fill: Fill | None
    own_fill: Fill


def peer_tile_rows(record: TritonGemmSweep | str = PEER_TILES_ID) -> list[PeerTileRow]:
    """Every bf16 row of a sweep record (by default :data:`PEER_TILES_ID`) with a ratio and an nvjet kernel on
    cuBLAS's side, lowest ratio first, on the multiprocessor count the record's GPU reported.

    Raises:
        TypeError: For a record that is neither a sweep record nor a record id.
        ValueError: For a record whose run names no GPU (its multiprocessors are not known), or a row with a ratio and
            no configuration.
    """
    if isinstance(record, str):
        record = sweep_committed(record)
    if not isinstance(record, TritonGemmSweep):
        raise TypeError(f"record must be a TritonGemmSweep or a record id; got {type(record).__name__}")
    gpu = record.run.gpu
    if gpu is None or not gpu.sm_count:
        raise ValueError("the record's run names no GPU, so its multiprocessor count is not known")
    sms = gpu.sm_count
    rows = []
    for row in record.rows:
        peer = peer_gemm(row.peer_kernels) if row.dtype == "bfloat16" and row.ratio else None
        if peer is None:
            continue
        if row.config is None:
            raise ValueError(f"the row {row.label!r} ({row.sweep}) has a ratio but no configuration to count tiles of")
        peer_fill = None if peer.split_k else fill(row.m, row.n, peer.tile_m, peer.tile_n, sms)
        slices = row.split_k or 1
        own = fill(row.m, row.n, row.config.block_m, row.config.block_n, sms, slices)
        rows.append(PeerTileRow(row, peer, peer_fill, own))
    return sorted(rows, key=lambda r: r.row.ratio)


@dataclass(frozen=True)
class TileGroup:
    """The products whose cuBLAS tile was (or was not) a power of two on both sides, with or without split-K.

    Attributes:
        powers_of_two: cuBLAS's tile sides are both powers of two (a tile a Triton block can also be).
        split_k: cuBLAS cut the product along K.
        rows: The products, lowest ratio first.
        geomean: The geometric mean of their ratios (cuBLAS's time over the Triton GEMM's); ``None`` for no rows.
    """

    powers_of_two: bool
    split_k: bool
    rows: tuple[PeerTileRow, ...]
    geomean: float | None


def tile_groups(rows: list[PeerTileRow] | None = None) -> list[TileGroup]:
    """:func:`peer_tile_rows` (by default the committed run's) in four groups: cuBLAS's tile a power of two on both
    sides or not, each with and without split-K; in that order, empty groups included.

    Raises:
        TypeError: For rows that are not a list of :class:`PeerTileRow`.
    """
    rows = peer_tile_rows() if rows is None else rows
    if not isinstance(rows, list) or not all(isinstance(r, PeerTileRow) for r in rows):
        raise TypeError(f"rows must be a list of PeerTileRow (see peer_tile_rows); got {type(rows).__name__}")
    groups = []
    for powers_of_two in (True, False):
        for split_k in (False, True):
            members = tuple(r for r in rows if r.peer.powers_of_two == powers_of_two and r.peer.split_k == split_k)
            mean = statistics.geometric_mean(r.row.ratio for r in members) if members else None
            groups.append(TileGroup(powers_of_two, split_k, members, mean))
    return groups
