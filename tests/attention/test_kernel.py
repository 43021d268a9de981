"""The Triton flash-attention forward kernel: on the CPU through Triton's interpreter, and on a CUDA GPU.

Every check compares with attention formed in float64 (``scaled_dot_product_attention`` on float64 copies of the
same inputs) by the relative Frobenius error, bounded by the error of that reference rounded once to the input
type: the kernel accumulates in float32 and rounds P to the input type before the second product, so it lands
within a small multiple of that floor.

Under the interpreter the kernel widens its tiles to float32 (triton 3.6's interpreter multiplies bf16 bit
patterns as integers; see ``gpukb.gemm.triton.matmul``), so the CPU tests check the tiling, the masks, the loop
split and the GQA indexing, not bf16 arithmetic, which the ``gpu`` tests exercise.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import torch.nn.functional as F  # noqa: E402, N812

from gpukb.attention import kernel as fa  # noqa: E402
from gpukb.attention.kernel import BackwardConfig, FlashConfig, flash_attention  # noqa: E402
from gpukb.attention.reference import causal_mask  # noqa: E402
from gpukb.numerics import relative_error  # noqa: E402
from tests.helpers import exactly, reporting_cuda  # noqa: E402


@pytest.fixture
def interpret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)


def _inputs(b, h, hkv, sq, sk, d, dtype, device="cpu", seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(b, h, sq, d, generator=gen).to(device=device, dtype=dtype)
    k = torch.randn(b, hkv, sk, d, generator=gen).to(device=device, dtype=dtype)
    v = torch.randn(b, hkv, sk, d, generator=gen).to(device=device, dtype=dtype)
    return q, k, v


def _reference(q, k, v, causal, scale=None):
    return F.scaled_dot_product_attention(
        q.double(), k.double(), v.double(), is_causal=causal, scale=scale, enable_gqa=q.shape[1] != k.shape[1]
    )


def _assert_close(out, q, k, v, causal, scale=None, factor=4.0):
    ref = _reference(q, k, v, causal, scale)
    assert out.shape == ref.shape
    assert out.dtype == q.dtype
    assert torch.isfinite(out).all()
    err, floor = relative_error(out, ref), relative_error(ref.to(q.dtype), ref)
    assert err <= factor * floor, (err, floor)


# --- CPU, through the interpreter ------------------------------------------------------------------------


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(
    ("dtype", "causal", "shape", "config"),
    [
        # (b, h, hkv, q_len, kv_len, d): lengths that no block divides, so the tail masks run.
        (torch.float16, False, (1, 2, 2, 37, 37, 64), fa.INTERPRETER_CONFIG),
        (torch.bfloat16, True, (1, 2, 2, 37, 37, 64), fa.INTERPRETER_CONFIG),
        # GQA (4 query heads on 2 key/value heads), a query block of two key blocks (two diagonal blocks).
        (torch.float16, True, (2, 4, 2, 40, 40, 16), FlashConfig(32, 16)),
        (torch.bfloat16, False, (1, 4, 1, 23, 50, 32), FlashConfig(32, 16)),
        # causal with more queries than keys: top-left alignment, rows past kv_len see every key.
        (torch.float16, True, (1, 1, 1, 50, 20, 128), fa.INTERPRETER_CONFIG),
        # the TMA kernel: blocks that run past a head's rows read the next head's (or zeros), masked or not stored
        (torch.float16, True, (2, 4, 2, 37, 37, 32), FlashConfig(32, 16, tma=True)),
        (torch.bfloat16, False, (2, 2, 1, 40, 23, 16), FlashConfig(16, 16, tma=True)),
    ],
    ids=["fp16", "bf16-causal", "gqa-causal-32x16", "mqa-cross", "causal-q>kv-d128", "tma-gqa-causal", "tma-cross"],
)
# numpy's warning about the interpreter's scalar conversions is silenced by the launches themselves, not here
@pytest.mark.filterwarnings("error::DeprecationWarning")
def test_kernel_matches_float64_attention(dtype, causal, shape, config) -> None:
    b, h, hkv, sq, sk, d = shape
    q, k, v = _inputs(b, h, hkv, sq, sk, d, dtype, seed=sum(shape))
    out = flash_attention(q, k, v, causal=causal, config=config)
    _assert_close(out, q, k, v, causal)


@pytest.mark.usefixtures("interpret")
def test_scale_and_strided_inputs() -> None:
    q, k, v = _inputs(1, 2, 2, 20, 20, 16, torch.float16, seed=3)
    q = q.transpose(1, 2).contiguous().transpose(1, 2)  # (b, s, h, d) memory, viewed as (b, h, s, d)
    assert not q.is_contiguous()
    out = flash_attention(q, k, v, scale=0.3)
    _assert_close(out, q, k, v, False, scale=0.3)


@pytest.mark.usefixtures("interpret")
def test_bad_input_is_named() -> None:
    q, k, v = _inputs(1, 4, 2, 8, 8, 16, torch.float16)
    with pytest.raises(TypeError, match=r"q must be a torch\.Tensor; got list"):
        flash_attention([1.0], k, v)
    with pytest.raises(ValueError, match=r"k must be 4-D \(batch, heads, sequence, head_dim\); got shape \(2, 8, 16\)"):
        flash_attention(q, k[0], v)
    with pytest.raises(TypeError, match="one element type; got float16, float32, float16"):
        flash_attention(q, k.float(), v)
    with pytest.raises(TypeError, match=r"float32 is not supported; supported: \['float16', 'bfloat16'\]"):
        flash_attention(q.float(), k.float(), v.float())
    with pytest.raises(ValueError, match=r"k and v must have one shape; got \(1, 2, 8, 16\) and \(1, 2, 9, 16\)"):
        flash_attention(q, k, torch.cat([v, v[:, :, :1]], 2))
    with pytest.raises(ValueError, match="key/value heads \\(3\\) must divide query heads \\(4\\)"):
        flash_attention(q, *_inputs(1, 3, 3, 8, 8, 16, torch.float16)[1:])
    with pytest.raises(ValueError, match=r"head_dim must be one of \(16, 32, 64, 128, 256\); got 24"):
        flash_attention(*_inputs(1, 1, 1, 8, 8, 24, torch.float16))
    with pytest.raises(ValueError, match=r"head_dim must be one of \(16, 32, 64, 128, 256\); got 512"):
        flash_attention(*_inputs(1, 1, 1, 4, 4, 512, torch.float16))
    with pytest.raises(TypeError, match="config must be a FlashConfig; got tuple"):
        flash_attention(q, k, v, config=(16, 16))
    with pytest.raises(ValueError, match=r"unknown align 'diagonal'; choose one of \['top-left', 'bottom-right'\]"):
        flash_attention(q, k, v, causal=True, align="diagonal")
    with pytest.raises(TypeError, match="backward_config must be a BackwardConfig; got FlashConfig"):
        flash_attention(q, k, v, backward_config=FlashConfig(16, 16))
    with pytest.raises(ValueError, match="block_n2 must be a power of two from 16 to 1024; got 8"):
        BackwardConfig(16, 16, 16, 8)
    with pytest.raises(ValueError, match=r"unknown dq 'split'; choose one of \['pass', 'atomic', 'tma'\]"):
        BackwardConfig(16, 16, 16, 16, dq="split")
    assert BackwardConfig(32, 128, 16, 16, 8, 2, dq="tma").label == "32x128 w8 s2 dq tma"
    with pytest.raises(ValueError, match=r"block_n \(32\) must divide block_m \(16\)"):
        FlashConfig(16, 32)
    with pytest.raises(ValueError, match="block_m must be a power of two from 16 to 1024; got 48"):
        FlashConfig(48, 16)
    # a scale that is not a finite float32 would make every score NaN; an alignment applies to a causal mask only
    for scale, error in ((float("nan"), ValueError), (float("inf"), ValueError), (1e39, ValueError),
                         (True, TypeError), ("0.5", TypeError)):  # fmt: skip
        with pytest.raises(error, match="scale must be"):
            flash_attention(q, k, v, scale=scale)
    with pytest.raises(ValueError, match=r"align='bottom-right' .* applies only with causal=True"):
        flash_attention(q, k, v, align="bottom-right")
    with pytest.raises(ValueError, match=r"head_dim must be one of \(16, 32, 64, 128, 256\); got 24"):
        fa.default_config(24, False)
    with pytest.raises(TypeError, match="head_dim must be an int ≥ 1; got '64'"):
        fa.default_backward_config("64")
    with pytest.raises(ValueError, match="num_warps must be in"):
        FlashConfig(16, 16, num_warps=True)
    with pytest.raises(ValueError, match="block_m must be a power of two from 16 to 1024; got 2048"):
        FlashConfig(2048, 16)
    with pytest.raises(ValueError, match="asks for the TMA kernel, but q must be contiguous"):
        flash_attention(q.transpose(1, 2).contiguous().transpose(1, 2), k, v, config=FlashConfig(16, 16, tma=True))


def test_cpu_tensors_without_the_interpreter_are_refused(compiled) -> None:
    q, k, v = _inputs(1, 1, 1, 8, 8, 16, torch.float16)
    with pytest.raises(ValueError, match="need Triton's interpreter: set TRITON_INTERPRET=1"):
        flash_attention(q, k, v)


def test_every_default_config_is_valid_for_its_head_dim() -> None:
    for (d, _causal), cfg in fa.DEFAULT_CONFIGS.items():
        assert d in fa.HEAD_DIMS
        assert cfg.block_m % cfg.block_n == 0
    assert {d for d, _ in fa.DEFAULT_CONFIGS} == set(fa.DEFAULT_BACKWARD_CONFIGS) == set(fa.HEAD_DIMS)


# --- causal alignment, head dim 256, and the backward pass, against a masked float64 reference ------------


def _masked_reference(q, k, v, causal, align="top-left", scale=None):
    """Attention in float64 with autograd: the mask is ``gpukb.attention.reference.causal_mask`` (numpy), GQA by
    repeating key/value heads, and a row that may see no key gives 0 (FlashAttention's convention)."""
    q, k, v = (t.detach().double().requires_grad_() for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    kr, vr = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = q @ kr.transpose(-1, -2) * scale
    if causal:
        keep = torch.from_numpy(causal_mask(q.shape[2], k.shape[2], align)).to(q.device)
        s = s.masked_fill(~keep, float("-inf"))
        p = torch.where(keep.any(-1, keepdim=True), torch.softmax(s, -1), 0.0)
    else:
        p = torch.softmax(s, -1)
    return p @ vr, (q, k, v)


def _check_against(got, ref, dtype, factor=4.0):
    floor = relative_error(ref.to(dtype), ref)
    assert got.shape == ref.shape
    assert got.dtype == dtype
    assert torch.isfinite(got).all()
    assert relative_error(got, ref) <= factor * floor + 1e-6, (relative_error(got, ref), floor)


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(
    ("shape", "align"),
    [
        ((1, 2, 1, 20, 45, 16), "top-left"),  # queries < keys: the last 25 keys are seen by no query
        ((1, 2, 1, 20, 45, 16), "bottom-right"),  # the last query sees all 45 keys (KV-cache decoding)
        ((1, 2, 2, 45, 20, 16), "top-left"),  # queries > keys: rows from 20 on see every key
        ((1, 2, 2, 45, 20, 16), "bottom-right"),  # the first 25 rows see no key: output 0
        ((1, 2, 2, 1, 33, 16), "bottom-right"),  # one new token against a cache of 33
    ],
    ids=["q<k-top-left", "q<k-bottom-right", "q>k-top-left", "q>k-bottom-right", "decode-one-token"],
)
def test_causal_alignment_matches_masked_reference(shape, align) -> None:
    b, h, hkv, sq, sk, d = shape
    q, k, v = _inputs(b, h, hkv, sq, sk, d, torch.float16, seed=sq * sk)
    out = flash_attention(q, k, v, causal=True, align=align)
    ref, _ = _masked_reference(q, k, v, True, align)
    _check_against(out, ref.detach(), torch.float16)
    if align == "bottom-right" and sq > sk:
        assert (out[:, :, : sq - sk] == 0).all()
    if sq != sk:  # the two alignments are different masks here, so the test can tell them apart
        other = "top-left" if align == "bottom-right" else "bottom-right"
        wrong, _ = _masked_reference(q, k, v, True, other)
        assert relative_error(out, wrong.detach()) > 0.1


@pytest.mark.usefixtures("interpret")
def test_head_dim_256_matches_float64_attention() -> None:
    q, k, v = _inputs(1, 2, 1, 21, 21, 256, torch.bfloat16, seed=256)
    out = flash_attention(q, k, v, causal=True)
    _assert_close(out, q, k, v, True)


#: (b, h, kv_heads, q_len, kv_len, head_dim, dtype, causal, align, backward config)
BACKWARD_CASES = [
    (1, 2, 2, 37, 37, 32, torch.float16, False, "top-left", None),
    # GQA: dK, dV summed over 2 query heads; lengths that the blocks divide (the loads without masks)
    (1, 4, 2, 32, 32, 16, torch.bfloat16, True, "top-left", None),
    (1, 2, 1, 20, 45, 16, torch.float16, True, "bottom-right", None),
    (1, 2, 1, 45, 20, 16, torch.float16, True, "bottom-right", None),  # rows with no key: zero gradients
    (1, 2, 1, 45, 20, 16, torch.float16, True, "top-left", BackwardConfig(16, 32, 32, 16)),
    (2, 2, 1, 33, 50, 64, torch.bfloat16, False, "top-left", BackwardConfig(32, 16, 16, 32)),
    # dQ added by the dK/dV kernel (atomic adds; "tma" takes them too under the interpreter): GQA, rows past the
    # end of a head, rows that see no key
    (1, 4, 2, 37, 37, 32, torch.bfloat16, True, "top-left", BackwardConfig(16, 16, 16, 16, dq="atomic")),
    (1, 2, 1, 45, 20, 16, torch.float16, True, "bottom-right", BackwardConfig(16, 16, 16, 16, dq="tma")),
]


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(
    "case", BACKWARD_CASES, ids=["plain", "gqa-causal", "q<k-bottom-right", "q>k-bottom-right", "blocks-16x32",
                                "cross-d64", "dq-atomic-gqa", "dq-tma-no-key-rows"],
)  # fmt: skip
@pytest.mark.filterwarnings("error::DeprecationWarning")
def test_backward_matches_autograd_on_masked_reference(case) -> None:
    b, h, hkv, sq, sk, d, dtype, causal, align, bwd = case
    q, k, v = _inputs(b, h, hkv, sq, sk, d, dtype, seed=sq + sk + d)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    d_out = torch.randn(b, h, sq, d, generator=torch.Generator().manual_seed(1)).to(dtype)
    out = flash_attention(q, k, v, causal=causal, align=align, backward_config=bwd)
    grads = torch.autograd.grad(out, (q, k, v), d_out)
    ref, leaves = _masked_reference(q, k, v, causal, align)
    ref_grads = torch.autograd.grad(ref, leaves, d_out.double())
    _check_against(out.detach(), ref.detach(), dtype)
    for got, want in zip(grads, ref_grads, strict=True):
        _check_against(got, want, dtype)


# --- GPU ------------------------------------------------------------------------------------------------


#: (dtype, head_dim, causal, q_len, kv_len, kv_heads) on 8 query heads: every type, head dim and causality on
#: a GQA shape whose length no block divides, then cross-attention shapes (q_len ≠ kv_len) in bf16.
GPU_CASES = [
    (dtype, d, causal, 1000, 1000, 2)
    for dtype in (torch.float16, torch.bfloat16)
    for d in (64, 128)
    for causal in (False, True)
] + [(torch.bfloat16, 128, causal, sq, sk, 8) for causal in (False, True) for sq, sk in ((256, 1040), (1040, 300))]
#: The default tiling (``DEFAULT_CONFIGS``) and the pointer kernel on every case, the TMA kernel with a 128x64
#: tiling on the bf16 ones.
GPU_CONFIGS = {
    "default": None,
    "pointer": fa.FlashConfig(128, 64, 8, 3),
    "tma": fa.FlashConfig(128, 64, 8, 3, tma=True),
}


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(
    ("dtype", "d", "causal", "sq", "sk", "hkv", "kernel"),
    [(*case, kernel) for case in GPU_CASES for kernel in GPU_CONFIGS if kernel != "tma" or case[0] == torch.bfloat16],
)
def test_kernel_matches_float64_attention_on_gpu(dtype, d, causal, sq, sk, hkv, kernel) -> None:
    q, k, v = _inputs(2, 8, hkv, sq, sk, d, dtype, device="cuda", seed=sq + sk + d)
    out = flash_attention(q, k, v, causal=causal, config=GPU_CONFIGS[kernel])
    _assert_close(out, q, k, v, causal)
    # and the SDPA backend the GPU picks, on the same inputs, lands in the same place
    ref = _reference(q, k, v, causal)
    peer = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hkv != 8)
    print(f"kernel error {relative_error(out, ref):.3g}, SDPA error {relative_error(peer, ref):.3g}")
    assert relative_error(out, ref) <= 1.5 * relative_error(peer, ref) + 1e-4


#: (dtype, head_dim, causal, align, q_len, kv_len, kv_heads) on 8 query heads, batch 2: every head dim the
#: backward is tuned for, causal and not, at a length no block divides with GQA; fp16 once; both alignments on
#: cross-attention shapes.
BACKWARD_GPU_CASES = [
    (torch.bfloat16, d, causal, "top-left", 1000, 1000, 2) for d in (64, 128, 256) for causal in (False, True)
] + [
    (torch.float16, 128, True, "top-left", 1000, 1000, 2),
    (torch.bfloat16, 64, True, "top-left", 300, 1040, 2),
    (torch.bfloat16, 128, True, "bottom-right", 300, 1040, 8),
    (torch.bfloat16, 128, True, "bottom-right", 1040, 300, 8),
]


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(("dtype", "d", "causal", "align", "sq", "sk", "hkv"), BACKWARD_GPU_CASES)
def test_backward_matches_float64_on_gpu(dtype, d, causal, align, sq, sk, hkv) -> None:
    from torch.nn.attention.bias import causal_lower_right

    q, k, v = _inputs(2, 8, hkv, sq, sk, d, dtype, device="cuda", seed=sq + sk + d)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    d_out = torch.randn(2, 8, sq, d, device="cuda", generator=torch.Generator("cuda").manual_seed(5)).to(dtype)
    out = flash_attention(q, k, v, causal=causal, align=align)
    grads = torch.autograd.grad(out, (q, k, v), d_out)
    ref, leaves = _masked_reference(q, k, v, causal, align)
    ref_grads = torch.autograd.grad(ref, leaves, d_out.double())
    errors = [relative_error(g, r) for g, r in zip((out, *grads), (ref, *ref_grads), strict=True)]
    if align == "bottom-right" and sq > sk:
        # SDPA has no defined output for rows that see no key; hold the kernel to a few roundings instead
        floors = [relative_error(r.to(dtype), r) for r in (ref, *ref_grads)]
        print("kernel errors", [f"{e:.3g}" for e in errors], "floors", [f"{f:.3g}" for f in floors])
        assert all(e <= 8 * f for e, f in zip(errors, floors, strict=True))
        assert (out[:, :, : sq - sk] == 0).all()
        assert (grads[0][:, :, : sq - sk] == 0).all()
        return
    # SDPA on the same inputs (with the same mask), against the same float64 reference
    mask = {"is_causal": True} if causal and align == "top-left" else {}
    if causal and align == "bottom-right":
        mask = {"attn_mask": causal_lower_right(sq, sk)}
    peer = F.scaled_dot_product_attention(q, k, v, enable_gqa=hkv != 8, **mask)
    peer_grads = torch.autograd.grad(peer, (q, k, v), d_out)
    peer_errors = [relative_error(g, r) for g, r in zip((peer, *peer_grads), (ref, *ref_grads), strict=True)]
    print("kernel errors", [f"{e:.3g}" for e in errors], "SDPA errors", [f"{e:.3g}" for e in peer_errors])
    for name, ours, theirs in zip(("out", "dq", "dk", "dv"), errors, peer_errors, strict=True):
        assert ours <= 1.5 * theirs + 1e-4, (name, ours, theirs)


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize("dq", ["atomic", "tma"])
@pytest.mark.parametrize(("causal", "align", "sq", "sk", "hkv"), [(True, "top-left", 1000, 1000, 2),
                                                                  (False, "top-left", 300, 1040, 8)])  # fmt: skip
def test_backward_with_dq_added_by_the_dkdv_kernel_on_gpu(dq, causal, align, sq, sk, hkv) -> None:
    """dQ added by the dK/dV kernel (atomic adds or TMA reductions) is as close to float64 as SDPA's."""
    q, k, v = _inputs(2, 8, hkv, sq, sk, 128, torch.bfloat16, device="cuda", seed=sq + sk)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    d_out = torch.randn(2, 8, sq, 128, device="cuda", generator=torch.Generator("cuda").manual_seed(5)).bfloat16()
    config = BackwardConfig(32, 64, 64, 32, 4, 3, dq=dq)
    grads = torch.autograd.grad(flash_attention(q, k, v, causal=causal, backward_config=config), (q, k, v), d_out)
    assert "dq" not in fa.LAST  # no dQ pass was launched
    ref, leaves = _masked_reference(q, k, v, causal, align)
    ref_grads = torch.autograd.grad(ref, leaves, d_out.double())
    peer = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hkv != 8)
    peer_grads = torch.autograd.grad(peer, (q, k, v), d_out)
    for name, got, theirs, want in zip("qkv", grads, peer_grads, ref_grads, strict=True):
        ours, peer_error = relative_error(got, want), relative_error(theirs, want)
        print(f"d{name}: kernel error {ours:.3g}, SDPA error {peer_error:.3g}")
        assert ours <= 1.5 * peer_error + 1e-4, name


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize("causal", [False, True])
def test_head_dim_256_forward_on_gpu(causal) -> None:
    q, k, v = _inputs(2, 8, 2, 1000, 1000, 256, torch.bfloat16, device="cuda", seed=256)
    out = flash_attention(q, k, v, causal=causal)
    _assert_close(out, q, k, v, causal)
    ref = _reference(q, k, v, causal)
    peer = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    assert relative_error(out, ref) <= 1.5 * relative_error(peer, ref) + 1e-4


# --- the host side on the CPU, without running a kernel: configurations, refusals, the kernels each launch
# builds, and the grids, arguments and buffers of every launch ------------------------------------------------


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: FlashConfig(16, 16, num_stages=0), ValueError, "num_stages must be an int ≥ 1, ≤ 8; got 0"),
        (lambda: FlashConfig(16, 16, num_stages=9), ValueError, "num_stages must be an int ≥ 1, ≤ 8; got 9"),
        (lambda: FlashConfig(16, 16, num_warps=3), ValueError, "num_warps must be in (1, 2, 4, 8, 16); got 3"),
        (lambda: FlashConfig(16, 16, num_warps=32), ValueError, "num_warps must be in (1, 2, 4, 8, 16); got 32"),
        (lambda: FlashConfig(16, 16, tma=1), TypeError, "tma must be a bool; got 1"),
        (lambda: FlashConfig(2048, 16), ValueError, "block_m must be a power of two from 16 to 1024; got 2048"),
        (lambda: FlashConfig(16.0, 16), ValueError, "block_m must be a power of two from 16 to 1024; got 16.0"),
        (lambda: BackwardConfig(16, 16, 16, 16, num_stages=9), ValueError, "num_stages must be an int ≥ 1, ≤ 8; got 9"),
        (lambda: fa.default_config(64, "yes"), TypeError, "causal must be True or False; got 'yes' (str)"),
    ],
)  # fmt: skip
def test_configurations_name_what_they_refuse(make, error, message) -> None:
    with pytest.raises(error, match=exactly(message)):
        make()


def test_configurations_take_every_value_in_range() -> None:
    for warps in (1, 2, 4, 8, 16):
        assert FlashConfig(16, 16, num_warps=warps).num_warps == warps
    for stages in (1, 8):
        assert FlashConfig(16, 16, num_stages=stages).label == f"16x16 w4 s{stages}"
        assert BackwardConfig(16, 16, 16, 16, num_stages=stages).num_stages == stages
    assert FlashConfig(1024, 16).label == "1024x16 w4 s2"
    assert FlashConfig(16, 16, tma=True).label == "16x16 w4 s2 tma"


def test_default_configs_by_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert fa.default_config(64, True) is fa.DEFAULT_CONFIGS[(64, True)]
    assert fa.default_backward_config(256) is fa.DEFAULT_BACKWARD_CONFIGS[256]
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert fa.default_config(64, True) is fa.INTERPRETER_CONFIG
    assert fa.default_backward_config(256) is fa.INTERPRETER_BACKWARD_CONFIG


def test_clone_replaces_globals_and_keeps_what_triton_reads() -> None:
    def sample(x, n: int = 3):
        """Doc."""
        return helper(x) * n  # noqa: F821 (a global the clone supplies)

    copy = fa._clone(sample, helper=lambda x: x + 1)
    assert copy(1) == 6  # (1 + 1) · 3: the replaced global, the default kept
    assert copy(1, 2) == 4
    assert (copy.__name__, copy.__qualname__, copy.__module__, copy.__doc__) == (
        "sample", sample.__qualname__, __name__, "Doc.")  # fmt: skip
    assert copy.__annotations__ == {"n": "int"}  # (a string: this module has postponed annotations)
    assert copy.__annotations__ is not sample.__annotations__
    assert "helper" not in sample.__globals__  # the original's globals are untouched
    assert type(copy) is type(sample)


@pytest.mark.parametrize("interpreted", [True, False])
def test_jitted_builds_each_kernel_with_its_helpers_once_per_mode(interpreted, monkeypatch) -> None:
    """Each name's kernel, its jitted helpers swapped in for the plain functions (the module's own are left as
    they are), built once per mode; the default is the pointer kernel."""
    monkeypatch.setattr(fa, "_COMPILED", {})
    _mode(monkeypatch, interpreted)
    kinds = {
        "pointer": (fa._forward, {"_inner": fa._inner, "_epilogue": fa._epilogue}),
        "tma": (fa._forward_tma, {"_inner_tma": fa._inner_tma, "_epilogue": fa._epilogue}),
        "delta": (fa._bwd_delta, {}),
        "dkdv": (fa._bwd_dkdv, {"_dkdv_steps": fa._dkdv_steps}),
        "dq": (fa._bwd_dq, {"_dq_steps": fa._dq_steps}),
    }
    built = {}
    for name, (kernel, helpers) in kinds.items():
        jitted = fa._jitted(name)
        assert type(jitted).__name__ == ("InterpretedFunction" if interpreted else "JITFunction")
        assert jitted.fn.__name__ == kernel.__name__
        assert jitted.fn.__code__ is kernel.__code__
        for helper, plain in helpers.items():
            assert type(jitted.fn.__globals__[helper]) is type(jitted), helper
            assert jitted.fn.__globals__[helper].fn is plain, helper
            assert kernel.__globals__[helper] is plain
        built[name] = jitted
    assert fa._jitted() is built["pointer"]
    assert all(fa._jitted(name) is jitted for name, jitted in built.items())
    assert set(fa._COMPILED) == {(interpreted, name) for name in kinds}


class _Launches:
    """Stands in for ``fa._jitted``: each launch is recorded (the kernel's name, its grid, and its arguments bound to
    the kernel's own parameters) instead of run."""

    KERNELS: ClassVar[dict[str, str]] = {"pointer": "_forward", "tma": "_forward_tma", "delta": "_bwd_delta",
                                         "dkdv": "_bwd_dkdv", "dq": "_bwd_dq"}  # fmt: skip

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[int, ...], dict, dict]] = []

    def __call__(self, name: str = "pointer") -> Any:
        import inspect

        signature = inspect.signature(getattr(fa, self.KERNELS[name]))
        calls = self.calls

        class Kernel:
            def __getitem__(self, grid):
                def launch(*args, **kwargs):
                    options = {key: kwargs.pop(key) for key in ("num_warps", "num_stages") if key in kwargs}
                    calls.append((name, grid, signature.bind(*args, **kwargs).arguments, options))
                    return f"compiled {name}"

                return launch

        return Kernel()


def _mode(monkeypatch: pytest.MonkeyPatch, interpreted: bool) -> None:
    if interpreted:
        monkeypatch.setenv("TRITON_INTERPRET", "1")
    else:
        monkeypatch.delenv("TRITON_INTERPRET", raising=False)


def _pop_same(args: dict, **tensors: Any) -> None:
    """Each named argument of a recorded launch is that very tensor (removed from ``args``)."""
    for name, tensor in tensors.items():
        assert args.pop(name) is tensor, name


def _meta(*shape, dtype=torch.float16):
    return torch.empty(shape, dtype=dtype, device="meta")


@pytest.fixture
def float64_default() -> Any:
    """torch's default element type set to float64 (as a program may): the float32 buffers must not follow it."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> _Launches:
    recorder = _Launches()
    monkeypatch.setattr(fa, "_jitted", recorder)
    monkeypatch.setattr(fa, "LAST", {"dq": "from an earlier launch"})
    return recorder


@pytest.mark.parametrize("interpreted", [True, False])
@pytest.mark.parametrize("with_lse", [False, True])
def test_forward_launch_grid_and_arguments(interpreted, with_lse, launches, monkeypatch) -> None:
    """(batch 2, 4 heads on 2 key/value heads, 37 queries, 50 keys, head dim 32) at 32x16: cdiv(37, 32) = 2 query
    blocks by 2 · 4 heads; strides of each tensor, lengths, the causal offset, exp2's scale; float32 output under
    the interpreter (rounded on return), the input type on a GPU; tensors on meta, so no kernel runs."""
    _mode(monkeypatch, interpreted)
    q, k, v = _meta(2, 4, 37, 32), _meta(2, 2, 50, 32), _meta(2, 2, 50, 32).transpose(2, 3).contiguous().mT
    lse = _meta(2, 4, 37, dtype=torch.float32) if with_lse else None
    out = fa._forward_launch(q, k, v, True, 13, 0.25, FlashConfig(32, 16, 8, 3), lse)
    [(name, grid, args, options)] = launches.calls
    assert (name, grid, options) == ("pointer", (2, 8), {"num_warps": 8, "num_stages": 3})
    buffer = args.pop("O")
    assert (buffer.shape, buffer.dtype, buffer.device) == (
        q.shape, torch.float32 if interpreted else torch.float16, q.device)  # fmt: skip
    assert args.pop("LSE") is (lse if with_lse else buffer)
    _pop_same(args, Q=q, K=k, V=v)
    assert args.pop("qk_scale") == pytest.approx(0.25 / math.log(2))
    assert args == {
        "stride_qb": 4 * 37 * 32, "stride_qh": 37 * 32, "stride_qm": 32, "stride_kb": 2 * 50 * 32,
        "stride_kh": 50 * 32, "stride_kn": 32, "stride_vb": 2 * 50 * 32, "stride_vh": 50 * 32, "stride_vn": 1,
        "stride_ob": 4 * 37 * 32, "stride_oh": 37 * 32, "stride_om": 32, "H": 4, "GROUP": 2, "SEQ_Q": 37,
        "SEQ_K": 50, "OFFSET": 13, "HEAD_DIM": 32, "BLOCK_M": 32, "BLOCK_N": 16, "CAUSAL": True,
        "UPCAST": interpreted, "STORE_LSE": with_lse,
    }  # fmt: skip
    assert (out.shape, out.dtype, out.device) == (q.shape, torch.float16, q.device)
    assert fa.LAST["kernel"] == fa.LAST["forward"] == "compiled pointer"


@pytest.mark.parametrize("interpreted", [True, False])
def test_forward_launch_of_the_tma_kernel(interpreted, launches, monkeypatch) -> None:
    """The TMA kernel takes each tensor as one (batch · heads · length, head_dim) matrix in blocks of block_m query
    rows or block_n keys; on a GPU below compute capability 9.0 the launch is refused, naming the capability."""
    _mode(monkeypatch, interpreted)
    asked = []
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device: asked.append(device) or (9, 0))
    q, k, v = _meta(2, 4, 37, 32), _meta(2, 2, 50, 32), _meta(2, 2, 50, 32)
    lse = _meta(2, 4, 37, dtype=torch.float32)
    fa._forward_launch(q, k, v, False, 0, 0.5, FlashConfig(32, 16, tma=True), lse)
    [(name, grid, args, options)] = launches.calls
    assert (name, grid, options) == ("tma", (2, 8), {"num_warps": 4, "num_stages": 2})
    for desc, tensor, rows in ((args.pop("q_desc"), q, 32), (args.pop("k_desc"), k, 16), (args.pop("v_desc"), v, 16)):
        assert desc.base is tensor
        assert (list(desc.shape), list(desc.strides), list(desc.block_shape)) == (
            [tensor.shape[0] * tensor.shape[1] * tensor.shape[2], 32], [32, 1], [rows, 32])  # fmt: skip
    buffer = args.pop("O")
    assert args.pop("LSE") is lse
    assert args.pop("qk_scale") == pytest.approx(0.5 / math.log(2))
    assert args == {"stride_ob": 4 * 37 * 32, "stride_oh": 37 * 32, "stride_om": 32, "H": 4, "GROUP": 2,
                    "SEQ_Q": 37, "SEQ_K": 50, "OFFSET": 0, "HEAD_DIM": 32, "BLOCK_M": 32, "BLOCK_N": 16,
                    "CAUSAL": False, "UPCAST": interpreted, "STORE_LSE": True}  # fmt: skip
    assert buffer.shape == q.shape
    assert fa.LAST["kernel"] == fa.LAST["forward"] == "compiled tma"
    assert asked == ([] if interpreted else [q.device])
    if not interpreted:
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device: (8, 6))
        message = ("config '32x16 w4 s2 tma' asks for the TMA kernel, but the TMA kernel needs compute capability "
                   "9.0 or newer (Hopper); this GPU has 8.6")  # fmt: skip
        with pytest.raises(ValueError, match=exactly(message)):
            fa._forward_launch(q, k, v, False, 0, 0.5, FlashConfig(32, 16, tma=True))


@pytest.mark.parametrize("capability", [(8, 0), (9, 0), (10, 0)])
def test_tma_refusal_reads_the_capability_then_the_layout(capability, monkeypatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    asked = []
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device: asked.append(device) or capability)
    q, k, v = _meta(1, 2, 8, 16), _meta(1, 2, 8, 16), _meta(1, 2, 8, 16)
    if capability < (9, 0):
        want = "the TMA kernel needs compute capability 9.0 or newer (Hopper); this GPU has 8.0"
        assert fa.tma_refusal(q, k, v) == want
    else:
        assert fa.tma_refusal(q, k, v) is None
        for name, strided in (("q", (q.mT, k, v)), ("k", (q, k.mT, v)), ("v", (q, k, v.mT))):
            assert fa.tma_refusal(*strided) == (f"{name} must be contiguous (batch, heads, length, head_dim) for a "
                                                "2-D tensor descriptor")  # fmt: skip
    assert asked
    assert all(device == q.device for device in asked)


@pytest.mark.parametrize("interpreted", [True, False])
@pytest.mark.parametrize(("sq", "sk"), [(65, 50), (64, 64)])
@pytest.mark.usefixtures("float64_default")
def test_backward_launch_grids_and_arguments(interpreted, sq, sk, launches, monkeypatch) -> None:
    """dQ by its own pass: the delta kernel in blocks of 64 rows (65 rows: 2 programs), the dK/dV kernel per 32 keys
    of each key/value head, the dQ kernel per 64 queries of each head; EVEN when the block divides the length."""
    _mode(monkeypatch, interpreted)
    q, k, v, out, d_out = _meta(1, 4, sq, 32), _meta(1, 2, sk, 32), _meta(1, 2, sk, 32), _meta(1, 4, sq, 32), \
        _meta(1, 4, sq, 32)  # fmt: skip
    lse = _meta(1, 4, sq, dtype=torch.float32)
    grads = fa._backward_launch(q, k, v, out, lse, d_out, True, sk - sq, 0.25, BackwardConfig(16, 32, 64, 16, 8, 3))
    (_, g1, delta_args, o1), (_, g2, dkdv, o2), (_, g3, dq_args, o3) = launches.calls
    assert [call[0] for call in launches.calls] == ["delta", "dkdv", "dq"]
    assert (g1, g2, g3) == ((-(-sq // 64), 4), (-(-sk // 32), 2), (-(-sq // 64), 4))
    assert o1 == {}  # the delta kernel's launch takes Triton's defaults
    assert o2 == o3 == {"num_warps": 8, "num_stages": 3}
    delta = delta_args["DELTA"]
    assert (delta.shape, delta.dtype, delta.device) == ((1, 4, sq), torch.float32, q.device)
    _pop_same(dict(delta_args), O=out, DO=d_out)
    assert (delta_args["SEQ_Q"], delta_args["HEAD_DIM"], delta_args["BLOCK_M"]) == (sq, 32, 64)
    grad_type = torch.float32 if interpreted else torch.float16
    for args, names in ((dkdv, ("DK", "DV", "DQ")), (dq_args, ("DQ",))):
        for name in names:
            buffer = args.pop(name)
            assert (buffer.dtype, buffer.device) == (grad_type, q.device), name
        _pop_same(args, DELTA=delta, LSE=lse, DO=d_out, Q=q, K=k, V=v)
        assert args.pop("qk_scale") == pytest.approx(0.25 / math.log(2))
        assert (args.pop("scale"), args.pop("H"), args.pop("GROUP"), args.pop("SEQ_Q"), args.pop("SEQ_K"),
                args.pop("OFFSET"), args.pop("HEAD_DIM"), args.pop("CAUSAL"), args.pop("UPCAST")) == (
            0.25, 4, 2, sq, sk, sk - sq, 32, True, interpreted)  # fmt: skip
    assert dkdv == {"BLOCK_M": 16, "BLOCK_N": 32, "EVEN": sq % 16 == 0, "DQ_MODE": 0}
    assert dq_args == {"BLOCK_M": 64, "BLOCK_N": 16, "EVEN": sk % 16 == 0}
    for grad, like in zip(grads, (q, k, v), strict=True):
        assert (grad.shape, grad.dtype, grad.device) == (like.shape, torch.float16, q.device)
    assert fa.LAST == {"dkdv": "compiled dkdv", "dq": "compiled dq"}


@pytest.mark.parametrize("interpreted", [True, False])
@pytest.mark.parametrize("dq", ["atomic", "tma"])
@pytest.mark.usefixtures("float64_default")
def test_backward_launch_with_dq_added_by_the_dkdv_kernel(interpreted, dq, launches, monkeypatch) -> None:
    """dQ summed into float32 by the dK/dV kernel (mode 1, atomic adds; mode 2, TMA reductions of block_m1 rows,
    which the interpreter does not have: there mode 1), no dQ pass, and no stale dQ kernel left in LAST."""
    _mode(monkeypatch, interpreted)
    q, k, v, out, d_out = _meta(1, 4, 40, 32), _meta(1, 2, 24, 32), _meta(1, 2, 24, 32), _meta(1, 4, 40, 32), \
        _meta(1, 4, 40, 32)  # fmt: skip
    lse = _meta(1, 4, 40, dtype=torch.float32)
    config = BackwardConfig(16, 32, 64, 16, dq=dq)
    fa._backward_launch(q, k, v, out, lse, d_out, False, 0, 0.25, config)  # with no dQ kernel in LAST too
    launches.calls.clear()
    grads = fa._backward_launch(q, k, v, out, lse, d_out, False, 0, 0.25, config)
    assert [call[0] for call in launches.calls] == ["delta", "dkdv"]
    args = launches.calls[1][2]
    tma = dq == "tma" and not interpreted
    assert args["DQ_MODE"] == (2 if tma else 1)
    buffer = args["DQ"].base if tma else args["DQ"]
    assert (buffer.shape, buffer.dtype, buffer.device) == (q.shape, torch.float32, q.device)
    if tma:
        assert (list(args["DQ"].shape), list(args["DQ"].strides), list(args["DQ"].block_shape)) == (
            [1 * 4 * 40, 32], [32, 1], [16, 32])  # fmt: skip
    assert args["DK"].dtype == args["DV"].dtype == (torch.float32 if interpreted else torch.float16)
    for grad, like in zip(grads, (q, k, v), strict=True):
        assert (grad.shape, grad.dtype, grad.device) == (like.shape, torch.float16, q.device)
    assert fa.LAST == {"dkdv": "compiled dkdv"}


@pytest.mark.usefixtures("float64_default")
def test_the_autograd_function_saves_what_the_backward_kernels_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The forward launch gets a float32 (batch, heads, q_len) buffer for the log-sum-exp; the backward launch gets
    q, k, v, the output and that buffer as saved, d_out made contiguous, and the forward's causal, offset, scale and
    backward config; the launches' dQ, dK, dV are the gradients (the launches here are stand-ins on tiny tensors)."""
    monkeypatch.setattr(fa, "_FUNCTION", [])  # the class is built on first use: build it under this test
    seen = {}

    def forward_launch(q, k, v, causal, offset, scale, config, lse=None):
        seen["forward"] = (q, k, v, causal, offset, scale, config)
        seen["lse"] = (lse.shape, lse.dtype, lse.device)
        lse.fill_(7.0)
        return torch.full(q.shape, 3.0, dtype=q.dtype, device=q.device)

    def backward_launch(q, k, v, out, lse, d_out, causal, offset, scale, config):
        seen["backward"] = (q, k, v, out, lse, d_out, causal, offset, scale, config)
        return torch.full(q.shape, 1.0), torch.full(k.shape, 2.0), torch.full(v.shape, 4.0)

    monkeypatch.setattr(fa, "_forward_launch", forward_launch)
    monkeypatch.setattr(fa, "_backward_launch", backward_launch)
    q, k, v = (t.requires_grad_() for t in _inputs(1, 2, 1, 3, 5, 16, torch.float16))
    config, backward = FlashConfig(16, 16), BackwardConfig(16, 16, 16, 16)
    out = fa._function().apply(q, k, v, True, 2, 0.5, config, backward)
    assert torch.equal(out, torch.full(q.shape, 3.0, dtype=q.dtype))
    assert seen["forward"][3:] == (True, 2, 0.5, config)
    assert all(a is b for a, b in zip(seen["forward"][:3], (q, k, v), strict=True))
    assert seen["lse"] == ((1, 2, 3), torch.float32, q.device)
    d_out = torch.randn(1, 2, 16, 3).to(torch.float16).mT  # not contiguous
    grads = torch.autograd.grad(out, (q, k, v), d_out)
    bq, bk, bv, bout, blse, bd_out, *rest = seen["backward"]
    assert rest == [True, 2, 0.5, backward]
    for got, want in ((bq, q), (bk, k), (bv, v), (bd_out, d_out)):
        assert torch.equal(got, want)
    assert bd_out.is_contiguous()
    assert torch.equal(bout, out.detach())
    assert torch.equal(blse, torch.full((1, 2, 3), 7.0))
    for grad, value in zip(grads, (1.0, 2.0, 4.0), strict=True):
        assert (grad == value).all()
    assert fa._function() is fa._function()
    # the log-sum-exp buffer is made on the inputs' device (meta tensors here: no data)
    fa._function().apply(_meta(1, 2, 3, 16), _meta(1, 1, 5, 16), _meta(1, 1, 5, 16), False, 0, 0.5, config, backward)
    assert seen["lse"] == ((1, 2, 3), torch.float32, torch.device("meta"))


def _cpu(*shape, dtype=torch.float16):
    return torch.zeros(shape, dtype=dtype)


#: (q, k, v) → the refusal of each check, in the order the checks run, message in full.
CHECKS = [
    (lambda: ([1.0], _cpu(1, 2, 8, 16), _cpu(1, 2, 8, 16)), TypeError, "q must be a torch.Tensor; got list"),
    (lambda: (_cpu(1, 2, 8, 16), _cpu(1, 2, 8, 16), None), TypeError, "v must be a torch.Tensor; got NoneType"),
    (lambda: (_cpu(1, 2, 8, 16), _cpu(2, 8, 16), _cpu(1, 2, 8, 16)), ValueError,
     "k must be 4-D (batch, heads, sequence, head_dim); got shape (2, 8, 16)"),
    (lambda: (_cpu(1, 2, 8, 16), _cpu(1, 2, 8, 16), _cpu(1, 2, 8, 16, dtype=torch.bfloat16)), TypeError,
     "q, k and v must have one element type; got float16, float16, bfloat16"),
    (lambda: (_cpu(1, 2, 8, 16, dtype=torch.float32),) * 3, TypeError,
     "element type float32 is not supported; supported: ['float16', 'bfloat16']"),
    (lambda: (_cpu(1, 2, 8, 16), _cpu(1, 2, 8, 16), _cpu(1, 2, 9, 16)), ValueError,
     "k and v must have one shape; got (1, 2, 8, 16) and (1, 2, 9, 16)"),
    (lambda: (_cpu(1, 2, 8, 16), _cpu(2, 2, 8, 16), _cpu(2, 2, 8, 16)), ValueError,
     "q (1, 2, 8, 16) and k (2, 2, 8, 16) must agree in batch and head_dim (dimensions 0 and 3)"),
    (lambda: (_cpu(1, 2, 8, 16), _cpu(1, 2, 8, 32), _cpu(1, 2, 8, 32)), ValueError,
     "q (1, 2, 8, 16) and k (1, 2, 8, 32) must agree in batch and head_dim (dimensions 0 and 3)"),
    (lambda: (_cpu(1, 2, 8, 24),) * 3, ValueError, "head_dim must be one of (16, 32, 64, 128, 256); got 24"),
    (lambda: (_cpu(1, 4, 8, 16), _cpu(1, 3, 8, 16), _cpu(1, 3, 8, 16)), ValueError,
     "key/value heads (3) must divide query heads (4) for grouped-query attention"),
    (lambda: (_cpu(1, 4, 8, 16), _cpu(1, 0, 8, 16), _cpu(1, 0, 8, 16)), ValueError,
     "key/value heads (0) must divide query heads (4) for grouped-query attention"),
    (lambda: (_cpu(1, 2, 8, 16), _meta(1, 2, 8, 16), _meta(1, 2, 8, 16)), ValueError,
     "q, k and v must be on one device; got cpu, meta, meta"),
]  # fmt: skip


@pytest.mark.parametrize(("make", "error", "message"), CHECKS)
def test_check_names_the_value_and_what_is_allowed(make, error, message, monkeypatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    with pytest.raises(error, match=exactly(message)):
        fa._check(*make())


def test_check_returns_the_sizes_and_refuses_cpu_tensors_without_the_interpreter(monkeypatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    q, k, v = _cpu(2, 4, 8, 32), _cpu(2, 2, 9, 32), _cpu(2, 2, 9, 32)
    assert fa._check(q, k, v, where=False) == (2, 4, 2, 8, 9, 32)
    message = ("tensors on cpu need Triton's interpreter: set TRITON_INTERPRET=1 before the first call, or move them "
               "to a CUDA device")  # fmt: skip
    with pytest.raises(ValueError, match=exactly(message)):
        fa._check(q, k, v)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert fa._check(q, k, v) == (2, 4, 2, 8, 9, 32)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"causal": "yes"}, TypeError, "causal must be True or False; got 'yes' (str)"),
        ({"scale": -1e39}, ValueError, "scale must be ≥ -3.4028234663852886e+38; got -1e+39"),
        ({"scale": 1e39}, ValueError, "scale must be ≤ 3.4028234663852886e+38; got 1e+39"),
        ({"align": "bottom-right"}, ValueError,
         "align='bottom-right' places the causal mask's diagonal; it applies only with causal=True"),
        ({"config": (16, 16)}, TypeError, "config must be a FlashConfig; got tuple"),
        ({"backward_config": FlashConfig(16, 16)}, TypeError,
         "backward_config must be a BackwardConfig; got FlashConfig"),
    ],
)  # fmt: skip
def test_flash_attention_names_what_it_refuses(kwargs, error, message, monkeypatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    q, k, v = _meta(1, 2, 8, 16), _meta(1, 1, 8, 16), _meta(1, 1, 8, 16)  # no kernel runs: each call is refused
    with pytest.raises(error, match=exactly(message)):
        flash_attention(q, k, v, **kwargs)
    with pytest.raises(ValueError, match=r"^kv_len must be positive: a softmax over no keys is undefined$"):
        flash_attention(q, k[:, :, :0], v[:, :, :0])
    for no_query, shape in ((q[:, :, :0], (1, 2, 0, 16)), (q[:, :0], (1, 0, 8, 16)), (q[:0], (0, 2, 8, 16))):
        empty = flash_attention(no_query, k[: no_query.shape[0]], v[: no_query.shape[0]])
        assert (empty.shape, empty.dtype, empty.device) == (shape, torch.float16, q.device)


@pytest.mark.parametrize("needs_grad", ["q", "k", "v", None])
def test_flash_attention_takes_the_autograd_path_when_any_input_needs_a_gradient(needs_grad, monkeypatch) -> None:
    """Any one input that needs a gradient (with autograd on) takes the autograd function, with contiguous inputs;
    otherwise the forward launch, where only a tensor without a unit stride along head_dim is copied."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    taken = []
    monkeypatch.setattr(fa, "_forward_launch", lambda *args: taken.append(("launch", args)))
    monkeypatch.setattr(fa, "_function", lambda: SimpleNamespace(apply=lambda *args: taken.append(("autograd", args))))
    q, k = _meta(1, 2, 8, 16), _meta(1, 1, 8, 16)
    v = _meta(1, 1, 16, 8).mT  # head_dim not the unit stride
    inputs = {"q": q, "k": k, "v": v}
    if needs_grad:
        inputs[needs_grad].requires_grad_()
    flash_attention(*inputs.values())
    [(path, args)] = taken
    assert path == ("autograd" if needs_grad else "launch")
    assert args[0] is q  # already contiguous: passed as they are
    assert args[1] is k
    assert args[2].is_contiguous()
    if needs_grad:
        taken.clear()
        with torch.no_grad():
            flash_attention(*inputs.values())
        assert taken[0][0] == "launch"


@pytest.mark.parametrize(
    ("capability", "strided", "want"),
    [
        ((9, 0), False, FlashConfig(64, 64, 4, 3, tma=True)),  # the default for head dim 64, causal
        ((9, 0), True, FlashConfig(64, 64, 4, 3)),  # k not contiguous: the same tiling, pointer loads
        ((8, 0), False, FlashConfig(64, 64, 4, 3)),  # no TMA before Hopper
    ],
)
def test_the_default_tma_tiling_falls_back_to_pointer_loads(capability, strided, want, monkeypatch) -> None:
    """On a GPU (here a tensor that says it is on one, and a stand-in launch), the default tiling of head dim 64
    under a causal mask is the TMA kernel's, and the pointer kernel's where tma_refusal refuses."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device: capability)
    launched = []
    monkeypatch.setattr(fa, "_forward_launch", lambda *args: launched.append(args) or "out")
    q, k, v = (reporting_cuda(_cpu(1, 2, 8, 64)) for _ in range(3))
    if strided:
        k = reporting_cuda(_cpu(1, 2, 64, 8)).mT
    assert flash_attention(q, k, v, causal=True) == "out"
    [(_, _, _, causal, offset, scale, config)] = launched
    assert (causal, offset, scale, config) == (True, 0, 0.125, want)
