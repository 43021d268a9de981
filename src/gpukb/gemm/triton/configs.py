"""How the Triton GEMM is tiled: :class:`Config`, the candidates the H100 sweep measured, the defaults it chose,
and the wave-quantization rule that picks between a large and a small tiling.

Plain data and arithmetic, with no torch or triton import, so that pages can use it anywhere.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from gpukb.arguments import integer, positive_int

#: Kernel names accepted by :class:`Config`: the persistent TMA kernel, the pointer-based blocked kernel, and the
#: split-K kernel (one program per output tile and K slice, TMA loads, float32 partial sums reduced by a second
#: kernel when the product is split).
KERNELS = ("tma", "blocked", "splitk")

#: The record of the sweep behind :data:`DEFAULT_CONFIGS` (an id for :func:`gpukb.records.load`).
TUNED_ON = "gemm/triton-gemm-h100"


@dataclass(frozen=True)
class Config:
    """How a product is tiled and compiled.

    Attributes:
        kernel: ``"tma"`` (persistent, TMA descriptors; sm_90+ or the interpreter) or ``"blocked"``.
        block_m: Rows of C per tile.
        block_n: Columns of C per tile.
        block_k: Depth of one step of the K loop.
        group_m: Tiles along M visited before moving along N (grouped ordering for L2 reuse).
        num_stages: Depth of the software pipeline of the K loop (shared-memory buffers in flight).
        num_warps: Warps per program (8 = two warpgroups on Hopper).
        warp_specialize: ``tma`` only: ask the compiler to split the loop into producer and consumer warps
            (``tl.range(..., warp_specialize=True)``; the descriptors are then built on the device).
        epilogue_subtile: ``tma`` only: store C in two halves, freeing shared memory for the main loop.
        flatten: ``tma`` only: flatten the tile loop and the K loop into one loop for the pipeliner.
        fp8_imprecise_acc: fp8 only: how many products along K the tensor cores sum at their reduced internal
            precision before that partial sum joins the float32 accumulator. ``None`` keeps Triton's sm_90
            default, 2**30 (all of them: the fast mode, as ``torch._scaled_mm(use_fast_accum=True)``). Up to
            ``block_k``, Triton's ``max_num_imprecise_acc``; a multiple of ``block_k`` above it, the kernel sums
            that many K steps into a second accumulator and adds it to the first in float32.
        split_k: ``splitk`` only: how many slices K is cut into (each summed by its own program, the float32
            partial sums added by a second kernel); ``None`` lets :func:`split_for` choose from the shape.
        pad_rows: ``tma`` and ``splitk`` only: also copy operands whose rows (columns, for a column-major one) a
            descriptor can read but that do not start on 128-byte lines (3000 bf16 columns: 6000-byte rows) into
            buffers with 128-byte-aligned rows first, paying one pass over them for full-speed tile loads.
        split_tail: ``tma`` only: when the tiles do not divide evenly into rounds of programs, run the first rows
            of tiles on the persistent kernel and the rows left over (the *tail*) on the split-K kernel with K cut
            so that the tail fills one round (:func:`tail_rows` chooses both): the idea of Stream-K (Osama et al.,
            2023, arXiv:2301.03598), in two launches instead of one.
        fused_reduce: ``splitk`` only: where K is split, the last slice of each tile to finish adds the partial
            sums (in slice order, counted on a per-tile lock) instead of a second kernel: one launch.
        swap_ab: ``splitk`` and ``tma``: compute each tile as its transpose, ``Bᵀ Aᵀ``, so that the MMA's rows are
            B's columns and A's few rows (a decode step's or a prefill's tokens) its narrow N dimension; on ``tma``,
            without ``warp_specialize``, ``epilogue_subtile``, ``split_tail``, ``stream_k`` or ``fp8_imprecise_acc``.
        stream_k: ``tma`` only (without ``warp_specialize`` or ``split_tail``): data-parallel + one stream-K round
            in one launch (Osama et al., 2023, arXiv:2301.03598): the tiles of whole rounds as in the persistent
            kernel; the tiles of the last, part-full round (:func:`stream_k_tiles`) have their K steps divided
            evenly among all the programs, and each tile's partial sums are added in a fixed order by whichever of
            its programs finishes last, as with ``fused_reduce``.
    """

    kernel: str
    block_m: int
    block_n: int
    block_k: int
    group_m: int = 8
    num_stages: int = 3
    num_warps: int = 8
    warp_specialize: bool = False
    epilogue_subtile: bool = False
    flatten: bool = True
    fp8_imprecise_acc: int | None = None
    split_k: int | None = None
    pad_rows: bool = False
    split_tail: bool = False
    fused_reduce: bool = False
    swap_ab: bool = False
    stream_k: bool = False

    def __post_init__(self) -> None:
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {list(KERNELS)}; got {self.kernel!r}")
        for name in ("block_m", "block_n", "block_k"):
            value = getattr(self, name)
            # a tile of Triton holds at most 2^20 elements: 1024 × 1024
            if isinstance(value, bool) or not isinstance(value, int) or not 16 <= value <= 1024:
                raise ValueError(_block_message(name, value))
            if value & (value - 1) and (name == "block_k" or self.kernel != "tma"):
                raise ValueError(_block_message(name, value))
            rest = block_parts(value)[1]
            if rest and (rest < 16 or rest & (rest - 1)):
                raise ValueError(
                    f"{name} must be a power of two from 16 to 1024 or, for the 'tma' kernel, the sum of two "
                    f"powers of two ≥ 16 (a tile of two blocks: 192 = 128 + 64); got {value!r}"
                )
        for name, allowed in (("group_m", range(1, 65)), ("num_stages", range(1, 17)), ("num_warps", (4, 8, 16))):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
                raise ValueError(f"{name} must be in {_describe(allowed)}; got {value!r}")
        for name in ("warp_specialize", "epilogue_subtile", "flatten"):  # a truthy "no" would switch one on
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool; got {getattr(self, name)!r}")
        if (self.two_part or (self.kernel == "tma" and self.swap_ab)) and (
            self.warp_specialize or self.epilogue_subtile or self.split_tail or self.stream_k
            or self.fp8_imprecise_acc is not None
        ):  # fmt: skip
            what = "a tile of two blocks" if self.two_part else "a swapped 'tma' tile (swap_ab)"
            raise ValueError(
                f"{what} ({self.block_m}x{self.block_n}) runs on the 'tma' kernel without "
                "warp_specialize, epilogue_subtile, split_tail, stream_k or fp8_imprecise_acc"
            )
        if self.kernel == "blocked" and (self.warp_specialize or self.epilogue_subtile or self.fp8_imprecise_acc):
            raise ValueError("warp_specialize, epilogue_subtile and fp8_imprecise_acc apply to the 'tma' kernel only")
        if self.kernel == "blocked" and self.pad_rows:
            raise ValueError("pad_rows applies to the 'tma' and 'splitk' kernels (the blocked kernel reads any rows)")
        if not isinstance(self.pad_rows, bool):
            raise ValueError(f"pad_rows must be a bool; got {self.pad_rows!r}")
        if not isinstance(self.split_tail, bool):
            raise ValueError(f"split_tail must be a bool; got {self.split_tail!r}")
        for name, kernels in (("fused_reduce", ("splitk",)), ("swap_ab", ("splitk", "tma"))):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be a bool; got {value!r}")
            if value and self.kernel not in kernels:
                names = " and ".join(repr(k) for k in kernels)
                raise ValueError(
                    f"{name} applies to the {names} kernel{'s' * (len(kernels) > 1)} only; got kernel {self.kernel!r}"
                )
        if self.split_tail and (self.kernel != "tma" or self.warp_specialize):
            raise ValueError("split_tail applies to the 'tma' kernel without warp_specialize")
        if not isinstance(self.stream_k, bool):
            raise ValueError(f"stream_k must be a bool; got {self.stream_k!r}")
        if self.stream_k and (self.kernel != "tma" or self.warp_specialize or self.split_tail):
            raise ValueError(
                "stream_k applies to the 'tma' kernel without warp_specialize or split_tail; got kernel "
                f"{self.kernel!r}, warp_specialize={self.warp_specialize}, split_tail={self.split_tail}"
            )
        if self.kernel == "splitk" and (self.warp_specialize or self.epilogue_subtile):
            raise ValueError("warp_specialize and epilogue_subtile apply to the 'tma' kernel only")
        split = self.split_k
        if split is not None and (
            isinstance(split, bool) or not isinstance(split, int) or not 1 <= split <= MAX_SPLIT_K
        ):
            raise ValueError(f"split_k must be None or an int from 1 to {MAX_SPLIT_K}; got {split!r}")
        if self.kernel != "splitk" and split not in (None, 1):
            raise ValueError(f"split_k applies to the 'splitk' kernel only; got split_k={split} for {self.kernel!r}")
        acc = self.fp8_imprecise_acc
        if acc is not None and (
            isinstance(acc, bool) or not isinstance(acc, int) or acc < 16 or (acc > self.block_k and acc % self.block_k)
        ):
            raise ValueError(
                f"fp8_imprecise_acc must be None, an int from 16 to block_k ({self.block_k}) or a multiple of "
                f"block_k; got {acc!r}"
            )

    @property
    def two_part(self) -> bool:
        """Whether a side of the tile is two Triton blocks (:func:`block_parts`): a tile such as 192×128."""
        return bool(block_parts(self.block_m)[1] or block_parts(self.block_n)[1])

    @property
    def label(self) -> str:
        """A short name, e.g. ``"tma 128x256x64 g8 s3 w8 ws"``."""
        flags = (
            ("ws", self.warp_specialize), ("sub", self.epilogue_subtile), ("pad", self.pad_rows),
            ("tail", self.split_tail), ("fused", self.fused_reduce), ("swap", self.swap_ab), ("sk", self.stream_k),
        )  # fmt: skip
        extras = [flag for flag, on in flags if on]
        if self.kernel == "tma" and not self.flatten:
            extras.append("noflat")
        if self.fp8_imprecise_acc is not None:
            extras.append(f"acc{self.fp8_imprecise_acc}")
        if self.kernel == "splitk":
            extras.append("split auto" if self.split_k is None else f"split {self.split_k}")
        shape = f"{self.block_m}x{self.block_n}x{self.block_k}"
        return " ".join([self.kernel, shape, f"g{self.group_m}", f"s{self.num_stages}", f"w{self.num_warps}", *extras])

    def as_dict(self) -> dict[str, Any]:
        """The configuration as plain JSON-ready data (what a results file records; the flags of
        :data:`OPTIONAL_FLAGS` only when set, so that records written before the fields existed read and write back
        unchanged)."""
        return {k: v for k, v in asdict(self).items() if not (k in OPTIONAL_FLAGS and v is False)}

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        # Records serialize a configuration as as_dict() does: without the OPTIONAL_FLAGS where False.
        from pydantic_core import core_schema

        schema = handler(source)

        def serialize(value: Any, nxt: Any) -> Any:
            data = nxt(value)
            if isinstance(data, dict):
                data = {k: v for k, v in data.items() if not (k in OPTIONAL_FLAGS and v is False)}
            return data

        schema["serialization"] = core_schema.wrap_serializer_function_ser_schema(serialize)
        return schema


def _block_message(name: str, value: Any) -> str:
    return (
        f"{name} must be a power of two ≥ 16 (tl.dot's shortest K; the smallest M and N tiled here) "
        f"and ≤ 1024 (Triton's largest tile is 2^20 elements); got {value!r}"
    )


def block_parts(size: int) -> tuple[int, int]:
    """A side of a tile as Triton blocks, whose sides must be powers of two: ``(size, 0)`` for a power of two,
    else its largest power of two and the rest (192: ``(128, 64)``; 160: ``(128, 32)``; 208: ``(128, 80)``, which
    :class:`Config` refuses, as 80 is not a power of two).

    Raises:
        TypeError, ValueError: For a size that is not an int from 1 to 1024 (a side of Triton's largest tile).
    """
    size = integer("size", size, minimum=1, maximum=1024)
    first = 1 << (size.bit_length() - 1)
    rest = size - first
    return first, rest


#: Fields a record writes only when set (added after the first records were written).
OPTIONAL_FLAGS = ("pad_rows", "split_tail", "fused_reduce", "swap_ab", "stream_k")

#: The most slices the split-K kernel cuts K into.
MAX_SPLIT_K = 128

#: What a split tail costs beyond its share of a round, in rounds: the second launch, and the float32 partial sums
#: written and added up by the reduction kernel.
TAIL_COST = 0.1


#: The largest dimension a product here may have: a torch size is an int64.
MAX_DIMENSION = 2**63 - 1


def _checked(m: int, n: int, k: int | None, config: Config, sms: int) -> None:
    """Refuse what the round counts do not model: dimensions that are not ints ≥ 0, a multiprocessor count below 1
    (which divided by zero), a configuration that is not a :class:`Config`."""
    for name, value in (("m", m), ("n", n), ("k", k)) if k is not None else (("m", m), ("n", n)):
        integer(name, value, minimum=0, maximum=MAX_DIMENSION)
    positive_int("sms", sms)
    _config(config)


def _config(config: Config, name: str = "config") -> None:
    """Refuse a ``config`` that is not a :class:`Config` (the one check of this module's counts and of
    :mod:`~gpukb.gemm.triton.tuning`'s rules, their helpers and the runs' trials; ``name``: the argument's, for the
    message)."""
    if not isinstance(config, Config):
        raise TypeError(f"{name} must be a gpukb.gemm.triton.configs.Config; got {type(config).__name__}")


def tail_rows(m: int, n: int, k: int, config: Config, sms: int) -> tuple[int, int]:
    """For a ``split_tail`` configuration: ``(rows, split)``, the rows of C (a multiple of ``block_m``) the
    persistent kernel takes, and the K slices of the split-K kernel that takes the rest. ``(m, 1)`` where no tail
    helps: then the persistent kernel takes everything.

    Counts rounds of tiles on ``sms`` programs: the persistent part takes ceil(tiles / sms) rounds; the tail's
    tiles, each cut into ``split`` K slices (at most one round of them, each slice at least four K steps), take
    1/split of a round each, plus :data:`TAIL_COST`. The fewest rounds win; ties keep more rows persistent. 512×11008
    in 128×256 tiles on 132 multiprocessors: 172 tiles, 2 rounds as they are; 3 rows of tiles (129) in one round and
    the last row's 43 tiles cut in 3 take 1 + 1/3 + 0.1.
    """
    _checked(m, n, k, config, sms)
    tm, tn = _cdiv(m, config.block_m), _cdiv(n, config.block_n)
    depth = max(1, k // (4 * config.block_k))
    best = (float(_cdiv(tm * tn, sms)), tm, 1)
    # only a tail of at most sms / 2 tiles can be split in two or more: fewer persistent rows are not tried (an m
    # of 10^100 would otherwise loop for ever)
    fewest = max(0, tm - sms // (2 * tn)) if tn else tm
    for rows in range(tm - 1, fewest - 1, -1):
        tail = (tm - rows) * tn
        split = max(1, min(sms // tail, depth, MAX_SPLIT_K))
        if split == 1:
            continue
        cost = _cdiv(rows * tn, sms) + _cdiv(tail * split, sms) / split + TAIL_COST
        if cost < best[0]:
            best = (cost, rows, split)
    _, rows, split = best
    return min(m, rows * config.block_m), split


def stream_k_tiles(m: int, n: int, config: Config, sms: int) -> int:
    """For a ``stream_k`` configuration: how many tiles of an m×n output form the stream-K round, the last ones in
    the persistent kernel's order, whose K steps all ``sms`` programs share; 0 where the tiles fill whole rounds.

    The tiles left over after whole rounds of ``sms``: 3000² in 128×256 tiles on 132 multiprocessors is 288 tiles,
    two rounds and 24 tiles, whose 24 × 47 K steps of 64 are shared by the 132 programs, 8 or 9 each. A product of
    fewer tiles than programs is all one stream-K round. At most ``sms - 1``: each program's share of the K steps
    is then shorter than one tile's, so it touches at most two tiles (the kernel relies on it).
    """
    _checked(m, n, None, config, sms)
    if not config.stream_k:
        raise ValueError(f"stream_k_tiles is for stream_k configurations; got {config.label!r}")
    return (_cdiv(m, config.block_m) * _cdiv(n, config.block_n)) % sms


def tail_rounds(m: int, n: int, k: int, config: Config, sms: int) -> float:
    """Rounds of tiles a ``split_tail`` configuration takes by :func:`tail_rows`'s count."""
    rows, split = tail_rows(m, n, k, config, sms)
    tn = _cdiv(n, config.block_n)
    head = _cdiv(_cdiv(rows, config.block_m) * tn, sms)
    if rows >= m:
        return float(head)
    tail = _cdiv(m - rows, config.block_m) * tn
    return head + _cdiv(tail * split, sms) / split + TAIL_COST


def split_for(m: int, n: int, k: int, config: Config, sms: int) -> int:
    """How many K slices a ``splitk`` configuration uses for an m×n×k product on ``sms`` multiprocessors.

    Its own ``split_k`` when set; otherwise the most slices for which the tiles times the slices still fit in
    one round of programs (a product whose tiles already fill the GPU once is not split), each slice at least four
    K steps long, at most :data:`MAX_SPLIT_K`. One round, not more: further slices add partial sums to write and
    add up, and a second round that is only partly full. (The tuning run times half and twice this split too; the
    tuning record shows what each took.)
    """
    _checked(m, n, k, config, sms)
    if config.split_k is not None:
        return config.split_k
    tiles = max(1, _cdiv(m, config.block_m) * _cdiv(n, config.block_n))  # an empty C: one (empty) tile
    by_fill = sms // tiles
    by_depth = max(1, k // (4 * config.block_k))
    return max(1, min(by_fill, by_depth, MAX_SPLIT_K))


def _describe(allowed: Any) -> str:
    return f"{allowed.start}..{allowed.stop - 1}" if isinstance(allowed, range) else str(list(allowed))


#: The configurations ``bench/triton_gemm.py`` sweeps on the H100: tile shapes and pipeline depths around what
#: fits sm_90's 227 KiB of shared memory (one that does not fit is kept, to show the limit), with and without
#: warp specialization, and the tutorial's blocked kernel for reference.
CANDIDATES: tuple[Config, ...] = (
    Config("blocked", 128, 256, 64, num_stages=3, num_warps=8),
    Config("blocked", 128, 128, 64, num_stages=4, num_warps=4),
    Config("tma", 128, 256, 64, num_stages=3, num_warps=8),
    Config("tma", 128, 256, 64, num_stages=4, num_warps=8),
    Config("tma", 128, 256, 64, num_stages=3, num_warps=8, epilogue_subtile=True),
    Config("tma", 128, 256, 64, num_stages=4, num_warps=8, epilogue_subtile=True),
    Config("tma", 128, 256, 64, num_stages=3, num_warps=8, flatten=False),
    Config("tma", 256, 128, 64, num_stages=3, num_warps=8),
    Config("tma", 128, 128, 64, num_stages=4, num_warps=8),
    Config("tma", 128, 128, 128, num_stages=3, num_warps=8),
    Config("tma", 64, 128, 64, num_stages=4, num_warps=4),
    Config("tma", 128, 256, 64, num_stages=3, num_warps=8, warp_specialize=True),
    Config("tma", 128, 256, 64, num_stages=3, num_warps=8, warp_specialize=True, epilogue_subtile=True),
    Config("tma", 128, 256, 64, num_stages=4, num_warps=8, warp_specialize=True, epilogue_subtile=True),
    Config("tma", 128, 256, 64, group_m=4, num_stages=3, num_warps=8, warp_specialize=True),
    Config("tma", 128, 256, 64, group_m=16, num_stages=3, num_warps=8, warp_specialize=True),
    Config("tma", 128, 256, 64, num_stages=3, num_warps=8, warp_specialize=True, flatten=False),
    Config("tma", 128, 128, 64, num_stages=4, num_warps=8, warp_specialize=True),
    Config("tma", 256, 128, 64, num_stages=3, num_warps=8, warp_specialize=True),
    Config("tma", 256, 128, 64, num_stages=4, num_warps=8, warp_specialize=True, epilogue_subtile=True),
)

#: FP8 (E4M3) candidates: a deeper K step, since each element is one byte; the fast accumulation (Triton's
#: default on sm_90) and a precise one that promotes each K step's partial sum to float32.
FP8_CANDIDATES: tuple[Config, ...] = (
    Config("tma", 128, 256, 128, num_stages=3, num_warps=8),
    Config("tma", 128, 256, 128, num_stages=4, num_warps=8, epilogue_subtile=True),
    Config("tma", 128, 256, 128, num_stages=3, num_warps=8, warp_specialize=True),
    Config("tma", 128, 256, 128, num_stages=4, num_warps=8, warp_specialize=True, epilogue_subtile=True),
    Config("tma", 128, 128, 128, num_stages=4, num_warps=8),
    Config("tma", 128, 256, 128, num_stages=3, num_warps=8, fp8_imprecise_acc=128),
    Config("tma", 128, 128, 128, num_stages=4, num_warps=8, fp8_imprecise_acc=128),
    Config("tma", 128, 128, 128, num_stages=4, num_warps=8, warp_specialize=True, fp8_imprecise_acc=128),
    Config("tma", 128, 128, 128, num_stages=4, num_warps=8, fp8_imprecise_acc=32),
)

#: The configuration used when none is given, per input type, for the TMA kernel on sm_90 (chosen from the
#: sweep recorded in :data:`TUNED_ON`): for products that fill the GPU with tiles of this shape ...
DEFAULT_CONFIGS: dict[str, Config] = {
    "float16": Config("tma", 128, 256, 64, num_stages=4, num_warps=8, epilogue_subtile=True),
    "bfloat16": Config("tma", 128, 256, 64, num_stages=4, num_warps=8, epilogue_subtile=True),
    "float8_e4m3fn": Config(
        "tma", 128, 256, 128, num_stages=4, num_warps=8, warp_specialize=True, epilogue_subtile=True
    ),
}

#: ... and a smaller tiling for 16-bit products that the default tiling would spread unevenly over the
#: multiprocessors (see :func:`pick_by_waves`), ...
SMALL_CONFIGS: dict[str, Config] = {
    "float16": Config("tma", 64, 128, 64, num_stages=4, num_warps=4),
    "bfloat16": Config("tma", 64, 128, 64, num_stages=4, num_warps=4),
}

#: ... whose rate, relative to the default tiling's, on bf16 8192³ in the same sweep (a test checks it there).
SMALL_RATE = 0.64

#: The blocked kernel's configuration on GPUs without TMA, and for strided operands TMA cannot describe.
BLOCKED_CONFIG = Config("blocked", 128, 128, 64, num_stages=4, num_warps=4)

#: float32 operands take the blocked kernel with IEEE products (no TF32); four-byte elements need smaller tiles
#: to fit shared memory. Checked on the CPU only: the H100 run measured no float32 product.
FP32_CONFIG = Config("blocked", 64, 64, 32, num_stages=3, num_warps=4)

#: Small tiles for the interpreter: the smallest tiled here (tl.dot's shortest K), so that tiny test shapes still span
#: several tiles.
INTERPRETER_CONFIG = Config("blocked", 16, 16, 16, group_m=2, num_stages=1, num_warps=4)

#: The interpreter's tiles for fp8, which only the TMA kernels take (a K step of 32 one-byte elements).
INTERPRETER_FP8_CONFIG = Config("tma", 16, 16, 32, group_m=2, num_stages=1, num_warps=4)


def _cdiv(x: int, y: int) -> int:
    return -(-x // y)


def tile_rounds(m: int, n: int, tile_m: int, tile_n: int, sms: int) -> tuple[int, int]:
    """``(tiles, rounds)`` of an m×n output in ``tile_m``×``tile_n`` tiles on ``sms`` programs: ceil(m / tile_m) ×
    ceil(n / tile_n) tiles, ceil(tiles / sms) rounds. Tiles of any size (a peer library's need not be powers of two).

    Raises:
        TypeError, ValueError: For sizes that are not ints ≥ 0, or tiles or a multiprocessor count that are not ints
            ≥ 1.
    """
    for name, value in (("m", m), ("n", n)):
        integer(name, value, minimum=0, maximum=MAX_DIMENSION)
    for name, value in (("tile_m", tile_m), ("tile_n", tile_n), ("sms", sms)):
        positive_int(name, value)
    tiles = _cdiv(m, tile_m) * _cdiv(n, tile_n)
    return tiles, _cdiv(tiles, sms)


def waves(m: int, n: int, config: Config, sms: int) -> int:
    """Rounds of tiles a persistent grid of ``sms`` programs needs for an m×n output: ceil(tiles / sms)."""
    _checked(m, n, None, config, sms)
    return tile_rounds(m, n, config.block_m, config.block_n, sms)[1]


def pick_by_waves(m: int, n: int, large: Config, small: Config, sms: int, small_rate: float) -> Config:
    """The tiling with the shorter estimated time: rounds of tiles × tile area ÷ the tiling's rate.

    A product whose tiles do not divide evenly among the multiprocessors leaves some of them idle in the last
    round (wave quantization): 1024² in 128×256 tiles is 32 tiles for 132 multiprocessors. Smaller tiles fill
    the GPU better but reuse less data, so each runs at a lower rate: ``small_rate`` is the small tiling's
    throughput relative to the large one's on a product that fills the GPU. ``large`` wins ties.
    """
    cost_large = waves(m, n, large, sms) * large.block_m * large.block_n
    cost_small = waves(m, n, small, sms) * small.block_m * small.block_n / small_rate
    return small if cost_small < cost_large else large


def current_choice(size: int, sm_count: int) -> Config:
    """The configuration the code picks now for a bf16 size×size output on ``sm_count`` multiprocessors."""
    large, small = DEFAULT_CONFIGS["bfloat16"], SMALL_CONFIGS["bfloat16"]
    return pick_by_waves(size, size, large, small, sm_count, SMALL_RATE)


def shared_memory_model(config: Config, element_bytes: int = 2, out_bytes: int | None = None) -> int:
    """Bytes of shared memory a configuration needs by count: on the TMA kernels, ``num_stages`` buffers of an A and a
    B tile (``element_bytes`` an element), and, on the ``tma`` kernel, one output tile for the TMA store
    (``out_bytes`` an element, as the inputs by default; half of one when the epilogue is subtiled; the ``splitk``
    kernel stores C from registers). The ``blocked`` kernel loads through pointers: triton 3.6 pipelines its float32
    loads (4-byte elements: IEEE products, no tensor cores) into ``num_stages - 1`` buffers (at least one), and not
    its 16-bit ones (one buffer at any depth); a CPU test compiles both.

    Raises:
        TypeError, ValueError: For a ``config`` that is not a :class:`Config`, or a byte count that is not an int ≥ 1.
    """
    _config(config)
    element_bytes = positive_int("element_bytes", element_bytes)
    out_bytes = element_bytes if out_bytes is None else positive_int("out_bytes", out_bytes)
    tiles = (config.block_m + config.block_n) * config.block_k * element_bytes
    if config.kernel == "blocked":
        return tiles * (max(1, config.num_stages - 1) if element_bytes == 4 else 1)
    if config.kernel == "splitk":
        return config.num_stages * tiles
    c_cols = config.block_n // 2 if config.epilogue_subtile else config.block_n
    return config.num_stages * tiles + config.block_m * c_cols * out_bytes


def fit_shared_memory(config: Config, limit: int, element_bytes: int, out_bytes: int) -> Config:
    """``config`` with its pipeline cut, a stage at a time down to one, until :func:`shared_memory_model` fits
    ``limit`` bytes: the tables tuned 16-bit outputs, and a float32 output tile is twice as large (128×256 tiles at
    4 stages: 262,144 bytes, past sm_90's 232,448 a block). A ``config`` that fits is returned as it is, and so is
    one a single stage cannot fit.

    Raises:
        TypeError, ValueError: For a ``config`` that is not a :class:`Config`, or a limit or byte count that is not
            an int ≥ 1.
    """
    _config(config)
    limit = positive_int("limit", limit)
    element_bytes = positive_int("element_bytes", element_bytes)
    out_bytes = positive_int("out_bytes", out_bytes)
    fitted = config
    while fitted.num_stages > 1 and shared_memory_model(fitted, element_bytes, out_bytes) > limit:
        fitted = replace(fitted, num_stages=fitted.num_stages - 1)
    return fitted if shared_memory_model(fitted, element_bytes, out_bytes) <= limit else config
