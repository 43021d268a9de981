"""A Triton matrix product, ``C = alpha * (A @ B)``, for fp16, bf16 and fp32 inputs, and fp8 (E4M3) on Hopper.

Two kernels, as in Triton's own tutorials:

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
from typing import Any

import triton
import triton.language as tl

from gpukb.kernels.configs import (
    BLOCKED_CONFIG,
    CANDIDATES,
    DEFAULT_CONFIGS,
    FP8_CANDIDATES,
    FP32_CONFIG,
    INTERPRETER_CONFIG,
    SMALL_CONFIGS,
    SMALL_RATE,
    Config,
    pick_by_waves,
    waves,
)

__all__ = [
    "BLOCKED_CONFIG",
    "CANDIDATES",
    "DEFAULT_CONFIGS",
    "FP8_CANDIDATES",
    "FP32_CONFIG",
    "INTERPRETER_CONFIG",
    "SMALL_CONFIGS",
    "SMALL_RATE",
    "Config",
    "compiled_summary",
    "default_config",
    "matmul",
    "pick_by_waves",
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


# --8<-- [start:tma]
def tma_kernel(
    a, b, c, M, N, K, lda, ldb, ldc, alpha,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    A_ROW_MAJOR: tl.constexpr, B_ROW_MAJOR: tl.constexpr, OUT_DTYPE: tl.constexpr, UPCAST: tl.constexpr,
    DEVICE_DESC: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr, FLATTEN: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr, NUM_SMS: tl.constexpr, MAX_IMPRECISE_ACC: tl.constexpr,
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
    num_pid_in_group = GROUP_M * num_pid_n
    tile_id_c = start_pid - NUM_SMS  # the epilogue's own tile counter, as in the tutorial

    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN, warp_specialize=WARP_SPECIALIZE):
        first_pid_m = (tile_id // num_pid_in_group) * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + (tile_id % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m
        offs_am = pid_m * BLOCK_M
        offs_bn = pid_n * BLOCK_N

        acc = tl.full((BLOCK_M, BLOCK_N), 0.0, dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K
            # Boxes that hang over the edge of a tensor are filled with zeros by the copy engine: no masks.
            if A_ROW_MAJOR:
                a_tile = a_desc.load([offs_am, offs_k])
            else:
                a_tile = a_desc.load([offs_k, offs_am]).T
            if B_ROW_MAJOR:
                b_tile = b_desc.load([offs_k, offs_bn])
            else:
                b_tile = b_desc.load([offs_bn, offs_k]).T
            if UPCAST:
                a_tile = a_tile.to(tl.float32)
                b_tile = b_tile.to(tl.float32)
            acc = tl.dot(a_tile, b_tile, acc, max_num_imprecise_acc=MAX_IMPRECISE_ACC)

        tile_id_c += NUM_SMS
        first_pid_m = (tile_id_c // num_pid_in_group) * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        offs_cm = (first_pid_m + (tile_id_c % group_size_m)) * BLOCK_M
        offs_cn = ((tile_id_c % num_pid_in_group) // group_size_m) * BLOCK_N
        acc = acc * alpha
        # Stores that hang over the edge are clipped by the copy engine.
        if EPILOGUE_SUBTILE:
            acc0, acc1 = tl.split(tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1)))
            c_desc.store([offs_cm, offs_cn], acc0.to(OUT_DTYPE))
            c_desc.store([offs_cm, offs_cn + BLOCK_N // 2], acc1.to(OUT_DTYPE))
        else:
            c_desc.store([offs_cm, offs_cn], acc.to(OUT_DTYPE))
    # --8<-- [end:tma]


_COMPILED: dict[bool, dict[str, Any]] = {}


def interpreting() -> bool:
    """Whether Triton runs kernels on the CPU (``TRITON_INTERPRET=1``) rather than compiling them."""
    return bool(triton.knobs.runtime.interpret)


def _jitted(name: str) -> Any:
    """The kernel, jitted for the mode Triton is in now (compiled or interpreted), built once per mode."""
    mode = interpreting()
    table = _COMPILED.setdefault(mode, {})
    if name not in table:
        table[name] = triton.jit({"blocked": blocked_kernel, "tma": tma_kernel}[name])
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


def tma_refusal(a: Any, b: Any, out: Any) -> str | None:
    """Why the TMA kernel cannot take these operands, or ``None`` when it can.

    A tensor descriptor needs a unit stride in its last dimension, other strides that are multiples of 16
    bytes, and a base address aligned to 16 bytes; so each of A and B must be row-major or column-major with
    16-byte-aligned rows (or columns), and C row-major. FP8 operands must be K-major (A row-major, B
    column-major), as Hopper's MMA reads 8-bit operands only along K.
    """
    if not interpreting():
        if a.device.type != "cuda":
            return "the TMA kernel runs on CUDA devices"
        major, minor = _torch().cuda.get_device_capability(a.device)
        if major < 9:
            return f"the TMA kernel needs compute capability 9.0 or newer (Hopper); this GPU has {major}.{minor}"
    for name, t, layouts in (("A", a, ("row", "col")), ("B", b, ("row", "col")), ("C", out, ("row",))):
        layout = _layout(t)
        if layout not in layouts:
            need = " or ".join(f"{x}-major" for x in layouts)
            return f"{name} (shape {tuple(t.shape)}, strides {t.stride()}) must be {need} for a tensor descriptor"
        if (_leading_stride(t, layout) * t.element_size()) % 16 or t.data_ptr() % 16:
            return (
                f"{name}'s base address and leading stride ({_leading_stride(t, layout)} elements of "
                f"{t.element_size()} bytes) must be multiples of 16 bytes for a tensor descriptor"
            )
    if _dtype_name(a.dtype) == "float8_e4m3fn" and (_layout(a), _layout(b)) != ("row", "col"):
        return "fp8 operands must be K-major: A row-major and B column-major (the transpose of a row-major N×K)"
    return None


def default_config(a: Any, b: Any, out: Any) -> Config:
    """The configuration :func:`matmul` uses when none is given.

    Under the interpreter: :data:`INTERPRETER_CONFIG`. For float32: :data:`FP32_CONFIG`. Where the TMA kernel
    can serve: the input type's :data:`DEFAULT_CONFIGS` or :data:`SMALL_CONFIGS` entry, whichever
    :func:`pick_by_waves` prefers (fp8 always takes its default). Otherwise: :data:`BLOCKED_CONFIG`.
    """
    if interpreting():
        return INTERPRETER_CONFIG
    name = _dtype_name(a.dtype)
    if name == "float32":
        return FP32_CONFIG
    if name not in DEFAULT_CONFIGS or tma_refusal(a, b, out) is not None:
        return BLOCKED_CONFIG
    if name not in SMALL_CONFIGS:
        return DEFAULT_CONFIGS[name]
    sms = _sm_count(a.device)
    return pick_by_waves(a.shape[0], b.shape[1], DEFAULT_CONFIGS[name], SMALL_CONFIGS[name], sms, SMALL_RATE)


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
    fp8 = _dtype_name(a.dtype) == "float8_e4m3fn"
    if out_dtype is None:
        out_dtype = out.dtype if out is not None else (torch.bfloat16 if fp8 else a.dtype)
    if _dtype_name(out_dtype) not in OUTPUT_DTYPES:
        raise TypeError(f"output type {_dtype_name(out_dtype)} is not supported; supported: {list(OUTPUT_DTYPES)}")
    if out is not None:
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"out must be a torch.Tensor; got {type(out).__name__}")
        if tuple(out.shape) != (m, n) or out.dtype != out_dtype or out.device != a.device:
            raise ValueError(
                f"out must be a {m}×{n} {_dtype_name(out_dtype)} tensor on {a.device}; got "
                f"{tuple(out.shape)} {_dtype_name(out.dtype)} on {out.device}"
            )
        if out.numel() and any(
            t.numel() and out.untyped_storage().data_ptr() == t.untyped_storage().data_ptr() for t in (a, b)
        ):
            raise ValueError("out shares memory with A or B; the product cannot be written in place")
    if fp8 and a.device.type == "cuda" and torch.cuda.get_device_capability(a.device) < (9, 0):
        major, minor = torch.cuda.get_device_capability(a.device)
        raise ValueError(f"fp8 inputs need compute capability 9.0 or newer (Hopper); this GPU has {major}.{minor}")
    return m, n, k, out_dtype


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

    Args:
        a: An M×K matrix (torch tensor) of float16, bfloat16, float32 or float8_e4m3fn; any strides.
        b: A K×N matrix of the same type and device. Transposed views are fine (and for fp8, required: B
            must be column-major, e.g. ``w.t()`` for a row-major N×K ``w``).
        out: Optional M×N tensor to write into (poison it before a test: every element is overwritten).
        out_dtype: Output type; ``out``'s type, else A's type (bfloat16 for fp8 inputs).
        alpha: Scale applied to the float32 accumulator before rounding (the product of FP8 scales, say).
        config: Tiling and kernel; :func:`default_config` when omitted.

    Returns:
        The M×N product (``out`` when given).

    Raises:
        TypeError: For a non-tensor, mixed or unsupported element types.
        ValueError: For shapes that do not conform, tensors on different devices, CPU tensors without the
            interpreter, an ``out`` of the wrong shape, type or device (or sharing memory with A or B), a
            ``config`` naming the TMA kernel for operands it cannot describe, fp8 where unsupported.
    """
    torch = _torch()
    m, n, k, out_dtype = _check(a, b, out, out_dtype)
    if out is None:
        out = torch.empty((m, n), dtype=out_dtype, device=a.device)
    if m == 0 or n == 0:
        return out
    if k == 0:
        return out.zero_()
    fp8 = _dtype_name(a.dtype) == "float8_e4m3fn"
    if config is None:
        config = default_config(a, b, out)
        if fp8 and config.kernel != "tma":
            raise ValueError(f"fp8 needs the TMA kernel: {tma_refusal(a, b, out)}")
    if not isinstance(config, Config):
        raise TypeError(f"config must be a Config; got {type(config).__name__}")
    if config.kernel == "tma":
        reason = tma_refusal(a, b, out)
        if reason is not None:
            raise ValueError(f"config {config.label!r} names the TMA kernel, but {reason}")
    elif fp8:
        raise ValueError("fp8 inputs need the 'tma' kernel (Hopper reads 8-bit MMA operands only along K)")
    target = _staged(out)
    launch = _launch_tma if config.kernel == "tma" else _launch_blocked
    with warnings.catch_warnings():
        # triton 3.6's interpreter converts one-element arrays to ints, which numpy deprecated (see pyproject.toml)
        warnings.filterwarnings("ignore", "Conversion of an array with ndim > 0", DeprecationWarning)
        _LAST["kernel"] = launch(a, b, target, m, n, k, float(alpha), config)
    if target is not out:
        out.copy_(target)
    return out


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


def compiled_summary(a: Any, b: Any, *, config: Config | None = None) -> dict[str, Any]:
    """Run the product once and describe the kernel Triton compiled for it.

    Returns:
        The configuration (a :class:`Config`), registers per thread, spilled registers, shared memory in bytes, the
        number of times each of :data:`PTX_MARKERS` starts an instruction in the PTX, and whether the
        compiler split the kernel into warp-specialized partitions (a ``ttg.warp_specialize`` op in its IR).

    Raises:
        ValueError: Under the interpreter, which compiles nothing.
    """
    if interpreting():
        raise ValueError("the interpreter compiles nothing; run on a GPU without TRITON_INTERPRET=1")
    out = matmul(a, b, config=config)
    kernel = _LAST["kernel"]
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
        return _torch().empty(out.shape, dtype=_torch().float32, device=out.device)
    return out


def _launch_blocked(a: Any, b: Any, out: Any, m: int, n: int, k: int, alpha: float, config: Config) -> Any:
    for name, t in (("A", a), ("B", b), ("C", out)):
        reach = sum((size - 1) * abs(stride) for size, stride in zip(t.shape, t.stride(), strict=True))
        if reach > MAX_BLOCKED_OFFSET:
            raise ValueError(
                f"{name} spans {reach + 1} elements; the blocked kernel's 32-bit offsets reach "
                f"{MAX_BLOCKED_OFFSET + 1}: use the 'tma' kernel or split the product"
            )
    grid = (triton.cdiv(m, config.block_m) * triton.cdiv(n, config.block_n),)
    return _jitted("blocked")[grid](
        a, b, out, m, n, k,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1), alpha,
        BLOCK_M=config.block_m, BLOCK_N=config.block_n, BLOCK_K=config.block_k, GROUP_M=config.group_m,
        OUT_DTYPE=_tl_dtype(_dtype_name(out.dtype)),
        PRECISION="ieee" if _dtype_name(a.dtype) == "float32" else "tf32",
        UPCAST=_upcast(a),
        num_stages=config.num_stages, num_warps=config.num_warps,
    )  # fmt: skip


def _sm_count(device: Any) -> int:
    if interpreting():
        return INTERPRETER_SMS
    return _torch().cuda.get_device_properties(device).multi_processor_count


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


def _launch_tma(a: Any, b: Any, out: Any, m: int, n: int, k: int, alpha: float, config: Config) -> Any:
    from triton.tools.tensor_descriptor import TensorDescriptor

    a_row, b_row = _layout(a) == "row", _layout(b) == "row"
    lda, ldb, ldc = _leading_stride(a, _layout(a)), _leading_stride(b, _layout(b)), _leading_stride(out, "row")
    bm, bn, bk = config.block_m, config.block_n, config.block_k
    c_bn = bn // 2 if config.epilogue_subtile else bn
    device_desc = config.warp_specialize
    if device_desc:
        args = (a, b, out)
    else:
        # Descriptors over the storage order: a column-major A is the row-major K×M tensor A.T.
        a_t = a if a_row else a.t()
        b_t = b if b_row else b.t()
        args = (
            TensorDescriptor(a_t, list(a_t.shape), [lda, 1], [bm, bk] if a_row else [bk, bm]),
            TensorDescriptor(b_t, list(b_t.shape), [ldb, 1], [bk, bn] if b_row else [bn, bk]),
            TensorDescriptor(out, [m, n], [ldc, 1], [bm, c_bn]),
        )
    sms = _sm_count(a.device)
    grid = (min(sms, triton.cdiv(m, bm) * triton.cdiv(n, bn)),)
    with _scratch_allocator(a.device) if device_desc else contextlib.nullcontext():
        return _jitted("tma")[grid](
            *args, m, n, k, lda, ldb, ldc, alpha,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=config.group_m,
            A_ROW_MAJOR=a_row, B_ROW_MAJOR=b_row, OUT_DTYPE=_tl_dtype(_dtype_name(out.dtype)),
            UPCAST=_upcast(a), DEVICE_DESC=device_desc, EPILOGUE_SUBTILE=config.epilogue_subtile,
            FLATTEN=config.flatten, WARP_SPECIALIZE=config.warp_specialize, NUM_SMS=sms,
            MAX_IMPRECISE_ACC=config.fp8_imprecise_acc if _dtype_name(a.dtype) == "float8_e4m3fn" else None,
            num_stages=config.num_stages, num_warps=config.num_warps,
        )  # fmt: skip
