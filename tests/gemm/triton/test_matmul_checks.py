"""The Triton GEMM's argument checks and the host code around its launches, on the CPU without running a kernel.

What the checks refuse, with the whole message; what a GPU of each compute capability is told (a CPU tensor that
says it is on ``cuda:1`` and a stand-in ``torch.cuda.get_device_capability`` keyed by that device, which fails on
any other); the leading stride a descriptor is given, the byte ranges counted as overlapping, the buffers a copy
and a bf16 output go to (``meta`` tensors show the device they are made on); and what the persistent and split-K
kernels are launched with, recorded by the kernel's own parameter names, under the interpreter and with Triton's
mode, the capability and the SM count replaced by stand-ins (as a GPU would have them). Values worked by hand from
the shapes and strides.
"""

from __future__ import annotations

import contextlib
import inspect
from types import SimpleNamespace
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from gpukb.gemm.triton import matmul as mm  # noqa: E402
from gpukb.gemm.triton.configs import Config  # noqa: E402
from tests.helpers import exactly as _exactly  # noqa: E402

BF16, FP16, FP8 = torch.bfloat16, torch.float16, torch.float8_e4m3fn
CUDA = torch.device("cuda", 1)
META = torch.device("meta")


class _OnCuda(torch.Tensor):
    """A CPU tensor that says it is on ``cuda:1``: enough for checks that read only its device."""

    @property
    def device(self) -> Any:  # type: ignore[override]
        return CUDA


@pytest.fixture
def interpreted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mm, "interpreting", lambda: True)


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Triton compiling for a GPU (not interpreting); the capability asked of ``cuda:1`` only."""
    monkeypatch.setattr(mm, "interpreting", lambda: False)


def _capability(monkeypatch: pytest.MonkeyPatch, capability: tuple[int, int]) -> None:
    # a dict's look-up: a capability asked of any device but the operands' fails the test with a KeyError
    monkeypatch.setattr(torch.cuda, "get_device_capability", {CUDA: capability}.__getitem__)


# --- the checks -----------------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("interpreted")
def test_what_the_checks_refuse_is_named_in_full() -> None:
    x = torch.empty(4, 4, dtype=FP16)
    with pytest.raises(ValueError, match=_exactly("A and B must be on one device; got cpu and meta")):
        mm._check(x, torch.empty(4, 4, dtype=FP16, device=META), None, None)
    for out_dtype in (None, FP16):  # without out_dtype, out's type was read before out was checked
        with pytest.raises(TypeError, match=_exactly("out must be a torch.Tensor; got list")):
            mm.matmul(x, x, out=[[0.0]], out_dtype=out_dtype)
    # a wrong type alone, and a wrong device alone, are each refused
    wanted = "out must be a 4×4 float16 tensor on cpu; got (4, 4)"
    with pytest.raises(ValueError, match=_exactly(f"{wanted} float32 on cpu")):
        mm._check(x, x, torch.empty(4, 4), FP16)
    with pytest.raises(ValueError, match=_exactly(f"{wanted} float16 on meta")):
        mm._check(x, x, torch.empty(4, 4, dtype=FP16, device=META), None)
    aliased = "out shares memory with A or B; the product cannot be written in place"
    with pytest.raises(ValueError, match=_exactly(aliased)):
        mm._check(x, x.clone(), x[:, :4], None)


@pytest.mark.usefixtures("compiled")
def test_cpu_tensors_need_the_interpreter_and_cuda_tensors_do_not(monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.empty(4, 8, dtype=FP16)
    message = (
        "tensors on cpu need Triton's interpreter: set TRITON_INTERPRET=1 before the first call, or move them to a "
        "CUDA device"
    )
    with pytest.raises(ValueError, match=_exactly(message)):
        mm._check(x, x.t(), None, None)
    _capability(monkeypatch, (8, 0))
    on_cuda = x.as_subclass(_OnCuda)
    assert mm._check(on_cuda, on_cuda.t(), None, None) == (4, 4, 8, FP16)  # fp16: no capability asked


@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(("capability", "refused"), [((8, 9), True), ((9, 0), False), ((10, 0), False)])
def test_fp8_inputs_need_hopper(capability: tuple[int, int], refused: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ada (8.9) has fp8 tensor cores but no TMA, which the fp8 kernels read through
    _capability(monkeypatch, capability)
    a = torch.zeros(4, 8).to(FP8).as_subclass(_OnCuda)
    b = torch.zeros(2, 8).to(FP8).t().as_subclass(_OnCuda)
    if refused:
        message = "fp8 inputs need compute capability 9.0 or newer (Hopper); this GPU has 8.9"
        with pytest.raises(ValueError, match=_exactly(message)):
            mm._check(a, b, None, None)
    else:
        assert mm._check(a, b, None, None) == (4, 2, 8, BF16)


@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize(
    ("capability", "want"),
    [
        ((8, 6), "the TMA kernel needs compute capability 9.0 or newer (Hopper); this GPU has 8.6"),
        ((9, 0), None),
        ((10, 0), None),
    ],
)
def test_the_tma_kernels_need_hopper(capability, want, monkeypatch: pytest.MonkeyPatch) -> None:
    _capability(monkeypatch, capability)
    assert mm._hopper_refusal(SimpleNamespace(device=CUDA)) == want


@pytest.mark.usefixtures("compiled")
def test_the_sm_count_is_read_once_per_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mm, "_SM_COUNTS", {})
    asked = []

    def properties(device: Any) -> Any:
        asked.append(device)
        return SimpleNamespace(multi_processor_count={CUDA: 132}[device])

    monkeypatch.setattr(torch.cuda, "get_device_properties", properties)
    assert mm._sm_count(CUDA) == 132
    assert mm._sm_count(CUDA) == 132
    assert asked == [CUDA]


@pytest.mark.parametrize(
    ("p", "p_bytes", "q", "q_bytes", "overlap"),
    [
        (104, 0, 100, 16, False),  # an empty range inside another: no byte shared
        (104, 1, 100, 16, True),
        (100, 16, 104, 0, False),
        (100, 16, 104, 1, True),
        (116, 4, 100, 16, False),  # [116, 120) starts where [100, 116) ends
        (100, 16, 116, 4, False),
        (115, 4, 100, 16, True),  # byte 115 is in both
    ],
)
def test_byte_ranges_overlap_only_where_they_share_a_byte(p, p_bytes, q, q_bytes, overlap: bool) -> None:
    assert mm._overlaps(p, p_bytes, q, q_bytes) is overlap


def test_only_bf16_is_widened_and_only_under_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    bf16, fp16 = torch.empty(1, 1, dtype=BF16), torch.empty(1, 1, dtype=FP16)
    monkeypatch.setattr(mm, "interpreting", lambda: True)
    assert (mm._upcast(bf16), mm._upcast(fp16)) == (True, False)
    monkeypatch.setattr(mm, "interpreting", lambda: False)
    assert mm._upcast(bf16) is False


# --- strides and buffers ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "stride", "layout", "want"),
    [
        ((3, 5), (8, 1), "row", 8),  # rows 8 elements apart
        ((2, 5), (8, 1), "row", 8),
        ((1, 5), (7, 1), "row", 5),  # one row: its length, whatever stride(0) says (the stride is never used)
        ((1, 1), (7, 1), "row", 1),
        ((5, 3), (1, 8), "col", 8),
        ((5, 2), (1, 8), "col", 8),
        ((5, 1), (1, 7), "col", 5),
        ((1, 1), (1, 7), "col", 1),
    ],
)
def test_the_leading_stride_a_descriptor_is_given(shape, stride, layout: str, want: int) -> None:
    t = torch.empty(64, dtype=BF16).as_strided(shape, stride)
    assert mm._leading_stride(t, layout) == want


@pytest.mark.parametrize(
    ("shape", "col_major", "stride", "elements"),
    [
        ((3, 5), False, (64, 1), 2 * 64 + 5),  # 64 bf16 elements to a 128-byte line; the last row unpadded
        ((3, 5), True, (1, 64), 4 * 64 + 3),
        ((1, 1), False, (64, 1), 1),
    ],
)
def test_an_aligned_buffer_is_one_allocation_just_long_enough(shape, col_major: bool, stride, elements: int) -> None:
    buf = mm._aligned_buffer(torch.empty(shape, dtype=BF16, device=META), col_major)
    assert (tuple(buf.shape), buf.stride(), buf.dtype, buf.device) == (shape, stride, BF16, META)
    assert buf.untyped_storage().nbytes() == elements * 2


def test_a_bf16_output_is_stored_through_float32_under_the_interpreter_only(monkeypatch: pytest.MonkeyPatch) -> None:
    out = torch.empty(3, 5, dtype=BF16, device=META)
    monkeypatch.setattr(mm, "interpreting", lambda: True)
    staged = mm._staged(out)
    assert (tuple(staged.shape), staged.stride(), staged.dtype, staged.device) == ((3, 5), (8, 1), torch.float32, META)
    assert mm._staged(torch.empty(3, 5, dtype=FP16)).dtype == FP16
    monkeypatch.setattr(mm, "interpreting", lambda: False)
    assert mm._staged(out) is out


@pytest.mark.usefixtures("interpreted")
def test_pad_rows_copies_rows_off_lines_and_keeps_a_descriptors_reason() -> None:
    config = Config("tma", 16, 16, 16, pad_rows=True)
    a = torch.empty(4, 3000, dtype=BF16)  # rows of 6000 bytes: 16-byte aligned, not on 128-byte lines
    b = torch.empty(3000, 3, dtype=BF16)  # rows of 6 bytes: no descriptor at all
    out = torch.empty(4, 3, dtype=BF16)
    unaligned = (
        "base address and leading stride (3 elements of 2 bytes) must be multiples of 16 bytes for a tensor descriptor"
    )
    assert mm.staging(a, b, out, config) == {
        "A": "rows of 6000 bytes start off 128-byte lines (the configuration pads them)",
        "B": unaligned,
        "C": unaligned,
    }


# --- what the kernels are launched with ---------------------------------------------------------------------------


class _Recorded:
    """A plan whose launches, descriptors, quick-path set-up and C descriptors are recorded instead of made."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, plan: Any):
        self.plan, self.launches, self.fast, self.c_made, self.scratch = plan, [], [], [], []

        def launch(name, grid, args, constants, options, slot) -> None:
            params = list(inspect.signature(mm._KERNELS[name]).parameters)
            self.launches.append((name, grid, dict(zip(params, args, strict=False)), constants, options))

        def descriptors(a, b, fast) -> tuple:
            self.fast.append(fast)
            return "A's descriptor", "B's descriptor", 111, 222

        def prepare_quick(*args: Any) -> None:
            plan.quick = "quick"

        def maker(kind: str) -> Any:
            def make(base, shape, strides, block) -> Any:
                self.c_made.append(kind)
                return SimpleNamespace(base=base, shape=shape, strides=strides, block=block)

            return make

        @contextlib.contextmanager
        def scratch(device: Any) -> Any:
            self.scratch.append(device)
            yield

        plan._launch, plan._descriptors, plan._prepare_quick = launch, descriptors, prepare_quick
        monkeypatch.setattr(mm, "_fast_descriptor", maker("fast"))
        monkeypatch.setattr(mm, "_checked_descriptor", maker("checked"))
        monkeypatch.setattr(mm, "_scratch_allocator", scratch)


@pytest.fixture
def stand_in_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Triton compiling for a Hopper GPU of 132 SMs, as far as a plan asks."""
    monkeypatch.setattr(mm, "interpreting", lambda: False)
    monkeypatch.setattr(mm, "_hopper_refusal", lambda a: None)
    monkeypatch.setattr(mm, "_sm_count", lambda device: 132)
    monkeypatch.setattr(mm, "_shared_limit", lambda device: 232448)


def _power_of_two(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0  # Triton's CUDA backend refuses any other num_warps


@pytest.mark.usefixtures("interpreted")
@pytest.mark.parametrize(("m", "pitch", "ld"), [(1, 17, 16), (2, 24, 24)])
def test_the_persistent_kernels_c_under_the_interpreter(m: int, pitch: int, ld: int, monkeypatch) -> None:
    # One row of C: its pitch is its length (the row stride of a single row is never used, and 17 elements of 2
    # bytes would fail the descriptor's 16-byte rule); two rows: the real pitch.
    n, k = 16, 32
    a, b = torch.empty(m, k, dtype=BF16), torch.empty(k, n, dtype=BF16)
    out = torch.empty(m, pitch, dtype=BF16)[:, :n]
    rec = _Recorded(monkeypatch, mm._Plan(a, b, out, BF16, Config("tma", 16, 16, 16), m, n, k))
    rec.plan._tma(a, b, out, 1.0)
    ((name, grid, args, constants, _),) = rec.launches
    assert (name, grid, constants["DEVICE_DESC"]) == ("tma", (1,), False)
    assert rec.fast == [False]  # the interpreter's descriptors are checked ones
    assert rec.c_made == ["checked"]
    assert (args["a"], args["b"], args["lda"], args["ldb"]) == ("A's descriptor", "B's descriptor", 111, 222)
    assert args["c"].base is out
    assert (args["c"].shape, args["c"].strides, args["ldc"]) == ([m, n], [ld, 1], ld)
    assert rec.scratch == []
    assert (rec.plan.fast, rec.plan.quick) == (False, None)  # no direct launch, no quick path on the interpreter


@pytest.mark.usefixtures("stand_in_gpu")
def test_the_persistent_kernel_checks_its_descriptors_once(monkeypatch: pytest.MonkeyPatch) -> None:
    m, n, k = 4, 16, 32
    a, b, out = torch.empty(m, k, dtype=BF16), torch.empty(k, n, dtype=BF16), torch.empty(m, n, dtype=BF16)
    rec = _Recorded(monkeypatch, mm._Plan(a, b, out, BF16, Config("tma", 16, 16, 16), m, n, k))
    rec.plan._tma(a, b, out, 1.0)
    assert (rec.plan.fast, rec.plan.quick) == (True, "quick")  # compiled: later calls may skip the checks
    rec.plan._tma(a, b, out, 1.0)
    assert rec.fast == [False, True]
    assert rec.c_made == ["checked", "fast"]
    assert rec.scratch == []


@pytest.mark.usefixtures("stand_in_gpu")
def test_device_side_descriptors_get_tensors_strides_and_scratch_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    # warp_specialize: the kernel builds its descriptors from the tensors and their leading strides, with a scratch
    # allocator on the operands' device; such a plan never takes the host descriptors' quick path.
    m, n, k = 4, 16, 32
    a = torch.empty(m, k + 8, dtype=BF16)[:, :k]  # rows 40 elements apart
    b = torch.empty(n, k, dtype=BF16).t()  # column-major: columns 32 apart
    out = torch.empty(m, n, dtype=BF16)
    rec = _Recorded(monkeypatch, mm._Plan(a, b, out, BF16, Config("tma", 16, 16, 16, warp_specialize=True), m, n, k))
    for _ in range(2):
        rec.plan._tma(a, b, out, 1.0)
    for _, _, args, constants, _ in rec.launches:
        assert (args["a"] is a, args["b"] is b, args["c"] is out) == (True, True, True)
        assert (args["lda"], args["ldb"], args["ldc"]) == (k + 8, k, n)
        assert (constants["DEVICE_DESC"], constants["WARP_SPECIALIZE"]) == (True, True)
    assert (rec.fast, rec.c_made) == ([], [])
    assert rec.scratch == [a.device, a.device]
    assert (rec.plan.fast, rec.plan.quick) == (False, None)


def _splitk_plan(monkeypatch: pytest.MonkeyPatch, split: int, fused: bool = False) -> _Recorded:
    m, n, k = 20, 24, 64  # 2 × 2 tiles of 16; K slices of 32 (2 steps) when split in 2
    config = Config("splitk", 16, 16, 16, num_warps=4, split_k=split, fused_reduce=fused)
    a, b, out = torch.empty(m, k, dtype=FP16), torch.empty(k, n, dtype=FP16), torch.empty(m, n, dtype=FP16)
    return _Recorded(monkeypatch, mm._Plan(a, b, out, FP16, config, m, n, k))


@pytest.mark.usefixtures("interpreted")
@pytest.mark.parametrize(("split", "fused"), [(1, False), (2, False), (2, True)], ids=["direct", "reduced", "fused"])
def test_what_the_split_k_kernels_are_launched_with(split: int, fused: bool, monkeypatch) -> None:
    rec = _splitk_plan(monkeypatch, split, fused)
    a, b = torch.empty(20, 64, dtype=FP16), torch.empty(64, 24, dtype=FP16)
    out = torch.empty(20, 24, dtype=FP16, device=META)  # the workspace and the locks go where C is
    rec.plan._splitk(a, b, out, 1.0)
    names = [launch[0] for launch in rec.launches]
    assert names == (["splitk", "reduce"] if split > 1 and not fused else ["splitk"])
    _, grid, args, constants, _ = rec.launches[0]
    assert grid == (4, split)
    assert (constants["DIRECT"], constants["FUSED"]) == (split == 1, fused)
    assert (args["K_PER"], args["STEPS"]) == ((64, 4) if split == 1 else (32, 2))
    work, lock = args["w_ptr"], args["lock_ptr"]
    if split == 1:  # the result is stored directly: no workspace, no locks (C stands in, never read)
        assert (work is out, lock is out) == (True, True)
        assert args["stride_cs"] == 0
    else:
        assert (tuple(work.shape), work.dtype, work.device) == ((2, 20, 24), torch.float32, META)
        assert args["stride_cs"] == 20 * 24
    if fused:  # a lock per output tile, apart from the workspace
        assert (tuple(lock.shape), lock.dtype, lock.device) == ((4,), torch.int32, META)
    elif split > 1:
        assert lock is work  # not read
        _, reduce_grid, reduce_args, _, _ = rec.launches[1]
        assert reduce_grid == (2, 1)  # 480 elements of C, 256 a program
        assert (reduce_args["w_ptr"] is work, reduce_args["c_ptr"] is out) == (True, True)
        assert (reduce_args["SPLIT"], reduce_args["stride_ws"]) == (2, 480)
    assert all(_power_of_two(launch[4][1]) for launch in rec.launches)
    assert rec.fast == [False]
    assert (rec.plan.fast, rec.plan.quick) == (False, None)


@pytest.mark.usefixtures("stand_in_gpu")
def test_the_split_k_kernel_checks_its_descriptors_once(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _splitk_plan(monkeypatch, 2)
    a, b, out = torch.empty(20, 64, dtype=FP16), torch.empty(64, 24, dtype=FP16), torch.empty(20, 24, dtype=FP16)
    rec.plan._splitk(a, b, out, 1.0)
    assert (rec.plan.fast, rec.plan.quick) == (True, "quick")
    rec.plan._splitk(a, b, out, 1.0)
    assert rec.fast == [False, True]
