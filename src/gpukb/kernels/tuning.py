"""Which configuration the Triton GEMM uses for a product: a tuning table keyed by shape class, measured on the H100
by ``bench/triton_gemm_sweep.py --tune`` and committed as data with the run that produced it.

A *shape class* is the input type, the layout (``"NN"``: A and B row-major; ``"NT"``: B column-major, the
transpose of a row-major N×K matrix; ``"TN"``, ``"TT"``: A column-major) and a bucket for each of M, N and K
(:data:`M_EDGES`, :data:`N_EDGES`, :data:`K_EDGES`). The table holds, for each class the tuning run measured, the
configuration that was fastest on that class's representative shape, with every candidate's time. A class the
table lacks gets :func:`heuristic`, a rule stated in code. Nothing is timed at call time.

Torch-free and triton-free, so that pages and tests can use it anywhere.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import Field

from gpukb.kernels.configs import DEFAULT_CONFIGS, SMALL_CONFIGS, SMALL_RATE, Config, pick_by_waves
from gpukb.records import Record, read
from gpukb.schema import StrictModel

#: Upper edges of the buckets of M, N and K: a size goes in the first bucket whose edge it does not exceed, or in
#: the last one (above every edge). M ≤ 64 is the small-M (decode) class.
M_EDGES = (64, 256, 1024, 4096)
N_EDGES = (1024, 4096, 16384)
K_EDGES = (1024, 4096)

#: The committed table: a file under ``gpukb/data/kernels/``.
TABLE_FILE = "gemm-tuning-h100.json"

Layout = Literal["NN", "NT", "TN", "TT"]

#: Types that share another type's tuned entries where they have none of their own (same element size, same MMA
#: rate on sm_90).
SHARES = {"float16": "bfloat16", "bfloat16": "float16"}

#: The candidates the tuning run tries, by input type: the persistent TMA kernel with large and small tiles, and
#: the split-K kernel with 64-row tiles (the small-M path: one warpgroup's MMA is 64 rows) and 128-row tiles.
CANDIDATES_16: tuple[Config, ...] = (
    Config("tma", 128, 256, 64, num_stages=4, num_warps=8, epilogue_subtile=True),
    Config("tma", 128, 256, 64, num_stages=3, num_warps=8),
    Config("tma", 128, 128, 64, num_stages=4, num_warps=8),
    Config("tma", 64, 128, 64, num_stages=4, num_warps=4),
    Config("splitk", 128, 128, 64, num_stages=4, num_warps=8),
    Config("splitk", 128, 256, 64, num_stages=3, num_warps=8),
    Config("splitk", 64, 128, 128, num_stages=4, num_warps=4),
    Config("splitk", 64, 64, 128, num_stages=5, num_warps=4),
    Config("splitk", 64, 256, 64, num_stages=4, num_warps=4),
)
CANDIDATES_FP8: tuple[Config, ...] = (
    Config("tma", 128, 256, 128, num_stages=4, num_warps=8, epilogue_subtile=True),
    Config("tma", 128, 256, 128, num_stages=3, num_warps=8),
    Config("tma", 128, 128, 128, num_stages=4, num_warps=8),
    Config("splitk", 128, 128, 128, num_stages=4, num_warps=8),
    Config("splitk", 128, 256, 128, num_stages=3, num_warps=8),
    Config("splitk", 64, 128, 256, num_stages=4, num_warps=4),
    Config("splitk", 64, 64, 256, num_stages=5, num_warps=4),
)


def candidates(dtype: str, m: int) -> tuple[Config, ...]:
    """The candidates the tuning run tries for an input type and M: for M ≤ 64, only those with 64-row tiles."""
    pool = CANDIDATES_FP8 if dtype == "float8_e4m3fn" else CANDIDATES_16
    if m <= M_EDGES[0]:
        return tuple(c for c in pool if c.block_m == 64)
    return pool


def bucket(size: int, edges: tuple[int, ...]) -> int:
    """The index of the bucket ``size`` falls in: the first edge it does not exceed, or ``len(edges)``."""
    return bisect.bisect_left(edges, size)


def bucket_label(index: int, edges: tuple[int, ...]) -> str:
    """``"≤ 64"``, ``"65–256"``, ..., ``"> 4096"``."""
    if index == 0:
        return f"≤ {edges[0]}"
    if index == len(edges):
        return f"> {edges[-1]}"
    return f"{edges[index - 1] + 1}–{edges[index]}"


@dataclass(frozen=True)
class ShapeClass:
    """Input type, layout and the buckets of M, N and K."""

    dtype: str
    layout: str
    m: int
    n: int
    k: int

    @classmethod
    def of(cls, dtype: str, layout: str, m: int, n: int, k: int) -> ShapeClass:
        """The class of an m×n×k product."""
        return cls(dtype, layout, bucket(m, M_EDGES), bucket(n, N_EDGES), bucket(k, K_EDGES))

    @property
    def label(self) -> str:
        """E.g. ``"bfloat16 NN, M ≤ 64, N 4097–16384, K 1025–4096"``."""
        return (
            f"{self.dtype} {self.layout}, M {bucket_label(self.m, M_EDGES)}, N {bucket_label(self.n, N_EDGES)}, "
            f"K {bucket_label(self.k, K_EDGES)}"
        )


class Trial(StrictModel):
    """One candidate on a class's representative shape: its median time (ms, ``None`` where it failed), the split
    it used, and the first line of the error that stopped it."""

    config: Config
    split_k: int | None
    ms: float | None
    error: str | None = None


class TunedClass(StrictModel):
    """One shape class: its representative shape, every candidate's trial, and the fastest (``config``).

    Attributes:
        cublas_ms: cuBLAS's median time on the representative shape in the same run (for scale).
    """

    dtype: str
    layout: Layout
    m_bucket: int = Field(ge=0)
    n_bucket: int = Field(ge=0)
    k_bucket: int = Field(ge=0)
    shape: tuple[int, int, int]
    config: Config
    trials: list[Trial]
    cublas_ms: float | None

    @property
    def shape_class(self) -> ShapeClass:
        """The class this entry is for."""
        return ShapeClass(self.dtype, self.layout, self.m_bucket, self.n_bucket, self.k_bucket)


class GemmTuning(Record):
    """A tuning table of the Triton GEMM: the best configuration by shape class, from one run on one GPU.

    Attributes:
        edges: The bucket edges of M, N and K the run used (``"m"``, ``"n"``, ``"k"``).
        timing: How candidates were timed, in words.
        classes: One entry per tuned class.
    """

    kind: Literal["kernels.gemm-tuning"] = "kernels.gemm-tuning"
    schema_version: Literal[1] = 1
    edges: dict[str, list[int]]
    timing: str
    classes: list[TunedClass]

    def table(self) -> dict[ShapeClass, Config]:
        """Class → configuration."""
        return {c.shape_class: c.config for c in self.classes}


@cache
def committed() -> GemmTuning:
    """The committed tuning table (:data:`TABLE_FILE` under ``gpukb/data/kernels/``)."""
    with resources.as_file(resources.files("gpukb.data") / "kernels" / TABLE_FILE) as path:
        return read(path, expect=GemmTuning)


#: The table in use: the committed one, unless :func:`use_table` set another (``None``: none, rules only).
_ACTIVE: dict[str, dict[ShapeClass, Config] | None] = {}


def use_table(table: dict[ShapeClass, Config] | None) -> None:
    """Use ``table`` instead of the committed one (``None``: no table, :func:`heuristic` only). For the tuning
    run, which measures the table it has just made, and for tests. Plans ``matmul`` made before keep their
    configuration: call :func:`gpukb.kernels.matmul.clear_plans` after."""
    _ACTIVE["table"] = table


def active_table() -> dict[ShapeClass, Config] | None:
    """The table :func:`choose` reads: the committed one (``None`` where the package has none)."""
    if "table" not in _ACTIVE:
        if not (resources.files("gpukb.data") / "kernels" / TABLE_FILE).is_file():
            _ACTIVE["table"] = None
            return None
        record = committed()
        if (
            tuple(record.edges.get("m", ())) != M_EDGES
            or tuple(record.edges.get("n", ())) != N_EDGES
            or tuple(record.edges.get("k", ())) != K_EDGES
        ):
            raise ValueError(f"the committed tuning table was made with bucket edges {record.edges}; the code's differ")
        _ACTIVE["table"] = record.table()
    return _ACTIVE["table"]


def heuristic(dtype: str, m: int, n: int, k: int, sms: int) -> Config:
    """The rule for a class the table lacks.

    M ≤ 64: the split-K kernel with 64-row tiles (the small-M path). A product whose large tiles would leave most
    multiprocessors idle while K is long (fewer tiles than half the multiprocessors, K at least four times the
    larger of M and N): the split-K kernel with 128×128 tiles. Otherwise the persistent TMA kernel, large or small
    tiles by :func:`~gpukb.kernels.configs.pick_by_waves`.
    """
    fp8 = dtype == "float8_e4m3fn"
    bk = 128 if fp8 else 64
    if m <= M_EDGES[0]:
        return Config("splitk", 64, 128, 2 * bk, num_stages=4, num_warps=4)
    large = DEFAULT_CONFIGS.get(dtype, DEFAULT_CONFIGS["bfloat16"])
    tiles = -(-m // large.block_m) * -(-n // large.block_n)
    if 2 * tiles < sms and k >= 4 * max(m, n):
        return Config("splitk", 128, 128, bk, num_stages=4, num_warps=8)
    if fp8 or dtype not in SMALL_CONFIGS:
        return Config("tma", 128, 256, 128, num_stages=4, num_warps=8, epilogue_subtile=True) if fp8 else large
    return pick_by_waves(m, n, large, SMALL_CONFIGS[dtype], sms, SMALL_RATE)


def lookup(dtype: str, layout: str, m: int, n: int, k: int) -> Config | None:
    """The table's configuration for a product: its own class; else the same buckets in another layout; else
    the same for the type that shares its tiles (:data:`SHARES`); ``None`` where the table has none."""
    table = active_table()
    if not table:
        return None
    for name in (dtype, SHARES.get(dtype)):
        if name is None:
            continue
        exact = table.get(ShapeClass.of(name, layout, m, n, k))
        if exact is not None:
            return exact
        for other in ("NN", "NT", "TN", "TT"):
            found = table.get(ShapeClass.of(name, other, m, n, k))
            if found is not None:
                return found
    return None


def choose(dtype: str, layout: str, m: int, n: int, k: int, sms: int) -> Config:
    """The configuration for a product: the table's (:func:`lookup`), else :func:`heuristic`."""
    found = lookup(dtype, layout, m, n, k)
    return found if found is not None else heuristic(dtype, m, n, k, sms)
