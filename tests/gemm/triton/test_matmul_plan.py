"""How the Triton GEMM makes and calls a plan, on the CPU: which plan a ``split_tail`` configuration gets, what a plan
copies and in which order, when split-K adds its slices in one launch, the strides its tensor descriptors are given,
the kernels it jits for each mode, and a call under the interpreter. Values are worked by hand from the tensors'
shapes and strides; the few launches are products of at most 16×16×32 under ``TRITON_INTERPRET=1``."""

from __future__ import annotations

import inspect
import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from triton.runtime.interpreter import InterpretedFunction  # noqa: E402
from triton.runtime.jit import JITFunction  # noqa: E402

from gpukb.gemm.triton import matmul as mm  # noqa: E402
from gpukb.gemm.triton.configs import Config  # noqa: E402

F16, BF16, F8 = torch.float16, torch.bfloat16, torch.float8_e4m3fn

#: The persistent kernel's smallest tiling here, and the same with a split tail.
TMA = Config("tma", 16, 32, 16, group_m=2, num_stages=1, num_warps=4)
TAIL = Config("tma", 16, 32, 16, group_m=2, num_stages=1, num_warps=4, split_tail=True)


@pytest.fixture
def interpret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def _col(rows: int, cols: int, dtype=F16):
    """A column-major rows×cols matrix: the transpose of a contiguous cols×rows one."""
    return torch.randn(cols, rows).to(dtype).t()


# --- which plan a product gets -----------------------------------------------------------------------------------
# 53×n×208 in 16×32 tiles on the interpreter's 3 "multiprocessors", n <= 32: 4 row tiles, 2 rounds as they are;
# 3 row tiles (48 rows) in one round and the last tile's 13 K steps cut in 3 slices take 1 + 1/3 + 0.1 rounds.


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize("own_output", [False, True], ids=["column-major C", "C of 40-byte rows"])
def test_a_split_tail_whose_output_is_copied_is_one_plain_plan(own_output: bool) -> None:
    m, k = 53, 208
    a = torch.randn(m, k).half()
    if own_output:  # the output matmul allocates: rows of 20 fp16 elements, 40 bytes, not a multiple of 16
        n, out = 20, None
        b = _col(k, n)  # K-major rows of 416 bytes: only C is copied
    else:
        n = 32
        b, out = torch.randn(k, n).half(), torch.empty(n, m, dtype=F16).t()
    plan = mm._make_plan(a, b, out, F16, TAIL, m, n, k)
    assert type(plan) is mm._Plan  # the split tail's two plans would each copy C: one plan, persistent
    assert plan.config == TMA
    assert (plan.staged["A"], plan.staged["B"]) == (None, None)
    assert plan.stage_c
    assert (plan.m, plan.n, plan.k, plan.out_dtype) == (m, n, k, F16)
    assert plan.extents == (m * k * 2, k * n * 2, 0 if own_output else m * n * 2)


@pytest.mark.usefixtures("interpret")
def test_a_split_tail_that_does_not_help_is_one_plain_plan() -> None:
    # K = 48 is 3 K steps of 16: no slice of at least 4 steps, so no tail is split and all 53 rows stay persistent
    m, n, k = 53, 32, 48
    plan = mm._make_plan(torch.randn(m, k).half(), torch.randn(k, n).half(), None, F16, TAIL, m, n, k)
    assert type(plan) is mm._Plan
    assert plan.config == TMA
    assert (plan.m, plan.n, plan.k) == (m, n, k)


@pytest.mark.usefixtures("interpret")
def test_a_split_tail_writes_into_the_output_it_is_given() -> None:
    m, n, k = 53, 32, 208
    a, b, out = torch.randn(m, k).half(), torch.randn(k, n).half(), torch.empty(m, n, dtype=F16)
    plan = mm._make_plan(a, b, out, F16, TAIL, m, n, k)
    assert isinstance(plan, mm._TailPlan)
    assert (plan.rows, plan.split) == (48, 3)
    assert plan.extents == (m * k * 2, k * n * 2, m * n * 2)
    assert (plan.head.extents[2], plan.tail.extents[2]) == (48 * n * 2, 5 * n * 2)  # the two slices of out


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize("own_output", [False, True], ids=["column-major C", "C of 40-byte rows"])
def test_the_persistent_kernel_copies_an_output_no_descriptor_describes(own_output: bool) -> None:
    m, n, k = 16, 20, 32
    a, b = torch.randn(m, k).half(), _col(k, n)
    out = None if own_output else torch.empty(n, m, dtype=F16).t()
    plan = mm._make_plan(a, b, out, F16, TMA, m, n, k)
    assert plan.stage_c
    assert plan.extents[2] == (0 if own_output else m * n * 2)


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(("dtype", "expected"), [(F16, mm.INTERPRETER_CONFIG), (F8, mm.INTERPRETER_FP8_CONFIG)])
def test_a_plan_made_without_a_configuration_takes_the_interpreters(dtype, expected) -> None:
    a, b = torch.randn(16, 32).to(dtype), torch.randn(16, 32).to(dtype).t()
    out_dtype = BF16 if dtype == F8 else dtype
    assert mm._Plan(a, b, None, out_dtype, None, 16, 16, 32).config == expected


@pytest.mark.usefixtures("interpret")
def test_fp8_on_the_blocked_kernel_is_refused_with_the_reason() -> None:
    a, b = torch.randn(16, 32).to(F8), torch.randn(16, 32).to(F8).t()
    with pytest.raises(ValueError, match="fp8 inputs") as refused:
        mm._Plan(a, b, None, BF16, mm.INTERPRETER_CONFIG, 16, 16, 32)
    assert str(refused.value) == (  # the whole message: the reason too
        "fp8 inputs need the 'tma' or 'splitk' kernel (Hopper reads 8-bit MMA operands only along K)"
    )


@pytest.mark.usefixtures("interpret")
def test_a_copied_operand_is_stored_in_the_order_the_kernel_reads() -> None:
    # fp8: B row-major is not K-major, so it is copied column-major; 16-bit types: copied row-major
    a8, b8 = torch.randn(16, 32).to(F8), torch.randn(32, 16).to(F8)
    plan = mm._Plan(a8, b8, None, BF16, mm.INTERPRETER_FP8_CONFIG, 16, 16, 32)
    assert (plan.stage_a, plan.stage_b) == (False, True)
    assert (plan.b_col_major_copy, plan.b_row, plan.a_row) == (True, False, True)
    a, b = _col(16, 32), torch.randn(32, 64).half()[:, ::2]  # B has no unit stride
    plan = mm._Plan(a, b, None, F16, TMA, 16, 32, 32)
    assert (plan.stage_a, plan.stage_b) == (False, True)
    assert (plan.b_col_major_copy, plan.b_row, plan.a_row) == (False, True, False)


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(
    ("split_k", "fused_reduce", "fused"),
    [(3, True, True), (2, True, True), (1, True, False), (3, False, False)],
)
def test_split_k_adds_its_slices_in_one_launch_only_where_there_are_slices(split_k, fused_reduce, fused) -> None:
    # K = 96 in K steps of 16: 3 slices of 32, 2 of 48 or 1 of 96, none empty
    config = Config("splitk", 16, 16, 16, group_m=2, num_stages=1, num_warps=4, split_k=split_k,
                    fused_reduce=fused_reduce)  # fmt: skip
    plan = mm._Plan(torch.randn(16, 96).half(), torch.randn(96, 16).half(), None, F16, config, 16, 16, 96)
    assert (plan.split, plan.k_per, plan.fused) == (split_k, 96 // split_k, fused)


# --- the descriptors ---------------------------------------------------------------------------------------------


def _rows_of(rows: int, cols: int, pitch: int, dtype=F16):
    """A rows×cols row-major view whose rows are ``pitch`` elements apart."""
    return torch.randn(rows, pitch).to(dtype)[:, :cols]


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(
    ("a", "b", "lda", "ldb"),
    [
        # several rows (columns): the tensor's own pitch, 24 elements, 48 bytes
        (_rows_of(2, 16, 24), _rows_of(2, 16, 24), 24, 24),
        (_rows_of(16, 16, 24).t(), _rows_of(2, 16, 24).t(), 24, 24),
        # one row of A, one row of B (K = 1): its length rounded up to 16 bytes, whatever its own stride
        (_rows_of(1, 16, 40), _rows_of(16, 32, 40), 16, 40),
        (_rows_of(2, 1, 40), _rows_of(1, 32, 72), 40, 32),
        (_rows_of(1, 4, 40), _rows_of(4, 16, 16), 8, 16),
    ],
    ids=["two rows", "column-major", "one row of A", "one row of B", "a row of 8 bytes"],
)
def test_a_descriptor_is_given_the_pitch_of_its_rows(a, b, lda, ldb) -> None:
    (m, k), n = a.shape, b.shape[1]
    plan = mm._Plan(a, b, None, F16, TMA, m, n, k)
    a_desc, b_desc, got_lda, got_ldb = plan._descriptors(a, b, False)
    assert (got_lda, got_ldb) == (lda, ldb)
    assert (type(got_lda), type(got_ldb)) == (int, int)
    # a column-major operand is described as its transpose, a row-major one
    a_row, b_row = a.stride(1) == 1, b.stride(1) == 1
    assert (plan.a_row, plan.b_row) == (a_row, b_row)
    assert (a_desc.shape, a_desc.strides, a_desc.block_shape) == (
        ([m, k], [lda, 1], [16, 16]) if a_row else ([k, m], [lda, 1], [16, 16])
    )
    assert (b_desc.shape, b_desc.strides, b_desc.block_shape) == (
        ([k, n], [ldb, 1], [16, 32]) if b_row else ([n, k], [ldb, 1], [32, 16])
    )
    assert a_desc.base.data_ptr() == a.data_ptr()
    assert a_desc.base.stride() == (a.stride() if a_row else a.t().stride())
    assert b_desc.base.stride() == (b.stride() if b_row else b.t().stride())


@pytest.mark.usefixtures("interpret")
def test_one_column_of_fp8_b_is_given_its_length_rounded_up_to_16_bytes() -> None:
    # B is K×1, so a copy (fp8 B must be K-major) stores it column-major, its one column 128 elements from the next
    a, b = torch.randn(16, 48).to(F8), torch.randn(48, 1).to(F8)
    plan = mm._Plan(a, b, None, BF16, mm.INTERPRETER_FP8_CONFIG, 16, 1, 48)
    copy = mm._aligned_copy(b, plan.b_col_major_copy)
    assert copy.stride() == (1, 128)
    _, b_desc, _, ldb = plan._descriptors(a, copy, False)
    assert (ldb, b_desc.shape, b_desc.strides) == (48, [1, 48], [48, 1])


@pytest.mark.usefixtures("interpret")
def test_the_first_calls_descriptors_are_checked_and_later_ones_are_not() -> None:
    a = torch.randn(16 * 16 + 1).half()[1:].view(16, 16)  # 2 bytes past a 16-byte boundary
    b = torch.randn(16, 32).half()
    plan = mm._Plan(torch.randn(16, 16).half(), b, None, F16, TMA, 16, 32, 16)
    with pytest.raises(AssertionError, match="16-byte aligned"):
        plan._descriptors(a, b, False)
    assert plan._descriptors(a, b, True)[0].base is a


# --- one-row products: a row that is not a multiple of 16 bytes is copied, and its descriptor is still valid ----


def _one_row_products():
    ws = Config("tma", 16, 16, 16, group_m=2, num_stages=1, num_warps=4, warp_specialize=True)
    split = Config("splitk", 16, 16, 16, group_m=2, num_stages=1, num_warps=4, split_k=1)
    fp8 = mm.INTERPRETER_FP8_CONFIG
    return [
        pytest.param(TMA, (1, 4), (4, 8), F16, id="tma, A of one 8-byte row"),
        pytest.param(split, (1, 4), (4, 8), F16, id="split-K, A of one 8-byte row"),
        pytest.param(TMA, (3, 1), (1, 4), F16, id="tma, B of one 8-byte row"),
        pytest.param(TMA, (1, 16), (16, 4), F16, id="tma, C of one 8-byte row"),
        pytest.param(ws, (1, 4), (4, 4), F16, id="device descriptors, A and C of one row"),
        pytest.param(fp8, (16, 8), (8, 1), F8, id="fp8, B of one 8-byte column"),
    ]


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(("config", "a_shape", "b_shape", "dtype"), _one_row_products())
def test_one_row_products_whose_rows_are_copied(config, a_shape, b_shape, dtype) -> None:
    gen = torch.Generator().manual_seed(7)
    a = torch.randn(a_shape, generator=gen).to(dtype)
    b = torch.randn(b_shape, generator=gen).to(dtype)
    out_dtype = BF16 if dtype == F8 else F16
    out = torch.full((a_shape[0], b_shape[1]), float("nan"), dtype=out_dtype)
    mm.matmul(a, b, out=out, config=config)
    ref, size = a.double() @ b.double(), a.double().abs() @ b.double().abs()
    # a float32 sum of at most 16 exact products, rounded once to the output type
    unit = {F16: 2**-11, BF16: 2**-8}[out_dtype]
    assert ((out.double() - ref).abs() <= unit * ref.abs() + 2**-18 * size).all()


# --- a call -------------------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("interpret")
def test_a_call_under_the_interpreter_warns_nothing_and_records_its_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mm, "_LAST", {})  # what compiled_summary reads: no launch yet
    a, b = torch.randn(16, 16).half(), torch.randn(16, 16).half()
    with warnings.catch_warnings():
        # triton 3.6's interpreter converts one-element arrays to ints, which numpy deprecates, on every launch
        warnings.simplefilter("error", DeprecationWarning)
        out = mm.matmul(a, b)  # the blocked kernel
    assert torch.allclose(out.double(), a.double() @ b.double(), rtol=2**-10, atol=1e-3)
    assert "kernel" in mm._LAST


def test_the_kernels_are_jitted_once_per_mode_and_their_helpers_bound_to_that_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mm, "_COMPILED", {})  # none jitted yet (other tests' kernels are kept and put back after)
    for name, fn in mm._HELPERS.items():
        monkeypatch.setattr(mm, name, fn)  # the plain functions, as the module defines them
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    kernel = mm._jitted("splitk")
    assert isinstance(kernel, InterpretedFunction)
    assert kernel.fn is mm.splitk_kernel
    # the sizes and the slice pitch change from product to product: no kernel per value of them
    assert kernel.kwargs["do_not_specialize"] == ["M", "N", "K", "K_PER", "STEPS", "stride_cs"]
    assert set(kernel.kwargs["do_not_specialize"]) <= set(inspect.signature(mm.splitk_kernel).parameters)
    interpreted = {name: getattr(mm, name) for name in mm._HELPERS}
    for name, fn in mm._HELPERS.items():
        assert isinstance(interpreted[name], InterpretedFunction)
        assert interpreted[name].fn is fn
    assert mm._jitted("splitk") is kernel  # once
    monkeypatch.delenv("TRITON_INTERPRET")
    compiled = mm._jitted("reduce")  # jitting compiles nothing yet: no GPU needed
    assert type(compiled) is JITFunction
    assert compiled.fn is mm.reduce_kernel
    for name, fn in mm._HELPERS.items():
        assert type(getattr(mm, name)) is JITFunction
        assert getattr(mm, name).fn is fn
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert mm._jitted("splitk") is kernel
    assert all(getattr(mm, name) is interpreted[name] for name in mm._HELPERS)  # bound back to the interpreter's
    assert sorted(mm._COMPILED) == [False, True]
    assert sorted(mm._COMPILED[True]) == sorted([*mm._HELPERS, "splitk"])
    assert sorted(mm._COMPILED[False]) == sorted([*mm._HELPERS, "reduce"])


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("config", "n", "k"),
    [
        (Config("tma", 64, 128, 64, num_stages=3, num_warps=4), 4096, 4100),
        (Config("tma", 64, 128, 64, num_stages=3, num_warps=4), 4100, 4096),
        (Config("splitk", 64, 128, 64, num_stages=3, num_warps=4), 4096, 4100),
    ],
    ids=["tma, A of one 8200-byte row", "tma, C of one 8200-byte row", "split-K, A of one 8200-byte row"],
)
def test_gpu_one_row_products_whose_rows_are_copied(config, n, k, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    gen = torch.Generator(device="cuda").manual_seed(11)
    a = torch.randn(1, k, device="cuda", generator=gen).half()
    b = torch.randn(k, n, device="cuda", generator=gen).half()
    out = torch.empty((1, n), dtype=F16, device="cuda")
    ref = a.double() @ b.double()
    mm.clear_plans()
    for _ in range(3):  # the JIT, then the direct launcher, then the plan's quick path (fast descriptors)
        out.fill_(float("nan"))
        mm.matmul(a, b, out=out, config=config)
        assert ((out.double() - ref).norm() / ref.norm()).item() < 2**-10
