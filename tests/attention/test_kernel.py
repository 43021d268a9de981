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

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import torch.nn.functional as F  # noqa: E402, N812

from gpukb.attention import kernel as fa  # noqa: E402
from gpukb.attention.kernel import BackwardConfig, FlashConfig, flash_attention  # noqa: E402
from gpukb.attention.reference import causal_mask  # noqa: E402
from gpukb.numerics import relative_error  # noqa: E402


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
