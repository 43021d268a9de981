"""The plan's direct launch passes the compiled kernel's launcher exactly what Triton's JIT passes.

No GPU: Triton's JIT is replaced by a stand-in that binds the arguments as ``JITFunction.run`` does and calls a
launcher built by triton 3.6's own ``wrap_handle_tensordesc`` (the wrapper that turns tensor descriptors into TMA
descriptors) around a recording ``launch``; the driver is a stand-in whose ``fill_tma_descriptor`` returns what it
was given. The first call of a plan goes through the stand-in JIT; the later ones through the plan's direct path,
and both must hand the launcher the same arguments.
"""

from __future__ import annotations

import inspect
import re
import types
from dataclasses import replace
from typing import Any

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
driver_module = pytest.importorskip("triton.backends.nvidia.driver")
pytest.importorskip("triton.tools.tensor_descriptor")  # the stand-in JIT tells descriptors by their class

from gpukb.gemm.triton import matmul as mm  # noqa: E402
from gpukb.gemm.triton import tuning  # noqa: E402
from gpukb.gemm.triton.configs import DEFAULT_CONFIGS, Config  # noqa: E402

CALLS: list[tuple] = []
SHARED_LIMIT = mm._shared_limit  # the real one, which fake_gpu replaces


class _Utils:
    def fill_tma_descriptor(self, ptr: int, swizzle: int, size: int, kind: int, block, shape, strides, pad) -> tuple:
        return ("tensor map", ptr, tuple(block), tuple(shape), tuple(strides))


class _Driver:
    utils = _Utils()

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int) -> int:
        return 77


class _Launcher:
    """Triton 3.6's ``CudaLauncher`` as far as the plan uses it."""

    global_scratch_size = 0
    profile_scratch_size = 0
    launch_cooperative_grid = False
    launch_pdl = False

    def __init__(self, signature: dict[str, str], metas: list[dict[str, Any]]):
        self.launch = driver_module.wrap_handle_tensordesc(lambda *args: CALLS.append(args), signature, metas)

    def __call__(self, gx: int, gy: int, gz: int, stream: int, function: Any, *args: Any) -> None:
        self.launch(gx, gy, gz, stream, function, False, False, None, None, *args)


class _Jit:
    """Binds arguments in the kernel's order, as ``JITFunction.run`` does, and launches through a ``_Launcher``."""

    def __init__(self, fn: Any):
        self.params = list(inspect.signature(fn).parameters)
        self.kernels: dict[tuple, Any] = {}

    def __getitem__(self, grid: tuple[int, ...]) -> Any:
        def run(*args: Any, num_stages: int, num_warps: int, **constants: Any) -> Any:
            values = [*args, *(constants[p] for p in self.params[len(args) :])]
            signature, metas = {}, []
            for name, value in zip(self.params, values, strict=True):
                if isinstance(value, triton.tools.tensor_descriptor.TensorDescriptor):
                    signature[name] = f"tensordesc<bf16[{','.join(map(str, value.block_shape))}]>"
                    meta = {"swizzle": 3, "elem_size": 2, "elem_type": 5, "fp4_padded": False}
                    metas.append({**meta, "block_size": list(value.block_shape)})
                else:
                    signature[name] = "constexpr" if name in constants else "i32"
            key = tuple(signature.items())
            if key not in self.kernels:
                self.kernels[key] = types.SimpleNamespace(
                    run=_Launcher(signature, metas), function="function", packed_metadata="metadata"
                )
            kernel = self.kernels[key]
            g = (*grid, 1, 1)
            kernel.run(g[0], g[1], g[2], 77, "function", "metadata", None, None, None, *values)
            return kernel

        return run


@pytest.fixture
def fake_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    jits: dict[str, _Jit] = {}
    monkeypatch.setattr(triton.runtime.driver, "_active", _Driver())
    monkeypatch.setattr(mm, "_jitted", lambda name: jits.setdefault(name, _Jit(mm._KERNELS[name])))
    monkeypatch.setattr(mm, "interpreting", lambda: False)
    monkeypatch.setattr(mm, "_hopper_refusal", lambda a: None)
    monkeypatch.setattr(mm, "_sm_count", lambda device: 132)
    monkeypatch.setattr(mm, "_shared_limit", lambda device: 232448)
    monkeypatch.setattr(mm, "_check", lambda a, b, out, out_dtype: (a.shape[0], b.shape[1], a.shape[1], out.dtype))
    tuning.use_table(None)
    mm.clear_plans()
    CALLS.clear()
    yield
    tuning._ACTIVE.clear()
    mm.clear_plans()


def _pointers(call: tuple) -> tuple:
    return tuple(x.data_ptr() if isinstance(x, torch.Tensor) else x for x in call)


def _bf16_product(layout: str, m: int, n: int, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random bf16 A (m×k) and B (k×n) in ``layout`` ("n": row-major, "t": the transpose of a row-major matrix), and
    an empty C."""
    a = torch.randn(m, k).bfloat16() if layout[0] == "n" else torch.randn(k, m).bfloat16().t()
    b = torch.randn(k, n).bfloat16() if layout[1] == "n" else torch.randn(n, k).bfloat16().t()
    return a, b, torch.empty(m, n).bfloat16()


@pytest.mark.usefixtures("fake_gpu")
@pytest.mark.parametrize(
    "config",
    [
        Config("tma", 64, 128, 64, num_warps=4),
        Config("tma", 64, 128, 64, num_warps=4, epilogue_subtile=True),
        Config("splitk", 64, 128, 64, num_warps=4, split_k=1),
        Config("splitk", 64, 128, 64, num_warps=4, split_k=4),
    ],
    ids=lambda c: c.label,
)
@pytest.mark.parametrize("layout", ["nn", "tt"])
def test_the_direct_launch_passes_what_the_jit_passes(config: Config, layout: str) -> None:
    m, n, k = 8, 256, 512
    a, b, out = _bf16_product(layout, m, n, k)
    mm.matmul(a, b, out=out, config=config)  # the first call: through the JIT
    first = [_pointers(c) for c in CALLS]
    (plan,) = mm._PLANS.values()
    assert plan.quick is not None
    assert plan.fast_failed is None
    CALLS.clear()
    mm.matmul(a, b, out=out, config=config)  # the second: the plan's direct path, tensor maps kept
    second = [_pointers(c) for c in CALLS]
    assert len(first) == len(second) == (2 if config.split_k == 4 else 1)  # split: the reduction too
    for jit_call, direct_call in zip(first, second, strict=True):
        assert len(jit_call) == len(direct_call)
        differ = [i for i, (x, y) in enumerate(zip(jit_call, direct_call, strict=True)) if x != y]
        # Only a split product's float32 workspace may sit at another address on the second call.
        assert all(isinstance(jit_call[i], int) and jit_call[i] > 2**20 for i in differ), differ
    tensor_maps = [x for x in second[0] if isinstance(x, tuple) and x[0] == "tensor map"]
    assert len(tensor_maps) == (3 if config.kernel == "tma" else 2)  # A, B (and C for the persistent kernel)


@pytest.mark.usefixtures("fake_gpu")
def test_a_launch_hook_sends_calls_back_through_the_jit(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, out = torch.randn(8, 64).bfloat16(), torch.randn(64, 64).bfloat16(), torch.empty(8, 64).bfloat16()
    mm.matmul(a, b, out=out)
    assert mm._no_launch_hooks()
    chain = triton.knobs.runtime.launch_enter_hook
    monkeypatch.setattr(chain, "calls", [lambda metadata: None])  # as a profiler would
    assert not mm._no_launch_hooks()
    CALLS.clear()
    mm.matmul(a, b, out=out)
    assert len(CALLS) == 1  # launched, through the JIT stand-in, which passes the hooks on


def _shape_only(call: tuple) -> tuple:
    """A launch's arguments with addresses blanked: tensor maps keep their box, shape and strides."""
    out = []
    for x in call:
        if isinstance(x, torch.Tensor):
            out.append("tensor")
        elif isinstance(x, tuple) and x and x[0] == "tensor map":
            out.append(("tensor map", *x[2:]))
        else:
            out.append(x)
    return tuple(out)


@pytest.mark.usefixtures("fake_gpu")
@pytest.mark.parametrize("kernel", ["tma", "splitk"])
def test_copied_operands_take_the_direct_launch_too(kernel: str) -> None:
    # Rows of 500 and 250 two-byte elements are not 16-byte aligned: A, B (and, for the persistent kernel, C) are
    # copied into padded buffers on every call, and the copies' descriptors describe the padded rows.
    config = Config(kernel, 64, 128, 64, num_warps=4, **({"split_k": 2} if kernel == "splitk" else {}))
    a, b, out = torch.randn(8, 500).bfloat16(), torch.randn(500, 250).bfloat16(), torch.empty(8, 250).bfloat16()
    mm.matmul(a, b, out=out, config=config)
    first = [_shape_only(c) for c in CALLS]
    (plan,) = mm._PLANS.values()
    assert (plan.stage_a, plan.stage_b, plan.stage_c) == (True, True, kernel == "tma")
    assert plan.quick is not None
    CALLS.clear()
    mm.matmul(a, b, out=out, config=config)
    assert [_shape_only(c) for c in CALLS] == first
    maps = [x for x in CALLS[0] if isinstance(x, tuple) and x and x[0] == "tensor map"]
    assert maps[0][3:] == ((8, 500), (512, 1))  # A's copy: rows of 500 elements padded to 512 (1024 bytes: 8 lines)


@pytest.mark.usefixtures("fake_gpu")
def test_the_blocked_kernel_goes_direct_then_quick() -> None:
    # Tiny products take the blocked kernel (pointers, any strides): the JIT once, the direct launcher once, then
    # the plan's quick path; every call hands the launcher the same arguments.
    config = Config("blocked", 64, 64, 32, num_stages=2, num_warps=4)
    a, b, out = torch.randn(3, 7).bfloat16(), torch.randn(7, 5).bfloat16(), torch.empty(3, 5).bfloat16()
    calls = []
    for _ in range(3):
        CALLS.clear()
        mm.matmul(a, b, out=out, config=config)
        calls.append([_pointers(c) for c in CALLS])
    (plan,) = mm._PLANS.values()
    assert plan.quick is not None
    assert plan.fast_failed is None
    assert len(calls[0]) == 1
    assert calls[0] == calls[1] == calls[2]


@pytest.mark.usefixtures("fake_gpu")
@pytest.mark.parametrize(
    ("config", "out_dtype", "need", "hint"),
    [
        (DEFAULT_CONFIGS["bfloat16"], torch.float32, 262144, "; at 3 stages it fits"),
        (Config("tma", 128, 256, 64, num_stages=4, num_warps=8), torch.float32, 327680, "; at 2 stages it fits"),
        (Config("tma", 256, 256, 64, num_stages=2, num_warps=8), torch.bfloat16, 262144, "; at 1 stage it fits"),
        (Config("tma", 192, 160, 64, num_stages=4, num_warps=8, flatten=False), torch.bfloat16, 241664,
         "; at 3 stages it fits"),
        (Config("tma", 256, 256, 64, num_stages=1, num_warps=8), torch.float32, 327680, ""),
    ],
)  # fmt: skip
def test_a_given_config_whose_buffers_do_not_fit_is_refused_before_launch(config, out_dtype, need, hint) -> None:
    # a float32 output on the default tiling's 4 stages, and step 20's 192×160 candidate, failed at launch on the H100
    # with the compiler's "out of resource"; a given configuration is the caller's, so it is refused, not changed
    a, b = torch.randn(256, 256).bfloat16(), torch.randn(256, 256).bfloat16()
    message = (f"config {config.label!r} needs {need:,} bytes of shared memory with bfloat16 inputs and a "
               f"{str(out_dtype)[6:]} output ({config.num_stages} stages of A and B tiles and the output tile), past "
               f"the 232,448 one block may have on this GPU{hint}")  # fmt: skip
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        mm.matmul(a, b, out=torch.empty(256, 256, dtype=out_dtype), config=config)
    assert CALLS == []
    assert mm._PLANS == {}


@pytest.mark.usefixtures("fake_gpu")
@pytest.mark.parametrize(
    ("config", "need", "hint"),
    [(Config("splitk", 64, 128, 64, num_stages=16, num_warps=4), 393216, "; at 9 stages it fits"),
     (Config("splitk", 256, 256, 128, num_stages=2, num_warps=8, swap_ab=True), 262144, "; at 1 stage it fits"),
     (Config("tma", 64, 128, 64, num_stages=16, num_warps=4), 425984, "; at 8 stages it fits")],
    ids=lambda c: c.label if isinstance(c, Config) else "",
)  # fmt: skip
def test_a_given_config_of_up_to_16_stages_is_refused_before_launch_where_it_does_not_fit(config, need, hint) -> None:
    # Config takes up to 16 stages since step 21: the split-K kernel stages its A and B tiles in shared memory as the
    # persistent kernel does (its C from registers), and a pipeline too deep for a block went to the launch, which
    # fails with the compiler's "out of resource"
    a, b = torch.randn(256, 256).bfloat16(), torch.randn(256, 256).bfloat16()
    tiles = "A and B tiles" + " and the output tile" * (config.kernel == "tma")
    message = (f"config {config.label!r} needs {need:,} bytes of shared memory with bfloat16 inputs and a float32 "
               f"output ({config.num_stages} stages of {tiles}), past the 232,448 one block may have on this "
               f"GPU{hint}")  # fmt: skip
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        mm.matmul(a, b, out=torch.empty(256, 256), config=config)
    assert CALLS == []
    fitted = replace(config, num_stages=int(hint.split()[2]))
    mm.matmul(a, b, out=torch.empty(256, 256), config=fitted)  # at the depth the message names: launched
    assert len(CALLS) >= 1


@pytest.mark.usefixtures("fake_gpu")
def test_a_given_float32_blocked_config_whose_pipeline_does_not_fit_is_refused_before_launch() -> None:
    # float32 products run the blocked kernel, whose loads are pipelined through shared memory (a buffer of A and B
    # tiles for all but one of its stages): 16 stages of the float32 tiling, which Config takes since step 21, went
    # to the launch and its "out of resource"
    a, b = torch.randn(256, 256), torch.randn(256, 256)
    config = replace(mm.FP32_CONFIG, num_stages=16)
    message = (f"config {config.label!r} needs 245,760 bytes of shared memory with float32 inputs and a float32 "
               "output (the A and B tiles a 16-stage pipeline of the blocked kernel holds), past the 232,448 one "
               "block may have on this GPU; at 15 stages it fits")  # fmt: skip
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        mm.matmul(a, b, out=torch.empty(256, 256), config=config)
    assert CALLS == []
    mm.matmul(a, b, out=torch.empty(256, 256), config=replace(config, num_stages=15))
    bf16 = Config("blocked", 128, 128, 64, num_stages=16, num_warps=4)  # 16-bit loads are not pipelined: one buffer
    mm.matmul(a.bfloat16(), b.bfloat16(), out=torch.empty(256, 256).bfloat16(), config=bf16)
    assert len(CALLS) == 2


@pytest.mark.usefixtures("fake_gpu")
def test_a_given_config_that_fits_is_launched_as_given() -> None:
    a, b = torch.randn(256, 256).bfloat16(), torch.randn(256, 256).bfloat16()
    fitted = replace(DEFAULT_CONFIGS["bfloat16"], num_stages=3)  # 212,992 bytes with a float32 output
    mm.matmul(a, b, out=torch.empty(256, 256), config=fitted)
    (plan,) = mm._PLANS.values()
    assert plan.config == fitted
    assert len(CALLS) == 1


@pytest.mark.usefixtures("fake_gpu")
def test_step_20s_rule_keeps_the_choice_where_c_would_be_copied() -> None:
    # 400×1024×4096 NN takes split-K from the heuristic and persistent 64×128 tiles from step 20's rule, which holds
    # only where the kernels write C where it is; C rows of 1025 elements (2050 bytes) are copied by the persistent
    # kernel (split-K writes any C with pointers)
    a, b = torch.empty(400, 4096).bfloat16(), torch.empty(4096, 1024).bfloat16()
    strided = torch.empty(400, 1025).bfloat16()[:, :1024]
    ruled = Config("tma", 64, 128, 64, num_stages=6, num_warps=4)
    assert mm.default_config(a, b, torch.empty(400, 1024).bfloat16()) == ruled
    assert mm.staging(a, b, strided, ruled)["C"] is not None
    assert mm.default_config(a, b, strided).kernel == "splitk"
    with pytest.raises(TypeError, match=r"^out_copied must be True or False; got 1 \(int\)$"):
        tuning.choose("bfloat16", "NN", 400, 1024, 4096, 132, out_copied=1)  # type: ignore[arg-type]


@pytest.mark.usefixtures("fake_gpu")
def test_a_gpu_newer_than_the_limits_table_takes_its_own_shared_memory_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # the TMA kernels run on compute capability 9.0 or newer; on one cuda/limits.toml does not hold (12.0 here, which
    # reports 101,376 bytes) every persistent-kernel product, looked up or given, raised "compute capability '12.0'
    # is not in cuda/limits.toml"
    monkeypatch.setattr(mm, "_shared_limit", SHARED_LIMIT)
    monkeypatch.setattr(mm, "_SHARED_LIMITS", {})
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (12, 0))
    props = types.SimpleNamespace(shared_memory_per_block_optin=101376, multi_processor_count=84)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device=None: props)
    a, b = torch.randn(256, 256).bfloat16(), torch.randn(256, 256).bfloat16()
    fits = Config("tma", 64, 128, 64, num_stages=3, num_warps=4)  # 90,112 bytes
    mm.matmul(a, b, out=torch.empty(256, 256).bfloat16(), config=fits)
    assert len(CALLS) == 1
    with pytest.raises(ValueError, match=r"needs 114,688 bytes .* past the 101,376 one block may have on this GPU; "
                                         r"at 3 stages it fits$"):  # fmt: skip
        mm.matmul(a, b, out=torch.empty(256, 256).bfloat16(), config=replace(fits, num_stages=4))
    assert mm._SHARED_LIMITS[a.device] == 101376


@pytest.mark.usefixtures("fake_gpu")
@pytest.mark.parametrize(
    "config",
    [Config("tma", 192, 128, 64, num_stages=4, num_warps=8, flatten=False),
     Config("tma", 128, 192, 64, num_stages=4, num_warps=8, flatten=False),
     Config("tma", 160, 128, 64, num_stages=4, num_warps=4, flatten=False, swap_ab=True)],
    ids=lambda c: c.label,
)  # fmt: skip
@pytest.mark.parametrize("layout", ["nn", "tt"])
def test_a_tile_of_two_blocks_launches_directly_from_its_second_call(config: Config, layout: str) -> None:
    # the two-block kernel went through Triton's JIT on every call (its argument binding, about a hundred
    # microseconds of host time a call on the H100); from the second call it takes the direct launcher, as stream-K does
    m, n, k = 200, 384, 512
    a, b, out = _bf16_product(layout, m, n, k)
    mm.matmul(a, b, out=out, config=config)  # the first call: through the JIT, descriptors checked
    first = [_pointers(c) for c in CALLS]
    (plan,) = mm._PLANS.values()
    assert (plan.fast, plan.quick, plan.fast_failed) == (True, None, None)
    assert plan.direct is not None
    assert plan.direct[0] is not None
    CALLS.clear()
    mm.matmul(a, b, out=out, config=config)  # the second: the direct launcher, descriptors kept
    second = [_pointers(c) for c in CALLS]
    assert len(first) == len(second) == 1
    assert len(first[0]) == len(second[0])
    assert first == second
    tensor_maps = [x for x in second[0] if isinstance(x, tuple) and x[0] == "tensor map"]
    assert len(tensor_maps) == 8  # A and B in each block shape, and C's four blocks
