"""The Triton GEMM: on the CPU through Triton's interpreter, and on a CUDA GPU (``gpu``-marked tests).

Every check compares with a float64 product of the same operands by the relative Frobenius error, and bounds
it by the error of that float64 product rounded once to the output type (``floor``): a kernel that accumulates
in float32 and rounds once lands within a hair of the floor, whatever the type. Outputs are poisoned with NaN
first, so an element the kernel never writes fails the check.

Under the interpreter (``TRITON_INTERPRET=1``) triton 3.6 mishandles bfloat16 in two places, and the wrapper
works around both (see ``_upcast`` and ``_staged`` in ``gpukb.gemm.triton.matmul``): its ``tl.dot`` multiplies the
uint16 bit patterns it stores bf16 in as integers, and its float32 → bf16 cast truncates instead of rounding
to nearest even. So the CPU bf16 tests check the kernels' tiling, masks and ordering, not bf16 arithmetic,
which only the ``gpu`` tests below exercise. Also, the interpreter needs numpy < 2.4 (triton-lang/triton#9171).

CPU shapes are tiny (at most 64×64×80) and deliberately odd, so that tiles hang over every edge.
"""

from __future__ import annotations

import zlib
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import triton.language as tl  # noqa: E402

from gpukb.gemm.triton import matmul as mm  # noqa: E402
from gpukb.gemm.triton import tuning  # noqa: E402
from gpukb.gemm.triton.matmul import Config, matmul  # noqa: E402
from gpukb.numerics import relative_error  # noqa: E402
from tests.helpers import exactly  # noqa: E402

#: Small TMA configurations for the interpreter (16: tl.dot's shortest K, and the smallest M and N tiled here).
TMA_SMALL = {
    "plain": Config("tma", 16, 16, 16, group_m=2, num_stages=1, num_warps=4),
    "subtile": Config("tma", 16, 32, 16, group_m=2, num_stages=1, num_warps=4, epilogue_subtile=True),
    "device-desc-ws": Config("tma", 16, 16, 32, group_m=2, num_stages=1, num_warps=4, warp_specialize=True),
}

#: Split-K configurations for the interpreter: one slice (the result stored directly), slices chosen by the
#: rule for 3 "multiprocessors", and a fixed 3 (partial sums reduced by the second kernel); 3 and 4 slices added by
#: the last slice of each tile (one launch), the second computing each tile as its transpose, and the transpose
#: stored directly.
SPLITK_SMALL = {
    "direct": Config("splitk", 16, 16, 16, group_m=2, num_stages=1, num_warps=4, split_k=1),
    "split auto": Config("splitk", 16, 32, 16, group_m=2, num_stages=1, num_warps=4),
    "split 3": Config("splitk", 16, 16, 32, group_m=2, num_stages=1, num_warps=4, split_k=3),
    "fused 3": Config("splitk", 16, 16, 32, group_m=2, num_stages=1, num_warps=4, split_k=3, fused_reduce=True),
    "swap fused 4": Config(
        "splitk", 16, 32, 16, group_m=2, num_stages=1, num_warps=4, split_k=4, fused_reduce=True, swap_ab=True
    ),
    "swap direct": Config("splitk", 16, 16, 32, group_m=2, num_stages=1, num_warps=4, split_k=1, swap_ab=True),
}


@pytest.fixture
def interpret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)


def _seed(*parts: object) -> int:
    """A generator seed of its own for each case (fresh inputs per case, the same on every run)."""
    return zlib.crc32(repr(parts).encode())


def _operand(rows: int, cols: int, dtype, layout: str, gen, device: str = "cpu"):
    """A rows×cols matrix, row-major ("n") or the transpose of a row-major cols×rows matrix ("t")."""
    if layout == "n":
        return torch.randn(rows, cols, generator=gen).to(device=device, dtype=dtype)
    return torch.randn(cols, rows, generator=gen).to(device=device, dtype=dtype).t()


def _product_error(out, a, b, alpha: float = 1.0) -> float:
    """Relative Frobenius error of out against alpha·A·B formed in float64 (NaN in out gives NaN)."""
    return relative_error(out, alpha * (a.double() @ b.double()))


def _errors(out, a, b, alpha: float = 1.0) -> tuple[float, float]:
    """(relative error of out, relative error of the float64 reference rounded to out's type)."""
    ref = alpha * (a.double() @ b.double())
    return relative_error(out, ref), relative_error(ref.to(out.dtype), ref)


def _assert_close_to_floor(out, a, b, alpha: float = 1.0) -> None:
    assert torch.isfinite(out).all(), "an output element was never written (still NaN)"
    err, floor = _errors(out, a, b, alpha)
    if out.dtype == torch.float32:
        assert err < 1e-6, err
    else:
        assert err <= 1.5 * floor, (err, floor)
        assert err < {torch.float16: 2**-11, torch.bfloat16: 2**-8}[out.dtype]  # the type's unit roundoff


# --- CPU, through the interpreter ------------------------------------------------------------------------


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.bfloat16], ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_blocked_kernel_matches_float64(dtype, layout) -> None:
    gen = torch.Generator().manual_seed(_seed(dtype, layout))
    m, n, k = 37, 45, 70
    a = _operand(m, k, dtype, layout[0], gen)
    b = _operand(k, n, dtype, layout[1], gen)
    out = torch.full((m, n), float("nan"), dtype=dtype)
    assert mm.default_config(a, b, out) == mm.INTERPRETER_CONFIG
    assert matmul(a, b, out=out) is out
    _assert_close_to_floor(out, a, b)


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("variant", sorted(TMA_SMALL))
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_tma_kernel_matches_float64(dtype, variant, layout) -> None:
    # A column-major A needs M to be a multiple of 8 (16-byte rows of A.T); otherwise M stays odd.
    m, n, k = (37 if layout[0] == "n" else 40), 48, 72
    gen = torch.Generator().manual_seed(_seed(dtype, variant, layout))
    a = _operand(m, k, dtype, layout[0], gen)
    b = _operand(k, n, dtype, layout[1], gen)
    out = torch.full((m, n), float("nan"), dtype=dtype)
    # 3 × 3 tiles of 16 (or 3 × 2 of 16 × 32) over 3 persistent programs: each program walks several tiles.
    matmul(a, b, out=out, config=TMA_SMALL[variant])
    _assert_close_to_floor(out, a, b)


@pytest.mark.usefixtures("interpret")
def test_fp8_tma_kernel_with_scale() -> None:
    gen = torch.Generator().manual_seed(8)
    m, n, k = 37, 48, 80
    a = (4 * torch.randn(m, k, generator=gen)).to(torch.float8_e4m3fn)
    b = (4 * torch.randn(n, k, generator=gen)).to(torch.float8_e4m3fn).t()  # K-major, as FP8 MMA needs
    out = matmul(a, b, alpha=1 / 16, config=Config("tma", 16, 16, 32, group_m=2, num_stages=1, num_warps=4))
    assert out.dtype == torch.bfloat16  # the default output type for fp8 inputs
    _assert_close_to_floor(out, a.float(), b.float(), alpha=1 / 16)


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize("kernel", ["tma", "splitk"])
def test_fp8_operands_not_k_major_are_copied(kernel) -> None:
    gen = torch.Generator().manual_seed(18)
    m, n, k = 21, 40, 96
    a = (4 * torch.randn(k, m, generator=gen)).to(torch.float8_e4m3fn).t()  # A column-major
    b = (4 * torch.randn(k, n, generator=gen)).to(torch.float8_e4m3fn)  # B row-major
    out = torch.full((m, n), float("nan"), dtype=torch.float16)
    config = mm.INTERPRETER_FP8_CONFIG if kernel == "tma" else SPLITK_SMALL["split 3"]
    assert (
        mm.tma_refusal(a, b, out)
        == "fp8 operands must be K-major: A row-major and B column-major (the transpose of a row-major N×K)"
    )
    assert sorted(name for name, why in mm.staging(a, b, out, config).items() if why) == ["A", "B"]
    matmul(a, b, out=out, alpha=1 / 16, config=config if kernel == "splitk" else None)
    _assert_close_to_floor(out, a.float(), b.float(), alpha=1 / 16)


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize("kernel", ["tma", "splitk"])
def test_fp8_partial_sums_promoted_in_chunks(kernel) -> None:
    # K = 256 in steps of 32: promotion every 64 products runs four chunks of two steps each, per program.
    gen = torch.Generator().manual_seed(28)
    m, n, k = 19, 40, 256
    a = (4 * torch.randn(m, k, generator=gen)).to(torch.float8_e4m3fn)
    b = (4 * torch.randn(n, k, generator=gen)).to(torch.float8_e4m3fn).t()
    extra = {"split_k": 2} if kernel == "splitk" else {}
    config = Config(kernel, 16, 16, 32, group_m=2, num_stages=1, num_warps=4, fp8_imprecise_acc=64, **extra)
    out = torch.full((m, n), float("nan"), dtype=torch.float32)
    matmul(a, b, out=out, config=config)
    (plan,) = [p for p in mm._PLANS.values() if p.config == config]
    assert (plan.imprecise_acc, plan.promote_steps) == (None, 2)
    _assert_close_to_floor(out, a.float(), b.float())
    # A chain no longer than one chunk has nothing to promote: the plain loop runs.
    short = matmul(a[:, :64], b[:64], config=config)
    (plan,) = [p for p in mm._PLANS.values() if p.k == 64 and p.config == config]
    assert plan.promote_steps == 0
    _assert_close_to_floor(short, a[:, :64].float(), b[:64].float())


@pytest.mark.usefixtures("interpret")
def test_the_split_k_reduction_adds_many_slices_in_chunks() -> None:
    # 37 slices of one K step each: the reduction loads REDUCE_BLOCK[1] slices at a time, the last load partial.
    gen = torch.Generator().manual_seed(29)
    a = _operand(3, 37 * 16, torch.float16, "n", gen)
    b = _operand(37 * 16, 300, torch.float16, "n", gen)
    out = torch.full((3, 300), float("nan"), dtype=torch.float16)
    config = Config("splitk", 16, 16, 16, group_m=2, num_stages=1, num_warps=4, split_k=37)
    matmul(a, b, out=out, config=config, alpha=0.5)
    assert 37 % mm.REDUCE_BLOCK[1]  # a partial chunk of slices
    assert 3 * 300 % mm.REDUCE_BLOCK[0]  # and of elements
    _assert_close_to_floor(out, a, b, alpha=0.5)


def test_alignment_of_rows() -> None:
    half = torch.empty(3000, 3000, dtype=torch.bfloat16)  # rows of 6000 bytes: 16-byte aligned, not 128
    line = torch.empty(3008, 3008, dtype=torch.bfloat16)  # rows of 6016 bytes: 47 lines of 128
    assert not mm.rows_aligned(half, half, half)
    assert mm.rows_aligned(line, line, line)
    odd = torch.empty(3001, 3001, dtype=torch.bfloat16)  # not even 16-byte aligned: copied, so counts as aligned
    assert mm.rows_aligned(odd, odd, odd)


@pytest.mark.usefixtures("interpret")
def test_alpha_and_float32_output() -> None:
    gen = torch.Generator().manual_seed(3)
    a = torch.randn(33, 50, generator=gen).half()
    b = torch.randn(50, 19, generator=gen).half()
    out = matmul(a, b, out_dtype=torch.float32, alpha=-0.25)
    assert out.dtype == torch.float32
    _assert_close_to_floor(out, a, b, alpha=-0.25)


def _compile_tma(config: Config, out: str = "bf16", b_row_major: bool = True) -> object:
    """The persistent kernel compiled for sm_90 here, without a GPU: bf16 inputs, row-major A, host descriptors, a
    ``config`` of one block (``swap_ab`` honoured), an output of ``out`` ("bf16" or "fp32")."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler import compile as triton_compile

    bm, bn, bk = config.block_m, config.block_n, config.block_k
    c_cols = bn // 2 if config.epilogue_subtile else bn

    def desc(rows: int, cols: int, kind: str = "bf16") -> str:
        return f"tensordesc<{kind}[{rows}, {cols}]>"

    signature = {"a": desc(bm, bk), "b": desc(bk, bn) if b_row_major else desc(bn, bk), "c": desc(bm, c_cols, out)}
    signature.update({"M": "i32", "N": "i32", "K": "i32", "lda": "i32", "ldb": "i32", "ldc": "i32", "alpha": "fp32"})
    constants = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": config.group_m, "A_ROW_MAJOR": True,
                 "B_ROW_MAJOR": b_row_major, "OUT_DTYPE": {"bf16": tl.bfloat16, "fp32": tl.float32}[out],
                 "UPCAST": False, "DEVICE_DESC": False, "EPILOGUE_SUBTILE": config.epilogue_subtile,
                 "FLATTEN": config.flatten, "WARP_SPECIALIZE": False, "NUM_SMS": 132, "MAX_IMPRECISE_ACC": None,
                 "PROMOTE_STEPS": 0, "SWAP": config.swap_ab}  # fmt: skip
    signature.update(dict.fromkeys(constants, "constexpr"))
    source = ASTSource(mm._jitted("tma"), signature, constexprs=constants)
    options = {"num_warps": config.num_warps, "num_stages": config.num_stages}
    return triton_compile(source, target=GPUTarget("cuda", 90, 32), options=options)


@pytest.mark.parametrize(
    ("block_m", "block_n", "stages", "warps", "instruction", "count"),
    [(64, 256, 4, 4, "m64n256k16", 4), (128, 128, 4, 8, "m64n128k16", 4), (64, 128, 6, 4, "m64n128k16", 4),
     (128, 64, 6, 4, "m64n64k16", 8)],
)  # fmt: skip
def test_a_64_row_tile_is_one_mma_as_wide_as_the_tile(block_m, block_n, stages, warps, instruction, count) -> None:
    """Step 20's pairs, compiled for sm_90 here: per K step of 64, a 64-row tile issues one warpgroup MMA as wide as the
    tile four times (k16 each); a 128×128 tile at 8 warps issues 128-wide ones, in each of its two warpgroups (each
    reading all of B's tile); a 128×64 tile at 4 warps issues 64-wide ones twice as often, once per 64 rows."""
    import re

    config = Config("tma", block_m, block_n, 64, num_stages=stages, num_warps=warps)
    ptx = _compile_tma(config).asm["ptx"]
    shapes = re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+)", ptx)
    assert shapes == [instruction] * count
    # A and B both from shared memory: two 64-bit descriptors after the accumulators (A in registers would be a {...})
    assert len(re.findall(r"wgmma\.mma_async[.\w]+ \{[^}]*\}, %rd\d+, %rd\d+,", ptx)) == count


def test_a_float32_output_tile_gets_a_shorter_pipeline() -> None:
    """Compiled for sm_90 here: the default tiling with a float32 C tile needs more shared memory at its 4 stages than a
    block may have (it failed at launch), and fits at the 3 that ``fit_shared_memory`` leaves it; the count matches
    the compiler's within its barriers."""
    from gpukb.cuda import limits
    from gpukb.gemm.triton.configs import DEFAULT_CONFIGS, fit_shared_memory, shared_memory_model

    limit = limits.capability("9.0").shared_per_block_optin
    default = DEFAULT_CONFIGS["bfloat16"]
    fitted = fit_shared_memory(default, limit, 2, 4)
    assert (default.num_stages, fitted.num_stages) == (4, 3)
    assert fit_shared_memory(default, limit, 2, 2) == default  # a 16-bit output: as the tables tuned it
    splitk = Config("splitk", 64, 256, 64, num_stages=5, num_warps=4)
    assert fit_shared_memory(splitk, limit, 2, 4) == splitk  # plain stores: no output tile in shared memory
    for config in (default, fitted):
        shared = _compile_tma(config, out="fp32").metadata.shared
        assert 0 <= shared - shared_memory_model(config, 2, 4) <= 64
        assert (shared > limit) == (config is default)
        if config is default:  # the figures the Triton page gives
            page = (Path(__file__).resolve().parents[3] / "docs" / "gemm" / "triton.md").read_text(encoding="utf-8")
            assert f"4 stages needs {shared:,} bytes, past sm_90's {limit:,}" in " ".join(page.split())


def test_the_split_k_kernels_pipeline_takes_what_the_count_says() -> None:
    """Compiled for sm_90 here: the split-K kernel stages A and B tiles in shared memory as the persistent kernel does
    and stores C from registers, so ``shared_memory_model`` counts no output tile for it: 9 stages of 64×128 (with a
    float32 output) take the count within the barriers' bytes and fit in a block; 10 (of the 16 a Config may take
    since step 21) would not, and ``matmul`` refuses them before launch."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler import compile as triton_compile

    from gpukb.cuda import limits
    from gpukb.gemm.triton.configs import shared_memory_model

    config = Config("splitk", 64, 128, 64, num_stages=9, num_warps=4)
    signature = {"a": "tensordesc<bf16[64, 64]>", "b": "tensordesc<bf16[64, 128]>", "c_ptr": "*fp32",
                 "w_ptr": "*fp32", "lock_ptr": "*i32", **dict.fromkeys(("M", "N", "K", "K_PER", "STEPS", "stride_cs",
                 "stride_cm", "stride_cn"), "i32"), "alpha": "fp32"}  # fmt: skip
    constants = {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "A_ROW_MAJOR": True, "B_ROW_MAJOR": True,
                 "OUT_DTYPE": tl.float32, "UPCAST": False, "MAX_IMPRECISE_ACC": None, "PROMOTE_STEPS": 0,
                 "DIRECT": False, "FUSED": True, "SWAP": False}  # fmt: skip
    signature.update(dict.fromkeys(constants, "constexpr"))
    source = ASTSource(mm._jitted("splitk"), signature, constexprs=constants)
    shared = triton_compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 9})
    limit = limits.capability("9.0").shared_per_block_optin
    assert 0 <= shared.metadata.shared - shared_memory_model(config, 2, 4) <= 256
    assert shared.metadata.shared <= limit < shared_memory_model(replace(config, num_stages=10), 2, 4)


@pytest.mark.parametrize(("kind", "stages", "buffers"), [("fp32", 15, 14), ("fp32", 1, 1), ("bf16", 16, 1)])
def test_the_blocked_kernel_pipelines_float32_loads_only(kind: str, stages: int, buffers: int) -> None:
    """Compiled for sm_90 here: the blocked kernel's float32 loads (IEEE products) take a buffer of A and B tiles for
    all but one stage, its 16-bit ones one buffer at any depth, as ``shared_memory_model`` counts (within the
    barriers' bytes): float32's 64×64×32 tiling fits a block at 15 stages and not at 16."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler import compile as triton_compile

    from gpukb.cuda import limits
    from gpukb.gemm.triton.configs import shared_memory_model

    config = replace(mm.FP32_CONFIG, num_stages=stages)
    signature = {
        "a_ptr": f"*{kind}",
        "b_ptr": f"*{kind}",
        "c_ptr": f"*{kind}",
        **dict.fromkeys(
            ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn"), "i32"
        ),
        "alpha": "fp32",
    }
    constants = {
        "BLOCK_M": 64,
        "BLOCK_N": 64,
        "BLOCK_K": 32,
        "GROUP_M": 8,
        "OUT_DTYPE": tl.float32,
        "PRECISION": "ieee" if kind == "fp32" else "tf32",
        "UPCAST": False,
    }  # as _Plan passes them
    signature.update(dict.fromkeys(constants, "constexpr"))
    source = ASTSource(mm._jitted("blocked"), signature, constexprs=constants)
    options = {"num_warps": config.num_warps, "num_stages": stages}
    shared = triton_compile(source, target=GPUTarget("cuda", 90, 32), options=options).metadata.shared
    element = 4 if kind == "fp32" else 2
    assert shared_memory_model(config, element, 4) == buffers * 128 * 32 * element
    assert 0 <= shared - shared_memory_model(config, element, 4) <= 256
    limit = limits.capability("9.0").shared_per_block_optin
    assert (
        shared_memory_model(replace(config, num_stages=15), 4, 4)
        <= limit
        < shared_memory_model(replace(config, num_stages=16), 4, 4)
    )


def test_step_21s_deepest_pipelines_compile_within_a_blocks_shared_memory() -> None:
    """Compiled for sm_90 here: the deepest pipelines step 21 times (13 stages of a swapped 64×64 tile on the
    persistent kernel, 15 of a 48×64 one on the two-block kernel) take what the count says, within the barriers'
    bytes, and fit in a block's shared memory; one stage more would not."""
    from gpukb.cuda import limits
    from gpukb.gemm.triton.configs import shared_memory_model

    limit = limits.capability("9.0").shared_per_block_optin
    one_block = tuning.deepest(Config("tma", 64, 64, 64, num_stages=6, num_warps=4, swap_ab=True))
    two_block = tuning.deepest(Config("tma", 48, 64, 64, num_stages=4, num_warps=4, flatten=False, swap_ab=True))
    assert (one_block.num_stages, two_block.num_stages) == (13, 15)
    compiled = (
        (one_block, _compile_tma(one_block, b_row_major=False)),
        (two_block, _compile_two_block(48, 64, two_block.num_stages, 4, b_row_major=False, swap=True)),
    )
    for config, kernel in compiled:
        assert 0 <= kernel.metadata.shared - shared_memory_model(config) <= 256
        assert kernel.metadata.shared <= limit < shared_memory_model(replace(config, num_stages=config.num_stages + 1))


@pytest.mark.parametrize("layout", ["nn", "nt"])
def test_a_swapped_tile_compiles_to_the_same_warpgroup_mma_work(layout) -> None:
    """Compiled for sm_90 here (step 19): the persistent kernel's 64×128 tile and its swap (128 tokens of C's rows
    along the MMA's N, 64 of B's columns along its M) issue wgmma for the same multiply-adds and take the same shared
    memory; a swapped 32-row side (step 19's split-K clause, 32×64) stays on wgmma, 32 wide, where an unswapped one
    falls to mma.sync (step 16)."""
    import re

    def mma(config: Config) -> tuple[dict[str, int], int, int]:
        compiled = _compile_tma(config, b_row_major=layout == "nn")
        ptx = compiled.asm["ptx"]
        shapes: dict[str, int] = {}
        for shape in re.findall(r"wgmma\.mma_async\S*\.(m64n\d+k16)", ptx):
            shapes[shape] = shapes.get(shape, 0) + 1
        return shapes, ptx.count("mma.sync"), compiled.metadata.shared

    def work(shapes: dict[str, int]) -> int:  # multiply-adds the wgmma instructions in the kernel cover
        return sum(64 * int(re.search(r"n(\d+)k", s).group(1)) * 16 * count for s, count in shapes.items())

    plain, plain_sync, plain_shared = mma(Config("tma", 64, 128, 64, num_stages=6, num_warps=4))
    swapped, swapped_sync, swapped_shared = mma(Config("tma", 128, 64, 64, num_stages=6, num_warps=4, swap_ab=True))
    assert (plain_sync, swapped_sync) == (0, 0)
    assert work(plain) == work(swapped) > 0
    assert plain_shared == swapped_shared
    short, short_sync, _ = mma(tuning.SWAP_SHORT_TILE)
    assert (set(short), short_sync) == ({"m64n32k16"}, 0)
    _, unswapped_sync, _ = mma(replace(tuning.SWAP_SHORT_TILE, swap_ab=False))
    assert unswapped_sync > 0


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize("config", [TMA_SMALL["plain"], SPLITK_SMALL["split 3"]], ids=lambda c: c.kernel)
def test_strided_views_are_copied_for_the_tma_kernels(config) -> None:
    gen = torch.Generator().manual_seed(5)
    big = torch.randn(64, 64, generator=gen).half()
    a, b = big[1::2, :40:2], big[::3, 40:]  # 32×20 and 22×24 views: no unit stride in either A dimension
    b = b[:20]
    out = torch.full((32, 24), float("nan"), dtype=torch.half)
    assert mm.tma_refusal(a, b, out) == (
        "A (shape (32, 20), strides (128, 2)) must be row-major or col-major for a tensor descriptor"
    )
    staged = mm.staging(a, b, out, config)
    assert [name for name, why in staged.items() if why] == ["A"]
    assert mm.staging(a, b, out, mm.INTERPRETER_CONFIG) == {"A": None, "B": None, "C": None}  # pointers: any view
    matmul(a, b, out=out, config=config)
    _assert_close_to_floor(out, a, b)


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(("variant", "dtype"), [("plain", torch.bfloat16), ("split 3", torch.float16)], ids=str)
def test_unaligned_operands_and_output_are_copied(dtype, variant) -> None:
    # Rows of 21, 19 and 17 two-byte elements start off 16-byte boundaries: no descriptor can describe them.
    gen = torch.Generator().manual_seed(_seed(dtype, variant, "unaligned"))
    m, n, k = 17, 19, 21
    a = torch.randn(m, k, generator=gen).to(dtype)
    b = torch.randn(k, n, generator=gen).to(dtype)
    config = TMA_SMALL["plain"] if variant == "plain" else SPLITK_SMALL["split 3"]
    parent = torch.full((m, n + 3), float("nan"), dtype=dtype)
    out = parent[:, 1 : n + 1]  # a view whose rows start at an odd element
    staged = mm.staging(a, b, out, config)
    assert staged["A"] is not None
    assert staged["B"] is not None
    assert (staged["C"] is not None) == (config.kernel == "tma")  # the split-K kernel stores through pointers
    assert matmul(a, b, out=out, config=config) is out
    _assert_close_to_floor(out, a, b)
    assert torch.isnan(parent[:, 0]).all()  # nothing written outside out
    assert torch.isnan(parent[:, n + 1 :]).all()


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(
    ("variant", "layout", "dtype"),
    [
        ("direct", "nt", torch.float16),
        ("split auto", "tt", torch.bfloat16),
        ("split 3", "tn", torch.float16),
        ("fused 3", "nt", torch.bfloat16),
        ("swap fused 4", "nt", torch.float16),
        ("swap fused 4", "nn", torch.bfloat16),
        ("swap direct", "tn", torch.bfloat16),
    ],
    ids=str,
)
def test_splitk_kernel_matches_float64(dtype, variant, layout) -> None:
    config = SPLITK_SMALL[variant]
    m, n, k = (5 if layout[0] == "n" else 8), 40, 136  # small M, long K: several K slices
    gen = torch.Generator().manual_seed(_seed(dtype, variant, layout, "splitk"))
    a = _operand(m, k, dtype, layout[0], gen)
    b = _operand(k, n, dtype, layout[1], gen)
    out = torch.full((m, n), float("nan"), dtype=dtype)
    matmul(a, b, out=out, config=config, alpha=0.5)
    _assert_close_to_floor(out, a, b, alpha=0.5)


def test_split_for_fills_one_round() -> None:
    small = Config("splitk", 64, 128, 128, num_stages=4, num_warps=4)
    assert mm.split_for(1, 4096, 4096, small, 132) == 4  # 32 tiles × 4 slices = 128 programs ≤ 132
    assert mm.split_for(8, 128256, 4096, small, 132) == 1  # 1002 tiles fill the GPU: no split
    assert mm.split_for(64, 4096, 14336, small, 132) == 4  # 32 tiles × 5 slices would start a second round
    assert mm.split_for(128, 128, 65536, small, 132) == 66  # 2 tiles × 66 slices = 132 programs
    assert mm.split_for(1024, 1024, 32768, small, 132) == 1  # 128 tiles: one round already
    assert mm.split_for(128, 128, 1024, small, 132) == 2  # K allows two slices of four steps
    assert mm.split_for(64, 64, 256, small, 132) == 1  # K too short to split
    assert mm.split_for(1, 4096, 4096, Config("splitk", 64, 128, 128, split_k=3), 132) == 3  # fixed


@pytest.mark.usefixtures("interpret")
def test_plans_are_made_once_per_shape_and_layout() -> None:
    mm.clear_plans()
    gen = torch.Generator().manual_seed(9)
    a, b = torch.randn(20, 24, generator=gen).half(), torch.randn(24, 16, generator=gen).half()
    first = matmul(a, b)
    assert len(mm._PLANS) == 1
    a2, b2 = torch.randn(20, 24, generator=gen).half(), torch.randn(24, 16, generator=gen).half()
    second = matmul(a2, b2)  # same shape, strides, type: the same plan, new tensors
    assert len(mm._PLANS) == 1
    _assert_close_to_floor(first, a, b)
    _assert_close_to_floor(second, a2, b2)
    matmul(a2, b2.t().contiguous().t())  # B column-major: a layout of its own
    matmul(a2[:, :23], b2[:23])  # K = 23: another shape
    assert len(mm._PLANS) == 3
    mm.clear_plans()
    assert not mm._PLANS


@pytest.mark.usefixtures("interpret")
def test_degenerate_shapes() -> None:
    a, b = torch.randn(1, 1).half(), torch.randn(1, 1).half()
    assert matmul(a, b).item() == pytest.approx(float(a.float() @ b.float()), rel=1e-3)
    assert torch.equal(matmul(torch.empty(3, 0).half(), torch.empty(0, 5).half()), torch.zeros(3, 5).half())
    assert matmul(torch.empty(0, 4).half(), torch.randn(4, 5).half()).shape == (0, 5)


#: Every kernel, for the empty products: the split-K kernel is the one whose plan divided by K's slices.
EMPTY_CONFIGS = [mm.INTERPRETER_CONFIG, TMA_SMALL["plain"], SPLITK_SMALL["split auto"], SPLITK_SMALL["split 3"]]


def _empty_products(device: str, configs: list) -> None:
    """K = 0 gives zeros, as torch.matmul does (into a NaN-poisoned out too); M = 0 or N = 0 an empty result."""
    for config in configs:
        for dtype in (torch.float16, torch.bfloat16):
            a, b = torch.empty(3, 0, dtype=dtype, device=device), torch.empty(0, 5, dtype=dtype, device=device)
            assert torch.equal(matmul(a, b, config=config), torch.matmul(a, b))
            out = torch.full((3, 5), float("nan"), dtype=dtype, device=device)
            assert matmul(a, b, out=out, config=config) is out
            assert torch.equal(out, torch.zeros(3, 5, dtype=dtype, device=device))
            for m, n, k in ((0, 5, 4), (3, 0, 4), (0, 0, 0)):
                a = torch.randn(m, k, device=device).to(dtype)
                b = torch.randn(k, n, device=device).to(dtype)
                got = matmul(a, b, config=config)
                assert got.shape == (m, n)
                assert got.dtype == dtype
                assert got.device == a.device
    assert not mm._PLANS or all(p.m and p.n and p.k for p in mm._PLANS.values())  # no plan for an empty product


@pytest.mark.usefixtures("interpret")
def test_empty_products_on_every_kernel() -> None:
    _empty_products("cpu", EMPTY_CONFIGS)


@pytest.mark.usefixtures("interpret")
def test_pad_rows_copies_rows_off_128_byte_lines() -> None:
    gen = torch.Generator().manual_seed(_seed("pad"))
    a, b = torch.randn(40, 24, generator=gen).half(), torch.randn(24, 40, generator=gen).half()  # 48, 80 bytes
    for kernel in ("tma", "splitk"):
        config = Config(kernel, 16, 16, 16, group_m=2, num_stages=1, num_warps=4, pad_rows=True)
        out = torch.full((40, 40), float("nan")).half()
        stage = mm.staging(a, b, out, config)
        assert "48 bytes start off 128-byte lines" in (stage["A"] or "")
        assert "80 bytes" in (stage["B"] or "")
        matmul(a, b, out=out, config=config)
        _assert_close_to_floor(out, a, b)
    plain = Config("tma", 16, 16, 16, group_m=2, num_stages=1, num_warps=4)
    assert mm.staging(a, b, out, plain) == {"A": None, "B": None, "C": None}  # legal rows are read in place
    with pytest.raises(ValueError, match="pad_rows applies to the 'tma' and 'splitk' kernels"):
        Config("blocked", 16, 16, 16, pad_rows=True)


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(("layout", "m", "rows"), [("nn", 53, 48), ("nt", 53, 48), ("tn", 56, 48), ("nn", 16, 0)])
def test_split_tail_runs_the_last_rows_split_along_k(layout, m, rows) -> None:
    # 3 "multiprocessors", 16-row tiles: 4 rows of tiles take 2 rounds; 3 rows in one and the last cut in 3 K slices
    # (200 = 12.5 K steps of 16) take 1 + 1/3 (+ TAIL_COST). One row of tiles alone: all of it split (rows = 0).
    config = Config("tma", 16, 32, 16, group_m=2, num_stages=1, num_warps=4, split_tail=True)
    gen = torch.Generator().manual_seed(_seed("tail", layout, m))
    a, b = _operand(m, 200, torch.float16, layout[0], gen), _operand(200, 32, torch.float16, layout[1], gen)
    assert mm.tail_rows(m, 32, 200, config, mm.INTERPRETER_SMS) == (rows, 3)
    mm.clear_plans()
    out = torch.full((m, 32), float("nan")).half()
    assert matmul(a, b, out=out, config=config) is out
    _assert_close_to_floor(out, a, b)
    (plan,) = mm._PLANS.values()
    assert (type(plan).__name__, plan.rows, plan.split, plan.tail.split) == ("_TailPlan", rows, 3, 3)
    assert (plan.head is None) == (rows == 0)
    _assert_close_to_floor(matmul(a, b, config=config, alpha=1.0), a, b)  # an output of its own: a second plan
    with pytest.raises(ValueError, match="split_tail applies to the 'tma' kernel"):
        Config("splitk", 16, 16, 16, split_tail=True)


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(
    ("layout", "m", "n", "k", "subtile", "sk"),
    [
        ("nn", 117, 32, 200, False, 2),  # 32×16 tiles: 4 × 2 on 3 programs, 6 in two rounds, 2 × 13 K steps shared
        ("nt", 40, 16, 16, False, 2),  # fewer tiles than programs, one K step each: the third program has none
        ("tn", 65, 64, 70, True, 1),  # 5 × 2 tiles of 16×32 (subtiled stores): 9, then one of 5 K steps shared 2, 2, 1
        ("nn", 96, 48, 40, False, 0),  # 9 tiles: whole rounds, the persistent kernel alone
        ("nn", 2, 32, 40, False, 2),  # two rows: the fix-up's stores still step by C's own (padded) pitch
    ],
)
def test_stream_k_shares_the_last_round_and_adds_in_a_fixed_order(layout, m, n, k, subtile, sk, monkeypatch) -> None:
    # 32-row tiles where the tiles are 16 wide, and the fix-up adds 16 rows at a time: two chunks per tile
    monkeypatch.setattr(mm, "FIX_ELEMENTS", 256)
    config = Config("tma", 16 if subtile else 32, 32 if subtile else 16, 16, group_m=2, num_stages=1, num_warps=4,
                    epilogue_subtile=subtile, stream_k=True)  # fmt: skip
    assert mm.stream_k_tiles(m, n, config, mm.INTERPRETER_SMS) == sk
    gen = torch.Generator().manual_seed(_seed("stream-k", layout, m))
    dtype = torch.bfloat16 if subtile else torch.float16
    a, b = _operand(m, k, dtype, layout[0], gen), _operand(k, n, dtype, layout[1], gen)
    mm.clear_plans()
    results, works = [], []
    pad = 8 if sk == 2 and layout == "nn" else 0  # two cases write into rows 8 elements wider than C (own pitch)
    for _ in range(2):  # the second call finds the locks the first call's last segments reset
        out = torch.full((m, n + pad), float("nan"), dtype=dtype)[:, :n]
        assert matmul(a, b, out=out, config=config) is out
        _assert_close_to_floor(out, a, b)
        results.append(out)
        (plan,) = mm._PLANS.values()
        works.append([work for work, _ in plan.sk_buffers.values()])
    assert torch.equal(results[0], results[1])
    assert plan.sk_tiles == sk
    assert all(not lock.any() for _, lock in plan.sk_buffers.values())
    # the partial sums are made once, two tiles of float32 for each of the 3 programs (none for whole rounds)
    assert [len(w) for w in works] == ([1, 1] if sk else [0, 0])
    assert not sk or (works[1][0] is works[0][0] and works[0][0].numel() == 2 * 3 * config.block_m * config.block_n)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"kernel": "splitk"}, "stream_k applies to the 'tma' kernel without warp_specialize or split_tail; got "
         "kernel 'splitk'"),
        ({"kernel": "blocked"}, "got kernel 'blocked'"),
        ({"kernel": "tma", "warp_specialize": True}, "warp_specialize=True"),
        ({"kernel": "tma", "split_tail": True}, "split_tail=True"),
    ],
)  # fmt: skip
def test_stream_k_refuses_what_it_does_not_model(kwargs, match) -> None:
    flags = {name: value for name, value in kwargs.items() if name != "kernel"}  # the parameter is shared: no pop
    with pytest.raises(ValueError, match=match):
        Config(kwargs["kernel"], 16, 16, 16, stream_k=True, **flags)


@pytest.mark.usefixtures("interpret")
def test_stream_k_refuses_a_flag_that_is_not_a_bool_and_inputs_it_was_not_built_for() -> None:
    with pytest.raises(ValueError, match="stream_k must be a bool; got 1"):
        Config("tma", 16, 16, 16, stream_k=1)
    with pytest.raises(ValueError, match="stream_k_tiles is for stream_k configurations; got 'tma 16x16x16"):
        mm.stream_k_tiles(16, 16, Config("tma", 16, 16, 16), 3)
    fp8 = torch.zeros(16, 16).to(torch.float8_e4m3fn)
    with pytest.raises(ValueError, match="stream_k is built and tested for float16 and bfloat16 inputs; got float8"):
        matmul(fp8, fp8.t(), config=Config("tma", 16, 16, 32, stream_k=True))


@pytest.mark.usefixtures("interpret")
def test_bad_input_is_named() -> None:
    x = torch.randn(4, 4).half()
    with pytest.raises(TypeError, match=r"A must be a torch\.Tensor; got list"):
        matmul([[1.0]], x)
    with pytest.raises(ValueError, match=r"B must be a 2-D matrix; got 3 dimensions, shape \(2, 4, 4\)"):
        matmul(x, torch.randn(2, 4, 4).half())
    with pytest.raises(ValueError, match="A is 4×4 and B is 5×3: A's columns must equal B's rows"):
        matmul(x, torch.randn(5, 3).half())
    with pytest.raises(TypeError, match="one element type; got float16 and float32"):
        matmul(x, torch.randn(4, 4))
    with pytest.raises(TypeError, match=r"int32 is not supported; supported: \['float16', 'bfloat16'"):
        matmul(x.int(), x.int())
    with pytest.raises(TypeError, match="output type float64 is not supported"):
        matmul(x, x, out_dtype=torch.float64)
    with pytest.raises(ValueError, match=r"out must be a 4×4 float16 tensor on cpu; got \(4, 3\) float16"):
        matmul(x, x, out=torch.empty(4, 3).half())
    with pytest.raises(ValueError, match="out shares memory with A or B"):
        matmul(x, x.clone(), out=x)
    fp8 = torch.randn(16, 16).to(torch.float8_e4m3fn)
    with pytest.raises(ValueError, match="fp8 inputs need the 'tma' or 'splitk' kernel"):
        matmul(fp8, fp8, config=mm.INTERPRETER_CONFIG)
    with pytest.raises(TypeError, match="config must be a Config; got dict"):
        matmul(x, x, config={"kernel": "tma"})
    # A plan made for a shape does not let bad input through on a later call of that shape.
    y = x.clone()
    matmul(x, y)
    with pytest.raises(ValueError, match="out shares memory with A or B"):
        matmul(x, y, out=y)
    with pytest.raises(TypeError, match=r"B must be a torch\.Tensor; got list"):
        matmul(x, [[1.0]])


def test_cpu_tensors_without_the_interpreter_are_refused(compiled) -> None:
    x = torch.randn(4, 4).half()
    with pytest.raises(ValueError, match="need Triton's interpreter: set TRITON_INTERPRET=1"):
        matmul(x, x)


def test_configs_are_validated() -> None:
    with pytest.raises(ValueError, match=r"kernel must be one of \['tma', 'blocked', 'splitk'\]; got 'cutlass'"):
        Config("cutlass", 128, 128, 64)
    with pytest.raises(ValueError, match="block_k must be a power of two ≥ 16"):
        Config("tma", 128, 128, 48)
    with pytest.raises(ValueError, match="num_warps must be in"):
        Config("tma", 128, 128, 64, num_warps=6)
    with pytest.raises(ValueError, match="apply to the 'tma' kernel only"):
        Config("blocked", 128, 128, 64, warp_specialize=True)
    with pytest.raises(ValueError, match="split_k applies to the 'splitk' kernel only; got split_k=2 for 'tma'"):
        Config("tma", 128, 128, 64, split_k=2)
    with pytest.raises(ValueError, match="split_k must be None or an int from 1 to 128; got 0"):
        Config("splitk", 64, 128, 64, split_k=0)
    with pytest.raises(ValueError, match="warp_specialize and epilogue_subtile apply to the 'tma' kernel only"):
        Config("splitk", 64, 128, 64, epilogue_subtile=True)
    config = Config("tma", 128, 256, 64, num_stages=4, warp_specialize=True, epilogue_subtile=True)
    assert config.label == "tma 128x256x64 g8 s4 w8 ws sub"
    assert Config(**config.as_dict()) == config
    assert Config("splitk", 64, 128, 128, num_warps=4).label == "splitk 64x128x128 g8 s3 w4 split auto"
    assert Config("splitk", 64, 128, 128, num_warps=4, split_k=4).label == "splitk 64x128x128 g8 s3 w4 split 4"
    fused = Config("splitk", 16, 64, 128, num_warps=4, fused_reduce=True, swap_ab=True)
    assert fused.label == "splitk 16x64x128 g8 s3 w4 fused swap split auto"
    assert Config(**fused.as_dict()) == fused
    assert "fused_reduce" not in Config("splitk", 16, 64, 128).as_dict()  # records before the flags read the same
    with pytest.raises(ValueError, match="fused_reduce applies to the 'splitk' kernel only; got kernel 'tma'"):
        Config("tma", 64, 128, 64, fused_reduce=True)
    message = "swap_ab applies to the 'splitk' and 'tma' kernels only; got kernel 'blocked'"
    with pytest.raises(ValueError, match=message):
        Config("blocked", 64, 128, 64, swap_ab=True)
    swapped = Config("tma", 160, 256, 64, num_stages=2, flatten=False, swap_ab=True)
    assert swapped.label == "tma 160x256x64 g8 s2 w8 swap noflat"
    for extra in ({"warp_specialize": True}, {"epilogue_subtile": True}, {"stream_k": True}, {"split_tail": True}):
        with pytest.raises(ValueError, match=r"a swapped 'tma' tile \(swap_ab\) \(64x128\) runs on the 'tma' kernel"):
            Config("tma", 64, 128, 64, swap_ab=True, **extra)
    for flag in ("fused_reduce", "swap_ab"):
        with pytest.raises(ValueError, match=f"{flag} must be a bool; got 1"):
            Config("splitk", 64, 128, 64, **{flag: 1})
    # a truthy string was taken as on ("no": flattened, labelled so), or refused a swapped tile for the wrong reason
    for flag, value in (("flatten", "no"), ("warp_specialize", "no"), ("epilogue_subtile", 1)):
        with pytest.raises(ValueError, match=exactly(f"{flag} must be a bool; got {value!r}")):
            Config("tma", 64, 128, 64, swap_ab=True, **{flag: value})


def test_wave_quantization_picks_the_tiling() -> None:
    large, small = Config("tma", 128, 256, 64), Config("tma", 64, 128, 64, num_warps=4)
    assert mm.waves(1024, 1024, large, 132) == 1  # 32 tiles: 100 of 132 multiprocessors idle
    assert mm.waves(3072, 3072, large, 132) == 3  # 288 tiles: 2.2 rounds of work take 3
    assert mm.waves(8192, 8192, small, 132) == 63  # 8192 tiles: 62.06 rounds take 63
    for size in (512, 1024, 1280):
        assert mm.pick_by_waves(size, size, large, small, 132, 0.63) == small, size
    for size in (1536, 2048, 3072, 4096, 6144, 8192, 12288):
        assert mm.pick_by_waves(size, size, large, small, 132, 0.63) == large, size
    # Counting rounds alone (equal rates) would send 8192² to the small tiles: 63 × 8192 < 16 × 32768.
    assert mm.pick_by_waves(8192, 8192, large, small, 132, 1.0) == small


def test_the_chapter_declares_the_kernel_pair() -> None:
    from gpukb.measuring.counting import gemm_flops
    from gpukb.measuring.pairs import registry

    pair = registry().pairs["triton-gemm-bf16"]
    assert pair.peer == "torch.matmul (cuBLAS)"
    assert list(pair.cases) == ["4096x4096x4096", "8192x8192x8192"]
    assert pair.flops("4096x4096x4096") == gemm_flops(4096, 4096, 4096)
    assert pair.nbytes("8192x8192x8192") == 3 * 8192 * 8192 * 2


def _notes_sketch(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BLOCK_SIZE: tl.constexpr):  # noqa: N803
    # The kernel sketched in the notes (seed 000, "2. Using Triton"), with its elided loads filled in the only
    # way its indexing allows: one BLOCK_SIZE-wide slice of K, tiles counted with N // BLOCK_SIZE, no masks.
    pid = tl.program_id(0)
    block_i = pid // (N // BLOCK_SIZE)
    block_j = pid % (N // BLOCK_SIZE)
    rows = block_i * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    cols = block_j * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    ks = tl.arange(0, BLOCK_SIZE)
    a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :])
    b = tl.load(b_ptr + ks[:, None] * stride_bk + cols[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], c.to(tl.float16))


@pytest.mark.usefixtures("interpret")
def test_claim_triton_sketch_skips_k_and_edge_tiles() -> None:
    import triton

    gen = torch.Generator().manual_seed(21)
    m, n, k, block = 32, 40, 48, 16
    a, b = torch.randn(m, k, generator=gen).half(), torch.randn(k, n, generator=gen).half()
    sketch = torch.full((m, n), float("nan"), dtype=torch.half)
    grid = ((m // block) * (n // block),)  # the sketch's own tile count
    triton.jit(_notes_sketch)[grid](a, b, sketch, m, n, k, k, n, n, BLOCK_SIZE=block)
    assert torch.isnan(sketch[:, 32:]).all()  # N = 40 is not a multiple of 16: the last 8 columns get no program
    first_slice = a[:, :block].double() @ b[:block, :32].double()
    assert torch.allclose(sketch[:, :32].double(), first_slice, rtol=1e-2, atol=1e-2)  # only K 0..15 was summed
    err, _ = _errors(sketch[:, :32], a, b[:, :32])
    assert err > 0.5  # two thirds of K are missing
    out = matmul(a, b)  # the K loop and the masks of this site's kernel
    _assert_close_to_floor(out, a, b)


# --- GPU -------------------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_gpu_default_kernel_matches_float64(dtype, layout) -> None:
    gen = torch.Generator().manual_seed(_seed(dtype, layout))
    m, n, k = (999 if layout[0] == "n" else 1000), 1064, 776  # odd M where A is row-major
    a = _operand(m, k, dtype, layout[0], gen, "cuda")
    b = _operand(k, n, dtype, layout[1], gen, "cuda")
    out = torch.full((m, n), float("nan"), dtype=dtype, device="cuda")
    assert mm.default_config(a, b, out).kernel in ("tma", "splitk")
    matmul(a, b, out=out)
    _assert_close_to_floor(out, a, b)
    peer = torch.matmul(a, b)
    assert _product_error(out, a, b) <= 1.5 * _product_error(peer, a, b)


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(
    "config",
    list(dict.fromkeys([mm.BLOCKED_CONFIG, mm.DEFAULT_CONFIGS["bfloat16"], mm.SMALL_CONFIGS["bfloat16"]])),
    ids=lambda c: c.label,
)
def test_gpu_configs_on_an_odd_square(config) -> None:
    gen = torch.Generator().manual_seed(11)
    a = torch.randn(1000, 1000, generator=gen).cuda().bfloat16()
    b = torch.randn(1000, 1000, generator=gen).cuda().bfloat16()
    out = torch.full((1000, 1000), float("nan"), dtype=torch.bfloat16, device="cuda")
    matmul(a, b, out=out, config=config)
    _assert_close_to_floor(out, a, b)


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
def test_gpu_strided_operand_is_copied_for_the_tma_kernels() -> None:
    gen = torch.Generator().manual_seed(12)
    a = torch.randn(513, 1400, generator=gen).cuda().half()[:, ::2]  # 513×700, column stride 2
    b = torch.randn(700, 333, generator=gen).cuda().half()
    out = torch.full((513, 333), float("nan"), dtype=torch.half, device="cuda")
    assert mm.default_config(a, b, out).kernel in ("tma", "splitk")
    assert mm.staging(a, b, out, mm.default_config(a, b, out))["A"] is not None  # copied for the descriptor
    matmul(a, b, out=out)
    _assert_close_to_floor(out, a, b)
    matmul(a, b, out=out, config=mm.BLOCKED_CONFIG)  # the pointer kernel takes the view as it is
    _assert_close_to_floor(out, a, b)


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
def test_gpu_large_bf16_product() -> None:
    gen = torch.Generator(device="cuda").manual_seed(13)
    a = torch.randn(4096, 4096, device="cuda", generator=gen).bfloat16()
    b = torch.randn(4096, 4096, device="cuda", generator=gen).bfloat16()
    out = torch.full((4096, 4096), float("nan"), dtype=torch.bfloat16, device="cuda")
    matmul(a, b, out=out)
    _assert_close_to_floor(out, a, b)


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
def test_gpu_fp8_against_scaled_mm() -> None:
    gen = torch.Generator(device="cuda").manual_seed(14)
    m, n, k = 1000, 1024, 1536
    a = torch.randn(m, k, device="cuda", generator=gen).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda", generator=gen).to(torch.float8_e4m3fn).t()
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    matmul(a, b, out=out, alpha=0.5)
    _assert_close_to_floor(out, a.float(), b.float(), alpha=0.5)
    scale = torch.tensor(0.5**0.5, device="cuda")
    peer = torch._scaled_mm(a, b, scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)
    peer = peer[0] if isinstance(peer, tuple) else peer
    assert _product_error(out, a.float(), b.float(), 0.5) <= 1.5 * _product_error(peer, a.float(), b.float(), 0.5)


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
def test_gpu_default_kernel_uses_wgmma_and_tma() -> None:
    a = torch.randn(4096, 4096, device="cuda").bfloat16()
    summary = mm.compiled_summary(a, a)
    assert summary["config"] == mm.default_config(a, a, a)
    assert summary["config"].kernel == "tma"
    assert summary["ptx"]["wgmma.mma_async"] > 0  # tl.dot became Hopper's warpgroup MMA
    assert summary["ptx"]["mma.sync"] == 0
    assert summary["ptx"]["cp.async.bulk.tensor"] > 0  # tiles move by TMA
    assert summary["spills"] == 0


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
def test_gpu_empty_products() -> None:
    # On the GPU the plans count tiles and K steps: K = 0 once divided by zero there (not under the interpreter).
    configs = [None, mm.BLOCKED_CONFIG, mm.DEFAULT_CONFIGS["bfloat16"], Config("splitk", 64, 128, 64, num_warps=4)]
    _empty_products("cuda", configs)


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(("m", "n", "k"), [(3, 5, 7), (64, 64, 64), (17, 33, 65)])
def test_gpu_tiny_products_take_one_launch_of_the_blocked_kernel(m, n, k) -> None:
    gen = torch.Generator(device="cuda").manual_seed(_seed("tiny", m, n, k))
    a = torch.randn(m, k, device="cuda", generator=gen).bfloat16()
    b = torch.randn(k, n, device="cuda", generator=gen).bfloat16()
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    config = mm.default_config(a, b, out)
    assert config.kernel == "blocked"  # no descriptors, so no copies of rows that are not 16-byte aligned
    mm.clear_plans()
    for _ in range(3):  # the JIT, then the direct launcher, then the plan's quick path
        out.fill_(float("nan"))
        matmul(a, b, out=out)
        _assert_close_to_floor(out, a, b)
    (plan,) = mm._PLANS.values()
    assert plan.quick is not None
    assert plan.fast_failed is None
    assert torch.equal(matmul(a, b), out)  # out=None: a plan of its own, the same numbers


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(("layout", "m", "n", "k"), [("nt", 512, 11008, 4096), ("tn", 1024, 1024, 1624),
                                                     ("nn", 4931, 2048, 2048)])  # fmt: skip
def test_gpu_split_tail_matches_float64(layout, m, n, k) -> None:
    gen = torch.Generator().manual_seed(_seed("tail", layout, m))
    a = _operand(m, k, torch.bfloat16, layout[0], gen, "cuda")
    b = _operand(k, n, torch.bfloat16, layout[1], gen, "cuda")
    config = Config("tma", 128, 256, 64, num_stages=4, num_warps=8, epilogue_subtile=True, split_tail=True)
    rows, split = mm.tail_rows(m, n, k, config, torch.cuda.get_device_properties(0).multi_processor_count)
    assert rows < m
    assert split > 1
    mm.clear_plans()
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    for _ in range(3):  # the JIT, the direct launchers, the quick paths
        out.fill_(float("nan"))
        matmul(a, b, out=out, config=config)
        sample = slice(0, m, max(1, m // 64))
        _assert_close_to_floor(out[sample], a[sample], b)
        assert torch.isfinite(out).all()
    (plan,) = mm._PLANS.values()
    assert type(plan).__name__ == "_TailPlan"
    assert plan.tail.quick is not None


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize(
    ("layout", "m", "n", "k"), [("nt", 5, 4096, 4096), ("nn", 40, 1000, 3000), ("nt", 64, 768, 768)]
)
def test_gpu_fused_split_k_matches_float64_call_after_call(layout, m, n, k, swap) -> None:
    gen = torch.Generator().manual_seed(_seed("fused", layout, m, swap))
    a = _operand(m, k, torch.bfloat16, layout[0], gen, "cuda")
    b = _operand(k, n, torch.bfloat16, layout[1], gen, "cuda")
    config = Config("splitk", 16, 64, 128, num_stages=4, num_warps=4, split_k=5, fused_reduce=True, swap_ab=swap)
    mm.clear_plans()
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    results = []
    for _ in range(4):  # the JIT, the direct launcher, the quick path twice (its kept locks, reset by each call)
        out.fill_(float("nan"))
        matmul(a, b, out=out, config=config)
        _assert_close_to_floor(out, a, b)
        results.append(out.clone())
    assert all(torch.equal(r, results[0]) for r in results)  # slices added in one order whichever finished last
    (plan,) = mm._PLANS.values()
    assert plan.fused
    assert plan.quick is not None


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(
    ("layout", "m", "n", "k", "block_n"),
    [("nn", 3000, 3000, 3000, 256), ("tn", 896, 4864, 7503, 128), ("nt", 512, 11008, 4096, 256),
     ("nn", 2304, 768, 3072, 128), ("nt", 1000, 1000, 40, 128)],
)  # fmt: skip
def test_gpu_stream_k_matches_float64_call_after_call(layout, m, n, k, block_n) -> None:
    # Whole rounds and a shared last round (3000² in 128×256: 288 tiles, 24 shared), more tiles than programs by a
    # few (896×4864 in 128×128: 266, 2 shared), fewer tiles than programs (2304×768: 108, all shared), a short K
    # (40: one K step, shared by one program each).
    gen = torch.Generator().manual_seed(_seed("stream-k", layout, m))
    a = _operand(m, k, torch.bfloat16, layout[0], gen, "cuda")
    b = _operand(k, n, torch.bfloat16, layout[1], gen, "cuda")
    config = Config("tma", 128, block_n, 64, num_stages=4, num_warps=8, epilogue_subtile=block_n == 256,
                    stream_k=True)  # fmt: skip
    assert mm.stream_k_tiles(m, n, config, torch.cuda.get_device_properties(0).multi_processor_count) > 0
    mm.clear_plans()
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    results = []
    for _ in range(4):  # the JIT, then the direct launcher three times (the kept locks, reset by each call)
        out.fill_(float("nan"))
        matmul(a, b, out=out, config=config)
        assert torch.isfinite(out).all()
        results.append(out.clone())
    sample = slice(0, m, max(1, m // 64))
    _assert_close_to_floor(out[sample], a[sample], b)
    assert all(torch.equal(r, results[0]) for r in results)  # the same bits whoever finished last
    (plan,) = mm._PLANS.values()
    assert plan.sk_tiles > 0
    assert plan.fast_failed is None


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize("flatten", [True, False], ids=["flat", "noflat"])
@pytest.mark.parametrize(("block_m", "block_n"), [(48, 32), (32, 48), (48, 48)], ids=["M2", "N2", "both"])
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_tiles_of_two_blocks_match_float64(layout, block_m, block_n, flatten, monkeypatch) -> None:
    # 100×90 in 48-row tiles: 3 rows of tiles, the last one 4 rows of its 32-row block and none of its 16-row block
    # (stored past the edge: clipped); 90 columns in 48: the last tile's second block 10 of its 16 columns. On 3
    # "multiprocessors" each program walks several tiles.
    gen = torch.Generator().manual_seed(_seed("two blocks", layout, block_m, block_n, flatten))
    m, n, k = 100, 90, 70
    dtype = torch.bfloat16 if flatten else torch.float16
    a, b = _operand(m, k, dtype, layout[0], gen), _operand(k, n, dtype, layout[1], gen)
    config = Config("tma", block_m, block_n, 16, group_m=2, num_stages=2, num_warps=4, flatten=flatten)
    assert config.two_part
    launched = []
    jitted = mm._jitted
    monkeypatch.setattr(mm, "_jitted", lambda name: launched.append(name) or jitted(name))
    out = torch.full((m, n + 6), float("nan"), dtype=dtype)[:, :n]  # C's rows 6 elements wider than C (own pitch)
    assert matmul(a, b, out=out, alpha=0.5, config=config) is out
    _assert_close_to_floor(out, a, b, alpha=0.5)
    assert launched == ["tma2"]


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(("block_m", "block_n"), [(48, 32), (16, 32), (32, 48)], ids=["M2", "one", "N2"])
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_swapped_tiles_match_float64(layout, block_m, block_n, monkeypatch) -> None:
    # swap_ab on the 'tma' kernels: each block computed as its transpose (B^T A^T) and stored transposed back, on the
    # two-block kernel for a tile of two blocks, on the persistent one otherwise. 100×90 as in the test above.
    gen = torch.Generator().manual_seed(_seed("swapped", layout, block_m, block_n))
    m, n, k = 100, 90, 70
    dtype = torch.bfloat16 if layout[0] == "n" else torch.float16
    a, b = _operand(m, k, dtype, layout[0], gen), _operand(k, n, dtype, layout[1], gen)
    config = Config("tma", block_m, block_n, 16, group_m=2, num_stages=2, num_warps=4, flatten=False, swap_ab=True)
    assert config.two_part == (block_m != 16)
    launched = []
    jitted = mm._jitted
    monkeypatch.setattr(mm, "_jitted", lambda name: launched.append(name) or jitted(name))
    out = torch.full((m, n + 6), float("nan"), dtype=dtype)[:, :n]
    assert matmul(a, b, out=out, alpha=0.5, config=config) is out
    _assert_close_to_floor(out, a, b, alpha=0.5)
    assert launched == ["tma2" if config.two_part else "tma"]


def _compile_two_block(
    block_m: int, block_n: int, stages: int, warps: int, b_row_major: bool = True, swap: bool = False
) -> object:
    """The two-block kernel compiled for sm_90 here, without a GPU (bf16, row-major A; B row-major or not; each block
    computed as its transpose with ``swap``)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler import compile as triton_compile

    from gpukb.gemm.triton.configs import block_parts

    (bm, bm2), (bn, bn2) = block_parts(block_m), block_parts(block_n)

    def desc(rows: int, cols: int) -> str:
        return f"tensordesc<bf16[{rows or 16}, {cols or 16}]>"

    def b_desc(cols: int) -> str:
        return desc(64, cols) if b_row_major else desc(cols, 64)

    signature = {"a1": desc(bm, 64), "a2": desc(bm2, 64), "b1": b_desc(bn), "b2": b_desc(bn2),
                 "c11": desc(bm, bn), "c12": desc(bm, bn2), "c21": desc(bm2, bn), "c22": desc(bm2, bn2),
                 "M": "i32", "N": "i32", "K": "i32", "alpha": "fp32"}  # fmt: skip
    constants = {"BLOCK_M": bm, "BLOCK_M2": bm2, "BLOCK_N": bn, "BLOCK_N2": bn2, "BLOCK_K": 64, "GROUP_M": 8,
                 "A_ROW_MAJOR": True, "B_ROW_MAJOR": b_row_major, "OUT_DTYPE": tl.bfloat16, "UPCAST": False,
                 "FLATTEN": False, "NUM_SMS": 132, "SWAP": swap}  # fmt: skip
    signature.update(dict.fromkeys(constants, "constexpr"))
    source = ASTSource(mm._jitted("tma2"), signature, constexprs=constants)
    return triton_compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages})


@pytest.mark.parametrize(("block_m", "wgmma", "mma_sync"), [(192, 8, 0), (160, 4, 16)])
def test_a_block_of_32_rows_compiles_to_the_older_mma(block_m, wgmma, mma_sync) -> None:
    """Compiled for sm_90 here, without a GPU: a 192×128 tile of two blocks (128 + 64 rows) multiplies with the
    warpgroup MMA alone; a 160×128 one (128 + 32) puts its 32-row block on ``mma.sync`` (Triton takes ``wgmma`` only
    for a dot of a multiple of 64 rows a CTA: ``supportMMA`` in ``lib/Analysis/Utility.cpp``). Step 16 says so."""
    ptx = _compile_two_block(block_m, 128, 4, 8).asm["ptx"]
    assert (ptx.count("wgmma.mma_async"), ptx.count("mma.sync")) == (wgmma, mma_sync)


@pytest.mark.parametrize(
    ("block_m", "block_n", "stages", "layout", "registers"),
    [(320, 128, 2, "nn", 190), (320, 128, 2, "nt", 193), (160, 256, 2, "nn", 232), (160, 256, 2, "nt", 238)],
)
def test_the_largest_tall_tiles_fit_the_registers(block_m, block_n, stages, layout, registers, tmp_path) -> None:
    """Step 16's largest tiles (40,960 accumulators, ``tuning.TALL_MAX_AREA``), compiled for sm_90 and assembled by
    the ptxas Triton ships: under the 255 registers a thread may hold (``gpukb.cuda.limits``), none spilled."""
    import re
    import subprocess
    from pathlib import Path

    import triton

    from gpukb.cuda import limits

    assert block_m * block_n == tuning.TALL_MAX_AREA
    ptxas = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    source = tmp_path / "tile.ptx"
    ptx = _compile_two_block(block_m, block_n, stages, 8, b_row_major=layout == "nn").asm["ptx"]
    source.write_text(ptx, encoding="utf-8")
    report = subprocess.run([str(ptxas), "-v", "--gpu-name", "sm_90a", str(source), "-o", str(tmp_path / "tile.o")],
                            capture_output=True, text=True, check=True, timeout=120).stderr  # fmt: skip
    used = int(re.search(r"Used (\d+) registers", report).group(1))
    spilled = [int(x) for x in re.findall(r"(\d+) bytes spill (?:stores|loads)", report)]
    assert used == registers
    assert used <= limits.capability("9.0").max_registers_per_thread
    assert spilled  # the report names spill stores and loads
    assert not any(spilled)


def _dot_kernel(a, b, c):
    # one 128×N product of tiles read through descriptors (N is the descriptor's box: 8, 16 or 32 columns)
    c.store([0, 0], tl.dot(a.load([0, 0]), b.load([0, 0])).to(tl.bfloat16))


@pytest.mark.parametrize(("width", "shape"), [(8, None), (16, "m64n16k16"), (32, "m64n32k16")])
def test_a_dot_of_16_or_32_columns_is_still_a_warpgroup_mma(width, shape) -> None:
    """Compiled for sm_90 here: a dot 16 or 32 columns wide is ``wgmma`` (the tokens along N, What next on the
    Triton page), an 8-wide one ``mma.sync``."""
    import re

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler import compile as triton_compile

    signature = {"a": "tensordesc<bf16[128, 64]>", "b": f"tensordesc<bf16[64, {width}]>",
                 "c": f"tensordesc<bf16[128, {width}]>"}  # fmt: skip
    source = ASTSource(triton.jit(_dot_kernel), signature)
    ptx = triton_compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ptx"]
    found = set(re.findall(r"wgmma\.mma_async\S*\.(m64n\d+k16)", ptx))
    if shape is None:
        assert not found
        assert "mma.sync" in ptx
    else:
        assert found == {shape}
        assert "mma.sync" not in ptx


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float8_e4m3fn], ids=["fp32", "fp8"])
def test_tiles_of_two_blocks_refuse_inputs_they_were_not_built_for(dtype) -> None:
    a = torch.zeros(16, 48).to(dtype)
    message = (
        "tiles of two blocks ('tma 48x16x16 g8 s3 w8') are built and tested for float16 and bfloat16 inputs; got "
        f"{str(dtype)[6:]}"
    )
    with pytest.raises(ValueError, match=exactly(message)):
        matmul(a.t(), a.t().contiguous().t(), config=Config("tma", 48, 16, 16))
    swapped = Config("tma", 16, 16, 16, swap_ab=True)
    swapped_message = message.replace("tiles of two blocks ('tma 48x16x16 g8 s3 w8')", "swapped 'tma' tiles "
                                      "('tma 16x16x16 g8 s3 w8 swap')")  # fmt: skip
    with pytest.raises(ValueError, match=exactly(swapped_message)):
        matmul(a[:, :16].t(), a.t().contiguous().t(), config=swapped)


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(
    ("block_m", "block_n", "stages", "warps"), [(192, 128, 4, 8), (128, 192, 4, 8), (192, 192, 3, 8), (64, 192, 4, 4)]
)
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_gpu_tiles_of_two_blocks_match_float64(layout, block_m, block_n, stages, warps, monkeypatch) -> None:
    # 1000×1064: the last row and column of tiles hang over the edges, one block of them wholly past it
    gen = torch.Generator().manual_seed(_seed("two blocks gpu", layout, block_m, block_n))
    m, n, k = 1000, 1064, 776
    a = _operand(m, k, torch.bfloat16, layout[0], gen, "cuda")
    b = _operand(k, n, torch.bfloat16, layout[1], gen, "cuda")
    config = Config("tma", block_m, block_n, 64, num_stages=stages, num_warps=warps, flatten=False)
    launched = []
    jitted = mm._jitted
    monkeypatch.setattr(mm, "_jitted", lambda name: launched.append(name) or jitted(name))
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    mm.clear_plans()
    for _ in range(2):  # the JIT compiles; the second call runs the compiled kernel's launcher directly
        out.fill_(float("nan"))
        matmul(a, b, out=out, config=config)
        _assert_close_to_floor(out, a, b)
    assert launched == ["tma2"]
    (plan,) = mm._PLANS.values()
    assert (plan.fast, plan.fast_failed) == (True, None)


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(
    ("block_m", "block_n", "stages", "warps"), [(160, 256, 2, 8), (192, 128, 4, 4), (80, 64, 4, 4), (48, 256, 4, 8)]
)  # fmt: skip
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_gpu_swapped_tiles_match_float64(layout, block_m, block_n, stages, warps) -> None:
    # step 19's swapped tiles (tokens along the MMA's N: 128 + 32, 128 + 64, 64 + 16, 32 + 16) on 297 rows: the last
    # row of tiles part past the edge, one of its blocks wholly past it for 160 and 192; 1064 columns: the last tile
    # hangs over
    gen = torch.Generator().manual_seed(_seed("swapped gpu", layout, block_m, block_n))
    m, n, k = 297, 1064, 776
    a = _operand(m, k, torch.bfloat16, layout[0], gen, "cuda")
    b = _operand(k, n, torch.bfloat16, layout[1], gen, "cuda")
    config = Config("tma", block_m, block_n, 64, num_stages=stages, num_warps=warps, flatten=False, swap_ab=True)
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    for _ in range(2):  # the JIT compiles, then runs the compiled kernel
        out.fill_(float("nan"))
        matmul(a, b, out=out, config=config)
        _assert_close_to_floor(out, a, b)


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(
    ("block_m", "block_n", "stages"), [(320, 128, 2), (320, 64, 3), (288, 128, 2), (160, 256, 2)]
)  # fmt: skip
@pytest.mark.parametrize("layout", ["nn", "nt"])
def test_gpu_tall_tiles_match_float64(layout, block_m, block_n, stages) -> None:
    # step 16's tallest tiles (256 + 64, 256 + 32, 128 + 32 rows; the most accumulators a tile has) on 297 rows: one
    # row of tiles, its second block part past the edge; 1064 columns: the last tile hangs over
    gen = torch.Generator().manual_seed(_seed("tall tiles gpu", layout, block_m, block_n))
    m, n, k = 297, 1064, 776
    a = _operand(m, k, torch.bfloat16, layout[0], gen, "cuda")
    b = _operand(k, n, torch.bfloat16, layout[1], gen, "cuda")
    config = Config("tma", block_m, block_n, 64, num_stages=stages, num_warps=8, flatten=False)
    assert config in tuning.token_tiles(297) + tuning.token_tiles(277) + tuning.token_tiles(156)
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    for _ in range(2):  # the JIT compiles, then runs the compiled kernel
        out.fill_(float("nan"))
        matmul(a, b, out=out, config=config)
        _assert_close_to_floor(out, a, b)


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("layout", ["nn", "nt"])
def test_gpu_the_look_up_takes_two_blocks_where_step_15_says(dtype, layout) -> None:
    # 3903×768×3072: 93 tiles of 128×256 (one round, 0.69 busy); the rule takes a tile of two blocks, no config given
    gen = torch.Generator().manual_seed(_seed("two blocks default", layout, dtype))
    m, n, k = 3903, 768, 3072
    a = _operand(m, k, dtype, layout[0], gen, "cuda")
    b = _operand(k, n, dtype, layout[1], gen, "cuda")
    out = torch.full((m, n), float("nan"), dtype=dtype, device="cuda")
    mm.clear_plans()
    assert mm.default_config(a, b, out).two_part
    matmul(a, b, out=out)
    sample = slice(0, m, 61)
    _assert_close_to_floor(out[sample], a[sample], b)
    (plan,) = mm._PLANS.values()
    assert plan.config.two_part


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(
    "config",
    [Config("tma", 128, 192, 64, num_stages=4, num_warps=8, flatten=False),
     Config("tma", 160, 128, 64, num_stages=4, num_warps=4, flatten=False, swap_ab=True)],
    ids=lambda c: c.label,
)  # fmt: skip
def test_gpu_a_tile_of_two_blocks_runs_right_on_its_direct_launches(config) -> None:
    # from the second call the two-block kernel skips Triton's JIT: fresh operands each call (new addresses, new
    # descriptors), then the first ones again (kept descriptors), each product checked, poisoned output each time
    m, n, k = 297, 4864, 1024
    gen = torch.Generator().manual_seed(_seed("two blocks direct", config.label))
    pairs = [(_operand(m, k, torch.bfloat16, "n", gen, "cuda"), _operand(k, n, torch.bfloat16, "t", gen, "cuda"))
             for _ in range(3)]  # fmt: skip
    mm.clear_plans()
    for a, b in (*pairs, pairs[0]):
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        matmul(a, b, out=out, config=config)
        _assert_close_to_floor(out[::7], a[::7], b)
    (plan,) = mm._PLANS.values()
    assert (plan.fast, plan.fast_failed) == (True, None)
    assert plan.direct[0] is not None
    mm.clear_plans()


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(
    ("dtype", "m", "n", "k"),
    [(torch.bfloat16, 2048, 2048, 1024), (torch.bfloat16, 297, 14336, 512), (torch.float8_e4m3fn, 2048, 2048, 1024)],
    ids=["default", "swapped", "fp8"],
)
def test_gpu_a_float32_output_runs_on_the_looked_up_tiling(dtype, m, n, k) -> None:
    # the tables tuned 16-bit outputs; a float32 C tile on the default tiling's 4 stages failed at launch (shared
    # memory), and the look-up's tiling now runs with the pipeline cut to fit
    gen = torch.Generator().manual_seed(_seed("float32 out", m, n, str(dtype)))
    a = torch.randn(m, k, generator=gen).to(device="cuda", dtype=dtype)
    b = torch.randn(n, k, generator=gen).to(device="cuda", dtype=dtype).t()  # K-major, as FP8 needs
    mm.clear_plans()
    out = matmul(a, b, out_dtype=torch.float32)
    assert out.dtype == torch.float32
    assert torch.isfinite(out).all()
    sample = slice(0, m, 7)
    err, _ = _errors(out[sample], a[sample].float(), b.float(), 1.0)
    # 16-bit inputs: float32 sums, as the float32 outputs of the other tests; fp8: the tensor cores' fast accumulation
    assert err < (1e-6 if dtype == torch.bfloat16 else 1e-3), err
    (plan,) = mm._PLANS.values()
    assert plan.config.kernel == "tma"


def _look_up_without_and_with(rule: str, layout: str, m: int, n: int, k: int, labels: tuple[str, str]) -> None:
    """An m×n×k bf16 product in ``layout`` on the GPU, with no configuration given, once with the look-up's ``rule``
    switched off and once on: the configuration it looks up is ``labels``' first, then its second; the plan runs it,
    and the output is as close to the float32 floor as every product here."""
    gen = torch.Generator().manual_seed(_seed(rule, layout, m, n, k))
    a = _operand(m, k, torch.bfloat16, layout[0], gen, "cuda")
    b = _operand(k, n, torch.bfloat16, layout[1], gen, "cuda")
    try:
        for on, label in zip((False, True), labels, strict=True):
            tuning.use_rule(rule, on)
            out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
            mm.clear_plans()
            config = mm.default_config(a, b, out)
            assert config.label == label
            matmul(a, b, out=out)
            _assert_close_to_floor(out[::7], a[::7], b)
            (plan,) = mm._PLANS.values()
            assert plan.config == config
    finally:
        tuning.use_rule(rule, True)
        mm.clear_plans()


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(
    ("layout", "m", "n", "k", "swapped"),
    [("nn", 297, 14336, 4096, "tma 160x128x64 g8 s5 w4 swap noflat"),
     ("nt", 156, 6144, 4096, "tma 80x128x64 g8 s7 w4 swap noflat")],
)  # fmt: skip
def test_gpu_the_look_up_takes_64_row_tiles_where_step_16_says(layout, m, n, k, swapped) -> None:
    # the sixth draw's two products step 16's rule changes: the table's 128×128 tiles leave 87 and 100 rows of zeros
    # under the last row of tiles, 64×256 tiles 23 and 36; step 19's rule then takes swapped tiles for both, and
    # step 21's deepens them (K is 64 K steps)
    _look_up_without_and_with("swap_tokens", layout, m, n, k, (tuning.TOKEN_TILE.label, swapped))


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(
    ("layout", "m", "n", "k", "before", "after"),
    [("nt", 156, 6144, 4096, "tma 80x128x64 g8 s4 w4 swap noflat", "tma 80x128x64 g8 s7 w4 swap noflat"),
     ("nn", 108, 5120, 5120, "tma 64x128x64 g8 s6 w4", "tma 64x128x64 g8 s8 w4")],
)  # fmt: skip
def test_gpu_the_look_up_deepens_the_pipeline_where_step_21_says(layout, m, n, k, before, after) -> None:
    # two seen products of step 21's run, a swapped tile of two blocks and a tile of one: 7 and 8 stages
    _look_up_without_and_with("deep_tokens", layout, m, n, k, (before, after))


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(
    ("layout", "m", "n", "k", "before", "after"),
    [
        ("nt", 1314, 1024, 4096, "tma 128x128x64 g8 s5 w8", "tma 64x256x64 g8 s4 w4"),
        ("tn", 768, 3072, 4268, "tma 64x128x64 g8 s6 w4", "tma 128x192x64 g8 s4 w8 noflat"),
        ("nt", 339, 768, 768, "splitk 64x256x64 g8 s4 w4 split 6", "tma 64x128x64 g8 s6 w4"),
    ],
)
def test_gpu_the_look_up_takes_step_20s_tiles(layout, m, n, k, before, after) -> None:
    # one seen product of step 20's run for each clause of its rule: the look-up's choice without the rule, and the
    # rule's tiles
    _look_up_without_and_with("mid_tiles", layout, m, n, k, (before, after))


def test_compiled_summary_needs_a_compiler(interpret) -> None:
    with pytest.raises(ValueError, match="the interpreter compiles nothing"):
        mm.compiled_summary(torch.randn(16, 16).half(), torch.randn(16, 16).half())


@pytest.mark.parametrize(("alpha", "error"), [(float("nan"), ValueError), (float("inf"), ValueError),
                                              (True, TypeError), ("0.5", TypeError), (None, TypeError),
                                              (1e39, ValueError), (-1e308, ValueError)])  # fmt: skip
def test_an_alpha_that_is_not_a_finite_number_is_refused(alpha, error) -> None:
    """A NaN or infinite alpha would make every element NaN or infinite, silently; so would one beyond float32's
    range (about 3.4e38), where the kernel scales its accumulator."""
    a = torch.ones(16, 16, dtype=torch.float16)
    with pytest.raises(error, match="alpha must be"):
        matmul(a, a, alpha=alpha)


# --- copied operands: buffers kept per plan and stream -----------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 5), (1023, 1027), (1, 7), (11008, 1)])
@pytest.mark.parametrize("col_major", [False, True])
def test_an_aligned_buffer_starts_every_row_on_a_128_byte_line(shape, col_major) -> None:
    t = torch.empty(shape, dtype=torch.bfloat16)
    buf = mm._aligned_buffer(t, col_major)
    assert tuple(buf.shape) == shape
    lead = buf.stride(1) if col_major else buf.stride(0)
    assert buf.stride(0 if col_major else 1) == 1
    assert lead * buf.element_size() % mm.ROW_PAD_BYTES == 0
    assert lead >= (shape[0] if col_major else shape[1])  # rows (columns) do not overlap
    assert mm._aligned_copy(torch.randn(shape).bfloat16(), col_major, buf) is buf


def test_small_copied_operands_keep_their_buffer_and_large_ones_do_not() -> None:
    mm.clear_plans()
    keep: dict = {}
    small = torch.empty(64, 64, dtype=torch.bfloat16)
    kept = mm._kept_buffer(keep, ("A", 0), small, False)
    assert kept is not None
    assert mm._kept_buffer(keep, ("A", 0), small, False) is kept  # the same buffer on the same stream
    assert mm._kept_buffer(keep, ("A", 1), small, False) is not kept  # another stream, another buffer
    assert mm._KEPT["bytes"] == 2 * small.numel() * 2
    large = torch.empty(mm.KEEP_BYTES // 2 + 1, 1, dtype=torch.bfloat16)
    assert mm._kept_buffer(keep, ("B", 0), large, False) is None  # past KEEP_BYTES: a fresh buffer each call
    assert keep[("B", 0)] is None
    mm.clear_plans()
    assert mm._KEPT["bytes"] == 0


@pytest.mark.gpu
@pytest.mark.usefixtures("compiled")
def test_gpu_copied_operands_reuse_their_buffers_on_each_stream() -> None:
    mm.clear_plans()
    gen = torch.Generator().manual_seed(12)
    pairs = [
        (
            torch.randn(1023, 1027, generator=gen).cuda().bfloat16(),
            torch.randn(1027, 1025, generator=gen).cuda().bfloat16(),
        )
        for _ in range(3)
    ]  # rows of 2054 and 2050 bytes: not 16-byte multiples, so A and B are copied
    out = torch.empty(1023, 1025, dtype=torch.bfloat16, device="cuda")
    assert [name for name, why in mm.staging(*pairs[0], out, mm.default_config(*pairs[0], out)).items() if why] == [
        "A",
        "B",
    ]
    main = [matmul(a, b) for a, b in pairs]  # the first call makes the plan; the others copy into kept buffers
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        other = [matmul(a, b) for a, b in pairs]
    torch.cuda.synchronize()
    assert mm._KEPT["bytes"] == 2 * (1023 * 1027 + 1027 * 1025) * 2  # A and B, on each of the two streams
    for (a, b), x, y in zip(pairs, main, other, strict=True):
        _assert_close_to_floor(x, a, b)
        _assert_close_to_floor(y, a, b)
