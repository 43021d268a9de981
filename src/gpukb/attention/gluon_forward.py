"""A flash-attention forward in Gluon for Hopper: TMA loads, ``wgmma``, and warp specialization.

Gluon (``triton.experimental.gluon``) is Triton's lower-level language: the programmer chooses the layout of every
tensor, allocates shared memory, and issues Hopper's asynchronous instructions by name (``tma``, ``mbarrier``,
``warpgroup_mma``); ``gl.warp_specialize`` splits a program into partitions of warps that run different code. This
module builds the forward pass of FlashAttention in the steps of FlashAttention-3 (Shah et al., 2024,
arXiv:2407.08608), each one a :class:`GluonConfig`:

* ``"plain"``: one partition. Each key block is copied by TMA into shared memory, then ``S = Q Kᵀ`` and
  ``O += P V`` run on the tensor cores with the online softmax between them: load, then compute.
* ``"ws"``: warp-specialized. A producer warp issues the TMA copies of K and V into a ring of ``num_stages``
  shared-memory buffers, each guarded by a "ready" and an "empty" mbarrier; the consumer warps only compute, so
  the copies of later blocks run while the current one is multiplied.
* ``consumers=2``: two consumer warpgroups (64 query rows each) in partitions of their own, sharing the ring:
  while one computes its softmax, the other's matrix products can run, as the warp scheduler finds them.
* ``overlap="qk"``: inside a consumer, ``S_{j+1} = Q K_{j+1}ᵀ`` is issued asynchronously before the softmax of
  block ``j``, so the exponentials run while the tensor cores work (FA3's intra-warpgroup overlap);
  ``"qk-pv"`` leaves ``P V`` in flight too, which ptxas answers by serializing the wgmmas.
* ``pingpong=True``: the two consumers take turns on the tensor cores, handing the turn over through mbarriers, so
  that one's softmax runs while the other's products do (FA3's inter-warpgroup ping-pong, scheduled explicitly).
* ``persistent=True``: the grid is one program per SM (at most); each walks over tiles, pairs of query blocks of
  one head (a long one and a short one under a causal mask, see :func:`persistent_schedule`), with one ring of K/V
  buffers and two Q buffers for all of them, so the next tile's copies and its first ``Q Kᵀ`` run under the
  current tile's last block and store (what cuDNN's forward does: its grid is the SM count).

The inputs and the semantics are those of :func:`gpukb.attention.kernel.flash_attention` (its checks are reused):
SDPA's layout, fp16 or bf16, GQA, causal masks aligned top-left or bottom-right. Head dims 64 and 128. The kernel
is a forward pass; it can also write each row's log-sum-exp, which is what the Triton kernel's backward pass
rebuilds P from, so :func:`gluon_attention` with inputs that need a gradient trains: Gluon forward, Triton
backward.

Gluon kernels do not run under Triton's interpreter (``TRITON_INTERPRET=1``): the kernel needs a GPU of compute
capability 9.0. What can be checked without one (the arguments, the configurations, the key-block counts and
masks the kernel computes, see :func:`key_blocks`) is plain Python here and is tested on the CPU.
"""

# Triton's convention, kept here: upper-case names for sizes and compile-time constants inside kernels.
# ruff: noqa: N803, N806

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_init,
    warpgroup_mma_wait,
)

from gpukb.arguments import choice, flag, given, integer, real
from gpukb.attention.kernel import _FLOAT32_MAX, ALIGNMENTS, LOG2_E, _check, _offset
from gpukb.environment import triton_interpreting

__all__ = [
    "DEFAULT_GLUON_CONFIG",
    "GLUON_HEAD_DIMS",
    "OVERLAPS",
    "STEPS",
    "VARIANTS",
    "GluonConfig",
    "gluon_attention",
    "gluon_refusal",
    "key_blocks",
    "persistent_schedule",
    "persistent_units",
]

#: Head dimensions the Gluon kernel takes.
GLUON_HEAD_DIMS = (64, 128)
#: ``"plain"``: one partition that loads, then computes; ``"ws"``: a TMA producer warp and consumer warpgroups.
VARIANTS = ("plain", "ws")
#: What a consumer overlaps with its softmax: nothing, the next block's ``Q Kᵀ``, or that and its own ``P V``.
OVERLAPS = ("none", "qk", "qk-pv")
#: Registers per thread of the whole program when warp-specialized: 12 warps (8 consumer warps and the producer's
#: warpgroup) × 32 threads × 168 = 64,512 of the SM's 65,536 registers.
_MAX_REGISTERS = 168
#: Registers per thread of the producer warp (the least ``setmaxnreg`` allows) and of a second consumer warpgroup.
_PRODUCER_REGISTERS = gl.constexpr(24)
_CONSUMER_REGISTERS = gl.constexpr(240)


@dataclass(frozen=True)
class GluonConfig:
    """How the Gluon kernel is built.

    Attributes:
        variant: One of :data:`VARIANTS`.
        block_n: Keys per step (64 or 128).
        num_stages: Shared-memory buffers in the ring of K and V blocks (``"ws"``; ``"plain"`` has one).
        consumers: Consumer warpgroups per program: 1 (8 warps on 128 query rows) or 2 (two partitions of
            4 warps on 64 rows each); ``"plain"`` takes 1.
        overlap: One of :data:`OVERLAPS` (``"ws"`` only): ``"qk"`` issues the next block's ``Q Kᵀ`` before the
            current block's softmax; ``"qk-pv"`` also leaves each ``P V`` in flight into the next step.
        pingpong: The two consumers take turns on the tensor cores (mbarriers hand the turn over), so that one's
            softmax runs while the other's products do (``consumers=2``, not with ``overlap``).
        persistent: One program per SM walks over the tiles (pairs of query blocks of a head, long with short),
            carrying the ring from tile to tile; Q is double-buffered and a tile's last block issues the next
            tile's first ``Q Kᵀ`` (``consumers=2``, ``overlap="qk"``).
    """

    variant: str = "ws"
    block_n: int = 128
    num_stages: int = 2
    consumers: int = 1
    overlap: str = "none"
    pingpong: bool = False
    persistent: bool = False

    def __post_init__(self) -> None:
        choice("variant", self.variant, VARIANTS)
        if integer("block_n", self.block_n) not in (64, 128):  # an int: 64.0 would reach the kernel as a float
            raise ValueError(f"block_n must be 64 or 128; got {self.block_n!r}")
        integer("num_stages", self.num_stages, minimum=1, maximum=4)
        integer("consumers", self.consumers, minimum=1, maximum=2)
        choice("overlap", self.overlap, OVERLAPS)
        flag("pingpong", self.pingpong)
        flag("persistent", self.persistent)
        if self.persistent and (self.variant != "ws" or self.consumers != 2 or self.overlap != "qk"):
            raise ValueError(
                "the persistent kernel is the two-consumer overlapped one: it needs variant='ws', consumers=2 and "
                f"overlap='qk'; got variant={self.variant!r}, consumers={self.consumers}, overlap={self.overlap!r}"
            )
        if self.pingpong and (self.consumers != 2 or self.overlap != "none"):
            raise ValueError(
                "pingpong hands the tensor cores between two consumers: it needs consumers=2 and overlap='none'; "
                f"got consumers={self.consumers}, overlap={self.overlap!r}"
            )
        if self.variant == "plain" and (self.consumers != 1 or self.overlap != "none" or self.num_stages != 1):
            raise ValueError(
                "the 'plain' variant has one partition and one buffer: consumers=1, overlap='none', num_stages=1; "
                f"got consumers={self.consumers}, overlap={self.overlap!r}, num_stages={self.num_stages}"
            )

    @property
    def block_m(self) -> int:
        """Query rows per program: 128 (8 consumer warps, or two warpgroups of 4)."""
        return 128

    @property
    def label(self) -> str:
        """``"ws 128 s2 c2 overlap"``: variant, key block, stages, consumers, overlap."""
        if self.variant == "plain":
            return f"plain {self.block_n}"
        tail = f" overlap {self.overlap}" if self.overlap != "none" else " pingpong" if self.pingpong else ""
        tail += " persistent" if self.persistent else ""
        return f"ws {self.block_n} s{self.num_stages} c{self.consumers}{tail}"


#: The steps of the page, in order: what each adds to the one before.
STEPS = {
    "plain": GluonConfig("plain", 128, 1),
    "ws": GluonConfig("ws", 128, 2),
    "ws-2wg": GluonConfig("ws", 128, 2, consumers=2),
    "ws-2wg-overlap-qk-pv": GluonConfig("ws", 128, 2, consumers=2, overlap="qk-pv"),
    "ws-2wg-overlap": GluonConfig("ws", 128, 2, consumers=2, overlap="qk"),
    "ws-pingpong": GluonConfig("ws", 128, 2, consumers=2, pingpong=True),
    "persistent": GluonConfig("ws", 128, 2, consumers=2, overlap="qk", persistent=True),
}
#: The configuration used when none is given: of the steps timed on every shape of the recorded run on the H100
#: (``attention/gluon-forward-persistent-h100``), the one with the best geometric mean of its rate over cuDNN's
#: (a test holds the two together).
DEFAULT_GLUON_CONFIG = STEPS["persistent"]


def key_blocks(q_start: int, q_rows: int, kv_len: int, offset: int, block_n: int, causal: bool) -> tuple[int, int]:
    """``(n_total, n_full)``: how many key blocks a program of query rows ``q_start .. q_start + q_rows - 1``
    visits, and how many of the first need no mask (every key in range and visible to every row).

    The kernel computes the same numbers (``_key_blocks``). Query ``i`` sees key ``j`` when ``j < kv_len`` and,
    under a causal mask, ``j <= i + offset``. At least one block is visited, so that the pipeline always has a
    block in flight; a program whose rows see no key masks all of it and writes zeros.

    Raises:
        TypeError: For a count that is not an int (a bool is not), or a ``causal`` that is not a bool.
        ValueError: For ``q_start`` or ``kv_len`` below 0, ``q_rows`` or ``block_n`` below 1.
    """
    q_start, kv_len = integer("q_start", q_start, minimum=0), integer("kv_len", kv_len, minimum=0)
    q_rows, block_n = integer("q_rows", q_rows, minimum=1), integer("block_n", block_n, minimum=1)
    offset, causal = integer("offset", offset), flag("causal", causal)  # offset < 0: more queries than keys
    if causal:
        hi = min(q_start + q_rows + offset, kv_len)
        full = min(q_start + offset + 1, kv_len)
    else:
        hi = full = kv_len
    n_total = max(-(-hi // block_n), 1)
    n_full = min(max(full, 0) // block_n, n_total)
    return n_total, n_full


def persistent_units(heads_total: int, n_mb: int) -> int:
    """How many work units the persistent kernel walks: ``ceil(n_mb / 2)`` pairs of query blocks per head."""
    heads_total = integer("heads_total", heads_total, minimum=1)
    n_mb = integer("n_mb", n_mb, minimum=1)
    return heads_total * ((n_mb + 1) // 2)


#: The most tiles :func:`persistent_schedule` lists (32 × 32 heads of 16k tokens in 128-row blocks are 131,072).
MAX_SCHEDULED_TILES = 2**22


def persistent_schedule(heads_total: int, n_mb: int, programs: int) -> list[list[tuple[int, int]]]:
    """The tiles ``(bh, query block)`` each program of the persistent kernel takes, in order: the kernel's
    ``_unit`` and ``_unit_tiles`` in plain Python, for tests and for the page's balance figures.

    Program ``p`` takes units ``p, p + programs, ...``; a unit is the ``k``-th query block from the end of one
    head and the ``k``-th from the start (one block when they coincide).

    Raises:
        TypeError: For a count that is not an int.
        ValueError: For a count below 1, or more than :data:`MAX_SCHEDULED_TILES` tiles in all.
    """
    units = persistent_units(heads_total, n_mb)
    programs = integer("programs", programs, minimum=1)
    if heads_total * n_mb > MAX_SCHEDULED_TILES:  # a list this long would take minutes and gigabytes to build
        raise ValueError(f"persistent_schedule lists at most {MAX_SCHEDULED_TILES:,} tiles; got heads_total × n_mb "
                         f"= {heads_total:,} × {n_mb:,}")  # fmt: skip
    half = (n_mb + 1) // 2
    plan: list[list[tuple[int, int]]] = [[] for _ in range(min(programs, units))]
    for u in range(units):
        bh, k = divmod(u, half)
        tiles = [n_mb - 1 - k] if 2 * k + 1 == n_mb else [n_mb - 1 - k, k]
        plan[u % programs].extend((bh, mb) for mb in tiles)
    return plan


# pragma: no mutate start
# Device code, Gluon kernels and their helpers, jitted below: mutmut's trampolines would replace
# these bodies with code no kernel compiler reads. The host code around them is mutated.
@gluon.constexpr_function
def _mma_layout(n, warps):
    """The wgmma accumulator layout: warps stacked along M (16 rows each), one instruction N wide."""
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[warps, 1], instr_shape=[16, n, 16])


@gluon.constexpr_function
def _store_layout(head_dim, warps):
    """A layout for the output store: 8 consecutive elements (16 bytes) per thread."""
    across = head_dim // 8
    return gl.BlockedLayout([1, 8], [32 // across, across], [warps, 1], [1, 0])


@gluon.jit
def _key_blocks(q_start, kv_len, offset, ROWS: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr):
    if CAUSAL:
        hi = gl.minimum(q_start + ROWS + offset, kv_len)
        full = gl.minimum(q_start + offset + 1, kv_len)
    else:
        hi = kv_len
        full = kv_len
    n_total = gl.maximum(gl.cdiv(hi, BLOCK_N), 1)
    n_full = gl.minimum(gl.maximum(full, 0) // BLOCK_N, n_total)
    return n_total, n_full


@gluon.jit
def _softmax(s, m_i, l_i, acc, qk_scale, q_pos, k_start, kv_len, offset, MASK: gl.constexpr, CAUSAL: gl.constexpr):
    """One step of the online softmax on a tile of scores: returns P (float32), the new running maximum and sum,
    and the accumulator rescaled to the new maximum."""
    s_layout: gl.constexpr = s.type.layout
    o_layout: gl.constexpr = acc.type.layout
    if MASK:
        s = s * qk_scale  # scores in base-2 units: exp2(s) = exp(score · scale)
        BLOCK_N: gl.constexpr = s.shape[1]
        cols = k_start + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
        visible = gl.expand_dims(cols < kv_len, 0)
        if CAUSAL:
            visible = visible & (gl.expand_dims(cols, 0) <= gl.expand_dims(q_pos + offset, 1))
        s = gl.where(visible, s, -float("inf"))
        m_new = gl.maximum(m_i, gl.max(s, 1))
        # a row that has seen no key yet keeps m = -inf; subtract 0 instead, so exp2 gives 0, not NaN
        m_use = gl.where(m_new == -float("inf"), 0.0, m_new)
        p = gl.exp2(s - gl.expand_dims(m_use, 1))
    else:
        # the scale (positive: the host makes it so) folds into one multiply-add per score: exp2(s·c - m)
        m_new = gl.maximum(m_i, gl.max(s, 1) * qk_scale)
        m_use = m_new
        p = gl.exp2(s * qk_scale - gl.expand_dims(m_new, 1))
    alpha = gl.exp2(m_i - m_use)
    l_i = l_i * alpha + gl.sum(p, 1)
    acc = acc * gl.expand_dims(gl.convert_layout(alpha, gl.SliceLayout(1, o_layout)), 1)
    return p, m_new, l_i, acc


@gluon.jit
def _as_operand(p, v_smem, o_layout: gl.constexpr):
    """P rounded to the input type and laid out as wgmma's A operand in registers (no trip through shared memory)."""
    return gl.convert_layout(p.to(v_smem.dtype), gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2))


@gluon.jit
def _store(acc, l_i, m_i, out_ptr, out_base, lse_ptr, row0, q_len, ROWS: gl.constexpr, HEAD_DIM: gl.constexpr,
           WARPS: gl.constexpr, STORE_LSE: gl.constexpr):  # fmt: skip
    """O = acc / l for rows ``row0 .. row0 + ROWS - 1`` (those < q_len); a row that saw no key gets 0. With
    ``STORE_LSE`` also each row's log-sum-exp, base 2, of the scaled scores, ``m + log2(l)`` (+inf for a row that
    saw no key): what the Triton kernel's backward rebuilds P from (``lse_ptr`` points at this head's rows)."""
    if STORE_LSE:
        empty = l_i == 0.0
        lse = gl.where(empty, float("inf"), m_i + gl.log2(gl.where(empty, 1.0, l_i)))
        rows_l = row0 + gl.arange(0, ROWS, layout=l_i.type.layout)
        gl.store(lse_ptr + rows_l, lse, mask=rows_l < q_len)
    o_layout: gl.constexpr = acc.type.layout
    l_o = gl.convert_layout(l_i, gl.SliceLayout(1, o_layout))
    inv = 1.0 / gl.where(l_o == 0.0, 1.0, l_o)
    o = acc * gl.expand_dims(inv, 1)
    layout: gl.constexpr = _store_layout(HEAD_DIM, WARPS)
    o = gl.convert_layout(o.to(out_ptr.dtype.element_ty), layout)
    rows = row0 + gl.arange(0, ROWS, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, HEAD_DIM, layout=gl.SliceLayout(0, layout))
    offsets = gl.expand_dims(rows.to(gl.int64), 1) * HEAD_DIM + gl.expand_dims(cols, 0)
    mask = gl.expand_dims(rows < q_len, 1) & gl.expand_dims(cols < HEAD_DIM, 0)
    gl.store(out_ptr + out_base + offsets, o, mask=mask)


@gluon.jit
def _plain_blocks(j0, j1, q_smem, k_smem, v_smem, bar, m_i, l_i, acc, qk_scale, q_pos, kv_row, kv_len, offset,
                  k_desc, v_desc, MASK: gl.constexpr, CAUSAL: gl.constexpr):  # fmt: skip
    """Key blocks ``j0 .. j1 - 1``, one at a time: copy K and V (TMA), wait, then compute."""
    ROWS: gl.constexpr = acc.shape[0]
    BLOCK_N: gl.constexpr = k_smem.shape[0]
    s_layout: gl.constexpr = _mma_layout(BLOCK_N, gl.num_warps())
    o_layout: gl.constexpr = acc.type.layout
    zero = gl.zeros([ROWS, BLOCK_N], gl.float32, s_layout)
    for j in range(j0, j1):
        gl.thread_barrier()  # every warpgroup is done with the previous block before TMA overwrites it
        mbarrier.expect(bar, k_desc.block_type.nbytes + v_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(k_desc, [kv_row + j * BLOCK_N, 0], bar, k_smem)
        tma.async_copy_global_to_shared(v_desc, [kv_row + j * BLOCK_N, 0], bar, v_smem)
        mbarrier.wait(bar, j & 1)
        s = warpgroup_mma(q_smem, k_smem.permute((1, 0)), zero, use_acc=False)
        p, m_i, l_i, acc = _softmax(s, m_i, l_i, acc, qk_scale, q_pos, j * BLOCK_N, kv_len, offset, MASK, CAUSAL)
        acc = warpgroup_mma(_as_operand(p, v_smem, o_layout), v_smem, acc)
    return m_i, l_i, acc


def _forward_plain(q_desc, k_desc, v_desc, out_ptr, lse_ptr, qk_scale, heads, group, q_len, kv_len, offset,
                   HEAD_DIM: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr,
                   STORE_LSE: gl.constexpr):  # fmt: skip
    ROWS: gl.constexpr = q_desc.block_type.shape[0]
    WARPS: gl.constexpr = gl.num_warps()
    s_layout: gl.constexpr = _mma_layout(BLOCK_N, WARPS)
    o_layout: gl.constexpr = _mma_layout(HEAD_DIM, WARPS)
    pid = gl.program_id(0)
    if CAUSAL:  # the longest rows first, so the short ones fill the tail
        pid = gl.num_programs(0) - 1 - pid
    bh = gl.program_id(1)
    kv_row = (bh // heads * (heads // group) + bh % heads // group) * kv_len
    q_start = pid * ROWS
    n_total, n_full = _key_blocks(q_start, kv_len, offset, ROWS, BLOCK_N, CAUSAL)

    q_smem = gl.allocate_shared_memory(q_desc.dtype, q_desc.block_type.shape, q_desc.layout)
    k_smem = gl.allocate_shared_memory(k_desc.dtype, k_desc.block_type.shape, k_desc.layout)
    v_smem = gl.allocate_shared_memory(v_desc.dtype, v_desc.block_type.shape, v_desc.layout)
    q_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(q_bar, count=1)
    mbarrier.init(bar, count=1)
    mbarrier.expect(q_bar, q_desc.block_type.nbytes)
    tma.async_copy_global_to_shared(q_desc, [bh * q_len + q_start, 0], q_bar, q_smem)
    mbarrier.wait(q_bar, 0)

    q_pos = q_start + gl.arange(0, ROWS, layout=gl.SliceLayout(1, s_layout))
    m_i = gl.full([ROWS], -float("inf"), gl.float32, gl.SliceLayout(1, s_layout))
    l_i = gl.zeros([ROWS], gl.float32, gl.SliceLayout(1, s_layout))
    acc = gl.zeros([ROWS, HEAD_DIM], gl.float32, o_layout)
    m_i, l_i, acc = _plain_blocks(0, n_full, q_smem, k_smem, v_smem, bar, m_i, l_i, acc, qk_scale, q_pos, kv_row,
                                  kv_len, offset, k_desc, v_desc, False, CAUSAL)  # fmt: skip
    m_i, l_i, acc = _plain_blocks(n_full, n_total, q_smem, k_smem, v_smem, bar, m_i, l_i, acc, qk_scale, q_pos,
                                  kv_row, kv_len, offset, k_desc, v_desc, True, CAUSAL)  # fmt: skip
    mbarrier.invalidate(q_bar)
    mbarrier.invalidate(bar)
    _store(acc, l_i, m_i, out_ptr, bh.to(gl.int64) * q_len * HEAD_DIM, lse_ptr + bh.to(gl.int64) * q_len, q_start,
           q_len, ROWS, HEAD_DIM, WARPS, STORE_LSE)  # fmt: skip


# --8<-- [start:producer]
@gluon.jit
def _producer(q_desc, k_desc, v_desc, q_bufs, k_bufs, v_bufs, q_bar, k_ready, v_ready, k_empty, v_empty,
              q_row, kv_row, n_total):  # fmt: skip
    """The producer warp: Q once, then K and V block by block into the ring, each copy waiting for its slot to be
    released by every consumer."""
    CONSUMERS: gl.constexpr = q_bufs.shape[0]
    ROWS: gl.constexpr = q_bufs.shape[1]
    STAGES: gl.constexpr = k_bufs.shape[0]
    BLOCK_N: gl.constexpr = k_bufs.shape[1]
    mbarrier.expect(q_bar, CONSUMERS * q_desc.block_type.nbytes)
    for c in gl.static_range(CONSUMERS):
        tma.async_copy_global_to_shared(q_desc, [q_row + c * ROWS, 0], q_bar, q_bufs.index(c))
    for j in range(n_total):
        idx = j % STAGES
        phase = (j // STAGES) & 1
        row = kv_row + j * BLOCK_N
        mbarrier.wait(k_empty.index(idx), phase ^ 1)  # a fresh barrier passes a wait on phase 1
        mbarrier.expect(k_ready.index(idx), k_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(k_desc, [row, 0], k_ready.index(idx), k_bufs.index(idx))
        mbarrier.wait(v_empty.index(idx), phase ^ 1)
        mbarrier.expect(v_ready.index(idx), v_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(v_desc, [row, 0], v_ready.index(idx), v_bufs.index(idx))
    # --8<-- [end:producer]


@gluon.jit
def _consume_blocks(j0, j1, q_smem, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty, m_i, l_i, acc, qk_scale,
                    q_pos, kv_len, offset, MASK: gl.constexpr, CAUSAL: gl.constexpr):  # fmt: skip
    """Key blocks ``j0 .. j1 - 1`` from the ring, each product waited for before the next step."""
    ROWS: gl.constexpr = acc.shape[0]
    STAGES: gl.constexpr = k_bufs.shape[0]
    BLOCK_N: gl.constexpr = k_bufs.shape[1]
    s_layout: gl.constexpr = _mma_layout(BLOCK_N, gl.num_warps())
    o_layout: gl.constexpr = acc.type.layout
    zero = gl.zeros([ROWS, BLOCK_N], gl.float32, s_layout)
    for j in range(j0, j1):
        idx = j % STAGES
        phase = (j // STAGES) & 1
        mbarrier.wait(k_ready.index(idx), phase)
        s = warpgroup_mma(q_smem, k_bufs.index(idx).permute((1, 0)), zero, use_acc=False)
        mbarrier.arrive(k_empty.index(idx), count=1)
        p, m_i, l_i, acc = _softmax(s, m_i, l_i, acc, qk_scale, q_pos, j * BLOCK_N, kv_len, offset, MASK, CAUSAL)
        v_smem = v_bufs.index(idx)
        mbarrier.wait(v_ready.index(idx), phase)
        acc = warpgroup_mma(_as_operand(p, v_smem, o_layout), v_smem, acc)
        mbarrier.arrive(v_empty.index(idx), count=1)
    return m_i, l_i, acc


# --8<-- [start:overlap]
@gluon.jit
def _overlap_blocks(j0, j1, n_total, s, q_bufs, q_idx, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty, m_i,
                    l_i, acc, qk_scale, q_pos, kv_len, offset, base, more, q_next, q_next_bar, q_next_phase,
                    MASK: gl.constexpr, CAUSAL: gl.constexpr, ASYNC_PV: gl.constexpr):  # fmt: skip
    """Key blocks ``j0 .. j1 - 1`` with FA3's intra-warpgroup overlap: ``s`` holds block j's scores on entry;
    block j+1's ``Q Kᵀ`` is issued, asynchronously, before block j's softmax, which runs while it does.

    ``base`` counts the blocks that went through the ring before this tile's first (the persistent kernel runs
    many tiles through one ring). When ``more`` is set, another tile follows: at the last block the product
    issued early is the next tile's first, ``Q' K'_0ᵀ`` with ``q_bufs[q_next]`` (ready once ``q_next_bar``
    completes ``q_next_phase``), so the next tile starts with its scores in hand. Otherwise the last block
    recomputes its own scores instead of branching.

    With ``ASYNC_PV`` block j's ``P V`` is left in flight too, across the loop's back edge, and waited for only
    before the next rescale; ptxas then serializes every wgmma of the kernel (its note C7514, which
    ``bench/attention_gluon.py`` records). Without it ``P V`` is synchronous and nothing is serialized."""
    STAGES: gl.constexpr = k_bufs.shape[0]
    BLOCK_N: gl.constexpr = k_bufs.shape[1]
    ROWS: gl.constexpr = acc.shape[0]
    s_layout: gl.constexpr = _mma_layout(BLOCK_N, gl.num_warps())
    o_layout: gl.constexpr = acc.type.layout
    zero = gl.zeros([ROWS, BLOCK_N], gl.float32, s_layout)
    if ASYNC_PV:
        acc = warpgroup_mma_init(acc)  # the loop carries an accumulator whose product may still be in flight
    for j in range(j0, j1):
        idx = (base + j) % STAGES
        at_end = j + 1 >= n_total
        nxt = base + gl.minimum(j + 1, n_total - 1 + more)  # ring position of the next block
        nidx = nxt % STAGES
        mbarrier.wait(k_ready.index(nidx), (nxt // STAGES) & 1)
        cross = at_end & (more > 0)  # the next block is the next tile's first
        mbarrier.wait(q_next_bar, q_next_phase, pred=cross)
        q_smem = q_bufs.index(q_idx + cross.to(gl.int32) * (q_next - q_idx))
        s_next = warpgroup_mma(q_smem, k_bufs.index(nidx).permute((1, 0)), zero, use_acc=False, is_async=True)
        if ASYNC_PV:
            # in flight: P V of block j-1, then Q Kᵀ of block j+1; wait for the first (groups retire in order)
            acc = warpgroup_mma_wait(1, deps=(acc,))
            mbarrier.arrive(v_empty.index((base + j + STAGES - 1) % STAGES), count=1, pred=j > j0)
        p, m_i, l_i, acc = _softmax(s, m_i, l_i, acc, qk_scale, q_pos, j * BLOCK_N, kv_len, offset, MASK, CAUSAL)
        v_smem = v_bufs.index(idx)
        mbarrier.wait(v_ready.index(idx), ((base + j) // STAGES) & 1)
        if ASYNC_PV:
            acc = warpgroup_mma(_as_operand(p, v_smem, o_layout), v_smem, acc, is_async=True)
            s = warpgroup_mma_wait(1, deps=(s_next,))
        else:
            acc = warpgroup_mma(_as_operand(p, v_smem, o_layout), v_smem, acc)  # waits for both products
            mbarrier.arrive(v_empty.index(idx), count=1)
            s = warpgroup_mma_wait(0, deps=(s_next,))
        mbarrier.arrive(k_empty.index(nidx), count=1, pred=(j + 1 < n_total) | (more > 0))
    if ASYNC_PV:
        acc = warpgroup_mma_wait(0, deps=(acc,))
        # the V slot of the last block of this range is free now
        mbarrier.arrive(v_empty.index((base + j1 + STAGES - 1) % STAGES), count=1, pred=j1 > j0)
    return s, m_i, l_i, acc
    # --8<-- [end:overlap]


@gluon.jit
def _pingpong_blocks(j0, j1, p, q_smem, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty, turn_me, turn_other,
                     FIRST: gl.constexpr, m_i, l_i, acc, qk_scale, q_pos, kv_len, offset, MASK: gl.constexpr,
                     CAUSAL: gl.constexpr):  # fmt: skip
    """Key blocks ``j0 .. j1 - 1`` in FA3's ping-pong: at its turn a consumer runs ``P_{j-1} V_{j-1}`` and
    ``Q K_jᵀ`` on the tensor cores, hands the turn to the other consumer, and computes block j's softmax while the
    other's products run. ``p`` holds ``P_{j-1}`` on entry."""
    ROWS: gl.constexpr = acc.shape[0]
    STAGES: gl.constexpr = k_bufs.shape[0]
    BLOCK_N: gl.constexpr = k_bufs.shape[1]
    s_layout: gl.constexpr = _mma_layout(BLOCK_N, gl.num_warps())
    o_layout: gl.constexpr = acc.type.layout
    zero = gl.zeros([ROWS, BLOCK_N], gl.float32, s_layout)
    for j in range(j0, j1):
        idx = j % STAGES
        prev = (j - 1) % STAGES
        mbarrier.wait(turn_me, (j & 1) ^ FIRST)  # turn j; the first consumer's turn 0 passes at once
        mbarrier.wait(v_ready.index(prev), ((j - 1) // STAGES) & 1)
        acc = warpgroup_mma(p, v_bufs.index(prev), acc)
        mbarrier.arrive(v_empty.index(prev), count=1)
        mbarrier.wait(k_ready.index(idx), (j // STAGES) & 1)
        s = warpgroup_mma(q_smem, k_bufs.index(idx).permute((1, 0)), zero, use_acc=False)
        mbarrier.arrive(k_empty.index(idx), count=1)
        mbarrier.arrive(turn_other, count=1)
        p, m_i, l_i, acc = _softmax(s, m_i, l_i, acc, qk_scale, q_pos, j * BLOCK_N, kv_len, offset, MASK, CAUSAL)
        p = _as_operand(p, v_bufs, o_layout)
    return p, m_i, l_i, acc


@gluon.jit
def _consumer(q_bufs, k_bufs, v_bufs, q_bar, k_ready, v_ready, k_empty, v_empty, turns, out_ptr, lse_ptr, qk_scale,
              q_start, out_base, q_len, kv_len, offset, n_total, n_full, PART: gl.constexpr, HEAD_DIM: gl.constexpr,
              CAUSAL: gl.constexpr, OVERLAP: gl.constexpr, PINGPONG: gl.constexpr,
              STORE_LSE: gl.constexpr):  # fmt: skip
    """A consumer partition: rows ``q_start + PART · ROWS ..`` of the program's query block."""
    WARPS: gl.constexpr = gl.num_warps()
    ROWS: gl.constexpr = q_bufs.shape[1]
    STAGES: gl.constexpr = k_bufs.shape[0]
    BLOCK_N: gl.constexpr = k_bufs.shape[1]
    s_layout: gl.constexpr = _mma_layout(BLOCK_N, WARPS)
    o_layout: gl.constexpr = _mma_layout(HEAD_DIM, WARPS)
    row0 = q_start + PART * ROWS
    q_pos = row0 + gl.arange(0, ROWS, layout=gl.SliceLayout(1, s_layout))
    m_i = gl.full([ROWS], -float("inf"), gl.float32, gl.SliceLayout(1, s_layout))
    l_i = gl.zeros([ROWS], gl.float32, gl.SliceLayout(1, s_layout))
    acc = gl.zeros([ROWS, HEAD_DIM], gl.float32, o_layout)
    q_smem = q_bufs.index(PART)
    mbarrier.wait(q_bar, 0)
    if PINGPONG:
        turn_me = turns.index(PART)
        turn_other = turns.index(1 - PART)
        FIRST: gl.constexpr = 1 - PART
        mbarrier.wait(turn_me, FIRST)  # turn 0: Q K_0ᵀ
        mbarrier.wait(k_ready.index(0), 0)
        s = warpgroup_mma(q_smem, k_bufs.index(0).permute((1, 0)), gl.zeros([ROWS, BLOCK_N], gl.float32, s_layout),
                          use_acc=False)  # fmt: skip
        mbarrier.arrive(k_empty.index(0), count=1)
        mbarrier.arrive(turn_other, count=1)
        # block 0 takes the masked path whatever it needs (one block of n_total: cheap, and always right)
        p, m_i, l_i, acc = _softmax(s, m_i, l_i, acc, qk_scale, q_pos, 0, kv_len, offset, True, CAUSAL)
        p = _as_operand(p, v_bufs, o_layout)
        p, m_i, l_i, acc = _pingpong_blocks(1, n_full, p, q_smem, k_bufs, v_bufs, k_ready, v_ready, k_empty,
                                            v_empty, turn_me, turn_other, FIRST, m_i, l_i, acc, qk_scale, q_pos,
                                            kv_len, offset, False, CAUSAL)  # fmt: skip
        p, m_i, l_i, acc = _pingpong_blocks(gl.maximum(n_full, 1), n_total, p, q_smem, k_bufs, v_bufs, k_ready,
                                            v_ready, k_empty, v_empty, turn_me, turn_other, FIRST, m_i, l_i, acc,
                                            qk_scale, q_pos, kv_len, offset, True, CAUSAL)  # fmt: skip
        last = (n_total - 1) % STAGES
        mbarrier.wait(turn_me, (n_total & 1) ^ FIRST)  # turn n_total: the last P V
        mbarrier.wait(v_ready.index(last), ((n_total - 1) // STAGES) & 1)
        acc = warpgroup_mma(p, v_bufs.index(last), acc)
        mbarrier.arrive(v_empty.index(last), count=1)
        mbarrier.arrive(turn_other, count=1)
    elif OVERLAP > 0:
        mbarrier.wait(k_ready.index(0), 0)
        s = warpgroup_mma(q_smem, k_bufs.index(0).permute((1, 0)), gl.zeros([ROWS, BLOCK_N], gl.float32, s_layout),
                          use_acc=False)  # fmt: skip
        mbarrier.arrive(k_empty.index(0), count=1)
        # one tile: the ring starts at 0, no tile follows (q_bar stands in for the next tile's, never waited on)
        s, m_i, l_i, acc = _overlap_blocks(0, n_full, n_total, s, q_bufs, PART, k_bufs, v_bufs, k_ready, v_ready,
                                           k_empty, v_empty, m_i, l_i, acc, qk_scale, q_pos, kv_len, offset, 0, 0,
                                           PART, q_bar, 0, False, CAUSAL, OVERLAP == 2)  # fmt: skip
        s, m_i, l_i, acc = _overlap_blocks(n_full, n_total, n_total, s, q_bufs, PART, k_bufs, v_bufs, k_ready,
                                           v_ready, k_empty, v_empty, m_i, l_i, acc, qk_scale, q_pos, kv_len, offset,
                                           0, 0, PART, q_bar, 0, True, CAUSAL, OVERLAP == 2)  # fmt: skip
    else:
        m_i, l_i, acc = _consume_blocks(0, n_full, q_smem, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty, m_i,
                                        l_i, acc, qk_scale, q_pos, kv_len, offset, False, CAUSAL)  # fmt: skip
        m_i, l_i, acc = _consume_blocks(n_full, n_total, q_smem, k_bufs, v_bufs, k_ready, v_ready, k_empty, v_empty,
                                        m_i, l_i, acc, qk_scale, q_pos, kv_len, offset, True, CAUSAL)  # fmt: skip
    _store(acc, l_i, m_i, out_ptr, out_base, lse_ptr, row0, q_len, ROWS, HEAD_DIM, WARPS, STORE_LSE)


# --8<-- [start:ws]
def _forward_ws(q_desc, k_desc, v_desc, out_ptr, lse_ptr, qk_scale, heads, group, q_len, kv_len, offset,
                HEAD_DIM: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr, CONSUMERS: gl.constexpr,
                CAUSAL: gl.constexpr, OVERLAP: gl.constexpr, PINGPONG: gl.constexpr,
                STORE_LSE: gl.constexpr):  # fmt: skip
    ROWS: gl.constexpr = q_desc.block_type.shape[0]  # rows per consumer
    pid = gl.program_id(0)
    if CAUSAL:
        pid = gl.num_programs(0) - 1 - pid
    bh = gl.program_id(1)
    kv_row = (bh // heads * (heads // group) + bh % heads // group) * kv_len
    q_start = pid * (CONSUMERS * ROWS)
    n_total, n_full = _key_blocks(q_start, kv_len, offset, CONSUMERS * ROWS, BLOCK_N, CAUSAL)

    # (list concatenation: Gluon's code generator takes no starred expressions)
    q_bufs = gl.allocate_shared_memory(q_desc.dtype, [CONSUMERS] + q_desc.block_type.shape, q_desc.layout)  # noqa: RUF005
    k_bufs = gl.allocate_shared_memory(k_desc.dtype, [STAGES] + k_desc.block_type.shape, k_desc.layout)  # noqa: RUF005
    v_bufs = gl.allocate_shared_memory(v_desc.dtype, [STAGES] + v_desc.block_type.shape, v_desc.layout)  # noqa: RUF005
    q_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    k_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    k_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    turns = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())  # whose turn on the tensor cores
    mbarrier.init(q_bar, count=1)
    mbarrier.init(turns.index(0), count=1)
    mbarrier.init(turns.index(1), count=1)
    for i in gl.static_range(STAGES):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)
        mbarrier.init(k_empty.index(i), count=CONSUMERS)  # a slot is free once every consumer released it
        mbarrier.init(v_empty.index(i), count=CONSUMERS)

    out_base = bh.to(gl.int64) * q_len * HEAD_DIM
    lse_ptr = lse_ptr + bh.to(gl.int64) * q_len  # this head's rows
    # The tuples are written in the call: Gluon takes each partition as a (function, arguments) literal.
    if CONSUMERS == 1:
        gl.warp_specialize([
            (_consumer, (q_bufs, k_bufs, v_bufs, q_bar, k_ready, v_ready, k_empty, v_empty, turns, out_ptr, lse_ptr,
                         qk_scale, q_start, out_base, q_len, kv_len, offset, n_total, n_full, 0, HEAD_DIM, CAUSAL,
                         OVERLAP, PINGPONG, STORE_LSE)),
            (_producer, (q_desc, k_desc, v_desc, q_bufs, k_bufs, v_bufs, q_bar, k_ready, v_ready, k_empty, v_empty,
                         bh * q_len + q_start, kv_row, n_total)),
        ], [1], [_PRODUCER_REGISTERS])  # fmt: skip
    else:
        gl.warp_specialize([
            (_consumer, (q_bufs, k_bufs, v_bufs, q_bar, k_ready, v_ready, k_empty, v_empty, turns, out_ptr, lse_ptr,
                         qk_scale, q_start, out_base, q_len, kv_len, offset, n_total, n_full, 0, HEAD_DIM, CAUSAL,
                         OVERLAP, PINGPONG, STORE_LSE)),
            (_consumer, (q_bufs, k_bufs, v_bufs, q_bar, k_ready, v_ready, k_empty, v_empty, turns, out_ptr, lse_ptr,
                         qk_scale, q_start, out_base, q_len, kv_len, offset, n_total, n_full, 1, HEAD_DIM, CAUSAL,
                         OVERLAP, PINGPONG, STORE_LSE)),
            (_producer, (q_desc, k_desc, v_desc, q_bufs, k_bufs, v_bufs, q_bar, k_ready, v_ready, k_empty, v_empty,
                         bh * q_len + q_start, kv_row, n_total)),
        ], [4, 1], [_CONSUMER_REGISTERS, _PRODUCER_REGISTERS])  # fmt: skip
    # --8<-- [end:ws]


@gluon.jit
def _unit(u, n_mb, i):
    """The ``i``-th tile (0 or 1) of work unit ``u`` of the persistent schedule: ``(bh, query block)``.

    A unit is a pair of query blocks of one head, the ``k``-th from the end and the ``k``-th from the start, so
    that under a causal mask every unit holds about the same number of key blocks (the long one first); with an
    odd number of query blocks the middle one is a unit alone. Consecutive units share a head, so the programs
    running at one time read the keys and values of a few heads, which stay in L2."""
    half = (n_mb + 1) // 2
    k = u % half
    return u // half, n_mb - 1 - k + i * (2 * k + 1 - n_mb)


@gluon.jit
def _unit_tiles(u, n_mb):
    """How many tiles unit ``u`` holds: 2, or 1 for the middle query block of an odd count."""
    k = u % ((n_mb + 1) // 2)
    return 2 - (2 * k + 1 == n_mb).to(gl.int32)


# --8<-- [start:persistent]
@gluon.jit
def _producer_persistent(q_desc, k_desc, v_desc, q_bufs, k_bufs, v_bufs, q_ready, q_empty, k_ready, v_ready,
                         k_empty, v_empty, heads, group, q_len, kv_len, offset, n_mb, n_units,
                         CAUSAL: gl.constexpr):  # fmt: skip
    """The producer of the persistent kernel: for each tile of this program, its Q into one of two Q slots (once
    the consumers released the tile before last there), then its K and V blocks through the one ring."""
    CONSUMERS: gl.constexpr = 2
    ROWS: gl.constexpr = q_bufs.shape[1]
    STAGES: gl.constexpr = k_bufs.shape[0]
    BLOCK_N: gl.constexpr = k_bufs.shape[1]
    c = 0  # blocks through the ring so far
    it = 0  # tiles so far
    for u in range(gl.program_id(0), n_units, gl.num_programs(0)):
        for i in range(_unit_tiles(u, n_mb)):
            bh, mb = _unit(u, n_mb, i)
            q_start = mb * (CONSUMERS * ROWS)
            kv_row = (bh // heads * (heads // group) + bh % heads // group) * kv_len
            n_total, _n_full = _key_blocks(q_start, kv_len, offset, CONSUMERS * ROWS, BLOCK_N, CAUSAL)
            slot = it % 2
            mbarrier.wait(q_empty.index(slot), ((it // 2) & 1) ^ 1)
            mbarrier.expect(q_ready.index(slot), CONSUMERS * q_desc.block_type.nbytes)
            for p in gl.static_range(CONSUMERS):
                tma.async_copy_global_to_shared(q_desc, [bh * q_len + q_start + p * ROWS, 0], q_ready.index(slot),
                                                q_bufs.index(slot * CONSUMERS + p))  # fmt: skip
            for j in range(n_total):
                idx = c % STAGES
                phase = (c // STAGES) & 1
                row = kv_row + j * BLOCK_N
                mbarrier.wait(k_empty.index(idx), phase ^ 1)
                mbarrier.expect(k_ready.index(idx), k_desc.block_type.nbytes)
                tma.async_copy_global_to_shared(k_desc, [row, 0], k_ready.index(idx), k_bufs.index(idx))
                mbarrier.wait(v_empty.index(idx), phase ^ 1)
                mbarrier.expect(v_ready.index(idx), v_desc.block_type.nbytes)
                tma.async_copy_global_to_shared(v_desc, [row, 0], v_ready.index(idx), v_bufs.index(idx))
                c += 1
            it += 1


@gluon.jit
def _consumer_persistent(q_bufs, k_bufs, v_bufs, q_ready, q_empty, k_ready, v_ready, k_empty, v_empty, out_ptr,
                         lse_ptr, qk_scale, heads, q_len, kv_len, offset, n_mb, n_units, PART: gl.constexpr,
                         HEAD_DIM: gl.constexpr, CAUSAL: gl.constexpr, STORE_LSE: gl.constexpr):  # fmt: skip
    """A consumer of the persistent kernel: its rows of each tile of this program, with the overlap of
    ``"qk"``; the last block of a tile issues the next tile's first ``Q Kᵀ``, so no tile starts cold."""
    CONSUMERS: gl.constexpr = 2
    WARPS: gl.constexpr = gl.num_warps()
    ROWS: gl.constexpr = q_bufs.shape[1]
    BLOCK_N: gl.constexpr = k_bufs.shape[1]
    s_layout: gl.constexpr = _mma_layout(BLOCK_N, WARPS)
    o_layout: gl.constexpr = _mma_layout(HEAD_DIM, WARPS)
    pid = gl.program_id(0)
    step = gl.num_programs(0)
    # the first tile's first scores (the grid never has a program without a unit)
    mbarrier.wait(q_ready.index(0), 0)
    mbarrier.wait(k_ready.index(0), 0)
    s = warpgroup_mma(q_bufs.index(PART), k_bufs.index(0).permute((1, 0)),
                      gl.zeros([ROWS, BLOCK_N], gl.float32, s_layout), use_acc=False)  # fmt: skip
    mbarrier.arrive(k_empty.index(0), count=1)
    c = 0
    it = 0
    for u in range(pid, n_units, step):
        count = _unit_tiles(u, n_mb)
        for i in range(count):
            bh, mb = _unit(u, n_mb, i)
            q_start = mb * (CONSUMERS * ROWS)
            n_total, n_full = _key_blocks(q_start, kv_len, offset, CONSUMERS * ROWS, BLOCK_N, CAUSAL)
            more = ((u + step < n_units) | (i + 1 < count)).to(gl.int32)  # another tile follows in this program
            slot = it % 2
            nslot = 1 - slot
            row0 = q_start + PART * ROWS
            q_pos = row0 + gl.arange(0, ROWS, layout=gl.SliceLayout(1, s_layout))
            m_i = gl.full([ROWS], -float("inf"), gl.float32, gl.SliceLayout(1, s_layout))
            l_i = gl.zeros([ROWS], gl.float32, gl.SliceLayout(1, s_layout))
            acc = gl.zeros([ROWS, HEAD_DIM], gl.float32, o_layout)
            q_idx = slot * CONSUMERS + PART
            q_next = nslot * CONSUMERS + PART
            q_next_phase = ((it + 1) // 2) & 1
            s, m_i, l_i, acc = _overlap_blocks(0, n_full, n_total, s, q_bufs, q_idx, k_bufs, v_bufs, k_ready,
                                               v_ready, k_empty, v_empty, m_i, l_i, acc, qk_scale, q_pos, kv_len,
                                               offset, c, more, q_next, q_ready.index(nslot), q_next_phase, False,
                                               CAUSAL, False)  # fmt: skip
            s, m_i, l_i, acc = _overlap_blocks(n_full, n_total, n_total, s, q_bufs, q_idx, k_bufs, v_bufs, k_ready,
                                               v_ready, k_empty, v_empty, m_i, l_i, acc, qk_scale, q_pos, kv_len,
                                               offset, c, more, q_next, q_ready.index(nslot), q_next_phase, True,
                                               CAUSAL, False)  # fmt: skip
            mbarrier.arrive(q_empty.index(slot), count=1)  # every product with this Q is done
            _store(acc, l_i, m_i, out_ptr, bh.to(gl.int64) * q_len * HEAD_DIM, lse_ptr + bh.to(gl.int64) * q_len,
                   row0, q_len, ROWS, HEAD_DIM, WARPS, STORE_LSE)  # fmt: skip
            c += n_total
            it += 1


def _forward_persistent(q_desc, k_desc, v_desc, out_ptr, lse_ptr, qk_scale, heads, group, q_len, kv_len, offset,
                        n_mb, n_units, HEAD_DIM: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr,
                        CAUSAL: gl.constexpr, STORE_LSE: gl.constexpr):  # fmt: skip
    """One program per SM (the grid is at most the SM count), each walking the units ``pid, pid + grid, ...``:
    the producer's loads of the next tile run under the consumers' last blocks and stores of this one."""
    CONSUMERS: gl.constexpr = 2
    q_bufs = gl.allocate_shared_memory(q_desc.dtype, [2 * CONSUMERS] + q_desc.block_type.shape, q_desc.layout)  # noqa: RUF005
    k_bufs = gl.allocate_shared_memory(k_desc.dtype, [STAGES] + k_desc.block_type.shape, k_desc.layout)  # noqa: RUF005
    v_bufs = gl.allocate_shared_memory(v_desc.dtype, [STAGES] + v_desc.block_type.shape, v_desc.layout)  # noqa: RUF005
    q_ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    q_empty = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    k_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    k_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(2):
        mbarrier.init(q_ready.index(i), count=1)
        mbarrier.init(q_empty.index(i), count=CONSUMERS)
    for i in gl.static_range(STAGES):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)
        mbarrier.init(k_empty.index(i), count=CONSUMERS)
        mbarrier.init(v_empty.index(i), count=CONSUMERS)
    gl.warp_specialize([
        (_consumer_persistent, (q_bufs, k_bufs, v_bufs, q_ready, q_empty, k_ready, v_ready, k_empty, v_empty, out_ptr,
                                lse_ptr, qk_scale, heads, q_len, kv_len, offset, n_mb, n_units, 0, HEAD_DIM, CAUSAL,
                                STORE_LSE)),
        (_consumer_persistent, (q_bufs, k_bufs, v_bufs, q_ready, q_empty, k_ready, v_ready, k_empty, v_empty, out_ptr,
                                lse_ptr, qk_scale, heads, q_len, kv_len, offset, n_mb, n_units, 1, HEAD_DIM, CAUSAL,
                                STORE_LSE)),
        (_producer_persistent, (q_desc, k_desc, v_desc, q_bufs, k_bufs, v_bufs, q_ready, q_empty, k_ready, v_ready,
                                k_empty, v_empty, heads, group, q_len, kv_len, offset, n_mb, n_units, CAUSAL)),
    ], [4, 1], [_CONSUMER_REGISTERS, _PRODUCER_REGISTERS])  # fmt: skip
    # --8<-- [end:persistent]


# pragma: no mutate end
_DO_NOT_SPECIALIZE = ["heads", "group", "q_len", "kv_len", "offset", "n_mb", "n_units"]
#: The kernels, jitted once (Gluon has no interpreter mode to switch between).
_KERNELS = {
    "plain": gluon.jit(_forward_plain, do_not_specialize=_DO_NOT_SPECIALIZE[:5]),
    "ws": gluon.jit(_forward_ws, do_not_specialize=_DO_NOT_SPECIALIZE[:5]),
    "persistent": gluon.jit(_forward_persistent, do_not_specialize=_DO_NOT_SPECIALIZE),
}
#: The compiled kernel of the most recent launch (registers, spills, shared memory).
LAST: dict[str, Any] = {}


def _torch() -> Any:
    import torch

    return torch


def gluon_refusal(q: Any) -> str | None:
    """Why the Gluon kernel cannot run on ``q``'s device, or ``None`` when it can.

    Gluon kernels have no interpreter: they need a CUDA GPU of compute capability 9.x (Hopper: ``wgmma`` and
    ``setmaxnreg`` are sm_90a instructions that later architectures do not have).

    Raises:
        TypeError: If ``q`` is not a torch tensor (``None`` or an array raised ``AttributeError``).
    """
    if not isinstance(q, _torch().Tensor):
        raise TypeError(f"q must be a torch tensor; got {given(q)}")
    if triton_interpreting():
        return "Gluon kernels do not run under Triton's interpreter (TRITON_INTERPRET=1); they need a Hopper GPU"
    if q.device.type != "cuda":
        return f"the Gluon kernel needs a CUDA tensor on a Hopper GPU; got a tensor on {q.device}"
    major, minor = _torch().cuda.get_device_capability(q.device)
    if major != 9:
        return f"the Gluon kernel uses Hopper's wgmma (compute capability 9.x); this GPU has {major}.{minor}"
    return None


def gluon_attention(
    q: Any,
    k: Any,
    v: Any,
    *,
    causal: bool = False,
    align: str = "top-left",
    scale: float | None = None,
    config: GluonConfig | None = None,
    return_lse: bool = False,
) -> Any:
    """``softmax(q kᵀ · scale [+ causal mask]) v`` by the Gluon kernel.

    The forward pass is the Gluon kernel's. When an input needs a gradient (and autograd is on), the kernel also
    writes each row's log-sum-exp and the result carries a graph whose backward pass is the Triton kernel's
    (:func:`gpukb.attention.kernel.flash_attention`'s, at its default tiling), which rebuilds P from it.

    Args:
        q: Queries, (batch, heads, q_len, head_dim), float16 or bfloat16, head_dim one of :data:`GLUON_HEAD_DIMS`.
        k: Keys, (batch, kv_heads, kv_len, head_dim); ``kv_heads`` must divide ``heads`` (GQA).
        v: Values, the shape of ``k``.
        causal: Mask the keys after each query's position.
        align: Where the causal diagonal sits when q_len ≠ kv_len (:data:`gpukb.attention.kernel.ALIGNMENTS`).
        scale: Multiplies the scores; ``1 / sqrt(head_dim)`` when omitted.
        config: How the kernel is built; :data:`DEFAULT_GLUON_CONFIG` when omitted.
        return_lse: Also return each row's log-sum-exp, natural log, of the scaled scores (FlashAttention's
            ``softmax_lse``), float32, (batch, heads, q_len); ``+inf`` for a row that sees no key. It carries no
            gradient.

    Returns:
        The output, (batch, heads, q_len, head_dim), of q's element type; with ``return_lse``, ``(output, lse)``.

    Raises:
        TypeError: As :func:`gpukb.attention.kernel.flash_attention` does, for a config that is not a
            :class:`GluonConfig` and a ``return_lse`` that is not a bool.
        ValueError: As :func:`gpukb.attention.kernel.flash_attention` does; for a head dim outside
            :data:`GLUON_HEAD_DIMS`; and where the kernel cannot run (:func:`gluon_refusal`).
    """
    b, h, _hkv, sq, sk, d = _check(q, k, v, where=False)
    if d not in GLUON_HEAD_DIMS:
        raise ValueError(f"the Gluon kernel takes head_dim in {GLUON_HEAD_DIMS}; got {d}")
    causal = flag("causal", causal)
    align = choice("align", align, ALIGNMENTS)
    return_lse = flag("return_lse", return_lse)
    if align != "top-left" and not causal:
        raise ValueError(f"align={align!r} places the causal mask's diagonal; it applies only with causal=True")
    scale = 1.0 / math.sqrt(d) if scale is None else real("scale", scale, minimum=-_FLOAT32_MAX, maximum=_FLOAT32_MAX)
    config = DEFAULT_GLUON_CONFIG if config is None else config
    if not isinstance(config, GluonConfig):
        raise TypeError(f"config must be a GluonConfig; got {type(config).__name__}")
    reason = gluon_refusal(q)
    if reason is not None:
        raise ValueError(reason)
    # pragma: no mutate block
    # GPU only, to the end of the function: past the refusal every input is a CUDA tensor on a Hopper GPU, which the
    # CPU tests cannot make (the GPU tests run it); the empty-input and kv_len checks below sit after that refusal.
    torch = _torch()
    grad = torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad)
    if b * h * sq == 0:
        out = torch.empty((b, h, sq, d), dtype=q.dtype, device=q.device, requires_grad=grad)
        return (out, torch.empty((b, h, sq), dtype=torch.float32, device=q.device)) if return_lse else out
    if sk == 0:
        raise ValueError("kv_len must be positive: a softmax over no keys is undefined")
    offset = _offset(causal, align, sq, sk)
    if grad:
        out, lse2 = _gluon_function().apply(q, k, v, causal, offset, scale, config)
    else:
        out, lse2 = _launch(q, k, v, causal, offset, scale, config, lse=return_lse)
    if not return_lse:
        return out
    # the kernel's log-sum-exp is of the scores in base-2 units (scale · log2 e folded in): back to natural log
    return out, lse2.detach() * math.log(2.0)


# pragma: no mutate block
# GPU only, to the end of the module (the Gluon kernel has no interpreter; these launch it on CUDA tensors): the
# CPU tests cannot reach them and the GPU tests do, so they stay out of the CPU mutation run.
_FUNCTION: list[Any] = []


def _gluon_function() -> Any:
    """The ``torch.autograd.Function`` pairing the Gluon forward (which writes the base-2 log-sum-exp) with the
    Triton kernel's backward; built on first use, so that importing this module does not import torch."""
    if _FUNCTION:
        return _FUNCTION[0]
    torch = _torch()
    from gpukb.attention.kernel import _backward_launch, default_backward_config

    class GluonAttentionFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, q, k, v, causal, offset, scale, config):
            q, k, v = (t.contiguous() for t in (q, k, v))
            out, lse = _launch(q, k, v, causal, offset, scale, config, lse=True)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.args = (causal, offset, scale, default_backward_config(q.shape[-1]))
            ctx.mark_non_differentiable(lse)
            return out, lse

        @staticmethod
        def backward(ctx: Any, d_out, _d_lse):
            q, k, v, out, lse = ctx.saved_tensors
            dq, dk, dv = _backward_launch(q, k, v, out, lse, d_out.contiguous(), *ctx.args)
            return dq, dk, dv, None, None, None, None

    _FUNCTION.append(GluonAttentionFunction)
    return GluonAttentionFunction


def _launch(
    q: Any, k: Any, v: Any, causal: bool, offset: int, scale: float, config: GluonConfig, lse: bool = False
) -> tuple[Any, Any]:
    """Launch the kernel on checked CUDA inputs; the 2-D views a TMA descriptor needs are made contiguous.
    Returns the output and, with ``lse``, each row's base-2 log-sum-exp (else ``None``)."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    torch = _torch()
    b, h, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    q, k, v = (t.contiguous() for t in (q, k, v))
    out = torch.empty((b, h, sq, d), dtype=q.dtype, device=q.device)
    lse_out = torch.empty((b, h, sq), dtype=torch.float32, device=q.device) if lse else None
    element = gl.float16 if q.dtype == torch.float16 else gl.bfloat16
    rows = config.block_m // config.consumers  # query rows per consumer warpgroup(s)

    def desc(t: Any, block: int) -> Any:
        flat = t.view(-1, d)  # (batch · heads · length, head_dim)
        layout = gl.NVMMASharedLayout.get_default_for([block, d], element)
        return TensorDescriptor(flat, list(flat.shape), list(flat.stride()), [block, d], layout)

    if scale < 0:  # the kernel folds a positive scale into exp2's argument; q·(-k)·|scale| = q·k·scale
        k, scale = -k, -scale
    grid = (triton.cdiv(sq, config.block_m), b * h)
    args = (desc(q, rows), desc(k, config.block_n), desc(v, config.block_n), out,
            out if lse_out is None else lse_out,  # never written without STORE_LSE
            scale * LOG2_E, h, h // hkv, sq, sk, offset)  # fmt: skip
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Conversion of an array with ndim > 0", DeprecationWarning)
        if config.persistent:
            n_mb = grid[0]
            n_units = persistent_units(b * h, n_mb)
            sms = torch.cuda.get_device_properties(q.device).multi_processor_count
            LAST["kernel"] = _KERNELS["persistent"][(min(sms, n_units),)](
                *args, n_mb, n_units, HEAD_DIM=d, BLOCK_N=config.block_n, STAGES=config.num_stages, CAUSAL=causal,
                STORE_LSE=lse, num_warps=4, maxnreg=_MAX_REGISTERS,
            )  # fmt: skip
        elif config.variant == "plain":
            LAST["kernel"] = _KERNELS["plain"][grid](*args, HEAD_DIM=d, BLOCK_N=config.block_n, CAUSAL=causal,
                                                     STORE_LSE=lse, num_warps=8)  # fmt: skip
        else:
            LAST["kernel"] = _KERNELS["ws"][grid](
                *args, HEAD_DIM=d, BLOCK_N=config.block_n, STAGES=config.num_stages, CONSUMERS=config.consumers,
                CAUSAL=causal, OVERLAP=OVERLAPS.index(config.overlap), PINGPONG=config.pingpong, STORE_LSE=lse,
                num_warps=8 // config.consumers, maxnreg=_MAX_REGISTERS,
            )  # fmt: skip
    return out, lse_out
