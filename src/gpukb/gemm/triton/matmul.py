"""A Triton matrix product, ``C = alpha * (A @ B)``, for fp16, bf16 and fp32 inputs, and fp8 (E4M3) on Hopper.

Three kernels, the first two as in Triton's own tutorials:

* :func:`blocked_kernel` (``python/tutorials/03-matrix-multiplication.py``): one program per output tile,
  tiles visited in *grouped* order so that programs running together share rows of A and columns of B in L2,
  a K loop of masked pointer loads feeding ``tl.dot``. It takes any strides and runs everywhere, also on the
  CPU under ``TRITON_INTERPRET=1``.
* :func:`tma_kernel` (``python/tutorials/09-persistent-matmul.py``): a *persistent* kernel (one program per
  multiprocessor, each walking many tiles) whose tiles are moved by the Hopper tensor memory accelerator (TMA)
  through tensor descriptors, so that no thread computes an address or a mask. On sm_90 Triton lowers its
  ``tl.dot`` to warpgroup MMA (``wgmma``) instructions and pipelines the K loop ``num_stages`` deep. A
  configuration may ask for warp specialization (``tl.range(..., warp_specialize=True)``, with the descriptors
  built on the device); with triton 3.6 on an H100 the compiled IR of those configurations held no
  warp-specialized partition (``compiled_summary`` reports it), so they measure the device-side descriptors.
* :func:`splitk_kernel`: one program per output tile *and* K slice (TMA loads, plain masked stores), for
  products with few output tiles: small M (decode) and long K. When K is split, each slice's float32 partial
  sums go to a workspace and :func:`reduce_kernel` adds them in a fixed order, scales and rounds once; or, with
  ``Config.fused_reduce``, the slice of each tile that finishes last adds them, in the same order (one launch).
  ``Config.swap_ab`` computes each tile as its transpose, ``Bᵀ Aᵀ``.

Which kernel and tiling a product gets comes from a tuning table by shape class (:mod:`gpukb.gemm.triton.tuning`),
measured ahead of time; nothing is timed at call time. Tiny products (fewer than 2^20 multiply-adds) take the
blocked kernel, which needs no descriptors and no copies; empty products (M, N or K of 0) launch nothing.
Operands a tensor descriptor cannot describe (a row stride that is not a multiple of 16 bytes, say) are copied
into 16-byte-aligned buffers first (:func:`staging`), so every layout gets a TMA kernel on Hopper. The first
call of a shape and layout makes a plan; later calls reuse it (see :func:`matmul`).

Accumulation is always float32; the result is rounded once, to the output type, in the epilogue.

The kernels are compiled lazily, at the first call, for the mode Triton is in at that moment (compiled for
the GPU, or interpreted on the CPU when ``TRITON_INTERPRET=1``), so importing this module never decides it.
"""

# Triton's convention, kept here: upper-case names for sizes and compile-time constants inside kernels.
# ruff: noqa: N803, N806

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import triton
import triton.language as tl

from gpukb.arguments import real
from gpukb.cuda import limits
from gpukb.environment import triton_interpreting as interpreting
from gpukb.gemm.triton import tuning
from gpukb.gemm.triton.configs import (
    BLOCKED_CONFIG,
    CANDIDATES,
    DEFAULT_CONFIGS,
    FP8_CANDIDATES,
    FP32_CONFIG,
    INTERPRETER_CONFIG,
    INTERPRETER_FP8_CONFIG,
    SMALL_CONFIGS,
    SMALL_RATE,
    Config,
    block_parts,
    fit_shared_memory,
    pick_by_waves,
    shared_memory_model,
    split_for,
    stream_k_tiles,
    tail_rows,
    waves,
)

#: The largest float32: the kernel multiplies its float32 accumulator by ``alpha``.
FLOAT32_MAX = 3.4028234663852886e38

__all__ = [
    "BLOCKED_CONFIG",
    "CANDIDATES",
    "DEFAULT_CONFIGS",
    "FP8_CANDIDATES",
    "FP32_CONFIG",
    "INTERPRETER_CONFIG",
    "INTERPRETER_FP8_CONFIG",
    "SMALL_CONFIGS",
    "SMALL_RATE",
    "Config",
    "clear_plans",
    "compiled_summary",
    "default_config",
    "layout_code",
    "matmul",
    "pick_by_waves",
    "split_for",
    "staging",
    "stream_k_tiles",
    "tma_refusal",
    "waves",
]

#: Input element types (torch dtype names) and the output types each may be rounded to.
INPUT_DTYPES = ("float16", "bfloat16", "float32", "float8_e4m3fn")
OUTPUT_DTYPES = ("float16", "bfloat16", "float32")

#: Largest element offset the blocked kernel's 32-bit address arithmetic can reach.
MAX_BLOCKED_OFFSET = 2**31 - 1

#: Multiprocessors a persistent grid pretends to have under the interpreter: few enough that each program walks
#: several tiles, which is the part of a persistent kernel worth testing on the CPU.
INTERPRETER_SMS = 3


# pragma: no mutate start
# Device code, jitted at launch by `_jitted` (for the interpreter or the GPU): mutmut's trampolines would replace
# these bodies with code no kernel compiler reads. The host code around them is mutated.
# --8<-- [start:blocked]
def blocked_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, alpha,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    OUT_DTYPE: tl.constexpr, PRECISION: tl.constexpr, UPCAST: tl.constexpr,
):  # fmt: skip
    # Grouped ordering: consecutive programs take GROUP_M tiles down a column of C before moving right, so
    # the A rows and B columns they read are still in L2 when the next program needs them.
    pid = tl.program_id(axis=0)
    num_pid_m = (M + BLOCK_M - 1) // BLOCK_M
    num_pid_n = (N + BLOCK_N - 1) // BLOCK_N
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # Rows past M and columns past N wrap around (their results are never stored), so only K needs a mask.
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn

    acc = tl.full((BLOCK_M, BLOCK_N), 0.0, dtype=tl.float32)
    for k in range(0, (K + BLOCK_K - 1) // BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        if UPCAST:  # the interpreter multiplies bf16 bit patterns as integers; exact products in fp32 instead
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c = (acc * alpha).to(OUT_DTYPE)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))
    # --8<-- [end:blocked]


# --8<-- [start:helpers]
def grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    # Grouped ordering (as in the blocked kernel): GROUP_M tiles down a column of C before moving right.
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (tile_id // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


def load_a(a, offs_am, offs_k, A_ROW_MAJOR: tl.constexpr, UPCAST: tl.constexpr):
    # One K step's tile of A (rows × BLOCK_K, the descriptor's box) through its descriptor. A column-major operand
    # is read as the transpose of a row-major one and transposed back in shared memory; boxes that hang over the
    # edge of a tensor are filled with zeros by the copy engine: no masks.
    if A_ROW_MAJOR:
        tile = a.load([offs_am, offs_k])
    else:
        tile = a.load([offs_k, offs_am]).T
    if UPCAST:  # the interpreter multiplies bf16 bit patterns as integers; exact products in fp32 instead
        tile = tile.to(tl.float32)
    return tile


def load_b(b, offs_k, offs_bn, B_ROW_MAJOR: tl.constexpr, UPCAST: tl.constexpr):
    # One K step's tile of B (BLOCK_K × columns), as load_a.
    if B_ROW_MAJOR:
        tile = b.load([offs_k, offs_bn])
    else:
        tile = b.load([offs_bn, offs_k]).T
    if UPCAST:
        tile = tile.to(tl.float32)
    return tile


def load_k_step(a, b, offs_am, offs_bn, offs_k,
                A_ROW_MAJOR: tl.constexpr, B_ROW_MAJOR: tl.constexpr, UPCAST: tl.constexpr):  # fmt: skip
    # One K step's tiles of A (BLOCK_M × BLOCK_K) and B (BLOCK_K × BLOCK_N) through their descriptors.
    return load_a(a, offs_am, offs_k, A_ROW_MAJOR, UPCAST), load_b(b, offs_k, offs_bn, B_ROW_MAJOR, UPCAST)


def k_loop(a, b, offs_am, offs_bn, k_start, steps,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
           A_ROW_MAJOR: tl.constexpr, B_ROW_MAJOR: tl.constexpr, UPCAST: tl.constexpr,
           MAX_IMPRECISE_ACC: tl.constexpr, PROMOTE_STEPS: tl.constexpr, SWAP: tl.constexpr):  # fmt: skip
    # The float32 sum over `steps` K steps from k_start, for one output tile (the last step may pass K: zeros).
    # SWAP: the transposed tile, BLOCK_N × BLOCK_M, as B^T A^T: the MMA's rows are then B's columns, so a decode
    # step's few rows of A become the MMA's narrow N instead of 64 rows of which all but a few are zeros.
    if SWAP:
        acc = tl.full((BLOCK_N, BLOCK_M), 0.0, dtype=tl.float32)
    else:
        acc = tl.full((BLOCK_M, BLOCK_N), 0.0, dtype=tl.float32)
    if PROMOTE_STEPS:
        # fp8: chunks of PROMOTE_STEPS K steps, each summed in the tensor cores' fast mode into `part`, then
        # added to `acc` in float32 (a separate loop, so that the plain loop below stays as the pipeliner likes)
        for k0 in range(0, steps, PROMOTE_STEPS):
            if SWAP:
                part = tl.full((BLOCK_N, BLOCK_M), 0.0, dtype=tl.float32)
            else:
                part = tl.full((BLOCK_M, BLOCK_N), 0.0, dtype=tl.float32)
            for ki in range(k0, tl.minimum(k0 + PROMOTE_STEPS, steps)):
                a_tile, b_tile = load_k_step(a, b, offs_am, offs_bn, k_start + ki * BLOCK_K, True, False, False)
                if SWAP:
                    part = tl.dot(b_tile.T, a_tile.T, part)
                else:
                    part = tl.dot(a_tile, b_tile, part)
            acc += part
    else:
        for ki in range(steps):
            a_tile, b_tile = load_k_step(
                a, b, offs_am, offs_bn, k_start + ki * BLOCK_K, A_ROW_MAJOR, B_ROW_MAJOR, UPCAST
            )
            if SWAP:
                acc = tl.dot(b_tile.T, a_tile.T, acc, max_num_imprecise_acc=MAX_IMPRECISE_ACC)
            else:
                acc = tl.dot(a_tile, b_tile, acc, max_num_imprecise_acc=MAX_IMPRECISE_ACC)
    return acc


def store_tile(c_desc, acc, offs_cm, offs_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               OUT_DTYPE: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr):  # fmt: skip
    # One tile of C through its descriptor, rounded once; stores that hang over the edge are clipped by the copy
    # engine. EPILOGUE_SUBTILE: in two halves, so that the output buffer in shared memory is half as large.
    if EPILOGUE_SUBTILE:
        acc0, acc1 = tl.split(tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1)))
        c_desc.store([offs_cm, offs_cn], acc0.to(OUT_DTYPE))
        c_desc.store([offs_cm, offs_cn + BLOCK_N // 2], acc1.to(OUT_DTYPE))
    else:
        c_desc.store([offs_cm, offs_cn], acc.to(OUT_DTYPE))
    # --8<-- [end:helpers]


# --8<-- [start:swap]
def block_zeros(ROWS: tl.constexpr, COLS: tl.constexpr, SWAP: tl.constexpr):
    # The float32 accumulator of a ROWS × COLS block of C, held as its transpose with SWAP.
    if SWAP:
        acc = tl.full((COLS, ROWS), 0.0, dtype=tl.float32)
    else:
        acc = tl.full((ROWS, COLS), 0.0, dtype=tl.float32)
    return acc


def block_dot(x, y, acc, SWAP: tl.constexpr):
    # acc + x @ y, or with SWAP its transpose, acc + y^T x^T: B's columns are then the MMA's rows (M, 64 per
    # warpgroup) and A's rows its N, which wgmma takes in steps of 8 (Triton's blocks: 16, 32, 64, ...).
    if SWAP:
        acc = tl.dot(y.T, x.T, acc)
    else:
        acc = tl.dot(x, y, acc)
    return acc


def block_of_c(acc, SWAP: tl.constexpr):
    # A block of C from its accumulator: transposed back with SWAP (through shared memory, once per tile).
    if SWAP:
        acc = acc.T
    return acc
    # --8<-- [end:swap]


def streamk_owner(i, per, extra):
    # The program whose K steps include step i of the stream-K run: the first `extra` programs take per + 1 steps,
    # the others per (where per is 0, only the first `extra` have any, and i < extra).
    long_steps = extra * (per + 1)
    return tl.where(i < long_steps, i // (per + 1), extra + (i - long_steps) // tl.maximum(per, 1))


# --8<-- [start:tma]
def tma_kernel(
    a, b, c, M, N, K, lda, ldb, ldc, alpha,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    A_ROW_MAJOR: tl.constexpr, B_ROW_MAJOR: tl.constexpr, OUT_DTYPE: tl.constexpr, UPCAST: tl.constexpr,
    DEVICE_DESC: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr, FLATTEN: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr, NUM_SMS: tl.constexpr, MAX_IMPRECISE_ACC: tl.constexpr,
    PROMOTE_STEPS: tl.constexpr, SWAP: tl.constexpr,
):  # fmt: skip
    # A descriptor names a 2-D tensor in global memory (base, shape, strides) and the box one copy moves.
    # Built on the host, it arrives as a kernel parameter; warp specialization on Hopper needs it built here.
    C_BLOCK_N: tl.constexpr = BLOCK_N // 2 if EPILOGUE_SUBTILE else BLOCK_N
    if DEVICE_DESC:
        if A_ROW_MAJOR:
            a_desc = tl.make_tensor_descriptor(a, [M, K], [lda, 1], [BLOCK_M, BLOCK_K])
        else:
            a_desc = tl.make_tensor_descriptor(a, [K, M], [lda, 1], [BLOCK_K, BLOCK_M])
        if B_ROW_MAJOR:
            b_desc = tl.make_tensor_descriptor(b, [K, N], [ldb, 1], [BLOCK_K, BLOCK_N])
        else:
            b_desc = tl.make_tensor_descriptor(b, [N, K], [ldb, 1], [BLOCK_N, BLOCK_K])
        c_desc = tl.make_tensor_descriptor(c, [M, N], [ldc, 1], [BLOCK_M, C_BLOCK_N])
    else:
        a_desc = a
        b_desc = b
        c_desc = c

    # Persistent: NUM_SMS programs, each taking every NUM_SMS-th tile in grouped order.
    start_pid = tl.program_id(axis=0)
    num_pid_m = (M + BLOCK_M - 1) // BLOCK_M
    num_pid_n = (N + BLOCK_N - 1) // BLOCK_N
    k_tiles = (K + BLOCK_K - 1) // BLOCK_K
    num_tiles = num_pid_m * num_pid_n
    tile_id_c = start_pid - NUM_SMS  # the epilogue's own tile counter, as in the tutorial

    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN, warp_specialize=WARP_SPECIALIZE):
        pid_m, pid_n = grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M)
        acc = k_loop(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, 0, k_tiles, BLOCK_M, BLOCK_N, BLOCK_K,
                     A_ROW_MAJOR, B_ROW_MAJOR, UPCAST, MAX_IMPRECISE_ACC, PROMOTE_STEPS, SWAP)  # fmt: skip

        tile_id_c += NUM_SMS
        pid_cm, pid_cn = grouped_tile(tile_id_c, num_pid_m, num_pid_n, GROUP_M)
        store_tile(c_desc, block_of_c(acc * alpha, SWAP), pid_cm * BLOCK_M, pid_cn * BLOCK_N, BLOCK_M, BLOCK_N,
                   OUT_DTYPE, EPILOGUE_SUBTILE)  # fmt: skip
    # --8<-- [end:tma]


# --8<-- [start:two_part]
def tma2_kernel(
    a1, a2, b1, b2, c11, c12, c21, c22, M, N, K, alpha,
    BLOCK_M: tl.constexpr, BLOCK_M2: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_N2: tl.constexpr,
    BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, A_ROW_MAJOR: tl.constexpr, B_ROW_MAJOR: tl.constexpr,
    OUT_DTYPE: tl.constexpr, UPCAST: tl.constexpr, FLATTEN: tl.constexpr, NUM_SMS: tl.constexpr,
    SWAP: tl.constexpr,
):  # fmt: skip
    # The persistent kernel with tiles of (BLOCK_M + BLOCK_M2) × (BLOCK_N + BLOCK_N2): a Triton block's sides are
    # powers of two, so a 192-row tile is a 128-row and a 64-row block (BLOCK_M2 = 0: one block), each with its own
    # accumulator and its own descriptor (a1 and a2: boxes of BLOCK_M and BLOCK_M2 rows), sharing the other
    # operand's tile. Descriptors of a block a tile does not have are not read.
    # SWAP: each block is computed as its transpose, B^T A^T, so that C's rows (a few hundred tokens) are the MMA's
    # N, which wgmma takes 16 or 32 wide, and B's columns its M (see block_dot).
    TILE_M: tl.constexpr = BLOCK_M + BLOCK_M2
    TILE_N: tl.constexpr = BLOCK_N + BLOCK_N2
    start_pid = tl.program_id(axis=0)
    num_pid_m = (M + TILE_M - 1) // TILE_M
    num_pid_n = (N + TILE_N - 1) // TILE_N
    k_tiles = (K + BLOCK_K - 1) // BLOCK_K
    num_tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN):
        pid_m, pid_n = grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M)
        om = pid_m * TILE_M
        on = pid_n * TILE_N
        acc11 = block_zeros(BLOCK_M, BLOCK_N, SWAP)
        if BLOCK_M2 > 0:
            acc21 = block_zeros(BLOCK_M2, BLOCK_N, SWAP)
        if BLOCK_N2 > 0:
            acc12 = block_zeros(BLOCK_M, BLOCK_N2, SWAP)
        if BLOCK_M2 > 0 and BLOCK_N2 > 0:
            acc22 = block_zeros(BLOCK_M2, BLOCK_N2, SWAP)
        for ki in range(k_tiles):
            ok = ki * BLOCK_K
            x1 = load_a(a1, om, ok, A_ROW_MAJOR, UPCAST)
            y1 = load_b(b1, ok, on, B_ROW_MAJOR, UPCAST)
            acc11 = block_dot(x1, y1, acc11, SWAP)
            if BLOCK_M2 > 0:
                x2 = load_a(a2, om + BLOCK_M, ok, A_ROW_MAJOR, UPCAST)
                acc21 = block_dot(x2, y1, acc21, SWAP)
            if BLOCK_N2 > 0:
                y2 = load_b(b2, ok, on + BLOCK_N, B_ROW_MAJOR, UPCAST)
                acc12 = block_dot(x1, y2, acc12, SWAP)
            if BLOCK_M2 > 0 and BLOCK_N2 > 0:
                acc22 = block_dot(x2, y2, acc22, SWAP)
        # Each block of C through its own descriptor; a block wholly past the edge is clipped away by the copy engine
        c11.store([om, on], block_of_c(acc11 * alpha, SWAP).to(OUT_DTYPE))
        if BLOCK_M2 > 0:
            c21.store([om + BLOCK_M, on], block_of_c(acc21 * alpha, SWAP).to(OUT_DTYPE))
        if BLOCK_N2 > 0:
            c12.store([om, on + BLOCK_N], block_of_c(acc12 * alpha, SWAP).to(OUT_DTYPE))
        if BLOCK_M2 > 0 and BLOCK_N2 > 0:
            c22.store([om + BLOCK_M, on + BLOCK_N], block_of_c(acc22 * alpha, SWAP).to(OUT_DTYPE))
    # --8<-- [end:two_part]


# --8<-- [start:streamk]
def streamk_kernel(
    a, b, c, c_ptr, w_ptr, lock_ptr, M, N, K, SK_TILES, ldc, alpha,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    A_ROW_MAJOR: tl.constexpr, B_ROW_MAJOR: tl.constexpr, OUT_DTYPE: tl.constexpr, UPCAST: tl.constexpr,
    EPILOGUE_SUBTILE: tl.constexpr, FLATTEN: tl.constexpr, NUM_SMS: tl.constexpr,
    MAX_IMPRECISE_ACC: tl.constexpr, PROMOTE_STEPS: tl.constexpr, FIX_M: tl.constexpr,
):  # fmt: skip
    # Data-parallel + one stream-K round, in one launch of NUM_SMS programs. The first tiles, in whole rounds, as
    # in the persistent kernel; the last SK_TILES tiles (the round that would be part full) are one run of
    # SK_TILES × k_tiles K steps, cut into NUM_SMS near-equal ranges, one per program.
    pid = tl.program_id(axis=0)
    num_pid_m = (M + BLOCK_M - 1) // BLOCK_M
    num_pid_n = (N + BLOCK_N - 1) // BLOCK_N
    k_tiles = (K + BLOCK_K - 1) // BLOCK_K
    dp_tiles = num_pid_m * num_pid_n - SK_TILES
    tile_id_c = pid - NUM_SMS
    for tile_id in tl.range(pid, dp_tiles, NUM_SMS, flatten=FLATTEN):
        pid_m, pid_n = grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M)
        acc = k_loop(a, b, pid_m * BLOCK_M, pid_n * BLOCK_N, 0, k_tiles, BLOCK_M, BLOCK_N, BLOCK_K,
                     A_ROW_MAJOR, B_ROW_MAJOR, UPCAST, MAX_IMPRECISE_ACC, PROMOTE_STEPS, False)  # fmt: skip
        tile_id_c += NUM_SMS
        pid_cm, pid_cn = grouped_tile(tile_id_c, num_pid_m, num_pid_n, GROUP_M)
        store_tile(c, acc * alpha, pid_cm * BLOCK_M, pid_cn * BLOCK_N, BLOCK_M, BLOCK_N, OUT_DTYPE,
                   EPILOGUE_SUBTILE)  # fmt: skip

    # The stream-K round: program p takes K steps [start, end) of the run; the first `extra` programs one more.
    per = SK_TILES * k_tiles // NUM_SMS
    extra = SK_TILES * k_tiles % NUM_SMS
    start = pid * per + tl.minimum(pid, extra)
    end = start + per + tl.where(pid < extra, 1, 0)
    offs = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    fix_rows = tl.arange(0, FIX_M)
    fix_cols = tl.arange(0, BLOCK_N)
    # A range is at most one tile long (SK_TILES < NUM_SMS), so it touches at most two tiles: its first segment (partial
    # sums in slot 2p) runs to the end of the tile it starts in or to the end of the range, its second (slot 2p + 1)
    # from the start of the next tile.
    # Every segment runs the K loop (an empty one zero times), so that the branch below holds only the fix-up.
    for seg in tl.static_range(2):
        tile = start // k_tiles
        stop = tl.minimum(end, (tile + 1) * k_tiles)
        # (an empty segment may start past the last tile: it looks up the last one, and reads none of it)
        pid_m, pid_n = grouped_tile(dp_tiles + tl.minimum(tile, SK_TILES - 1), num_pid_m, num_pid_n, GROUP_M)
        acc = k_loop(a, b, pid_m * BLOCK_M, pid_n * BLOCK_N, (start - tile * k_tiles) * BLOCK_K,
                     tl.maximum(stop - start, 0), BLOCK_M, BLOCK_N, BLOCK_K, A_ROW_MAJOR, B_ROW_MAJOR, UPCAST,
                     MAX_IMPRECISE_ACC, PROMOTE_STEPS, False)  # fmt: skip
        if start < stop:
            # The fix-up, as the one-launch split-K's: store the partial sums, count this segment done on the tile's
            # lock (after a barrier: every thread's stores first); the segment that counts last adds all of the
            # tile's partial sums in program order, so the sum is the same whoever finished last, and resets the
            # lock. It adds FIX_M rows at a time, so that a whole tile's sum is never held in registers beside one.
            tl.store(w_ptr + (2 * pid + seg) * (BLOCK_M * BLOCK_N) + offs, acc)
            first = streamk_owner(tile * k_tiles, per, extra)
            last = streamk_owner((tile + 1) * k_tiles - 1, per, extra)
            tl.debug_barrier()
            done = tl.atomic_add(lock_ptr + tile, 1, sem="acq_rel", scope="gpu")
            if done == last - first:
                for r0 in tl.static_range(0, BLOCK_M, FIX_M):
                    rows = r0 + fix_rows
                    chunk = rows[:, None] * BLOCK_N + fix_cols[None, :]
                    total = tl.full((FIX_M, BLOCK_N), 0.0, dtype=tl.float32)
                    for p in range(first, last + 1):
                        # p's segment of this tile is its second where p's range began in the tile before
                        p_seg = tl.where(p * per + tl.minimum(p, extra) < tile * k_tiles, 1, 0)
                        total += tl.load(w_ptr + (2 * p + p_seg) * (BLOCK_M * BLOCK_N) + chunk, cache_modifier=".cg")
                    c_rows = pid_m * BLOCK_M + rows
                    c_cols = pid_n * BLOCK_N + fix_cols
                    mask = (c_rows[:, None] < M) & (c_cols[None, :] < N)
                    tl.store(c_ptr + c_rows[:, None] * ldc + c_cols[None, :], (total * alpha).to(OUT_DTYPE), mask=mask)
                tl.atomic_xchg(lock_ptr + tile, 0)
        start = stop
    # --8<-- [end:streamk]


# --8<-- [start:splitk]
def splitk_kernel(
    a, b, c_ptr, w_ptr, lock_ptr, M, N, K, K_PER, STEPS, stride_cs, stride_cm, stride_cn, alpha,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    A_ROW_MAJOR: tl.constexpr, B_ROW_MAJOR: tl.constexpr, OUT_DTYPE: tl.constexpr, UPCAST: tl.constexpr,
    MAX_IMPRECISE_ACC: tl.constexpr, PROMOTE_STEPS: tl.constexpr, DIRECT: tl.constexpr, FUSED: tl.constexpr,
    SWAP: tl.constexpr,
):  # fmt: skip
    # One program per (output tile, K slice): the second grid axis cuts K into slices of K_PER (a multiple of
    # BLOCK_K), so a product with few output tiles and a long K still gives every multiprocessor work.
    pid_k = tl.program_id(axis=1)
    tile = tl.program_id(axis=0)
    num_pid_m = (M + BLOCK_M - 1) // BLOCK_M
    num_pid_n = (N + BLOCK_N - 1) // BLOCK_N
    pid_m, pid_n = grouped_tile(tile, num_pid_m, num_pid_n, GROUP_M)
    offs_am = pid_m * BLOCK_M
    offs_bn = pid_n * BLOCK_N
    acc = k_loop(a, b, offs_am, offs_bn, pid_k * K_PER, STEPS, BLOCK_M, BLOCK_N, BLOCK_K,
                 A_ROW_MAJOR, B_ROW_MAJOR, UPCAST, MAX_IMPRECISE_ACC, PROMOTE_STEPS, SWAP)  # fmt: skip

    # Plain masked stores: C may have any strides; a slice's float32 partial sums go to a workspace (SPLIT × M × N,
    # contiguous). With SWAP the tile is C's transpose: its rows are columns of C.
    if SWAP:
        rows = offs_bn + tl.arange(0, BLOCK_N)
        cols = offs_am + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < N) & (cols[None, :] < M)
        c_offs = rows[:, None] * stride_cn + cols[None, :] * stride_cm
        w_offs = cols[None, :] * N + rows[:, None]
    else:
        rows = offs_am + tl.arange(0, BLOCK_M)
        cols = offs_bn + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        c_offs = rows[:, None] * stride_cm + cols[None, :] * stride_cn
        w_offs = rows[:, None] * N + cols[None, :]
    if DIRECT:
        tl.store(c_ptr + c_offs, (acc * alpha).to(OUT_DTYPE), mask=mask)
    else:
        tl.store(w_ptr + pid_k * stride_cs + w_offs, acc, mask=mask)
        # --8<-- [start:fused]
        if FUSED:
            # One launch: each slice counts itself done on its tile's lock once its partial sums are stored (the
            # barrier: every thread's stores; acq_rel: visible to whoever counts after); the slice that counts
            # last adds all of them in slice order, its own from registers, so the sum is the same whichever
            # slice finished last, and resets the lock for the next call.
            split = tl.num_programs(axis=1)
            tl.debug_barrier()
            done = tl.atomic_add(lock_ptr + tile, 1, sem="acq_rel", scope="gpu")
            if done == split - 1:
                total = acc * 0.0
                for s in range(0, split):
                    part = tl.load(w_ptr + s * stride_cs + w_offs, mask=mask & (s != pid_k), other=0.0,
                                   cache_modifier=".cg")  # fmt: skip
                    total += tl.where(s == pid_k, acc, part)
                tl.store(c_ptr + c_offs, (total * alpha).to(OUT_DTYPE), mask=mask)
                tl.atomic_xchg(lock_ptr + tile, 0)
        # --8<-- [end:fused]
    # --8<-- [end:splitk]


# --8<-- [start:reduce]
def reduce_kernel(
    w_ptr, c_ptr, M, N, SPLIT, stride_ws, stride_cm, stride_cn, alpha,
    BLOCK: tl.constexpr, SPLIT_BLOCK: tl.constexpr, OUT_DTYPE: tl.constexpr,
):  # fmt: skip
    # Adds the SPLIT float32 partial sums of each element (a contiguous SPLIT × M × N workspace), then scales and
    # rounds once. Each program takes BLOCK consecutive elements and loads SPLIT_BLOCK slices of them at once, so
    # that a product with few outputs and many slices still has many programs and many loads in flight. The sum
    # runs in a fixed order: the result does not depend on which slice finished first.
    offs = tl.program_id(axis=0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < M * N
    offs_s = tl.arange(0, SPLIT_BLOCK)
    acc = tl.full((BLOCK,), 0.0, dtype=tl.float32)
    for s0 in range(0, SPLIT, SPLIT_BLOCK):
        rows = s0 + offs_s
        mask = (rows[:, None] < SPLIT) & inside[None, :]
        part = tl.load(w_ptr + rows[:, None].to(tl.int64) * stride_ws + offs[None, :], mask=mask, other=0.0)
        acc += tl.reduce(part, 0, _SUM)
    c_ptrs = c_ptr + (offs // N) * stride_cm + (offs % N) * stride_cn
    tl.store(c_ptrs, (acc * alpha).to(OUT_DTYPE), mask=inside)
    # --8<-- [end:reduce]


# pragma: no mutate end
# tl.sum is itself a jitted function, which triton 3.6's interpreter cannot call when TRITON_INTERPRET was set
# after triton was imported; tl.reduce with its combine function is what it compiles to, and the interpreter
# reduces that with numpy.
_SUM = tl.standard._sum_combine

#: Arguments Triton must not specialize on (it would compile a kernel per divisibility of each size otherwise).
_NOT_SPECIALIZED = {
    "blocked": None,
    "tma": ["M", "N", "K", "lda", "ldb", "ldc"],
    "tma2": ["M", "N", "K"],
    "splitk": ["M", "N", "K", "K_PER", "STEPS", "stride_cs"],
    "streamk": ["M", "N", "K", "SK_TILES", "ldc"],
    "reduce": ["M", "N", "SPLIT", "stride_ws"],
}
_KERNELS = {
    "blocked": blocked_kernel, "tma": tma_kernel, "splitk": splitk_kernel, "reduce": reduce_kernel,
    "streamk": streamk_kernel, "tma2": tma2_kernel,
}  # fmt: skip
_COMPILED: dict[bool, dict[str, Any]] = {}


#: The device functions the kernels call, by the global name they call them by.
_HELPERS = {
    "grouped_tile": grouped_tile, "load_a": load_a, "load_b": load_b, "load_k_step": load_k_step, "k_loop": k_loop,
    "store_tile": store_tile, "streamk_owner": streamk_owner, "block_zeros": block_zeros, "block_dot": block_dot,
    "block_of_c": block_of_c,
}  # fmt: skip


def _jitted(name: str) -> Any:
    """The kernel, jitted for the mode Triton is in now (compiled or interpreted), built once per mode. The
    helpers it calls are jitted for that mode too and bound to the global names the kernels call them by."""
    mode = interpreting()
    table = _COMPILED.setdefault(mode, {})
    if name not in table:
        for helper, fn in _HELPERS.items():
            if helper not in table:
                table[helper] = triton.jit(fn)
        table[name] = triton.jit(_KERNELS[name], do_not_specialize=_NOT_SPECIALIZED[name])
    for helper in _HELPERS:
        if globals()[helper] is not table[helper]:
            globals()[helper] = table[helper]
    return table[name]


def _torch() -> Any:
    import torch

    return torch


def _dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def _tl_dtype(name: str) -> Any:
    return {
        "float16": tl.float16,
        "bfloat16": tl.bfloat16,
        "float32": tl.float32,
    }[name]


def _layout(t: Any) -> str | None:
    """``"row"`` (unit stride along columns), ``"col"`` (unit stride along rows) or ``None`` (neither)."""
    rows, cols = t.shape
    s0, s1 = t.stride()
    if (s1 == 1 or cols == 1) and (s0 >= cols or rows == 1):
        return "row"
    if (s0 == 1 or rows == 1) and (s1 >= rows or cols == 1):
        return "col"
    return None


def _leading_stride(t: Any, layout: str) -> int:
    rows, cols = t.shape
    s0, s1 = t.stride()
    if layout == "row":
        return s0 if rows > 1 else max(cols, 1)
    return s1 if cols > 1 else max(rows, 1)


def _descriptor_stride(t: Any, row_major: bool) -> int:
    """The leading stride a tensor descriptor of ``t`` is given (``t`` read row-major, else column-major): its own;
    for a single row (column), which no step crosses, the row's length rounded up to 16 bytes. TMA refuses a stride
    that is not a multiple of 16 bytes, used or not, and a staged single row of 4 fp16 elements (8 bytes) has one."""
    rows, cols = t.shape
    lines, length, stride = (rows, cols, t.stride(0)) if row_major else (cols, rows, t.stride(1))
    if lines > 1:
        return stride
    return _round_up(length, 16 // t.element_size())  # (a plan has no empty operand: length >= 1)


def _describable(t: Any, layouts: tuple[str, ...]) -> str | None:
    """Why a tensor descriptor cannot describe ``t`` in one of ``layouts``, or ``None`` when it can."""
    layout = _layout(t)
    if layout not in layouts:
        need = " or ".join(f"{x}-major" for x in layouts)
        return f"(shape {tuple(t.shape)}, strides {t.stride()}) must be {need} for a tensor descriptor"
    if (_leading_stride(t, layout) * t.element_size()) % 16 or t.data_ptr() % 16:
        return (
            f"base address and leading stride ({_leading_stride(t, layout)} elements of "
            f"{t.element_size()} bytes) must be multiples of 16 bytes for a tensor descriptor"
        )
    return None


def _operand_layouts(a: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The storage orders the TMA kernels read A and B in: any for 16-bit types; for fp8, K-major only (A
    row-major, B column-major), as Hopper's MMA reads 8-bit operands only along K."""
    if _dtype_name(a.dtype) == "float8_e4m3fn":
        return ("row",), ("col",)
    return ("row", "col"), ("row", "col")


def _hopper_refusal(a: Any) -> str | None:
    if interpreting():
        return None
    if a.device.type != "cuda":
        return "the TMA kernel runs on CUDA devices"
    major, minor = _torch().cuda.get_device_capability(a.device)
    if major < 9:
        return f"the TMA kernel needs compute capability 9.0 or newer (Hopper); this GPU has {major}.{minor}"
    return None


def tma_refusal(a: Any, b: Any, out: Any) -> str | None:
    """Why the TMA kernels cannot read these operands as they are, or ``None`` when they can.

    A tensor descriptor needs a unit stride in its last dimension, other strides that are multiples of 16
    bytes, and a base address aligned to 16 bytes; so each of A and B must be row-major or column-major with
    16-byte-aligned rows (or columns), and C row-major. FP8 operands must be K-major (A row-major, B
    column-major), as Hopper's MMA reads 8-bit operands only along K. :func:`matmul` does not refuse such
    operands: it copies them into aligned buffers of the order the kernel reads (see :func:`staging`).
    """
    reason = _hopper_refusal(a)
    if reason is not None:
        return reason
    a_layouts, b_layouts = _operand_layouts(a)
    for name, t, layouts in (("A", a, a_layouts), ("B", b, b_layouts), ("C", out, ("row",))):
        why = _describable(t, layouts)
        if why is not None:
            if _dtype_name(a.dtype) == "float8_e4m3fn" and name != "C" and _layout(t) in ("row", "col"):
                return "fp8 operands must be K-major: A row-major and B column-major (the transpose of a row-major N×K)"
            return f"{name} {why}" if why.startswith("(") else f"{name}'s {why}"
    return None


def staging(a: Any, b: Any, out: Any, config: Config) -> dict[str, str | None]:
    """Which operands ``matmul`` copies before launching ``config``, and why: ``{"A": reason or None, "B": ...,
    "C": ...}``. The TMA kernels read A and B through descriptors, so an operand a descriptor cannot describe
    (a row stride that is not a multiple of 16 bytes, a view with no unit stride, an fp8 operand not K-major)
    is first copied into a buffer whose rows are padded to 16 bytes; the persistent kernel also writes C
    through a descriptor, so an unaligned C is written to such a buffer and copied out. The blocked and
    split-K kernels store C with plain pointers: any C. A configuration with ``pad_rows`` also copies A and B
    where a descriptor could read them but their rows do not start on 128-byte lines."""
    none: dict[str, str | None] = {"A": None, "B": None, "C": None}
    if config.kernel == "blocked":
        return none
    a_layouts, b_layouts = _operand_layouts(a)
    result = {"A": _describable(a, a_layouts), "B": _describable(b, b_layouts), "C": None}
    if config.pad_rows:
        for name, t in (("A", a), ("B", b)):
            if result[name] is None and not _on_lines(t):
                result[name] = (
                    f"rows of {_leading_stride(t, _layout(t)) * t.element_size()} bytes start off 128-byte lines "
                    "(the configuration pads them)"
                )
    if config.kernel == "tma":
        result["C"] = _describable(out, ("row",))
    return result


def default_config(a: Any, b: Any, out: Any) -> Config:
    """The configuration :func:`matmul` uses when none is given.

    Under the interpreter: :data:`INTERPRETER_CONFIG` (:data:`INTERPRETER_FP8_CONFIG` for fp8). For float32:
    :data:`FP32_CONFIG`. On a GPU without TMA (before Hopper): :data:`BLOCKED_CONFIG`. Otherwise the tuning
    table's configuration for the product's shape class, or its rule where the table has none
    (:func:`gpukb.gemm.triton.tuning.choose`), whatever the operands' strides: operands a descriptor cannot
    describe are copied first (:func:`staging`).
    """
    name = _dtype_name(a.dtype)
    if interpreting():
        return INTERPRETER_FP8_CONFIG if name == "float8_e4m3fn" else INTERPRETER_CONFIG
    # GPU only past this point (the CPU tests always interpret): out of the CPU mutation run, like the quick launch
    # path; the GPU tests run the Hopper branch (the tuned choice) on every call they make without a config.
    # pragma: no mutate start
    if name == "float32":
        return FP32_CONFIG
    if name not in DEFAULT_CONFIGS or _hopper_refusal(a) is not None:
        return BLOCKED_CONFIG
    (m, k), n = a.shape, b.shape[1]
    aligned, sectors = rows_aligned(a, b, out), rows_aligned(a, b, out, tuning.SECTOR_BYTES)
    copied = any(_describable(t, layouts) is not None for t, layouts in zip((a, b), _operand_layouts(a), strict=True))
    out_copied = _describable(out, ("row",)) is not None  # the persistent kernel writes a copy of such a C
    config = tuning.choose(name, layout_code(a, b), m, n, k, _sm_count(a.device), aligned, sectors, copied, out_copied)
    # the tables tuned 16-bit outputs: a float32 C tile in shared memory may need a shorter pipeline
    return fit_shared_memory(config, _shared_limit(a.device), a.element_size(), out.element_size())
    # pragma: no mutate end


def layout_code(a: Any, b: Any) -> str:
    """``"NN"``, ``"NT"``, ``"TN"`` or ``"TT"``: N for a row-major operand, T for a column-major one (the
    transpose of a row-major matrix); an operand that is neither counts as row-major (it is copied so)."""
    return ("T" if _layout(a) == "col" else "N") + ("T" if _layout(b) == "col" else "N")


def _check(a: Any, b: Any, out: Any, out_dtype: Any) -> tuple[int, int, int, Any]:
    torch = _torch()
    for name, t in (("A", a), ("B", b)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(t).__name__}")
        if t.dim() != 2:
            raise ValueError(f"{name} must be a 2-D matrix; got {t.dim()} dimensions, shape {tuple(t.shape)}")
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise ValueError(f"A is {m}×{k} and B is {k2}×{n}: A's columns must equal B's rows")
    if a.dtype != b.dtype:
        raise TypeError(f"A and B must have one element type; got {_dtype_name(a.dtype)} and {_dtype_name(b.dtype)}")
    if _dtype_name(a.dtype) not in INPUT_DTYPES:
        raise TypeError(f"element type {_dtype_name(a.dtype)} is not supported; supported: {list(INPUT_DTYPES)}")
    if a.device != b.device:
        raise ValueError(f"A and B must be on one device; got {a.device} and {b.device}")
    if a.device.type != "cuda" and not interpreting():
        raise ValueError(
            f"tensors on {a.device} need Triton's interpreter: set TRITON_INTERPRET=1 before the first call, "
            "or move them to a CUDA device"
        )
    if a.device.type not in ("cuda", "cpu") and m * n * k:  # an empty product needs no data (zeros, or nothing)
        raise ValueError(
            f"tensors on {a.device} have no data for a kernel to read: the kernels multiply CUDA tensors, or CPU "
            "tensors under Triton's interpreter"
        )
    fp8 = _dtype_name(a.dtype) == "float8_e4m3fn"
    if out is not None and not isinstance(out, torch.Tensor):  # before its type is read as out_dtype's default
        raise TypeError(f"out must be a torch.Tensor; got {type(out).__name__}")
    if out_dtype is None:
        out_dtype = out.dtype if out is not None else (torch.bfloat16 if fp8 else a.dtype)
    if _dtype_name(out_dtype) not in OUTPUT_DTYPES:
        raise TypeError(f"output type {_dtype_name(out_dtype)} is not supported; supported: {list(OUTPUT_DTYPES)}")
    if out is not None:
        if tuple(out.shape) != (m, n) or out.dtype != out_dtype or out.device != a.device:
            raise ValueError(
                f"out must be a {m}×{n} {_dtype_name(out_dtype)} tensor on {a.device}; got "
                f"{tuple(out.shape)} {_dtype_name(out.dtype)} on {out.device}"
            )
        _check_not_aliased(a, b, out)
    if fp8 and a.device.type == "cuda" and torch.cuda.get_device_capability(a.device) < (9, 0):
        major, minor = torch.cuda.get_device_capability(a.device)
        raise ValueError(f"fp8 inputs need compute capability 9.0 or newer (Hopper); this GPU has {major}.{minor}")
    return m, n, k, out_dtype


def _extent(t: Any) -> int:
    """Bytes from a tensor's first element to just past its last (0 for an empty tensor)."""
    if not t.numel():
        return 0
    return (sum((size - 1) * abs(stride) for size, stride in zip(t.shape, t.stride(), strict=True)) + 1) * (
        t.element_size()
    )


def _overlaps(p: int, p_extent: int, q: int, q_extent: int) -> bool:
    return p_extent > 0 and q_extent > 0 and p < q + q_extent and q < p + p_extent


def _check_not_aliased(a: Any, b: Any, out: Any, extents: tuple[int, int, int] | None = None) -> None:
    """Refuse an ``out`` whose bytes overlap A's or B's (``extents``: their byte extents, when known)."""
    ea, eb, ec = extents if extents is not None else (_extent(a), _extent(b), _extent(out))
    c = out.data_ptr()
    if _overlaps(c, ec, a.data_ptr(), ea) or _overlaps(c, ec, b.data_ptr(), eb):
        raise ValueError("out shares memory with A or B; the product cannot be written in place")


#: Plans of the products seen so far, by everything a plan depends on (see :func:`_plan_key`): a call of a shape
#: and layout seen before skips the checks, the choice of configuration and Triton's argument binding.
_PLANS: dict[tuple, Any] = {}

#: At most this many plans are kept (the oldest is dropped); each holds a few small Python objects, no tensors.
MAX_PLANS = 1024


def _plan_key(a: Any, b: Any, out: Any, out_dtype: Any, config: Any) -> tuple:
    # Shapes, strides, types, devices and the 16-byte alignment of the base addresses decide every choice a plan
    # makes; the addresses themselves do not (descriptors are rebuilt for each call's tensors).
    if out is None:
        o = None
        align = (a.data_ptr() | b.data_ptr()) & 15
    else:
        o = (out.shape, out.stride(), out.dtype, out.get_device())
        align = (a.data_ptr() | b.data_ptr() | out.data_ptr()) & 15
    return (
        a.shape, a.stride(), a.dtype, a.get_device(), b.shape, b.stride(), b.dtype, b.get_device(),
        o, out_dtype, config, align, interpreting(),
    )  # fmt: skip


def matmul(
    a: Any,
    b: Any,
    *,
    out: Any = None,
    out_dtype: Any = None,
    alpha: float = 1.0,
    config: Config | None = None,
) -> Any:
    """``alpha * (A @ B)`` by a Triton kernel, accumulated in float32 and rounded once to the output type.

    The first call of a shape, layout and type checks its inputs and makes a *plan* (the configuration, which
    operands to copy, the compiled kernel and its argument list); later calls of the same shape and layout run
    the plan, whose host cost is a dictionary look-up, the descriptors of this call's tensors and the launch.

    Args:
        a: An M×K matrix (torch tensor) of float16, bfloat16, float32 or float8_e4m3fn; any strides.
        b: A K×N matrix of the same type and device; any strides. Operands a tensor descriptor cannot describe
            (and, for fp8, operands that are not K-major) are copied first (see :func:`staging`).
        out: Optional M×N tensor to write into (poison it before a test: every element is overwritten).
        out_dtype: Output type; ``out``'s type, else A's type (bfloat16 for fp8 inputs).
        alpha: Scale applied to the float32 accumulator before rounding (the product of FP8 scales, say).
        config: Tiling and kernel; :func:`default_config` when omitted.

    Returns:
        The M×N product (``out`` when given): for K = 0, zeros (the sum over nothing, as ``torch.matmul`` gives);
        for M = 0 or N = 0, an empty matrix. Empty products launch no kernel and make no plan.

    Raises:
        TypeError: For a non-tensor, mixed or unsupported element types, a ``config`` that is not a Config.
        ValueError: For shapes that do not conform, tensors on different devices, CPU tensors without the
            interpreter, an ``out`` of the wrong shape, type or device (or sharing memory with A or B), a
            TMA or split-K ``config`` on a GPU without TMA, fp8 with the blocked kernel or where unsupported.
    """
    # a NaN or infinite alpha (or one beyond float32, where the kernel scales) would make every element NaN or inf
    alpha = real("alpha", alpha, minimum=-FLOAT32_MAX, maximum=FLOAT32_MAX)
    try:
        key = _plan_key(a, b, out, out_dtype, config)
        plan = _PLANS.get(key)
    except (AttributeError, TypeError):  # not tensors, or an unhashable config: the checks below say what is wrong
        key, plan = None, None
    if plan is not None:
        if out is not None:
            _check_not_aliased(a, b, out, plan.extents)
        return plan(a, b, out, alpha)
    m, n, k, out_dtype = _check(a, b, out, out_dtype)
    if config is not None and not isinstance(config, Config):
        raise TypeError(f"config must be a Config; got {type(config).__name__}")
    if not (m and n and k):
        # An empty product has nothing to tile (the tuning rules count tiles and K steps, and divide by them), so it
        # makes no plan: M = 0 or N = 0 is an empty result, K = 0 the sum over nothing, zeros, as torch.matmul gives.
        if out is None:
            out = _torch().empty((m, n), dtype=out_dtype, device=a.device)
        return out.zero_() if out.numel() else out
    plan = _make_plan(a, b, out, out_dtype, config, m, n, k)
    if key is not None:
        if len(_PLANS) >= MAX_PLANS:
            _PLANS.pop(next(iter(_PLANS)))
        _PLANS[key] = plan
    return plan(a, b, out, alpha)


def clear_plans() -> None:
    """Forget every plan (the next call of each shape checks and chooses again) and the buffers they kept."""
    _PLANS.clear()
    _KEPT["bytes"] = 0


def _round_up(x: int, to: int) -> int:
    return -(-x // to) * to


#: Bytes the rows of a staged copy are padded to: a whole 128-byte line per row start, which TMA reads fastest
#: (rows that only meet the descriptor's 16-byte rule cost the kernel more: see the sweep's 3000³).
ROW_PAD_BYTES = 128


def _aligned_copy(t: Any, col_major: bool, into: Any = None) -> Any:
    """A copy of ``t`` in a buffer whose rows (or, ``col_major``, columns) start on 128-byte boundaries: ``into`` when
    given (a buffer :func:`_aligned_buffer` made for ``t`` earlier), else a fresh one."""
    view = _aligned_buffer(t, col_major) if into is None else into
    view.copy_(t)
    return view


def _aligned_buffer(t: Any, col_major: bool) -> Any:
    """An uninitialized matrix of ``t``'s shape and type whose rows (``col_major``: columns) start on 128-byte
    boundaries: one allocation with the padded strides, no slicing."""
    torch = _torch()
    rows, cols = t.shape
    per_line = max(1, ROW_PAD_BYTES // t.element_size())
    stride = (1, _round_up(max(rows, 1), per_line)) if col_major else (_round_up(max(cols, 1), per_line), 1)
    extent = (cols - 1) * stride[1] + rows if col_major else (rows - 1) * stride[0] + cols
    return torch.empty(max(extent, 1), dtype=t.dtype, device=t.device).as_strided((rows, cols), stride)


#: Copied operands of at most this many bytes keep their buffer in the plan, one per stream (a later call copies into
#: it instead of allocating one: on the copied-operand path of a small product the allocation and the slicing were
#: most of the host's time), up to :data:`KEEP_TOTAL_BYTES` over all plans; larger ones get a fresh buffer per call.
KEEP_BYTES = 4 * 2**20
KEEP_TOTAL_BYTES = 256 * 2**20
#: Bytes of buffers kept by plans so far (:func:`clear_plans` forgets them).
_KEPT = {"bytes": 0}


def _kept_buffer(keep: dict, key: Any, t: Any, col_major: bool) -> Any:
    """The plan's buffer for ``t`` on the current stream (``key`` names the operand and the stream), made the first
    time and kept when small enough; ``None`` where it is not kept (the caller then copies into a fresh one)."""
    found = keep.get(key)
    if found is not None or key in keep:
        return found
    nbytes = t.numel() * t.element_size()
    made = None
    if nbytes <= KEEP_BYTES and _KEPT["bytes"] + nbytes <= KEEP_TOTAL_BYTES:
        made = _aligned_buffer(t, col_major)
        _KEPT["bytes"] += nbytes
    keep[key] = made
    return made


def rows_aligned(a: Any, b: Any, out: Any, line: int = ROW_PAD_BYTES) -> bool:
    """Whether every operand the TMA kernels read or write as it is (not copied first: :func:`staging`) has rows
    (columns, for a column-major one) that start on 128-byte lines (``line`` bytes: 32 for the tuning table's
    ``sectors``): the tuning table's ``aligned`` classes."""
    a_layouts, b_layouts = _operand_layouts(a)
    for t, layouts in ((a, a_layouts), (b, b_layouts), (out, ("row",))):
        if _describable(t, layouts) is not None:
            continue  # copied into a 128-byte-aligned buffer first
        if not _on_lines(t, line):
            return False
    return True


def _on_lines(t: Any, line: int = ROW_PAD_BYTES) -> bool:
    """Whether the rows (columns, for a column-major tensor) of a tensor a descriptor can read start on 128-byte
    lines (``line`` bytes). A single row or column counts as aligned: there is no second line start."""
    rows, cols = t.shape
    if (rows if _layout(t) == "row" else cols) <= 1:
        return True
    return (_leading_stride(t, _layout(t)) * t.element_size()) % line == 0


def _fast_descriptor(base: Any, shape: list[int], strides: list[int], block: list[int]) -> Any:
    """A ``TensorDescriptor`` without its constructor's checks (the plan made them on its first call)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    desc = object.__new__(TensorDescriptor)
    desc.base, desc.shape, desc.strides, desc.block_shape, desc.padding = base, shape, strides, block, "zero"
    return desc


def _make_plan(a: Any, b: Any, out: Any, out_dtype: Any, config: Config | None, m: int, n: int, k: int) -> Any:
    """A :class:`_Plan`, or for a ``split_tail`` configuration whose tail helps (:func:`tail_rows`) and whose
    operands need no copies, a :class:`_TailPlan` of two."""
    if config is None:
        config = default_config(a, b, out if out is not None else _OutShape(m, n, out_dtype))
    if config.split_tail:
        plain = replace(config, split_tail=False)
        rows, split = tail_rows(m, n, k, config, _sm_count(a.device))
        out_like = out if out is not None else _OutShape(m, n, out_dtype)
        copies = any(staging(a, b, out_like, plain).values())
        if rows >= m or copies:
            return _Plan(a, b, out, out_dtype, plain, m, n, k)
        return _TailPlan(a, b, out, out_dtype, config, m, n, k, rows, split)
    return _Plan(a, b, out, out_dtype, config, m, n, k)


class _TailPlan:
    """A ``split_tail`` product in two plans: rows ``[0, rows)`` of C on the persistent kernel, the rest on the
    split-K kernel with ``split`` K slices (:func:`~gpukb.gemm.triton.configs.tail_rows`). Each is a :class:`_Plan`
    of a row slice of A and C (views: nothing is copied)."""

    def __init__(self, a: Any, b: Any, out: Any, out_dtype: Any, config: Config, m: int, n: int, k: int,
                 rows: int, split: int):  # fmt: skip
        self.config, self.rows, self.split, self.m, self.n, self.out_dtype = config, rows, split, m, n, out_dtype
        self.extents = (_extent(a), _extent(b), 0 if out is None else _extent(out))
        torch = _torch()
        head_cfg = replace(config, split_tail=False)
        tail_cfg = Config(
            "splitk", config.block_m, config.block_n, config.block_k, group_m=config.group_m,
            num_stages=config.num_stages, num_warps=config.num_warps, fp8_imprecise_acc=config.fp8_imprecise_acc,
            split_k=split,
        )  # fmt: skip
        like = out if out is not None else torch.empty((m, n), dtype=out_dtype, device="meta")
        self.head = None
        if rows:
            self.head = _Plan(a[:rows], b, _view_like(like[:rows], out), out_dtype, head_cfg, rows, n, k)
        self.tail = _Plan(a[rows:], b, _view_like(like[rows:], out), out_dtype, tail_cfg, m - rows, n, k)
        self.staged = self.tail.staged

    @property
    def direct(self) -> list[Any] | None:
        return (self.head or self.tail).direct

    @property
    def fast_failed(self) -> str | None:
        return (self.head or self.tail).fast_failed

    @property
    def compiled(self) -> list[Any] | None:
        return (self.head or self.tail).compiled

    def __call__(self, a: Any, b: Any, out: Any, alpha: float) -> Any:
        if out is None:
            out = _torch().empty((self.m, self.n), dtype=self.out_dtype, device=a.device)
        rows = self.rows
        if self.head is not None:
            self.head(a[:rows], b, out[:rows], alpha)
        self.tail(a[rows:], b, out[rows:], alpha)
        return out


def _view_like(view: Any, out: Any) -> Any:
    """``view`` where it is a slice of a real output; ``None`` (the plan then assumes a contiguous output of its
    own) where the product allocates its output (a ``meta`` stand-in was sliced)."""
    return view if out is not None else None


class _Plan:
    """How one shape, layout and type is multiplied: made once by :func:`matmul`, called for every product of
    that kind. It holds no tensors: the tensors of each call are passed in."""

    def __init__(self, a: Any, b: Any, out: Any, out_dtype: Any, config: Config | None, m: int, n: int, k: int):
        self.m, self.n, self.k = m, n, k
        self.out_dtype = out_dtype
        self.extents = (_extent(a), _extent(b), 0 if out is None else _extent(out))
        self.fp8 = _dtype_name(a.dtype) == "float8_e4m3fn"
        self.interpret = interpreting()
        out_like = out if out is not None else _OutShape(m, n, out_dtype)
        if config is None:
            config = default_config(a, b, out_like)
        self.config = config
        if config.kernel == "blocked":
            if self.fp8:
                raise ValueError(
                    "fp8 inputs need the 'tma' or 'splitk' kernel (Hopper reads 8-bit MMA operands only along K)"
                )
        else:
            reason = _hopper_refusal(a)
            if reason is not None:
                raise ValueError(f"config {config.label!r} names a TMA kernel, but {reason}")
        if not self.interpret:
            _check_shared_memory(config, a, out_dtype)
        self.sms = _sm_count(a.device)
        stage = staging(a, b, out_like, config)
        self.staged = stage
        _, b_layouts = _operand_layouts(a)  # every type reads A row-major, so a copy of A is row-major
        self.stage_a = stage["A"] is not None
        self.stage_b = stage["B"] is not None
        self.stage_c = stage["C"] is not None
        self.b_col_major_copy = b_layouts == ("col",)
        # The storage order the kernel sees (after any copy).
        self.a_row = True if self.stage_a else _layout(a) == "row"
        self.b_row = (not self.b_col_major_copy) if self.stage_b else _layout(b) == "row"
        self.split = 1
        if config.kernel == "splitk":
            split = split_for(m, n, k, config, self.sms)
            k_per = _round_up(-(-k // split), config.block_k)
            self.split = -(-k // k_per)  # no empty slices
            self.k_per = k_per
        # The last slice of each tile adds the partial sums (one launch), where there are slices to add.
        self.fused = config.kernel == "splitk" and config.fused_reduce and self.split > 1
        if (config.two_part or (config.kernel == "tma" and config.swap_ab)) and _dtype_name(a.dtype) not in (
            "float16", "bfloat16"
        ):  # fmt: skip
            what = "tiles of two blocks" if config.two_part else "swapped 'tma' tiles"
            raise ValueError(
                f"{what} ({config.label!r}) are built and tested for float16 and bfloat16 inputs; got "
                f"{_dtype_name(a.dtype)}"
            )
        if config.stream_k and _dtype_name(a.dtype) not in ("float16", "bfloat16"):
            raise ValueError(
                f"stream_k is built and tested for float16 and bfloat16 inputs; got {_dtype_name(a.dtype)}"
            )
        # Stream-K: the tiles of the last, part-full round share their K steps among all the programs (0: none).
        self.sk_tiles = stream_k_tiles(m, n, config, self.sms) if config.stream_k else 0
        self.sk_buffers: dict[Any, tuple[Any, Any]] = {}  # stream -> (partial sums, locks), kept between calls
        # The type the kernel stores: under the interpreter a bf16 output is written as float32 (see _staged).
        stored = "float32" if self.interpret and _dtype_name(out_dtype) == "bfloat16" else _dtype_name(out_dtype)
        self.tl_out = _tl_dtype(stored)
        self.upcast = _upcast(a)
        # fp8 accumulation: up to one K step, Triton's own option; longer, whole K steps summed in the kernel
        acc = config.fp8_imprecise_acc if self.fp8 else None
        long_acc = acc is not None and acc > config.block_k
        self.imprecise_acc = None if long_acc else acc
        self.promote_steps = acc // config.block_k if long_acc else 0
        chain = self.k_per // config.block_k if config.kernel == "splitk" else -(-k // config.block_k)
        if self.promote_steps >= chain:  # no program sums more K steps than one chunk: nothing to promote
            self.promote_steps = 0
        self.direct: list[Any] | None = None  # direct launchers of the compiled kernels, after the first call
        self.quick: Any = None  # the whole call, operands to launch, once a first call has run (see _prepare_quick)
        self.fast = False
        self.fast_failed: str | None = None  # why a direct launch failed once (the plan then keeps to the JIT)
        if config.kernel == "blocked":
            for name, t in (("A", a), ("B", b), ("C", out_like)):
                reach = sum((size - 1) * abs(stride) for size, stride in zip(t.shape, t.stride(), strict=True))
                if reach > MAX_BLOCKED_OFFSET:
                    raise ValueError(
                        f"{name} spans {reach + 1} elements; the blocked kernel's 32-bit offsets reach "
                        f"{MAX_BLOCKED_OFFSET + 1}: use the 'tma' kernel or split the product"
                    )

    def __call__(self, a: Any, b: Any, out: Any, alpha: float) -> Any:
        torch = _torch()
        m, n = self.m, self.n
        quick = self.quick
        if quick is not None and _no_launch_hooks():
            if out is None:
                out = torch.empty((m, n), dtype=self.out_dtype, device=a.device)
            quick(a, b, out, float(alpha))
            return out
        if out is None:
            out = torch.empty((m, n), dtype=self.out_dtype, device=a.device)
        alpha = float(alpha)
        if self.interpret:
            with warnings.catch_warnings():
                # triton 3.6's interpreter converts one-element arrays to ints, which numpy deprecated
                warnings.filterwarnings("ignore", "Conversion of an array with ndim > 0", DeprecationWarning)
                return self._run(a, b, out, alpha)
        return self._run(a, b, out, alpha)

    def _run(self, a: Any, b: Any, out: Any, alpha: float) -> Any:
        kernel = self.config.kernel
        if kernel == "blocked":
            target = _staged(out)
            self._blocked(a, b, target, alpha)  # records its kernel in _LAST itself
            if target is not out:
                out.copy_(target)
            return out
        if self.stage_a:
            a = _aligned_copy(a, False)
        if self.stage_b:
            b = _aligned_copy(b, self.b_col_major_copy)
        if kernel == "tma":
            target = _aligned_copy_target(out) if self.stage_c else out
            target = _staged(target)
            self._tma(a, b, target, alpha)
        else:
            target = _staged(out)
            self._splitk(a, b, target, alpha)
        if target is not out:
            out.copy_(target)
        return out

    def _blocked(self, a: Any, b: Any, out: Any, alpha: float) -> Any:
        config, m, n, k = self.config, self.m, self.n, self.k
        grid = (triton.cdiv(m, config.block_m) * triton.cdiv(n, config.block_n),)
        static = (m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))
        constants = {
            "BLOCK_M": config.block_m, "BLOCK_N": config.block_n, "BLOCK_K": config.block_k,
            "GROUP_M": config.group_m, "OUT_DTYPE": self.tl_out,
            "PRECISION": "ieee" if _dtype_name(a.dtype) == "float32" else "tf32", "UPCAST": self.upcast,
        }  # fmt: skip
        direct = self.fast and self.direct is not None and self.direct[0] is not None
        self._launch("blocked", grid, (a, b, out, *static, alpha), constants, (config.num_stages, config.num_warps), 0)
        if direct and self.fast_failed is None and self.quick is None:
            # The direct launch worked: from now on a call is one launcher call with this call's tensors.
            self._prepare_blocked_quick(grid[0], static, tuple(constants.values()))
        self.fast = not self.interpret and self.fast_failed is None
        return _LAST["kernel"]

    # pragma: no mutate start
    # GPU only (the driver's launcher, after a direct launch the interpreter never makes): the CPU tests cannot
    # reach it and the GPU tests do, so it stays out of the CPU mutation run.
    def _prepare_blocked_quick(self, grid_x: int, static: tuple, constants: tuple) -> None:
        """Set :attr:`quick` for the blocked kernel: pointers need no descriptors and no copies, so a call is the
        launcher alone (the strides are the plan's: they are part of its key)."""
        assert self.direct is not None
        main = self.direct[0]
        launcher, function, packed, kernel = main.launcher, main.function, main.packed, main.kernel
        driver = triton.runtime.driver.active

        def quick(a: Any, b: Any, out: Any, alpha: float) -> None:
            stream = driver.get_current_stream(driver.get_current_device())
            launcher(grid_x, 1, 1, stream, function, packed, None, None, None, a, b, out, *static, alpha, *constants)
            _LAST["kernel"] = kernel

        self.quick = quick

    # pragma: no mutate end
    def _descriptors(self, a: Any, b: Any, fast: bool) -> tuple[Any, Any, int, int]:
        from triton.tools.tensor_descriptor import TensorDescriptor

        make = _fast_descriptor if fast else TensorDescriptor
        bm, bn, bk = self.config.block_m, self.config.block_n, self.config.block_k
        m, n, k = self.m, self.n, self.k
        lda, ldb = _descriptor_stride(a, self.a_row), _descriptor_stride(b, self.b_row)
        if self.a_row:
            a_desc = make(a, [m, k], [lda, 1], [bm, bk])
        else:
            a_desc = make(a.t(), [k, m], [lda, 1], [bk, bm])
        if self.b_row:
            b_desc = make(b, [k, n], [ldb, 1], [bk, bn])
        else:
            b_desc = make(b.t(), [n, k], [ldb, 1], [bn, bk])
        return a_desc, b_desc, lda, ldb

    def _launch(
        self,
        name: str,
        grid: tuple[int, ...],
        args: tuple,
        constants: dict[str, Any],
        options: tuple[int, int],
        slot: int,
    ) -> None:
        """Launch a kernel: through Triton's JIT the first time (compiling it), then straight through the compiled
        kernel's launcher (:class:`_DirectLaunch`), past the JIT's argument binding and cache look-up."""
        direct = self.direct[slot] if self.fast and self.direct is not None else None
        if direct is not None and _no_launch_hooks():
            try:
                direct(grid, args, constants)
                return
            except Exception as err:  # a Triton whose launcher differs: keep to its JIT path
                self.direct = None
                self.fast_failed = f"{type(err).__name__}: {err}"
        stages, warps = options
        kernel = _jitted(name)[grid](*args, **constants, num_stages=stages, num_warps=warps)
        _LAST["kernel"] = kernel
        if not self.interpret and not self.fast_failed:
            if self.direct is None:
                self.direct = [None, None]
            if self.direct[slot] is None:
                self.direct[slot] = _DirectLaunch(kernel)

    def _tma(self, a: Any, b: Any, out: Any, alpha: float) -> None:
        config, m, n, k = self.config, self.m, self.n, self.k
        bm, bn = config.block_m, config.block_n
        if config.two_part:
            self._two_part(a, b, out, alpha)
            return
        device_desc = config.warp_specialize
        fast = self.fast and not device_desc
        if device_desc:
            a_arg, b_arg, c_arg = a, b, out
            lda, ldb = _descriptor_stride(a, self.a_row), _descriptor_stride(b, self.b_row)
        else:
            a_arg, b_arg, lda, ldb = self._descriptors(a, b, fast)
            c_bn = bn // 2 if config.epilogue_subtile else bn
            make = _fast_descriptor if fast else _checked_descriptor
            c_arg = make(out, [m, n], [_descriptor_stride(out, True), 1], [bm, c_bn])
        ldc = _descriptor_stride(out, True)
        if self.sk_tiles:
            self._streamk(a_arg, b_arg, c_arg, out, alpha)
            return
        grid = (min(self.sms, triton.cdiv(m, bm) * triton.cdiv(n, bn)),)
        constants = {
            "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": config.block_k, "GROUP_M": config.group_m,
            "A_ROW_MAJOR": self.a_row, "B_ROW_MAJOR": self.b_row, "OUT_DTYPE": self.tl_out, "UPCAST": self.upcast,
            "DEVICE_DESC": device_desc, "EPILOGUE_SUBTILE": config.epilogue_subtile, "FLATTEN": config.flatten,
            "WARP_SPECIALIZE": config.warp_specialize, "NUM_SMS": self.sms,
            "MAX_IMPRECISE_ACC": self.imprecise_acc, "PROMOTE_STEPS": self.promote_steps, "SWAP": config.swap_ab,
        }  # fmt: skip
        args = (a_arg, b_arg, c_arg, m, n, k, lda, ldb, ldc, alpha)
        with _scratch_allocator(a.device) if device_desc else contextlib.nullcontext():
            self._launch("tma", grid, args, constants, (config.num_stages, config.num_warps), 0)
        self.fast = not self.interpret and not device_desc and self.fast_failed is None
        if self.fast and self.quick is None:
            c_block = [bm, bn // 2 if config.epilogue_subtile else bn]
            self._prepare_quick(grid, (m, n, k, lda, ldb, ldc), tuple(constants.values()), c_block)

    def _two_part(self, a: Any, b: Any, out: Any, alpha: float) -> None:
        """Launch the persistent kernel whose tiles are two blocks on a side (:func:`tma2_kernel`), with a host
        descriptor for each block shape (a tile's missing blocks get the first block's, which the kernel does not
        read). No quick path: each call goes through :meth:`_launch`, which from the second call on skips the JIT's
        argument binding (as for stream-K), with descriptors built without re-checking what the first call checked."""
        config, m, n, k = self.config, self.m, self.n, self.k
        make = _fast_descriptor if self.fast else _checked_descriptor
        (bm, bm2), (bn, bn2) = block_parts(config.block_m), block_parts(config.block_n)
        bk = config.block_k
        lda, ldb = _descriptor_stride(a, self.a_row), _descriptor_stride(b, self.b_row)
        ldc = _descriptor_stride(out, True)

        def a_desc(rows: int) -> Any:
            if self.a_row:
                return make(a, [m, k], [lda, 1], [rows, bk])
            return make(a.t(), [k, m], [lda, 1], [bk, rows])

        def b_desc(cols: int) -> Any:
            if self.b_row:
                return make(b, [k, n], [ldb, 1], [bk, cols])
            return make(b.t(), [n, k], [ldb, 1], [cols, bk])

        def c_desc(rows: int, cols: int) -> Any:
            return make(out, [m, n], [ldc, 1], [rows or bm, cols or bn])

        a1, b1 = a_desc(bm), b_desc(bn)
        descriptors = (
            a1, a_desc(bm2) if bm2 else a1, b1, b_desc(bn2) if bn2 else b1,
            c_desc(bm, bn), c_desc(bm, bn2), c_desc(bm2, bn), c_desc(bm2, bn2),
        )  # fmt: skip
        grid = (min(self.sms, triton.cdiv(m, config.block_m) * triton.cdiv(n, config.block_n)),)
        constants = {
            "BLOCK_M": bm, "BLOCK_M2": bm2, "BLOCK_N": bn, "BLOCK_N2": bn2, "BLOCK_K": bk,
            "GROUP_M": config.group_m, "A_ROW_MAJOR": self.a_row, "B_ROW_MAJOR": self.b_row, "OUT_DTYPE": self.tl_out,
            "UPCAST": self.upcast, "FLATTEN": config.flatten, "NUM_SMS": self.sms, "SWAP": config.swap_ab,
        }  # fmt: skip
        self._launch("tma2", grid, (*descriptors, m, n, k, alpha), constants, (config.num_stages, config.num_warps), 0)
        self.fast = not self.interpret and self.fast_failed is None

    def _streamk(self, a_desc: Any, b_desc: Any, c_desc: Any, out: Any, alpha: float) -> None:
        """Launch the stream-K kernel on all the multiprocessors, with the plan's partial-sum slots (two a program)
        and tile locks for the current stream: the locks are zero at rest (each tile's last segment resets its
        own), so they are made once. No quick path: each call goes through :meth:`_launch`."""
        torch = _torch()
        config = self.config
        key = _torch().cuda.current_stream(out.device).cuda_stream if out.device.type == "cuda" else 0
        buffers = self.sk_buffers.get(key)
        if buffers is None:
            work = torch.empty(2 * self.sms * config.block_m * config.block_n, dtype=torch.float32, device=out.device)
            lock = torch.zeros(self.sk_tiles, dtype=torch.int32, device=out.device)
            buffers = self.sk_buffers[key] = (work, lock)
        constants = {
            "BLOCK_M": config.block_m, "BLOCK_N": config.block_n, "BLOCK_K": config.block_k,
            "GROUP_M": config.group_m, "A_ROW_MAJOR": self.a_row, "B_ROW_MAJOR": self.b_row,
            "OUT_DTYPE": self.tl_out, "UPCAST": self.upcast, "EPILOGUE_SUBTILE": config.epilogue_subtile,
            "FLATTEN": config.flatten, "NUM_SMS": self.sms, "MAX_IMPRECISE_ACC": self.imprecise_acc,
            "PROMOTE_STEPS": self.promote_steps, "FIX_M": min(config.block_m, max(16, FIX_ELEMENTS // config.block_n)),
        }  # fmt: skip
        ldc = out.stride(0) if self.m > 1 else self.n
        args = (a_desc, b_desc, c_desc, out, *buffers, self.m, self.n, self.k, self.sk_tiles, ldc, alpha)
        self._launch("streamk", (self.sms,), args, constants, (config.num_stages, config.num_warps), 0)
        self.fast = not self.interpret and self.fast_failed is None

    def _splitk(self, a: Any, b: Any, out: Any, alpha: float) -> None:
        torch = _torch()
        config, m, n, k = self.config, self.m, self.n, self.k
        fast = self.fast
        a_desc, b_desc, _, _ = self._descriptors(a, b, fast)
        tiles = triton.cdiv(m, config.block_m) * triton.cdiv(n, config.block_n)
        direct = self.split == 1
        fused = self.fused
        work = lock = out  # not read where the product is not split (DIRECT) or not fused
        stride_cs = 0
        if not direct:
            work = lock = torch.empty((self.split, m, n), dtype=torch.float32, device=out.device)
            stride_cs = m * n
        if fused:
            lock = torch.zeros(tiles, dtype=torch.int32, device=out.device)
        constants = {
            "BLOCK_M": config.block_m, "BLOCK_N": config.block_n, "BLOCK_K": config.block_k,
            "GROUP_M": config.group_m, "A_ROW_MAJOR": self.a_row, "B_ROW_MAJOR": self.b_row,
            "OUT_DTYPE": self.tl_out, "UPCAST": self.upcast,
            "MAX_IMPRECISE_ACC": self.imprecise_acc, "PROMOTE_STEPS": self.promote_steps, "DIRECT": direct,
            "FUSED": fused, "SWAP": config.swap_ab,
        }  # fmt: skip
        steps = self.k_per // config.block_k
        stride_cm, stride_cn = out.stride(0), out.stride(1)
        args = (a_desc, b_desc, out, work, lock, m, n, k, self.k_per, steps, stride_cs, stride_cm, stride_cn, alpha)
        self._launch("splitk", (tiles, self.split), args, constants, (config.num_stages, config.num_warps), 0)
        reduce_grid: tuple[int, ...] = ()
        reduce_constants = {"BLOCK": REDUCE_BLOCK[0], "SPLIT_BLOCK": REDUCE_BLOCK[1], "OUT_DTYPE": self.tl_out}
        if not direct and not fused:
            reduce_grid = (triton.cdiv(m * n, REDUCE_BLOCK[0]), 1)
            reduce_args = (work, out, m, n, self.split, m * n, out.stride(0), out.stride(1), alpha)
            self._launch("reduce", reduce_grid, reduce_args, reduce_constants, (1, 4), 1)
        self.fast = not self.interpret and self.fast_failed is None
        if self.fast and self.quick is None:
            static = (m, n, k, self.k_per, steps, stride_cs, stride_cm, stride_cn)
            reduce = (reduce_grid, tuple(reduce_constants.values()), out.stride(0), out.stride(1))
            self._prepare_quick((tiles, self.split), static, tuple(constants.values()), None, reduce)

    # pragma: no mutate start
    # GPU only (CUDA tensors, the driver's launchers): the CPU tests cannot reach it and the GPU tests do, so
    # it stays out of the CPU mutation run.
    def _prepare_quick(
        self, grid: tuple[int, ...], static: tuple, constants: tuple, c_block: list[int] | None, reduce: Any = None
    ) -> None:
        """After a first call, set :attr:`quick`: the call as a closure over everything that does not change
        between calls of this plan (grid, sizes, strides, compile-time constants, the direct launchers), so that a
        later call only reads its tensors' addresses, looks up their TMA descriptors and launches."""
        direct = self.direct
        if direct is None or direct[0] is None or direct[0].raw is None:
            return
        if self.split > 1 and not self.fused and direct[1] is None:
            return
        config, m, n, k = self.config, self.m, self.n, self.k
        bm, bn, bk = config.block_m, config.block_n, config.block_k
        a_row, b_row = self.a_row, self.b_row

        def build_a(t: Any) -> Any:
            if a_row:
                return _fast_descriptor(t, [m, k], [_descriptor_stride(t, True), 1], [bm, bk])
            return _fast_descriptor(t.t(), [k, m], [_descriptor_stride(t, False), 1], [bk, bm])

        def build_b(t: Any) -> Any:
            if b_row:
                return _fast_descriptor(t, [k, n], [_descriptor_stride(t, True), 1], [bk, bn])
            return _fast_descriptor(t.t(), [n, k], [_descriptor_stride(t, False), 1], [bn, bk])

        main = direct[0]
        driver = triton.runtime.driver.active
        stage_a, stage_b, stage_c = self.stage_a, self.stage_b, self.stage_c
        b_col = self.b_col_major_copy

        keep: dict[tuple[str, int], Any] = {}  # (operand, stream) -> the buffer its copies go to

        def stage(a: Any, b: Any, stream: int) -> tuple[Any, Any]:  # operands a descriptor cannot read: aligned copies
            if stage_a:
                a = _aligned_copy(a, False, _kept_buffer(keep, ("A", stream), a, False))
            if stage_b:
                b = _aligned_copy(b, b_col, _kept_buffer(keep, ("B", stream), b, b_col))
            return a, b

        grid_x, grid_y = grid[0], grid[1] if len(grid) > 1 else 1
        if c_block is not None:  # the persistent kernel: C through a descriptor too
            ldc = static[5]

            def build_c(t: Any) -> Any:
                return _fast_descriptor(t, [m, n], [ldc, 1], c_block)

            builders = (build_a, build_b, build_c)

            def quick(a: Any, b: Any, out: Any, alpha: float) -> None:
                stream = driver.get_current_stream(driver.get_current_device())
                a, b = stage(a, b, stream)
                target = out
                if stage_c:
                    target = _kept_buffer(keep, ("C", stream), out, False)
                    target = _aligned_copy_target(out) if target is None else target
                main.launch_tensors(grid_x, grid_y, stream, (a, b, target), builders, (*static, alpha, *constants))
                if target is not out:
                    out.copy_(target)
                _LAST["kernel"] = main.kernel

        elif self.split == 1:
            builders = (build_a, build_b)

            def quick(a: Any, b: Any, out: Any, alpha: float) -> None:
                stream = driver.get_current_stream(driver.get_current_device())
                a, b = stage(a, b, stream)
                main.launch_tensors(
                    grid_x, grid_y, stream, (a, b), builders, (out, out, out, *static, alpha, *constants)
                )
                _LAST["kernel"] = main.kernel

        else:
            builders = (build_a, build_b)
            torch = _torch()
            split, second, fused = self.split, direct[1], self.fused
            (reduce_grid, reduce_constants, stride_cm, stride_cn) = reduce
            tiles = grid_x

            def quick(a: Any, b: Any, out: Any, alpha: float) -> None:
                stream = driver.get_current_stream(driver.get_current_device())
                a, b = stage(a, b, stream)
                work = keep.get(("W", stream))  # the partial sums, overwritten whole by every call
                if work is None:
                    work = torch.empty((split, m, n), dtype=torch.float32, device=out.device)
                    if split * m * n * 4 <= KEEP_BYTES and _KEPT["bytes"] + split * m * n * 4 <= KEEP_TOTAL_BYTES:
                        keep[("W", stream)] = work
                        _KEPT["bytes"] += split * m * n * 4
                if fused:  # the tiles' locks: zero at rest (each call's last slices reset them), one set per stream
                    lock = keep.get(("L", stream))
                    if lock is None:
                        lock = keep[("L", stream)] = torch.zeros(tiles, dtype=torch.int32, device=out.device)
                    main.launch_tensors(
                        grid_x, grid_y, stream, (a, b), builders, (out, work, lock, *static, alpha, *constants)
                    )
                    _LAST["kernel"] = main.kernel
                    return
                main.launch_tensors(
                    grid_x, grid_y, stream, (a, b), builders, (out, work, work, *static, alpha, *constants)
                )
                second.launcher(
                    reduce_grid[0], reduce_grid[1], 1, stream, second.function, second.packed, None, None, None,
                    work, out, m, n, split, m * n, stride_cm, stride_cn, alpha, *reduce_constants,
                )  # fmt: skip
                _LAST["kernel"] = main.kernel

        self.quick = quick

    # pragma: no mutate end
    @property
    def compiled(self) -> list[Any] | None:
        """The compiled kernels of the first call (main kernel, reduction), where the plan launches them directly."""
        if self.direct is None:
            return None
        return [None if d is None else d.kernel for d in self.direct]


# pragma: no mutate start
# GPU only (CUDA tensors, the driver's launchers): the CPU tests cannot reach it and the GPU tests do, so
# it stays out of the CPU mutation run.
class _DirectLaunch:
    """Calls a compiled kernel's launcher the way Triton's JIT does after its cache look-up, and keeps the TMA
    descriptor (``CUtensorMap``) of each tensor it has seen: the encoding depends only on the address, shape,
    strides and box, so a tensor at an address seen before, of the plan's shape and strides, reuses it.

    Built on the launcher of triton 3.6 (``CudaLauncher`` and the wrapper that expands tensor descriptors); where
    that is not what it finds, it calls the launcher with the descriptors as they are.
    """

    #: Descriptors kept per launcher (the oldest is dropped): addresses of recent operands and outputs.
    MAX_MAPS = 64

    def __init__(self, kernel: Any):
        self.kernel = kernel
        self.launcher = kernel.run
        self.function = kernel.function
        self.packed = kernel.packed_metadata
        self.raw = None
        self.maps: dict[tuple, list[Any]] = {}
        launch = getattr(self.launcher, "launch", None)
        closure = getattr(launch, "__closure__", None)
        if closure and not self.launcher.global_scratch_size and not self.launcher.profile_scratch_size:
            cells = dict(zip(launch.__code__.co_freevars, (c.cell_contents for c in closure), strict=True))
            metas = cells.get("tensordesc_meta")
            indices = cells.get("tensordesc_indices")
            if "launcher" in cells and indices and metas and all(m is not None for m in metas):
                from triton.backends.nvidia.driver import make_tensordesc_arg

                self.raw = cells["launcher"]
                self.indices = sorted(indices)
                self.metas = dict(zip(self.indices, metas, strict=True))
                self.expand = make_tensordesc_arg
                self.coop = self.launcher.launch_cooperative_grid
                self.pdl = self.launcher.launch_pdl

    def _map(self, index: int, desc: Any) -> list[Any]:
        key = (index, desc.base.data_ptr(), *desc.shape, *desc.strides)
        found = self.maps.get(key)
        if found is None:
            if len(self.maps) >= self.MAX_MAPS:
                self.maps.pop(next(iter(self.maps)))
            found = self.maps[key] = self.expand(desc, self.metas[index])
        return found

    def launch_tensors(
        self, grid_x: int, grid_y: int, stream: int, tensors: tuple, builders: tuple, rest: tuple
    ) -> None:
        """Launch with the descriptors of ``tensors`` (built by ``builders`` the first time an address is seen, then
        kept), followed by ``rest``: the kernel's other arguments and its compile-time constants, in order."""
        maps = self.maps
        expanded: list[Any] = []
        for i, t in enumerate(tensors):
            key = (i, t.data_ptr())
            found = maps.get(key)
            if found is None:
                if len(maps) >= self.MAX_MAPS:
                    maps.pop(next(iter(maps)))
                found = maps[key] = self.expand(builders[i](t), self.metas[i])
            expanded += found
        self.raw(grid_x, grid_y, 1, stream, self.function, self.coop, self.pdl, None, None, self.packed, None, None,
                 None, *expanded, *rest)  # fmt: skip

    def __call__(self, grid: tuple[int, ...], args: tuple, constants: dict[str, Any]) -> None:
        driver = triton.runtime.driver.active
        stream = driver.get_current_stream(driver.get_current_device())
        grid_y = grid[1] if len(grid) > 1 else 1
        if self.raw is None:
            self.launcher(grid[0], grid_y, 1, stream, self.function, self.packed, None, None, None, *args,
                          *constants.values())  # fmt: skip
        else:
            expanded: list[Any] = []
            for i, arg in enumerate(args):
                if i in self.metas:
                    expanded += self._map(i, arg)
                else:
                    expanded.append(arg)
            self.raw(grid[0], grid_y, 1, stream, self.function, self.coop, self.pdl, None, None, self.packed, None,
                     None, None, *expanded, *constants.values())  # fmt: skip
        _LAST["kernel"] = self.kernel


# pragma: no mutate end
def _no_launch_hooks() -> bool:
    """Whether no launch hook is set (a profiler such as proton sets one); triton 3.6 keeps them in a chain that is
    never ``None``, older versions in a plain attribute."""
    hooks = triton.knobs.runtime.launch_enter_hook
    return hooks is None or not getattr(hooks, "calls", True)


#: Elements of a tile the stream-K fix-up adds at a time (rows of FIX_ELEMENTS // BLOCK_N): 32 rows of a 128×256 tile
#: are 32 float32 registers a thread of eight warps, where a whole tile's running sum would take 128 beside the 128
#: of the partial sums being added.
FIX_ELEMENTS = 8192

#: The reduction kernel's tile for split-K partial sums: elements of C per program, slices loaded at once.
REDUCE_BLOCK = (256, 8)


class _OutShape:
    """Stands for an output ``matmul`` will allocate (row-major, contiguous) while a plan is made."""

    def __init__(self, m: int, n: int, dtype: Any):
        self.shape = (m, n)
        self.dtype = dtype
        self._stride = (n, 1)

    def stride(self) -> tuple[int, int]:
        return self._stride

    def element_size(self) -> int:
        return _torch().empty((), dtype=self.dtype).element_size()

    def data_ptr(self) -> int:
        return 0  # the caching allocator's blocks are aligned far beyond 16 bytes


def _checked_descriptor(base: Any, shape: list[int], strides: list[int], block: list[int]) -> Any:
    from triton.tools.tensor_descriptor import TensorDescriptor

    return TensorDescriptor(base, shape, strides, block)


def _aligned_copy_target(out: Any) -> Any:
    """A row-major buffer with 128-byte-aligned rows to write C into, before it is copied to ``out``."""
    return _aligned_buffer(out, False)


#: The compiled kernel of the most recent launch (for :func:`compiled_summary`).
_LAST: dict[str, Any] = {}

#: PTX instructions that show whether a kernel uses what Hopper offers, by the text that starts them.
PTX_MARKERS = {
    "wgmma.mma_async": "warpgroup MMA (sm_90 tensor cores, operands from shared memory)",
    "mma.sync": "warp-level MMA (the Ampere-style tensor-core path)",
    "cp.async.bulk.tensor": "TMA copies (tensor descriptors)",
    "mbarrier.try_wait": "waits on the barriers TMA copies complete on",
    "setmaxnreg": "register reallocation between warp groups (warp specialization)",
}


# pragma: no mutate start
# GPU only (CUDA tensors, the driver's launchers): the CPU tests cannot reach it and the GPU tests do, so
# it stays out of the CPU mutation run.
def compiled_summary(a: Any, b: Any, *, config: Config | None = None) -> dict[str, Any]:
    """Run the product once and describe the kernel Triton compiled for it (the main kernel: for a split
    product, the split-K kernel, not the reduction).

    Returns:
        The configuration (a :class:`Config`), registers per thread, spilled registers, shared memory in bytes, the
        number of times each of :data:`PTX_MARKERS` starts an instruction in the PTX, and whether the
        compiler split the kernel into warp-specialized partitions (a ``ttg.warp_specialize`` op in its IR).

    Raises:
        ValueError: Under the interpreter, which compiles nothing.
    """
    if interpreting():
        raise ValueError("the interpreter compiles nothing; run on a GPU without TRITON_INTERPRET=1")
    clear_plans()  # so that the product below compiles through the JIT and its kernel is the one described
    out = matmul(a, b, config=config)
    plan = _PLANS.get(_plan_key(a, b, None, None, config))
    kernel = plan.compiled[0] if plan is not None and plan.compiled else _LAST["kernel"]
    ptx = kernel.asm["ptx"]
    ttgir = kernel.asm["ttgir"]
    lines = [line.strip() for line in ptx.splitlines()]
    lines = [line.split(None, 1)[-1] if line.startswith("@") else line for line in lines]  # drop predicates
    return {
        "config": config or default_config(a, b, out),
        "registers": int(kernel.n_regs),
        "spills": int(kernel.n_spills),
        "shared_bytes": int(kernel.metadata.shared),
        "ptx": {marker: sum(line.startswith(marker) for line in lines) for marker in PTX_MARKERS},
        "warp_specialized": "ttg.warp_specialize" in ttgir,
    }


# pragma: no mutate end
def _upcast(a: Any) -> bool:
    # triton 3.6's interpreter keeps bf16 as uint16 and its dot multiplies the bit patterns as integers
    # (triton/runtime/interpreter.py, InterpreterBuilder.create_dot); widening the tiles to fp32 first gives
    # the exact products the tensor cores form.
    return interpreting() and _dtype_name(a.dtype) == "bfloat16"


def _staged(out: Any) -> Any:
    """Where the kernel writes: ``out`` itself, or, under the interpreter, a float32 stand-in for a bf16 ``out``.

    triton 3.6's interpreter rounds float32 to bf16 toward zero (InterpreterBuilder.cast_impl passes no
    rounding mode to _convert_float), where compiled code rounds to nearest even; torch rounds the stand-in.
    """
    if interpreting() and _dtype_name(out.dtype) == "bfloat16":
        m, n = out.shape
        return _torch().empty((m, _round_up(n, 4)), dtype=_torch().float32, device=out.device)[:, :n]
    return out


_SM_COUNTS: dict[Any, int] = {}


def _check_shared_memory(config: Config, a: Any, out_dtype: Any) -> None:
    """Refuse a ``config`` whose pipeline (and, on the persistent kernel, output tile) needs more shared memory than
    one block may have on A's device, by :func:`~gpukb.gemm.triton.configs.shared_memory_model`'s count (the compiler
    adds its barriers, about a hundred bytes): it would fail at launch with the compiler's "out of resource". The
    looked-up tiling is fitted instead (:func:`default_config`); a given one is the caller's to change."""
    need = shared_memory_model(config, a.element_size(), out_dtype.itemsize)
    limit = _shared_limit(a.device)
    if need > limit:
        fitted = fit_shared_memory(config, limit, a.element_size(), out_dtype.itemsize)
        hint = f"; at {fitted.num_stages} stage{'s' * (fitted.num_stages > 1)} it fits" if fitted != config else ""
        tiles = {
            "tma": f"{config.num_stages} stages of A and B tiles and the output tile",
            "splitk": f"{config.num_stages} stages of A and B tiles",
        }.get(config.kernel, f"the A and B tiles a {config.num_stages}-stage pipeline of the blocked kernel holds")
        raise ValueError(
            f"config {config.label!r} needs {need:,} bytes of shared memory with {_dtype_name(a.dtype)} inputs and a "
            f"{_dtype_name(out_dtype)} output ({tiles}), past the {limit:,} one block may have on this GPU{hint}"
        )


def _shared_limit(device: Any) -> int:
    # the shared memory one block may have on the device (gpukb.cuda.limits, by its compute capability; a newer GPU
    # than the table holds, which the TMA kernels also run on, by what it reports)
    if device not in _SHARED_LIMITS:
        capability = _torch().cuda.get_device_capability(device)
        if f"{capability[0]}.{capability[1]}" in limits.known():
            _SHARED_LIMITS[device] = limits.capability(capability).shared_per_block_optin
        else:
            _SHARED_LIMITS[device] = _torch().cuda.get_device_properties(device).shared_memory_per_block_optin
    return _SHARED_LIMITS[device]


_SHARED_LIMITS: dict[Any, int] = {}


def _sm_count(device: Any) -> int:
    if interpreting():
        return INTERPRETER_SMS
    if device not in _SM_COUNTS:
        _SM_COUNTS[device] = _torch().cuda.get_device_properties(device).multi_processor_count
    return _SM_COUNTS[device]


@contextlib.contextmanager
def _scratch_allocator(device: Any) -> Iterator[None]:
    """Give Triton a global-memory allocator for device-side descriptors during one launch, then restore."""
    from triton.runtime import _allocation

    torch = _torch()

    def alloc(size: int, alignment: int, stream: int | None) -> Any:
        return torch.empty(size, dtype=torch.int8, device=device)

    token = _allocation._allocator.set(alloc)
    try:
        yield
    finally:
        _allocation._allocator.reset(token)
