"""The Triton GEMM's host side on the CPU, without launching a kernel: the layout code, why the TMA kernels refuse
operands as they are, which rows start on 128-byte lines, the buffers a plan keeps, the two plans of a split tail
and what the blocked kernel is launched with. Values worked by hand from the tensors' shapes and strides."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from gpukb.gemm.triton import matmul as mm  # noqa: E402
from gpukb.gemm.triton.configs import Config  # noqa: E402


@pytest.fixture
def interpret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")


BF16 = torch.bfloat16


def _col(rows: int, cols: int, dtype=BF16):
    """A column-major rows×cols matrix: the transpose of a contiguous cols×rows one."""
    return torch.empty(cols, rows, dtype=dtype).t()


@pytest.mark.parametrize(
    ("a", "b", "code"),
    [
        (torch.empty(3, 5), torch.empty(5, 7), "NN"),
        (torch.empty(3, 5), _col(5, 7), "NT"),
        (_col(3, 5), torch.empty(5, 7), "TN"),
        (_col(3, 5), _col(5, 7), "TT"),
        (torch.empty(3, 10)[:, ::2], _col(5, 7), "NT"),  # neither order: counted row-major (it is copied so)
    ],
)
def test_layout_code(a, b, code: str) -> None:
    assert mm.layout_code(a, b) == code


@pytest.mark.usefixtures("interpret")
def test_why_the_tma_kernels_refuse_operands() -> None:
    ok = torch.empty(16, 64, dtype=BF16)  # rows of 128 bytes
    odd = torch.empty(16, 3, dtype=BF16)  # rows of 6 bytes
    assert mm.tma_refusal(ok, torch.empty(64, 16, dtype=BF16), torch.empty(16, 16, dtype=BF16)) is None
    stride = "base address and leading stride (3 elements of 2 bytes) must be multiples of 16 bytes"
    assert mm.tma_refusal(odd, torch.empty(3, 16, dtype=BF16), torch.empty(16, 16, dtype=BF16)) == (
        f"A's {stride} for a tensor descriptor"
    )
    assert mm.tma_refusal(ok, torch.empty(64, 3, dtype=BF16), torch.empty(16, 3, dtype=BF16)) == (
        f"B's {stride} for a tensor descriptor"
    )
    assert mm.tma_refusal(ok, torch.empty(64, 16, dtype=BF16), odd) == f"C's {stride} for a tensor descriptor"
    strided = torch.empty(16, 128, dtype=BF16)[:, ::2]
    assert mm.tma_refusal(strided, torch.empty(64, 16, dtype=BF16), torch.empty(16, 16, dtype=BF16)) == (
        "A (shape (16, 64), strides (128, 2)) must be row-major or col-major for a tensor descriptor"
    )
    assert mm.tma_refusal(ok, torch.empty(64, 16, dtype=BF16), _col(16, 16)) == (
        "C (shape (16, 16), strides (1, 16)) must be row-major for a tensor descriptor"
    )


@pytest.mark.usefixtures("interpret")
def test_fp8_operands_must_be_k_major_but_c_is_named() -> None:
    fp8 = torch.float8_e4m3fn
    a, b = torch.empty(16, 32).to(fp8), torch.empty(16, 32).to(fp8).t()  # A row-major, B column-major: K-major
    out = torch.empty(16, 16, dtype=BF16)
    assert mm.tma_refusal(a, b, out) is None
    k_major = "fp8 operands must be K-major: A row-major and B column-major (the transpose of a row-major N×K)"
    assert mm.tma_refusal(a, torch.empty(32, 16).to(fp8), out) == k_major  # B row-major
    assert mm.tma_refusal(torch.empty(32, 16).to(fp8).t(), b, out) == k_major  # A column-major
    odd = torch.empty(16, 3, dtype=BF16)
    assert mm.tma_refusal(a, torch.empty(3, 32).to(fp8).t(), odd) == (
        "C's base address and leading stride (3 elements of 2 bytes) must be multiples of 16 bytes for a tensor "
        "descriptor"
    )


def test_the_tma_kernels_run_on_cuda_devices_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    x = torch.empty(16, 64, dtype=BF16)
    assert mm.tma_refusal(x, x.t(), torch.empty(16, 16, dtype=BF16)) == "the TMA kernel runs on CUDA devices"


def test_rows_on_lines() -> None:
    assert not mm._on_lines(torch.empty(3, 1, dtype=BF16))  # three rows, 2 bytes apart
    assert mm._on_lines(torch.empty(1, 3, dtype=BF16))  # one row: no second line start
    assert not mm._on_lines(torch.empty(2, 3, dtype=BF16))
    assert not mm._on_lines(torch.empty(16, dtype=BF16).as_strided((1, 3), (1, 5)))  # 3 columns, 10 bytes apart
    assert mm._on_lines(torch.empty(2, 64, dtype=BF16))  # 128 bytes apart
    assert mm._on_lines(_col(64, 2))


def test_rows_aligned_reads_every_operand_as_it_is() -> None:
    line = torch.empty(4, 64, dtype=BF16)  # 128-byte rows
    half = torch.empty(4, 3000, dtype=BF16)  # 6000-byte rows: 16-byte aligned, not 128
    odd = torch.empty(4, 3001, dtype=BF16)  # not even 16: copied, so counts as aligned
    assert mm.rows_aligned(line, line, line)
    assert not mm.rows_aligned(line, line, half)  # C is written as it is too
    assert not mm.rows_aligned(odd, half, line)  # A copied, B still read as it is
    sector = torch.empty(4, 2000, dtype=BF16)  # 4000-byte rows: on 32-byte sectors
    assert mm.rows_aligned(sector, sector, sector, 32)
    assert not mm.rows_aligned(sector, sector, sector)


def test_a_plan_keeps_small_buffers_up_to_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(mm._KEPT, "bytes", 0)
    t = torch.empty(1024, 2048, dtype=BF16)  # exactly KEEP_BYTES (4 MiB)
    assert t.numel() * 2 == mm.KEEP_BYTES
    keep: dict = {}
    made = mm._kept_buffer(keep, "A", t, True)
    assert made is not None
    assert made.stride() == (1, 1024)  # a column-major copy: columns of 1024 rows (2048 bytes)
    assert mm._kept_buffer(keep, "A", t, True) is made
    assert mm._KEPT["bytes"] == mm.KEEP_BYTES
    assert mm._kept_buffer({"B": None}, "B", t, False) is None  # once refused, refused for good
    small = torch.empty(4, 64, dtype=BF16)
    monkeypatch.setitem(mm._KEPT, "bytes", mm.KEEP_TOTAL_BYTES - 512)  # room for exactly these 512 bytes
    assert mm._kept_buffer({}, "A", small, False) is not None
    assert mm._KEPT["bytes"] == mm.KEEP_TOTAL_BYTES
    assert mm._kept_buffer({}, "B", small, False) is None  # the budget is spent


def test_a_view_of_an_output_only_where_there_is_one() -> None:
    x = torch.empty(2, 2)
    assert mm._view_like(x, x) is x
    assert mm._view_like(x, None) is None


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize("fp8", [False, True], ids=["fp16", "fp8"])
def test_a_split_tail_is_two_plans_of_row_slices(fp8: bool) -> None:
    # 53 rows in 16-row tiles on the interpreter's 3 "multiprocessors": 48 rows persistent, the last 5 in 3 slices
    m, n, k, rows, split = 53, 32, 208, 48, 3
    if fp8:
        config = Config("tma", 16, 16, 32, group_m=2, num_stages=1, num_warps=4, fp8_imprecise_acc=16,
                        split_tail=True)  # fmt: skip
        a = torch.randn(m, k).to(torch.float8_e4m3fn)
        b = torch.randn(n, k).to(torch.float8_e4m3fn).t()
        size, out_dtype = 1, BF16
    else:
        config = Config("tma", 16, 32, 16, group_m=2, num_stages=1, num_warps=4, split_tail=True)
        a, b = torch.randn(m, k).half(), torch.randn(k, n).half()
        size, out_dtype = 2, torch.float16
    big = torch.empty(m, n + 8, dtype=out_dtype)
    out = big[:, :n]  # rows n + 8 elements apart
    plan = mm._TailPlan(a, b, out, out_dtype, config, m, n, k, rows, split)
    assert plan.extents == (m * k * size, k * n * size, ((m - 1) * (n + 8) + n) * 2)
    assert plan.head.config == replace(config, split_tail=False)
    assert plan.tail.config == Config(
        "splitk", config.block_m, config.block_n, config.block_k, group_m=2, num_stages=1, num_warps=4,
        fp8_imprecise_acc=config.fp8_imprecise_acc, split_k=split,
    )  # fmt: skip
    assert plan.head.extents[2] == ((rows - 1) * (n + 8) + n) * 2  # a slice of the real output
    assert plan.tail.extents[2] == ((m - rows - 1) * (n + 8) + n) * 2
    assert plan.staged == {"A": None, "B": None, "C": None}
    own = mm._TailPlan(a, b, None, out_dtype, config, m, n, k, rows, split)
    assert own.extents[2] == 0  # an output of its own
    assert own.head.extents[2] == own.tail.extents[2] == 0


@pytest.mark.usefixtures("interpret")
@pytest.mark.parametrize(("dtype", "precision"), [(torch.float32, "ieee"), (torch.float16, "tf32")])
def test_the_blocked_kernel_multiplies_float32_in_ieee(dtype, precision: str) -> None:
    a, b, out = torch.empty(8, 16, dtype=dtype), torch.empty(16, 8, dtype=dtype), torch.empty(8, 8, dtype=dtype)
    plan = mm._Plan(a, b, out, dtype, mm.INTERPRETER_CONFIG, 8, 16, 16)
    launched = []

    def launch(name, grid, args, constants, options, shared):
        launched.append((name, grid, constants))
        mm._LAST["kernel"] = "the kernel"

    plan._launch = launch
    plan.fast, plan.direct = True, None  # no direct launcher yet: no quick path either
    assert plan._blocked(a, b, out, 1.0) == "the kernel"
    ((name, grid, constants),) = launched
    assert (name, grid, constants["PRECISION"]) == ("blocked", (1,), precision)  # one 16×16 tile
    assert plan.quick is None
    assert plan.fast is False  # the interpreter launches through the JIT only


def test_launch_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    def runtime(hook):
        return SimpleNamespace(knobs=SimpleNamespace(runtime=SimpleNamespace(launch_enter_hook=hook)))

    monkeypatch.setattr(mm, "triton", runtime(None))
    assert mm._no_launch_hooks()
    monkeypatch.setattr(mm, "triton", runtime(lambda *args: None))  # a plain hook (before triton 3.6)
    assert not mm._no_launch_hooks()
    monkeypatch.setattr(mm, "triton", runtime(SimpleNamespace(calls=[])))  # 3.6's chain, empty
    assert mm._no_launch_hooks()
    monkeypatch.setattr(mm, "triton", runtime(SimpleNamespace(calls=[print])))
    assert not mm._no_launch_hooks()


def test_a_fast_descriptor_is_the_checked_one_without_the_checks() -> None:
    from triton.tools.tensor_descriptor import TensorDescriptor

    t = torch.empty(4, 8, dtype=BF16)
    fast = mm._fast_descriptor(t, [4, 8], [8, 1], [4, 8])
    checked = TensorDescriptor(t, [4, 8], [8, 1], [4, 8])
    assert fast.base is checked.base
    assert (fast.shape, fast.strides, fast.block_shape, fast.padding) == (
        checked.shape, checked.strides, checked.block_shape, checked.padding,
    )  # fmt: skip
