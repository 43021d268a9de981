"""What :func:`~gpukb.gemm.triton.matmul.matmul` and a plan decide on the CPU before any kernel runs: which cached
plan a call reuses (the output type and the configuration are part of its key; an output that shares A's memory is
refused on a later call too; the oldest plan is dropped past ``MAX_PLANS``), where an empty product's result is made,
the type the kernels store, how fp8 partial sums are accumulated, the blocked kernel's 32-bit reach, and, with
Triton's mode, the capability and the SM count replaced by stand-ins (as a GPU would have them), the refusal of a TMA
kernel before Hopper and the device whose multiprocessors a plan counts. No kernel is launched: where ``matmul`` is
called, the plan's ``_run`` is a stand-in that records what it was called with; huge operands are ``meta`` tensors.
Values worked by hand from the shapes, strides and configurations."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import triton.language as tl  # noqa: E402

from gpukb.gemm.triton import matmul as mm  # noqa: E402
from gpukb.gemm.triton import tuning  # noqa: E402
from gpukb.gemm.triton.configs import Config  # noqa: E402
from tests.gemm.triton.test_matmul_checks import CUDA, _capability, _exactly, _OnCuda  # noqa: E402

F16, BF16, F32, F8 = torch.float16, torch.bfloat16, torch.float32, torch.float8_e4m3fn
META = torch.device("meta")
TMA = Config("tma", 16, 32, 16, group_m=2, num_stages=1, num_warps=4)


@pytest.fixture
def interpreted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mm, "interpreting", lambda: True)


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any]]:
    """The calls that reach a plan's launches, as (the plan's configuration, the output it was given): the kernels
    themselves do not run."""
    calls: list[tuple[Any, Any]] = []

    def run(self: Any, a: Any, b: Any, out: Any, alpha: float) -> Any:
        calls.append((self.config, out))
        return out

    monkeypatch.setattr(mm._Plan, "_run", run)
    return calls


# --- the plan cache -------------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("interpreted")
def test_a_call_of_another_output_type_or_configuration_makes_its_own_plan(runs) -> None:
    a, b = torch.randn(16, 16).half(), torch.randn(16, 16).half()
    assert mm.matmul(a, b).dtype == F16  # A's type, the interpreter's (blocked) configuration
    assert mm.matmul(a, b, out_dtype=F32).dtype == F32  # same operands, another output type
    assert mm.matmul(a, b, config=TMA).dtype == F16  # same operands, another configuration
    assert [config for config, _ in runs] == [mm.INTERPRETER_CONFIG, mm.INTERPRETER_CONFIG, TMA]
    assert len(mm._PLANS) == 3
    mm.matmul(a, b, out_dtype=F32)  # seen before: its own plan again, none new
    assert len(mm._PLANS) == 3
    assert runs[-1][1].dtype == F32


@pytest.mark.usefixtures("interpreted", "runs")
def test_an_output_sharing_a_is_refused_on_a_later_call_of_a_cached_plan() -> None:
    a, b, c = torch.randn(16, 16).half(), torch.randn(16, 16).half(), torch.empty(16, 16).half()
    assert mm.matmul(a, b, out=c) is c
    assert len(mm._PLANS) == 1
    # a has c's shape, strides, type and device: the same plan's key, which holds A's and C's 512-byte extents
    with pytest.raises(
        ValueError, match=_exactly("out shares memory with A or B; the product cannot be written in place")
    ):
        mm.matmul(a, b, out=a)
    assert len(mm._PLANS) == 1


@pytest.mark.usefixtures("interpreted")
def test_the_oldest_plan_is_dropped_past_max_plans(runs, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mm, "MAX_PLANS", 2)
    b = torch.randn(16, 16).half()
    for m in (1, 2, 3):  # three shapes, three plans: the first is dropped when the third is made
        assert mm.matmul(torch.randn(m, 16).half(), b).shape == (m, 16)
    assert sorted(plan.m for plan in mm._PLANS.values()) == [2, 3]
    assert len(runs) == 3


@pytest.mark.usefixtures("interpreted")
def test_an_empty_product_is_made_on_the_operands_device() -> None:
    a, b = torch.empty(3, 0, dtype=F16, device=META), torch.empty(0, 5, dtype=F16, device=META)
    for out_dtype, dtype in ((None, F16), (F32, F32)):
        got = mm.matmul(a, b, out_dtype=out_dtype)
        assert (tuple(got.shape), got.dtype, got.device) == ((3, 5), dtype, META)
    assert not mm._PLANS


# --- what a plan launches with ------------------------------------------------------------------------------------


def _plan(dtype: Any, out_dtype: Any, config: Config, m: int = 16, n: int = 16, k: int = 256) -> Any:
    a = torch.empty(m, k, dtype=F16).to(dtype)
    b = torch.empty(n, k, dtype=F16).to(dtype).t()  # K-major, as fp8 needs: nothing copied
    return mm._Plan(a, b, None, out_dtype, config, m, n, k)


@pytest.mark.parametrize(
    ("interpreting", "out_dtype", "stored"),
    [(True, F16, tl.float16), (True, F32, tl.float32), (True, BF16, tl.float32), (False, BF16, tl.bfloat16)],
    ids=["fp16", "fp32", "bf16 interpreted (stored through float32)", "bf16 compiled"],
)
def test_the_type_the_kernel_stores(interpreting: bool, out_dtype, stored, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mm, "interpreting", lambda: interpreting)
    monkeypatch.setattr(mm, "_SM_COUNTS", {CUDA: 132})  # the compiled plan counts cuda:1's multiprocessors
    monkeypatch.setattr(mm, "_SHARED_LIMITS", {CUDA: 232448})  # ... and checks its shared memory (sm_90's)
    a = torch.empty(16, 16, dtype=BF16).as_subclass(_OnCuda)
    plan = mm._Plan(a, torch.empty(16, 16, dtype=BF16), None, out_dtype, mm.INTERPRETER_CONFIG, 16, 16, 16)
    assert plan.tl_out == stored


def _acc(kernel: str, acc: int, split_k: int | None = None) -> Config:
    return Config(kernel, 16, 16, 32, group_m=2, num_stages=1, num_warps=4, fp8_imprecise_acc=acc, split_k=split_k)


@pytest.mark.usefixtures("interpreted")
@pytest.mark.parametrize(
    ("dtype", "config", "k", "imprecise", "promote"),
    [
        # K steps of 32; K = 256 is 8 steps
        (F16, _acc("tma", 16), 256, None, 0),  # only fp8 has an imprecise accumulation
        (F16, _acc("tma", 64), 256, None, 0),
        (F8, _acc("tma", 16), 256, 16, 0),  # up to one K step: Triton's own option
        (F8, _acc("tma", 32), 256, 32, 0),  # exactly one K step: still Triton's
        (F8, _acc("tma", 64), 256, None, 2),  # two steps summed, then promoted: 8 steps in 4 chunks
        (F8, _acc("tma", 64), 64, None, 0),  # a chain of 2 steps is one chunk: nothing to promote
        (F8, _acc("splitk", 64, split_k=2), 256, None, 2),  # slices of 128: 4 steps, 2 chunks
        (F8, _acc("splitk", 64, split_k=4), 256, None, 0),  # slices of 64: 2 steps, one chunk
    ],
    ids=["fp16 acc16", "fp16 acc64", "acc16", "acc32", "acc64", "acc64 K=64", "split 2", "split 4"],
)
def test_how_fp8_partial_sums_are_accumulated(dtype, config: Config, k: int, imprecise, promote: int) -> None:
    plan = _plan(dtype, BF16 if dtype == F8 else F16, config, k=k)
    assert (plan.imprecise_acc, plan.promote_steps) == (imprecise, promote)


# --- the blocked kernel's 32-bit offsets: 2^31 - 1 elements past the first, the most it reaches --------------------


def _meta(rows: int, cols: int, pitch: int | None = None) -> Any:
    """A rows×cols fp16 ``meta`` matrix whose rows are ``pitch`` elements apart (no memory: any size)."""
    return torch.empty(rows, pitch or cols, dtype=F16, device=META)[:, :cols]


@pytest.mark.usefixtures("interpreted")
@pytest.mark.parametrize(
    ("a", "b", "out", "name", "spans"),
    [
        (_meta(2, 16, 2**31), _meta(16, 16), None, "A", 2**31 + 16),  # 1 row of 2^31 + 15 more elements
        (_meta(2, 16), _meta(16, 16, 2**31), None, "B", 15 * 2**31 + 16),
        (_meta(2, 16), _meta(16, 16), _meta(2, 16, 2**31), "C", 2**31 + 16),
        (_meta(2, 1), _meta(1, 2**30 + 1), None, "C", 2**31 + 2),  # the output matmul makes: 2 rows of 2^30 + 1
    ],
    ids=["A", "B", "C given", "C made"],
)
def test_the_blocked_kernel_refuses_an_operand_past_its_offsets(a, b, out, name: str, spans: int) -> None:
    (m, k), n = a.shape, b.shape[1]
    message = (
        f"{name} spans {spans} elements; the blocked kernel's 32-bit offsets reach 2147483648: use the 'tma' kernel "
        "or split the product"
    )
    with pytest.raises(ValueError, match=_exactly(message)):
        mm._Plan(a, b, out, F16, mm.INTERPRETER_CONFIG, m, n, k)
    assert mm._Plan(a, b, out, F16, TMA, m, n, k).config == TMA  # the 'tma' kernel, as the message says, takes it


@pytest.mark.usefixtures("interpreted")
def test_the_blocked_kernel_takes_an_operand_that_reaches_its_last_offset() -> None:
    a = _meta(2, 16, 2**31 - 16)  # the last element is 2^31 - 16 + 15 = 2^31 - 1 past the first
    plan = mm._Plan(a, _meta(16, 16), None, F16, mm.INTERPRETER_CONFIG, 2, 16, 16)
    assert plan.config == mm.INTERPRETER_CONFIG


# --- compiled for a GPU: the capability and the multiprocessors of A's device ---------------------------------------


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Triton compiling for ``cuda:1``, a GPU of 132 multiprocessors (asked of any other device, the test fails)."""
    monkeypatch.setattr(mm, "interpreting", lambda: False)
    monkeypatch.setattr(mm, "_SM_COUNTS", {})
    monkeypatch.setattr(mm, "_SHARED_LIMITS", {})  # each test's capability gives its own limit
    monkeypatch.setattr(
        torch.cuda, "get_device_properties", lambda device: SimpleNamespace(multi_processor_count={CUDA: 132}[device])
    )


def _on_cuda(rows: int, cols: int) -> Any:
    return torch.empty(rows, cols, dtype=F16, device=META).as_subclass(_OnCuda)


@pytest.mark.usefixtures("gpu")
def test_a_tma_plan_before_hopper_is_refused_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    _capability(monkeypatch, (8, 6))
    message = (
        "config 'tma 16x32x16 g2 s1 w4' names a TMA kernel, but the TMA kernel needs compute capability 9.0 or newer "
        "(Hopper); this GPU has 8.6"
    )
    with pytest.raises(ValueError, match=_exactly(message)):
        mm._Plan(_on_cuda(64, 64), _on_cuda(64, 64), None, F16, TMA, 64, 64, 64)
    # the blocked kernel needs no TMA, and the plan counts cuda:1's 132 multiprocessors
    assert mm._Plan(_on_cuda(64, 64), _on_cuda(64, 64), None, F16, mm.BLOCKED_CONFIG, 64, 64, 64).sms == 132


@pytest.mark.usefixtures("gpu")
def test_a_plan_on_hopper_takes_the_tuned_configuration_for_its_shape_class(monkeypatch: pytest.MonkeyPatch) -> None:
    _capability(monkeypatch, (9, 0))
    m = n = k = 4096  # rows of 8192 bytes: on 128-byte lines, nothing copied; the output too
    plan = mm._Plan(_on_cuda(m, k), _on_cuda(k, n), None, F16, None, m, n, k)
    assert plan.config == tuning.choose("float16", "NN", m, n, k, 132, True, True, False)
    assert plan.sms == 132


@pytest.mark.usefixtures("interpreted")
def test_tensors_with_no_data_are_refused_unless_the_product_is_empty() -> None:
    """meta tensors have shapes and no data: a product that reads them is refused by name (it failed in torch's copy
    with NotImplementedError); an empty one still gives its (empty or zero) result."""
    a = torch.empty(4, 3, dtype=torch.float16, device="meta")
    b = torch.empty(3, 5, dtype=torch.float16, device="meta")
    whole = (
        "^tensors on meta have no data for a kernel to read: the kernels multiply CUDA tensors, or CPU tensors under "
        "Triton's interpreter$"
    )
    with pytest.raises(ValueError, match=whole):
        mm.matmul(a, b)
    empty = mm.matmul(a[:, :0], b[:0])  # K = 0: zeros, made on the operands' device without a kernel
    assert (empty.shape, empty.device) == ((4, 5), META)
    no_columns = mm.matmul(a, b[:, :0])  # N = 0: an empty result
    assert (no_columns.shape, no_columns.device) == ((4, 0), META)
