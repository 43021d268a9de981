"""A Triton flash-attention forward kernel: ``softmax(Q Kᵀ · scale) V`` without forming the score matrix.

The structure is FlashAttention-2's (Dao, 2023, arXiv:2307.08691): one program per block of ``BLOCK_M`` query
rows of one head, a loop over blocks of ``BLOCK_N`` keys and values, and the *online softmax* (Milakov and
Gimelshein, 2018, arXiv:1805.02867) carried in three running quantities per row: the largest score seen ``m``,
the sum of exponentials ``l`` relative to it, and the unnormalized output ``acc``. When a new block raises the
maximum, ``l`` and ``acc`` are rescaled by ``2^(m_old - m_new)``; the division by ``l`` happens once, at the end.

Details that make it fast, as in Triton's own ``06-fused-attention`` tutorial:

* ``exp2`` instead of ``exp``: the softmax scale is multiplied by ``log2(e)`` once, so each score costs one
  multiply and one ``exp2`` (a single MUFU instruction on NVIDIA GPUs).
* The key loop is split in two. Blocks that no mask touches run without any comparison; only the blocks on the
  causal diagonal and the last, partial block of keys (when the key length is not a multiple of ``BLOCK_N``)
  compute a mask. So any sequence length works, and full blocks pay nothing for it.
* The causal mask is aligned to the top left, as ``scaled_dot_product_attention(..., is_causal=True)`` aligns
  it: query ``i`` sees keys ``0..i``.
* Grouped-query attention (GQA) by index arithmetic: query head ``h`` reads key/value head ``h // (H / H_kv)``;
  nothing is copied or repeated.
* Two variants of the same loop: :func:`_forward` loads tiles through pointers (any strides with a unit stride
  along head_dim, any GPU), :func:`_forward_tma` through Hopper tensor descriptors (contiguous inputs, compute
  capability 9.0); :class:`FlashConfig` picks one (``tma=True``), and ``DEFAULT_CONFIGS`` holds what
  ``bench/attention_flash.py`` chose on an H100.

Accumulation is float32; the probabilities are rounded to the input type before the second product (a
tensor-core product takes both operands in one type), as FlashAttention-2 does in fp16 and bf16. The kernel is
compiled lazily, for the mode Triton is in at the first call (compiled for the GPU, or interpreted on the CPU under
``TRITON_INTERPRET=1``).
"""

# Triton's convention, kept here: upper-case names for sizes and compile-time constants inside kernels.
# ruff: noqa: N803, E741

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import triton
import triton.language as tl

from gpukb.arguments import flag

__all__ = [
    "DEFAULT_CONFIGS",
    "HEAD_DIMS",
    "INTERPRETER_CONFIG",
    "FlashConfig",
    "default_config",
    "flash_attention",
    "tma_refusal",
]

#: Head dimensions the kernel takes (a power of two: ``tl.arange`` needs one).
HEAD_DIMS = (16, 32, 64, 128)
#: Input element types (torch dtype names).
INPUT_DTYPES = ("float16", "bfloat16")
#: 1 / ln 2: ``exp(x) = exp2(x · log2(e))``.
LOG2_E = 1.0 / math.log(2.0)


@dataclass(frozen=True)
class FlashConfig:
    """How the kernel is tiled and scheduled.

    Attributes:
        block_m: Query rows per program (a power of two ≥ 16).
        block_n: Keys per step of the loop (a power of two ≥ 16 that divides ``block_m``, so the causal
            diagonal of a query block is a whole number of key blocks).
        num_warps: Warps per program (4 or 8).
        num_stages: Depth of the software pipeline of the key loop.
        tma: Move Q, K and V with the Hopper tensor memory accelerator (tensor descriptors) instead of pointer
            loads: the :func:`_forward_tma` kernel, for contiguous inputs on compute capability 9.0 or newer.
    """

    block_m: int
    block_n: int
    num_warps: int = 4
    num_stages: int = 2
    tma: bool = False

    def __post_init__(self) -> None:
        for name in ("block_m", "block_n"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 16 or value & (value - 1):
                raise ValueError(f"{name} must be a power of two ≥ 16; got {value!r}")
        if self.block_m % self.block_n:
            raise ValueError(f"block_n ({self.block_n}) must divide block_m ({self.block_m})")
        if self.num_warps not in (1, 2, 4, 8, 16):
            raise ValueError(f"num_warps must be in (1, 2, 4, 8, 16); got {self.num_warps!r}")
        if not isinstance(self.num_stages, int) or not 1 <= self.num_stages <= 8:
            raise ValueError(f"num_stages must be an int from 1 to 8; got {self.num_stages!r}")
        if not isinstance(self.tma, bool):
            raise TypeError(f"tma must be a bool; got {self.tma!r}")

    @property
    def label(self) -> str:
        """``"128x64 w8 s3"``: blocks, warps, stages (and ``" tma"`` for the TMA kernel)."""
        tail = " tma" if self.tma else ""
        return f"{self.block_m}x{self.block_n} w{self.num_warps} s{self.num_stages}{tail}"


#: The configuration used on the CPU under the interpreter: small blocks, so tiny shapes still span several.
INTERPRETER_CONFIG = FlashConfig(16, 16, num_warps=4, num_stages=1)

#: Default configurations on a GPU by (head_dim, causal): for 64 and 128, the choices of ``bench/attention_flash.py``
#: on an H100 (the tests require them to equal the committed record's); 16 and 32 were not measured.
DEFAULT_CONFIGS = {
    (16, False): FlashConfig(128, 64, 4, 3),
    (16, True): FlashConfig(128, 64, 4, 3),
    (32, False): FlashConfig(128, 64, 4, 3),
    (32, True): FlashConfig(128, 64, 4, 3),
    (64, False): FlashConfig(128, 64, 8, 3),
    (64, True): FlashConfig(64, 64, 4, 3, tma=True),
    (128, False): FlashConfig(64, 64, 4, 3, tma=True),
    (128, True): FlashConfig(64, 64, 4, 3, tma=True),
}


# tl.max and tl.sum are themselves jitted functions, which triton 3.6's interpreter cannot call when
# TRITON_INTERPRET was set after triton was imported; tl.reduce with their combine functions is what they
# compile to, and the interpreter recognizes these two combine functions and reduces with numpy.
_MAX = tl.standard._elementwise_max
_SUM = tl.standard._sum_combine


# --8<-- [start:inner]
def _inner(
    acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, offs_m, offs_n, lo, hi, SEQ_K, qk_scale,
    BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr, UPCAST: tl.constexpr,
):  # fmt: skip
    # Keys lo..hi-1, BLOCK_N at a time. MASKED blocks compare positions; the others trust the caller's split.
    k_ptrs += lo * stride_kn
    v_ptrs += lo * stride_vn
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        if MASKED:
            cols = start_n + offs_n
            k = tl.load(k_ptrs, mask=cols[:, None] < SEQ_K, other=0.0)
        else:
            k = tl.load(k_ptrs)
        if UPCAST:
            k = k.to(tl.float32)
        s = tl.dot(q, tl.trans(k))
        if MASKED:
            keep = cols[None, :] < SEQ_K
            if CAUSAL:
                keep = keep & (cols[None, :] <= offs_m[:, None])
            s = tl.where(keep, s * qk_scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.reduce(s, 1, _MAX))
            s = s - m_new[:, None]
        else:
            m_new = tl.maximum(m_i, tl.reduce(s, 1, _MAX) * qk_scale)
            s = s * qk_scale - m_new[:, None]
        p = tl.math.exp2(s)  # scores are in base 2: qk_scale holds log2(e)
        alpha = tl.math.exp2(m_i - m_new)  # rescales what was summed under the old maximum
        l_i = l_i * alpha + tl.reduce(p, 1, _SUM)
        acc = acc * alpha[:, None]
        if MASKED:
            v = tl.load(v_ptrs, mask=cols[:, None] < SEQ_K, other=0.0)
        else:
            v = tl.load(v_ptrs)
        if UPCAST:
            acc = tl.dot(p, v.to(tl.float32), acc)
        else:
            acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
        k_ptrs += BLOCK_N * stride_kn
        v_ptrs += BLOCK_N * stride_vn
    return acc, l_i, m_i
    # --8<-- [end:inner]


# --8<-- [start:kernel]
def _forward(
    Q, K, V, O, qk_scale,
    stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn,
    stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_om,
    H, GROUP, SEQ_Q, SEQ_K,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
    UPCAST: tl.constexpr,
):  # fmt: skip
    # Query blocks in reverse order: under a causal mask the last blocks have the most keys, and starting
    # them first leaves the short ones to fill the tail of the grid.
    start_m = tl.num_programs(0) - 1 - tl.program_id(0)
    off_bh = tl.program_id(1)
    off_b = off_bh // H
    off_h = off_bh % H
    off_kv = off_h // GROUP  # grouped-query attention: GROUP query heads share one key/value head

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_base = Q + off_b.to(tl.int64) * stride_qb + off_h.to(tl.int64) * stride_qh
    k_base = K + off_b.to(tl.int64) * stride_kb + off_kv.to(tl.int64) * stride_kh
    v_base = V + off_b.to(tl.int64) * stride_vb + off_kv.to(tl.int64) * stride_vh
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :], mask=offs_m[:, None] < SEQ_Q, other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    k_ptrs = k_base + offs_n[:, None] * stride_kn + offs_d[None, :]
    v_ptrs = v_base + offs_n[:, None] * stride_vn + offs_d[None, :]

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.full([BLOCK_M], 0.0, dtype=tl.float32)
    acc = tl.full([BLOCK_M, HEAD_DIM], 0.0, dtype=tl.float32)

    # Keys [0, full) need no mask: whole blocks, and (causal) entirely at or left of this block's first row.
    # Keys [full, hi) are masked: the diagonal blocks and the partial last block.
    full = (SEQ_K // BLOCK_N) * BLOCK_N
    hi = SEQ_K
    if CAUSAL:
        full = tl.minimum(full, start_m * BLOCK_M)
        hi = tl.minimum(hi, (start_m + 1) * BLOCK_M)
    acc, l_i, m_i = _inner(
        acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, offs_m, offs_n, 0, full, SEQ_K, qk_scale,
        BLOCK_N, False, CAUSAL, UPCAST,
    )  # fmt: skip
    acc, l_i, m_i = _inner(
        acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, offs_m, offs_n, full, hi, SEQ_K, qk_scale,
        BLOCK_N, True, CAUSAL, UPCAST,
    )  # fmt: skip

    out = acc / l_i[:, None]
    o_base = O + off_b.to(tl.int64) * stride_ob + off_h.to(tl.int64) * stride_oh
    o_ptrs = o_base + offs_m[:, None] * stride_om + offs_d[None, :]
    tl.store(o_ptrs, out.to(O.dtype.element_ty), mask=offs_m[:, None] < SEQ_Q)
    # --8<-- [end:kernel]


# --8<-- [start:tma]
def _inner_tma(
    acc, l_i, m_i, q, k_desc, v_desc, kv_row, offs_m, offs_n, lo, hi, SEQ_K, qk_scale,
    BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr, UPCAST: tl.constexpr,
):  # fmt: skip
    # As _inner, with K and V blocks moved by TMA from a 2-D view (batch · heads · length, head_dim). A block that
    # runs past this head's keys reads the next head's rows (or zeros past the tensor): finite values whose scores
    # the mask sets to -inf, so their probabilities are exactly 0.
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = k_desc.load([kv_row + start_n, 0])
        if UPCAST:
            k = k.to(tl.float32)
        s = tl.dot(q, k.T)
        if MASKED:
            cols = start_n + offs_n
            keep = cols[None, :] < SEQ_K
            if CAUSAL:
                keep = keep & (cols[None, :] <= offs_m[:, None])
            s = tl.where(keep, s * qk_scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.reduce(s, 1, _MAX))
            s = s - m_new[:, None]
        else:
            m_new = tl.maximum(m_i, tl.reduce(s, 1, _MAX) * qk_scale)
            s = s * qk_scale - m_new[:, None]
        p = tl.math.exp2(s)
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.reduce(p, 1, _SUM)
        acc = acc * alpha[:, None]
        v = v_desc.load([kv_row + start_n, 0])
        if UPCAST:
            acc = tl.dot(p, v.to(tl.float32), acc)
        else:
            acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    return acc, l_i, m_i


def _forward_tma(
    q_desc, k_desc, v_desc, O, qk_scale, stride_ob, stride_oh, stride_om,
    H, GROUP, SEQ_Q, SEQ_K,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
    UPCAST: tl.constexpr,
):  # fmt: skip
    start_m = tl.num_programs(0) - 1 - tl.program_id(0)
    off_bh = tl.program_id(1)
    off_b = off_bh // H
    off_h = off_bh % H
    off_kv = off_b * (H // GROUP) + off_h // GROUP  # row block of this head's keys in the 2-D view
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = q_desc.load([off_bh * SEQ_Q + start_m * BLOCK_M, 0])
    if UPCAST:
        q = q.to(tl.float32)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.full([BLOCK_M], 0.0, dtype=tl.float32)
    acc = tl.full([BLOCK_M, HEAD_DIM], 0.0, dtype=tl.float32)
    full = (SEQ_K // BLOCK_N) * BLOCK_N
    hi = SEQ_K
    if CAUSAL:
        full = tl.minimum(full, start_m * BLOCK_M)
        hi = tl.minimum(hi, (start_m + 1) * BLOCK_M)
    kv_row = off_kv * SEQ_K
    acc, l_i, m_i = _inner_tma(
        acc, l_i, m_i, q, k_desc, v_desc, kv_row, offs_m, offs_n, 0, full, SEQ_K, qk_scale,
        BLOCK_N, False, CAUSAL, UPCAST,
    )  # fmt: skip
    acc, l_i, m_i = _inner_tma(
        acc, l_i, m_i, q, k_desc, v_desc, kv_row, offs_m, offs_n, full, hi, SEQ_K, qk_scale,
        BLOCK_N, True, CAUSAL, UPCAST,
    )  # fmt: skip
    out = acc / l_i[:, None]
    # Rows past this head's queries belong to the next head: a masked store, not a TMA one.
    o_base = O + off_b.to(tl.int64) * stride_ob + off_h.to(tl.int64) * stride_oh
    tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :], out.to(O.dtype.element_ty),
             mask=offs_m[:, None] < SEQ_Q)  # fmt: skip
    # --8<-- [end:tma]


_COMPILED: dict[tuple[bool, str], Any] = {}
#: The compiled kernel of the most recent launch (registers, spills, shared memory: see the bench script).
LAST: dict[str, Any] = {}


def interpreting() -> bool:
    """Whether Triton runs kernels on the CPU (``TRITON_INTERPRET=1``) rather than compiling them."""
    return bool(triton.knobs.runtime.interpret)


def _clone(fn: Any, **replace: Any) -> Any:
    """``fn`` with some of its globals replaced (the jitted helpers it calls), keeping what Triton reads from it:
    its annotations (the ``tl.constexpr`` parameters), name and module."""
    globals_ = {**fn.__globals__, **replace}
    copy = type(fn)(fn.__code__, globals_, fn.__name__, fn.__defaults__)
    copy.__annotations__ = dict(fn.__annotations__)
    copy.__qualname__, copy.__module__, copy.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    return copy


def _jitted(name: str = "pointer") -> Any:
    """The kernel (``"pointer"`` or ``"tma"``), jitted for the mode Triton is in now, built once per mode."""
    key = (interpreting(), name)
    if key not in _COMPILED:
        if name == "tma":
            _COMPILED[key] = triton.jit(_clone(_forward_tma, _inner_tma=triton.jit(_inner_tma)))
        else:
            _COMPILED[key] = triton.jit(_clone(_forward, _inner=triton.jit(_inner)))
    return _COMPILED[key]


def _torch() -> Any:
    import torch

    return torch


def _name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def default_config(head_dim: int, causal: bool) -> FlashConfig:
    """The configuration :func:`flash_attention` uses when none is given (the interpreter's, on the CPU)."""
    if interpreting():
        return INTERPRETER_CONFIG
    return DEFAULT_CONFIGS[(head_dim, bool(causal))]


def _check(q: Any, k: Any, v: Any) -> tuple[int, int, int, int, int, int]:
    torch = _torch()
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"{name} must be 4-D (batch, heads, sequence, head_dim); got shape {tuple(t.shape)}")
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(
            f"q, k and v must have one element type; got {_name(q.dtype)}, {_name(k.dtype)}, {_name(v.dtype)}"
        )
    if _name(q.dtype) not in INPUT_DTYPES:
        raise TypeError(f"element type {_name(q.dtype)} is not supported; supported: {list(INPUT_DTYPES)}")
    if k.shape != v.shape:
        raise ValueError(f"k and v must have one shape; got {tuple(k.shape)} and {tuple(v.shape)}")
    b, h, sq, d = q.shape
    bk, hkv, sk, dk = k.shape
    if bk != b or dk != d:
        raise ValueError(
            f"q {tuple(q.shape)} and k {tuple(k.shape)} must agree in batch and head_dim (dimensions 0 and 3)"
        )
    if d not in HEAD_DIMS:
        raise ValueError(f"head_dim must be one of {HEAD_DIMS}; got {d}")
    if hkv == 0 or h % hkv:
        raise ValueError(f"key/value heads ({hkv}) must divide query heads ({h}) for grouped-query attention")
    if not q.device == k.device == v.device:
        raise ValueError(f"q, k and v must be on one device; got {q.device}, {k.device}, {v.device}")
    if q.device.type != "cuda" and not interpreting():
        raise ValueError(
            f"tensors on {q.device} need Triton's interpreter: set TRITON_INTERPRET=1 before the first call, "
            "or move them to a CUDA device"
        )
    return b, h, hkv, sq, sk, d


def flash_attention(
    q: Any, k: Any, v: Any, *, causal: bool = False, scale: float | None = None, config: FlashConfig | None = None
) -> Any:
    """``softmax(q kᵀ · scale [+ causal mask]) v`` by the Triton kernel, in the layout of
    ``torch.nn.functional.scaled_dot_product_attention``.

    Args:
        q: Queries, (batch, heads, q_len, head_dim), float16 or bfloat16.
        k: Keys, (batch, kv_heads, kv_len, head_dim); ``kv_heads`` must divide ``heads`` (GQA).
        v: Values, the shape of ``k``.
        causal: Mask keys after the query's position (top-left aligned, as SDPA's ``is_causal``).
        scale: Multiplies the scores; ``1 / sqrt(head_dim)`` when omitted.
        config: Tiling; :func:`default_config` when omitted.

    Returns:
        The output, (batch, heads, q_len, head_dim), of q's element type.

    Raises:
        TypeError: For non-tensors, mixed or unsupported element types, a config that is not a FlashConfig.
        ValueError: For shapes that do not agree, a head dimension the kernel does not take, key/value heads
            that do not divide query heads, tensors on different devices, CPU tensors without the interpreter.
    """
    torch = _torch()
    b, h, hkv, sq, sk, d = _check(q, k, v)
    causal = flag("causal", causal)
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    if config is None:
        config = default_config(d, causal)
        if config.tma and tma_refusal(q, k, v) is not None:  # the same tiling with pointer loads
            config = FlashConfig(config.block_m, config.block_n, config.num_warps, config.num_stages)
    if not isinstance(config, FlashConfig):
        raise TypeError(f"config must be a FlashConfig; got {type(config).__name__}")
    # The kernel assumes a unit stride along head_dim; other strides are free.
    q, k, v = (t if t.stride(-1) == 1 else t.contiguous() for t in (q, k, v))
    upcast = interpreting()
    # Under the interpreter a bf16 store truncates; write float32 and let torch round (see gpukb.kernels.matmul).
    out = torch.empty((b, h, sq, d), dtype=torch.float32 if upcast else q.dtype, device=q.device)
    if out.numel() == 0:
        return out.to(q.dtype)
    if sk == 0:
        raise ValueError("kv_len must be positive: a softmax over no keys is undefined")
    grid = (triton.cdiv(sq, config.block_m), b * h)
    common = {"HEAD_DIM": d, "BLOCK_M": config.block_m, "BLOCK_N": config.block_n, "CAUSAL": causal,
              "UPCAST": upcast, "num_warps": config.num_warps, "num_stages": config.num_stages}  # fmt: skip
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Conversion of an array with ndim > 0", DeprecationWarning)
        if config.tma:
            reason = tma_refusal(q, k, v)
            if reason is not None:
                raise ValueError(f"config {config.label!r} asks for the TMA kernel, but {reason}")
            from triton.tools.tensor_descriptor import TensorDescriptor

            def desc(t: Any, rows: int) -> Any:
                return TensorDescriptor(t, [t.shape[0] * t.shape[1] * t.shape[2], d], [d, 1], [rows, d])

            LAST["kernel"] = _jitted("tma")[grid](
                desc(q, config.block_m), desc(k, config.block_n), desc(v, config.block_n), out, scale * LOG2_E,
                out.stride(0), out.stride(1), out.stride(2), h, h // hkv, sq, sk, **common,
            )  # fmt: skip
        else:
            LAST["kernel"] = _jitted("pointer")[grid](
                q, k, v, out, scale * LOG2_E,
                q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                v.stride(0), v.stride(1), v.stride(2), out.stride(0), out.stride(1), out.stride(2),
                h, h // hkv, sq, sk, **common,
            )  # fmt: skip
    return out.to(q.dtype) if upcast else out


def tma_refusal(q: Any, k: Any, v: Any) -> str | None:
    """Why the TMA kernel cannot take these inputs, or ``None`` when it can: it views each tensor as a 2-D
    (batch · heads · length, head_dim) matrix, so each must be contiguous, and needs compute capability 9.0."""
    if not interpreting():
        major, minor = _torch().cuda.get_device_capability(q.device)
        if major < 9:
            return f"the TMA kernel needs compute capability 9.0 or newer (Hopper); this GPU has {major}.{minor}"
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not t.is_contiguous():
            return f"{name} must be contiguous (batch, heads, length, head_dim) for a 2-D tensor descriptor"
    return None
