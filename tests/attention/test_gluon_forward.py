"""The Gluon flash-attention forward: what the CPU can check, and the kernel itself on a Hopper GPU.

Gluon kernels do not run under Triton's interpreter, so on the CPU the tests check the configurations, the
refusals, the key-block counts the kernel uses (against the masks of the NumPy reference), and that each kernel
compiles for sm_90a with the Hopper instructions it is written for (Triton's compiler and ``ptxas`` come with the
``triton`` wheel and need no GPU). The ``gpu`` tests hold every step to float64 attention.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import torch.nn.functional as F  # noqa: E402, N812

from gpukb.attention import gluon_forward as gf  # noqa: E402
from gpukb.attention.reference import causal_mask  # noqa: E402
from gpukb.numerics import relative_error  # noqa: E402
from tests.helpers import exactly, reporting_cuda  # noqa: E402


def _inputs(b, h, hkv, sq, sk, d, dtype, device="cpu", seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(b, h, sq, d, generator=gen).to(device=device, dtype=dtype)
    k = torch.randn(b, hkv, sk, d, generator=gen).to(device=device, dtype=dtype)
    v = torch.randn(b, hkv, sk, d, generator=gen).to(device=device, dtype=dtype)
    return q, k, v


def test_configs_name_what_they_refuse() -> None:
    assert gf.DEFAULT_GLUON_CONFIG.label == "ws 128 s2 c2 overlap qk persistent"
    assert [c.label for c in gf.STEPS.values()] == ["plain 128", "ws 128 s2 c1", "ws 128 s2 c2",
                                                   "ws 128 s2 c2 overlap qk-pv", "ws 128 s2 c2 overlap qk",
                                                   "ws 128 s2 c2 pingpong",
                                                   "ws 128 s2 c2 overlap qk persistent"]  # fmt: skip
    with pytest.raises(ValueError, match=r"unknown variant .fa3.; choose one of"):
        gf.GluonConfig("fa3")
    with pytest.raises(ValueError, match="block_n must be 64 or 128; got 96"):
        gf.GluonConfig(block_n=96)
    with pytest.raises(TypeError, match=r"block_n must be an int; got 64.0 \(float\)"):
        gf.GluonConfig(block_n=64.0)
    with pytest.raises(ValueError, match="num_stages"):
        gf.GluonConfig(num_stages=0)
    with pytest.raises(ValueError, match="consumers"):
        gf.GluonConfig(consumers=3)
    with pytest.raises(ValueError, match="the 'plain' variant has one partition"):
        gf.GluonConfig("plain", 128, 1, consumers=2)
    with pytest.raises(ValueError, match=r"pingpong .* needs consumers=2 and overlap='none'; got consumers=1"):
        gf.GluonConfig(pingpong=True)
    with pytest.raises(ValueError, match=r"persistent .* needs variant='ws', consumers=2 and overlap='qk'; got "
                                         r"variant='ws', consumers=1, overlap='qk'"):  # fmt: skip
        gf.GluonConfig(consumers=1, overlap="qk", persistent=True)
    with pytest.raises(ValueError, match=r"persistent .* got variant='ws', consumers=2, overlap='none'"):
        gf.GluonConfig(consumers=2, persistent=True)
    with pytest.raises(TypeError, match=r"persistent must be True or False; got 1 \(int\)"):
        gf.GluonConfig(consumers=2, overlap="qk", persistent=1)


@pytest.mark.parametrize(("heads", "n_mb", "programs"), [(1, 1, 132), (128, 32, 132), (16, 9, 132), (3, 7, 4),
                                                         (512, 8, 132), (2, 2, 1)])  # fmt: skip
def test_the_persistent_schedule_gives_every_tile_to_one_program(heads, n_mb, programs) -> None:
    """Every (head, query block) tile exactly once; no program without a tile; a unit's long tile before its short
    one, both of one head; and, under a causal mask, no program holds more than one unit's key blocks (n_mb + 1)
    over the mean, so the last program to finish ends at most one unit after the average one."""
    plan = gf.persistent_schedule(heads, n_mb, programs)
    assert len(plan) == min(programs, gf.persistent_units(heads, n_mb))
    tiles = [t for p in plan for t in p]
    assert sorted(tiles) == [(bh, mb) for bh in range(heads) for mb in range(n_mb)]
    assert all(plan)
    for p in plan:
        for (bh0, mb0), (bh1, mb1) in itertools.pairwise(p):
            if mb1 < mb0 and mb0 + mb1 == n_mb - 1:  # the second tile of a pair
                assert bh0 == bh1
    # causal work of a 128-row tile at block 128: query block mb sees mb + 1 key blocks
    work = [sum(mb + 1 for _, mb in p) for p in plan]
    assert max(work) - sum(work) / len(work) <= n_mb + 1


def test_the_persistent_schedule_refuses_what_it_does_not_model() -> None:
    with pytest.raises(ValueError, match="heads_total must be an int ≥ 1; got 0"):
        gf.persistent_schedule(0, 4, 132)
    with pytest.raises(ValueError, match="programs must be an int ≥ 1; got 0"):
        gf.persistent_schedule(4, 4, 0)
    with pytest.raises(TypeError, match=r"n_mb must be an int ≥ 1; got 2.0 \(float\)"):
        gf.persistent_units(4, 2.0)
    # a schedule of 10^18 tiles was built tile by tile (it never ended)
    with pytest.raises(ValueError, match=r"at most 4,194,304 tiles; got heads_total × n_mb = 1,000,000,000,000 × "):
        gf.persistent_schedule(10**12, 10**6, 2)


def test_bad_input_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    q, k, v = _inputs(1, 2, 2, 8, 8, 64, torch.bfloat16)
    # the checks of the Triton kernel, reused
    with pytest.raises(TypeError, match="one element type"):
        gf.gluon_attention(q, k.half(), v)
    with pytest.raises(ValueError, match="must be 4-D"):
        gf.gluon_attention(q[0], k, v)
    # and the Gluon kernel's own
    q32, k32, v32 = _inputs(1, 2, 2, 8, 8, 32, torch.bfloat16)
    with pytest.raises(ValueError, match=r"takes head_dim in \(64, 128\); got 32"):
        gf.gluon_attention(q32, k32, v32)
    with pytest.raises(TypeError, match="config must be a GluonConfig"):
        gf.gluon_attention(q, k, v, config="ws")
    with pytest.raises(ValueError, match="applies only with causal=True"):
        gf.gluon_attention(q, k, v, align="bottom-right")
    with pytest.raises(TypeError, match=r"return_lse must be True or False; got 'yes' \(str\)"):
        gf.gluon_attention(q, k, v, return_lse="yes")
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with pytest.raises(ValueError, match="needs a CUDA tensor on a Hopper GPU; got a tensor on cpu"):
        gf.gluon_attention(q, k, v)
    with pytest.raises(ValueError, match="needs a CUDA tensor on a Hopper GPU; got a tensor on cpu"):
        gf.gluon_attention(q.requires_grad_(), k, v)  # a graph is recorded on the GPU only
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    with pytest.raises(ValueError, match="do not run under Triton's interpreter"):
        gf.gluon_attention(q, k, v)
    for not_a_tensor in (None, q.float().numpy(force=True)):  # q.device raised AttributeError
        with pytest.raises(TypeError, match=r"q must be a torch tensor; got (None|array)"):
            gf.gluon_refusal(not_a_tensor)
    with pytest.raises(TypeError, match=r"^q must be a torch tensor; got \[1\.0\] \(list\)$"):
        gf.gluon_refusal([1.0])


#: Each step's fields and label, written out here (not read from STEPS), so that a check that refuses a valid
#: configuration, or accepts an invalid one, fails here.
STEP_FIELDS = [
    (("plain", 128, 1, 1, "none", False, False), "plain 128"),
    (("plain", 64, 1, 1, "none", False, False), "plain 64"),
    (("ws", 64, 4, 1, "none", False, False), "ws 64 s4 c1"),
    (("ws", 128, 1, 2, "qk-pv", False, False), "ws 128 s1 c2 overlap qk-pv"),
    (("ws", 128, 2, 2, "none", True, False), "ws 128 s2 c2 pingpong"),
    (("ws", 128, 2, 2, "qk", False, True), "ws 128 s2 c2 overlap qk persistent"),
]


@pytest.mark.parametrize(("fields", "label"), STEP_FIELDS, ids=[label for _, label in STEP_FIELDS])
def test_every_valid_configuration_is_built(fields, label) -> None:
    config = gf.GluonConfig(*fields)
    assert config.label == label
    assert (config.variant, config.block_n, config.num_stages, config.consumers, config.overlap, config.pingpong,
            config.persistent) == fields  # fmt: skip
    assert config.block_m == 128


def test_the_steps_are_built_afresh_as_declared() -> None:
    """The page's steps, built again now (STEPS was built when the module was imported, before any test)."""
    for step in gf.STEPS.values():
        assert gf.GluonConfig(**dataclasses.asdict(step)) == step


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_stages": 5}, ValueError, "num_stages must be an int ≥ 1, ≤ 4; got 5"),
        ({"consumers": 3}, ValueError, "consumers must be an int ≥ 1, ≤ 2; got 3"),
        ({"overlap": "both"}, ValueError, "unknown overlap 'both'; choose one of ['none', 'qk', 'qk-pv']"),
        ({"pingpong": 1}, TypeError, "pingpong must be True or False; got 1 (int)"),
        ({"variant": "plain"}, ValueError, "the 'plain' variant has one partition and one buffer: consumers=1, "
         "overlap='none', num_stages=1; got consumers=1, overlap='none', num_stages=2"),
        ({"variant": "plain", "num_stages": 1, "overlap": "qk"}, ValueError, "the 'plain' variant has one partition "
         "and one buffer: consumers=1, overlap='none', num_stages=1; got consumers=1, overlap='qk', num_stages=1"),
        ({"consumers": 2, "overlap": "qk", "pingpong": True}, ValueError, "pingpong hands the tensor cores between "
         "two consumers: it needs consumers=2 and overlap='none'; got consumers=2, overlap='qk'"),
        ({"variant": "plain", "num_stages": 1, "persistent": True}, ValueError, "the persistent kernel is the "
         "two-consumer overlapped one: it needs variant='ws', consumers=2 and overlap='qk'; got variant='plain', "
         "consumers=1, overlap='none'"),
        ({"consumers": 2, "overlap": "qk-pv", "persistent": True}, ValueError, "the persistent kernel is the "
         "two-consumer overlapped one: it needs variant='ws', consumers=2 and overlap='qk'; got variant='ws', "
         "consumers=2, overlap='qk-pv'"),
    ],
)  # fmt: skip
def test_a_configuration_outside_the_steps_is_refused_by_name(kwargs, error, message) -> None:
    with pytest.raises(error, match=exactly(message)):
        gf.GluonConfig(**kwargs)


#: (q_start, q_rows, kv_len, offset, block_n, causal) → (n_total, n_full), worked by hand: rows i see keys
#: j < kv_len and, causal, j ≤ i + offset; n_total = ceil(last visible key + 1 over the rows / block_n), at least 1;
#: n_full = the blocks every row sees whole.
KEY_BLOCKS_BY_HAND = [
    ((0, 128, 1000, 0, 64, False), (16, 15)),  # 1000 keys: 15 whole blocks of 64 and 40 more
    ((0, 128, 100, 0, 64, False), (2, 1)),
    ((0, 128, 0, 0, 64, False), (1, 0)),  # no key: one block, all of it masked
    ((0, 128, 1000, 0, 64, True), (2, 0)),  # row 0 sees key 0 only: no block whole for every row
    ((128, 128, 1000, 0, 64, True), (4, 2)),  # rows 128..255 see keys up to 255; row 128 sees 0..128
    ((62, 1, 1000, 0, 64, True), (1, 0)),  # one row, 62, sees keys 0..62: 63 of block 0's 64
    ((63, 1, 1000, 0, 64, True), (1, 1)),  # row 63 sees 0..63: block 0 whole
    ((0, 128, 300, 200, 128, True), (3, 1)),  # bottom-right, 100 queries on 300 keys: row 0 sees 0..200
    ((0, 4, 10, -5, 1, True), (1, 0)),  # 4 rows before the first key's diagonal: none sees a key
]


@pytest.mark.parametrize(("args", "want"), KEY_BLOCKS_BY_HAND)
def test_key_blocks_match_counts_worked_by_hand(args, want) -> None:
    got = gf.key_blocks(*args)
    assert got == want
    assert all(type(n) is int for n in got)


def test_key_blocks_name_the_count_they_refuse() -> None:
    with pytest.raises(ValueError, match=r"^q_rows must be an int ≥ 1; got 0$"):
        gf.key_blocks(0, 0, 1024, 0, 128, False)
    with pytest.raises(TypeError, match=r"^offset must be an int; got 1\.5 \(float\)$"):
        gf.key_blocks(0, 128, 1024, 1.5, 128, True)


def test_the_persistent_schedule_matches_one_worked_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """2 heads of 5 query blocks: units (long, short) = (4, 0), (3, 1), (2) per head, 6 in all, dealt to 3
    programs in turn; with 8 programs, 6 have a unit and no empty program is listed."""
    assert gf.persistent_units(2, 5) == 6
    assert gf.persistent_units(3, 4) == 6
    assert gf.persistent_schedule(2, 5, 3) == [[(0, 4), (0, 0), (1, 4), (1, 0)], [(0, 3), (0, 1), (1, 3), (1, 1)],
                                               [(0, 2), (1, 2)]]  # fmt: skip
    assert gf.persistent_schedule(2, 5, 8) == [[(0, 4), (0, 0)], [(0, 3), (0, 1)], [(0, 2)], [(1, 4), (1, 0)],
                                               [(1, 3), (1, 1)], [(1, 2)]]  # fmt: skip
    # the limit on tiles, at a size this test can build: exactly the limit is listed, one more is refused
    monkeypatch.setattr(gf, "MAX_SCHEDULED_TILES", 6)
    assert sum(map(len, gf.persistent_schedule(3, 2, 2))) == 6
    with pytest.raises(
        ValueError, match=r"^persistent_schedule lists at most 6 tiles; got heads_total × n_mb = 7 × 1$"
    ):
        gf.persistent_schedule(7, 1, 2)


@pytest.mark.parametrize(
    ("capability", "reason"),
    [
        ((9, 0), None),
        ((8, 0), "the Gluon kernel uses Hopper's wgmma (compute capability 9.x); this GPU has 8.0"),
        ((10, 0), "the Gluon kernel uses Hopper's wgmma (compute capability 9.x); this GPU has 10.0"),
    ],
)
def test_gluon_refusal_on_a_cuda_device_reads_its_capability(capability, reason, monkeypatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    q = reporting_cuda(torch.empty(1, 1, 1, 64))
    asked = []
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device: asked.append(device) or capability)
    assert gf.gluon_refusal(q) == reason
    assert asked == [torch.device("cuda", 0)]
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert gf.gluon_refusal(q) == ("Gluon kernels do not run under Triton's interpreter (TRITON_INTERPRET=1); they "
                                   "need a Hopper GPU")  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"causal": "yes"}, TypeError, "causal must be True or False; got 'yes' (str)"),
        ({"causal": True, "align": "diagonal"}, ValueError,
         "unknown align 'diagonal'; choose one of ['top-left', 'bottom-right']"),
        ({"scale": float("nan")}, ValueError, "scale must be a finite number; got nan"),
        ({"scale": "0.5"}, TypeError, "scale must be a real number; got '0.5' (str)"),
        ({"scale": 1e39}, ValueError, "scale must be ≤ 3.4028234663852886e+38; got 1e+39"),
        ({"scale": -1e39}, ValueError, "scale must be ≥ -3.4028234663852886e+38; got -1e+39"),
        ({"config": "ws"}, TypeError, "config must be a GluonConfig; got str"),
        # what passes the checks reaches the refusal: a causal mask aligned bottom-right, a negative scale
        ({"causal": True, "align": "bottom-right"}, ValueError,
         "the Gluon kernel needs a CUDA tensor on a Hopper GPU; got a tensor on cpu"),
        ({"scale": -0.5}, ValueError, "the Gluon kernel needs a CUDA tensor on a Hopper GPU; got a tensor on cpu"),
    ],
)  # fmt: skip
def test_gluon_attention_checks_its_arguments_before_the_device(kwargs, error, message, monkeypatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    q, k, v = _inputs(1, 2, 1, 8, 8, 64, torch.float16)
    with pytest.raises(error, match=exactly(message)):
        gf.gluon_attention(q, k, v, **kwargs)


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((0, 128, 1024, 0, 0, False), ValueError, "block_n must be an int ≥ 1; got 0"),  # was a ZeroDivisionError
        ((0, 128, -1024, 0, 128, False), ValueError, "kv_len must be an int ≥ 0; got -1024"),  # was (1, 0)
        ((0, 128, float("nan"), 0, 128, False), TypeError, r"kv_len must be an int ≥ 0; got nan \(float\)"),
        ((-256, 128, 1024, 0, 128, True), ValueError, "q_start must be an int ≥ 0; got -256"),
        ((0, 128, 1024, 0, 128, "no"), TypeError, "causal must be True or False; got 'no'"),
    ],
)
def test_key_blocks_refuses_what_the_kernel_never_computes(args, error, match) -> None:
    with pytest.raises(error, match=match):
        gf.key_blocks(*args)


@pytest.mark.parametrize("causal", [False, True])
def test_key_blocks_cover_every_visible_key_and_mask_only_where_needed(causal: bool) -> None:
    """``key_blocks`` (the kernel's loop bounds) against the reference's causal mask, on shapes of every kind:
    lengths no block divides, more queries than keys and more keys than queries, both alignments."""
    for sq, sk, align, block_n in itertools.product((1, 100, 128, 300, 1040), (1, 64, 300, 1040), ("top-left",
                                                    "bottom-right"), (64, 128)):  # fmt: skip
        if not causal and align == "bottom-right":
            continue
        visible = causal_mask(sq, sk, align) if causal else np.ones((sq, sk), dtype=bool)
        offset = sk - sq if causal and align == "bottom-right" else 0
        for q_start in range(0, sq, 128):
            rows = visible[q_start : q_start + 128]
            n_total, n_full = gf.key_blocks(q_start, 128, sk, offset, block_n, causal)
            assert n_total >= 1
            assert 0 <= n_full <= n_total
            cols = np.flatnonzero(rows.any(axis=0))
            assert cols.size == 0 or cols.max() < n_total * block_n  # no visible key is left out
            if rows.shape[0] == 128:  # (a last, partial block of queries has rows the kernel masks anyway)
                assert rows[:, : n_full * block_n].all()  # the unmasked blocks hide nothing
            # and the split is tight: the first masked block does need its mask
            if n_full < n_total and rows.shape[0] == 128:
                assert not rows[:, n_full * block_n : (n_full + 1) * block_n].all() or (n_full + 1) * block_n > sk


def test_kernel_compiles_for_hopper_on_the_cpu() -> None:
    """The default step compiled for sm_90a here, without a GPU: it holds the instructions it is written for
    (wgmma, TMA bulk tensor copies, mbarrier waits, setmaxnreg for the partitions) and spills nothing."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import compile as triton_compile
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon._runtime import GluonASTSource

    config = gf.DEFAULT_GLUON_CONFIG
    assert config.persistent
    rows = config.block_m // config.consumers

    def desc(block: int) -> str:
        return f"tensordesc<bf16[{block}, 128],{gl.NVMMASharedLayout.get_default_for([block, 128], gl.bfloat16)!r}>"

    signature = {"q_desc": desc(rows), "k_desc": desc(config.block_n), "v_desc": desc(config.block_n),
                 "out_ptr": "*bf16", "lse_ptr": "*fp32", "qk_scale": "fp32", "heads": "i32", "group": "i32",
                 "q_len": "i32", "kv_len": "i32", "offset": "i32", "n_mb": "i32", "n_units": "i32"}  # fmt: skip
    constants = {
        "HEAD_DIM": 128,
        "BLOCK_N": config.block_n,
        "STAGES": config.num_stages,
        "CAUSAL": True,
        "STORE_LSE": True,
    }
    signature.update(dict.fromkeys(constants, "constexpr"))
    source = GluonASTSource(gf._KERNELS["persistent"], signature, constants)
    kernel = triton_compile(source, target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": 8 // config.consumers, "maxnreg": 168})  # fmt: skip
    ptx = kernel.asm["ptx"]
    assert ".target sm_90a" in ptx
    for instruction in ("wgmma.mma_async", "cp.async.bulk.tensor", "mbarrier.try_wait", "setmaxnreg.dec",
                        "setmaxnreg.inc"):  # fmt: skip
        assert instruction in ptx, instruction
    assert ".local" not in ptx  # no register array went to local memory


GPU_CASES = [
    # (dtype, head_dim, causal, align, q_len, kv_len, kv_heads) on 8 query heads, batch 2
    (torch.bfloat16, 128, False, "top-left", 1000, 1000, 2),
    (torch.bfloat16, 128, True, "top-left", 1000, 1000, 2),
    (torch.float16, 64, False, "top-left", 1000, 1000, 8),
    (torch.bfloat16, 64, True, "top-left", 4096, 4096, 8),
    (torch.bfloat16, 128, True, "bottom-right", 256, 1040, 8),
    (torch.bfloat16, 128, True, "bottom-right", 1040, 300, 2),
]


@pytest.mark.gpu
@pytest.mark.parametrize("step", ["ws-2wg-overlap", "persistent"])
@pytest.mark.parametrize(("causal", "align", "sq", "sk", "hkv"), [(True, "top-left", 1000, 1000, 2),
                                                                  (True, "bottom-right", 1040, 300, 8),
                                                                  (False, "top-left", 300, 1040, 8)])  # fmt: skip
def test_log_sum_exp_and_gradients_on_gpu(step, causal, align, sq, sk, hkv, monkeypatch) -> None:
    """The log-sum-exp is torch.logsumexp of the masked, scaled scores (+inf where a row sees no key); with inputs
    that need a gradient the Triton backward, fed the Gluon forward's log-sum-exp, is as close to float64 as
    SDPA's."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    if gf.gluon_refusal(torch.empty(0, device="cuda")) is not None:
        pytest.skip(gf.gluon_refusal(torch.empty(0, device="cuda")))
    d = 128
    q, k, v = _inputs(2, 8, hkv, sq, sk, d, torch.bfloat16, device="cuda", seed=sq + sk)
    out, lse = gf.gluon_attention(q, k, v, causal=causal, align=align, config=gf.STEPS[step], return_lse=True)
    kr, vr = (t.double().repeat_interleave(8 // hkv, dim=1) for t in (k, v))
    scores = q.double() @ kr.transpose(-1, -2) / d**0.5
    if causal:
        scores = scores.masked_fill(~torch.from_numpy(causal_mask(sq, sk, align)).cuda(), -float("inf"))
    want = torch.logsumexp(scores, -1)
    seen = torch.isfinite(want)
    assert lse.shape == (2, 8, sq)
    assert lse.dtype == torch.float32
    assert (lse[~seen] == float("inf")).all()
    assert torch.allclose(lse[seen].double(), want[seen], atol=2e-3, rtol=0)
    # gradients through the Gluon forward and the Triton backward
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    d_out = torch.randn(2, 8, sq, d, device="cuda", generator=torch.Generator("cuda").manual_seed(5)).bfloat16()
    out = gf.gluon_attention(q, k, v, causal=causal, align=align, config=gf.STEPS[step])
    grads = torch.autograd.grad(out, (q, k, v), d_out)
    mask = torch.from_numpy(causal_mask(sq, sk, align)).cuda() if causal else None
    leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    kr, vr = (t.repeat_interleave(8 // hkv, dim=1) for t in leaves[1:])
    ref = F.scaled_dot_product_attention(leaves[0], kr, vr, attn_mask=mask)
    if mask is not None:
        ref = torch.where(mask.any(-1)[:, None], ref, 0.0)
    ref_grads = torch.autograd.grad(ref, leaves, d_out.double())
    if causal and align == "bottom-right" and sq > sk:  # SDPA has no defined output for rows that see no key
        for got, want in zip(grads, ref_grads, strict=True):
            assert relative_error(got, want) <= 8 * relative_error(want.to(got.dtype), want)
        return
    peer = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=hkv != 8)
    peer_grads = torch.autograd.grad(peer, (q, k, v), d_out)
    for name, got, theirs, want in zip("qkv", grads, peer_grads, ref_grads, strict=True):
        ours, peer_error = relative_error(got, want), relative_error(theirs, want)
        print(f"{step} d{name}: error {ours:.3g}, SDPA error {peer_error:.3g}")
        assert ours <= 1.5 * peer_error + 1e-4, name


@pytest.mark.gpu
@pytest.mark.parametrize("step", list(gf.STEPS))
@pytest.mark.parametrize(("dtype", "d", "causal", "align", "sq", "sk", "hkv"), GPU_CASES)
def test_every_step_matches_float64_attention_on_gpu(step, dtype, d, causal, align, sq, sk, hkv, monkeypatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    if gf.gluon_refusal(torch.empty(0, device="cuda")) is not None:
        pytest.skip(gf.gluon_refusal(torch.empty(0, device="cuda")))
    q, k, v = _inputs(2, 8, hkv, sq, sk, d, dtype, device="cuda", seed=sq + sk + d)
    out = gf.gluon_attention(q, k, v, causal=causal, align=align, config=gf.STEPS[step])
    mask = torch.from_numpy(causal_mask(sq, sk, align)).cuda() if causal else None
    kr, vr = (t.double().repeat_interleave(8 // hkv, dim=1) for t in (k, v))
    ref = F.scaled_dot_product_attention(q.double(), kr, vr, attn_mask=mask)
    assert out.shape == q.shape
    assert out.dtype == dtype
    assert torch.isfinite(out).all()
    if causal and align == "bottom-right" and sq > sk:
        seen = mask.any(-1)
        assert (out[:, :, ~seen] == 0).all()  # rows that see no key: 0, FlashAttention's convention
        ref = torch.where(seen[:, None], ref, 0.0)
        assert relative_error(out, ref) <= 4 * relative_error(ref.to(dtype), ref)
        return
    peer = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=hkv != 8)
    err, peer_err = relative_error(out, ref), relative_error(peer, ref)
    print(f"{step}: Gluon error {err:.3g}, SDPA error {peer_err:.3g}")
    assert err <= 1.5 * peer_err + 1e-4
