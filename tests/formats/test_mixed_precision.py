"""The mixed-precision arithmetic of gpukb.formats.mixed_precision, checked against exact rounding and real torch."""

from __future__ import annotations

import inspect
import math
import random
from fractions import Fraction
from importlib import resources

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gpukb.formats.arrays import decode_array
from gpukb.formats.codec import decode, encode
from gpukb.formats.mixed_precision import (
    AUTOCAST_FILE,
    GRADSCALER_DEFAULTS,
    DynamicLossScaler,
    accumulate,
    autocast_lists,
    autocast_ops,
    lognormal_fractions,
    overflow_threshold,
    parse_autocast,
    quantize,
    rescue_scale,
    stagnation_point,
    stored,
    ulp,
    underflow_threshold,
    update_threshold,
)
from gpukb.formats.pages import mixed_precision as mixed_precision_page
from gpukb.formats.properties import properties
from gpukb.formats.spec import get_format

FORMATS = ["fp32", "tf32", "fp16", "bf16", "e4m3", "e5m2"]


# --- ulp: precision is relative -------------------------------------------------------------------------------


def test_ulp_grows_with_magnitude() -> None:
    """Mantissa bits fix significant digits, not decimal places: FP16's gap is 2^-10 at 1 and 32 at its max."""
    assert ulp(1, "fp16") == Fraction(1, 1024) == properties("fp16").epsilon
    assert ulp(1000, "fp16") == Fraction(1, 2)
    assert ulp(2048, "fp16") == 2  # no fractional digits at all from here on
    assert ulp(65504, "fp16") == 32
    # Stored neighbours really are that far apart.
    assert stored(2049, "fp16") == 2048
    assert stored(2051, "fp16") == 2052
    # The relative gap stays between epsilon/2 and epsilon across the normal range.
    for x in (1, 3, 1000, 2048, 65504):
        assert properties("fp16").epsilon / 2 < ulp(x, "fp16") / x <= properties("fp16").epsilon


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "e4m3", "e5m2"])
def test_ulp_is_the_distance_to_the_next_pattern(fmt: str) -> None:
    f = get_format(fmt)
    values = decode_array(np.arange(f.max_magnitude_bits + 1), fmt)  # every non-negative finite value, in order
    gaps = np.diff(values)
    # Every pattern of the 8-bit formats; for the 16-bit ones, the binade edges and a random sample.
    mask = (1 << f.mantissa_bits) - 1
    chosen = [b for b in range(f.max_magnitude_bits) if f.bits <= 8 or (b & mask) in (0, 1, mask) or b % 97 == 0]
    for bits in chosen:
        assert Fraction(gaps[bits]) == ulp(Fraction(values[bits]), fmt), (fmt, hex(bits))


def test_ulp_rejects_values_beyond_the_format() -> None:
    with pytest.raises(ValueError, match="beyond the largest finite fp16"):
        ulp(70000, "fp16")
    with pytest.raises(ValueError, match="must be a finite number"):
        ulp(math.inf, "fp16")


# --- lost updates: FP32 master weights --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("weight", [1, 0.75, -1, 3.0, 0.1, -2.5])
@pytest.mark.parametrize("decrease", [True, False])
def test_update_threshold_is_where_updates_start_to_count(fmt: str, weight: float, decrease: bool) -> None:
    w = stored(weight, fmt)
    t = update_threshold(weight, fmt, decrease=decrease)
    direction = -1 if decrease else 1
    assert stored(w + direction * t * Fraction(999, 1000), fmt) == w  # just below: lost
    assert stored(w + direction * t * Fraction(1001, 1000), fmt) != w  # just above: the weight moves


def test_small_updates_vanish_in_16_bit_weights() -> None:
    """An SGD step of 1e-4 on a weight of 1 is lost in FP16 and BF16, and kept in FP32 (a master copy)."""
    assert update_threshold(1, "fp16") == Fraction(1, 2**12)
    assert update_threshold(1, "bf16") == Fraction(1, 2**9)
    assert update_threshold(1, "fp32") == Fraction(1, 2**25)
    grad = torch.tensor(0.1, dtype=torch.float16)
    results = {}
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        w = torch.ones((), dtype=dtype)
        for _ in range(1000):
            w.add_(grad.to(dtype), alpha=-1e-3)
        results[dtype] = w.item()
    assert results[torch.float16] == 1.0
    assert results[torch.bfloat16] == 1.0
    assert results[torch.float32] == pytest.approx(1 - 1000 * 1e-3 * grad.item(), abs=1e-4)  # FP32 rounds, too


def test_update_threshold_refuses_a_zero_weight() -> None:
    with pytest.raises(ValueError, match="weight is zero"):
        update_threshold(0, "fp16")


# --- accumulation -----------------------------------------------------------------------------------------------


def test_stagnation_point_of_a_long_sum_of_1e_4() -> None:
    assert stagnation_point(1e-4, "fp16") == Fraction(1, 4)
    assert ulp(Fraction(1, 4), "fp16") / 2 > stored(1e-4, "fp16") > ulp(Fraction(1, 8), "fp16") / 2  # 2^-13 vs 2^-14
    assert ulp(Fraction(1, 4), "fp16") == Fraction(1, 2**12)
    assert stagnation_point(1e-4, "bf16") == Fraction(1, 32)
    assert stagnation_point(1e-4, "fp32") == 2048
    for fmt in ("fp16", "bf16", "fp32"):
        total = accumulate(1e-4, 10**9, fmt)
        assert total.total == stagnation_point(1e-4, fmt)
    assert accumulate(1e-4, 10**9, "fp32").stalled_after == 17_866_579
    assert accumulate(1e-4, 10_000, "fp32") == accumulate(1e-4, 10_000, "fp32")  # deterministic
    assert accumulate(1e-4, 10_000, "fp32").stalled_after is None


@settings(max_examples=200, deadline=None)
@given(
    exponent=st.integers(min_value=-30, max_value=10),
    mantissa=st.integers(min_value=1, max_value=2**11 - 1),
    fmt=st.sampled_from(["fp16", "bf16", "fp32", "e4m3", "e5m2"]),
)
def test_stagnation_point_is_the_first_power_of_two_that_absorbs_the_addend(exponent, mantissa, fmt) -> None:
    value = Fraction(mantissa) * Fraction(2) ** exponent
    if value > get_format(fmt).max_value:
        return
    a = stored(value, fmt)
    if a == 0:
        return
    point = stagnation_point(a, fmt)
    if point is None:  # the sum overflows first
        assert 2 * a >= ulp(get_format(fmt).max_value, fmt)
        return
    assert ulp(point, fmt) > 2 * a  # from B on, s + a rounds back to s
    assert ulp(point / 2, fmt) <= 2 * a or point / 2 < a  # and not from the power of two below
    assert stored(point + a, fmt) == point


def _addends() -> list[float]:
    rng = random.Random(20261122)
    values = [1e-4, 0.1, 3.0, 2.0**-14, 2.0**-24, 3 * 2.0**-20, 2.0**-3]  # powers of two and ties included
    values += [2 ** rng.uniform(-25, 4) for _ in range(25)]
    return values


@pytest.mark.parametrize("addend", _addends())
def test_accumulate_matches_a_real_accumulator(addend: float) -> None:
    count = 3000
    for fmt, dtype in (("fp16", np.float16), ("fp32", np.float32)):
        a = dtype(addend)
        if a == 0:
            continue
        s = dtype(0)
        with np.errstate(over="ignore"):
            for _ in range(count):
                s = dtype(s + a)
        assert accumulate(float(a), count, fmt).total == float(s), (fmt, addend)
    a = torch.tensor(addend, dtype=torch.bfloat16)
    s = torch.zeros((), dtype=torch.bfloat16)
    for _ in range(count):
        s += a
    assert accumulate(a.item(), count, "bf16").total == s.item()


def test_accumulate_overflows_to_infinity() -> None:
    assert accumulate(1000, 100, "fp16") == accumulate(1000, 10**6, "fp16")
    assert accumulate(1000, 100, "fp16").total == math.inf
    assert accumulate(1000, 60, "fp16").total < 65504


@pytest.mark.parametrize(
    ("args", "message"),
    [((0, 10, "fp16"), "must be positive"), ((-1, 10, "fp16"), "must be positive"), ((1, -1, "fp16"), "count")],
)
def test_accumulate_refuses_bad_input(args, message) -> None:
    with pytest.raises(ValueError, match=message):
        accumulate(*args)


def test_torch_sums_16_bit_tensors_in_fp32() -> None:
    """Why a 16-bit tensor's .sum() is right although a 16-bit accumulator stalls at 0.25."""
    for dtype in (torch.float16, torch.bfloat16):
        assert torch.full((10_000,), 1e-4, dtype=dtype).sum().item() == 1.0


# --- loss scaling -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "e5m2"])
def test_underflow_and_overflow_thresholds(fmt: str) -> None:
    f = get_format(fmt)
    low, high = underflow_threshold(fmt), overflow_threshold(fmt)
    assert decode(encode(low, fmt), fmt).value == 0
    assert decode(encode(low * Fraction(1001, 1000), fmt), fmt).value == f.min_subnormal
    assert decode(encode(high, fmt), fmt).kind == "inf"
    assert decode(encode(high * Fraction(999_999, 1_000_000), fmt), fmt).value == f.max_value


def test_fp16_thresholds_agree_with_torch() -> None:
    low, high = float(underflow_threshold("fp16")), float(overflow_threshold("fp16"))
    assert low == 2.0**-25
    assert high == 65520.0
    just_above_low = np.nextafter(np.float32(low), np.float32(1))  # float32 neighbours of the thresholds
    just_below_high = np.nextafter(np.float32(high), np.float32(0))
    cast = lambda x: torch.tensor(x, dtype=torch.float32).half().item()  # noqa: E731
    assert cast(low) == 0.0
    assert cast(just_above_low) == 2.0**-24
    assert cast(high) == math.inf
    assert cast(just_below_high) == 65504.0


def test_torch_casts_float64_to_float16_through_float32() -> None:
    """A side finding: torch rounds float64 to float16 in two steps, so a value just above a tie can go down."""
    x = math.nextafter(2.0**-25, 1)  # nearest FP16 value: 2^-24 (numpy rounds once, correctly)
    assert float(np.float16(x)) == 2.0**-24 == float(decode(encode(x, "fp16"), "fp16").value)
    assert torch.tensor(x, dtype=torch.float64).half().item() == 0.0  # via float32: 2^-25 exactly, a tie, to even


def test_rescue_scale() -> None:
    assert rescue_scale(1e-8, "fp16") == 2**13
    assert rescue_scale(3e-5, "fp16") == 2**2
    assert rescue_scale(1.0, "fp16") == 1
    assert stored(1e-8 * 2**13, "fp16") >= properties("fp16").min_normal
    assert stored(1e-8 * 2**12, "fp16") < properties("fp16").min_normal
    with pytest.raises(ValueError, match="zero gradient"):
        rescue_scale(0, "fp16")


@pytest.mark.parametrize("k", [0, 8, 16, 24])
def test_lognormal_model_matches_sampled_gradients(k: int) -> None:
    median, sigma = 2.0**-20, 4.0
    generator = torch.Generator().manual_seed(1)
    g = torch.exp2(math.log2(median) + sigma * torch.randn(400_000, generator=generator, dtype=torch.float64))
    h = (g * 2.0**k).half()
    model = lognormal_fractions(median, sigma, 2.0**k, "fp16")
    n = g.numel()
    tolerance = lambda p: 5 * math.sqrt(p * (1 - p) / n) + 1e-5  # noqa: E731
    assert (h == 0).double().mean().item() == pytest.approx(model.zero, abs=tolerance(model.zero))
    subnormal = ((h != 0) & (h.abs() < 2.0**-14)).double().mean().item()
    assert subnormal == pytest.approx(model.subnormal, abs=tolerance(model.subnormal))
    assert h.isinf().double().mean().item() == pytest.approx(model.overflow, abs=tolerance(model.overflow))


def test_bf16_keeps_the_gradients_fp16_loses() -> None:
    fp16, bf16 = (lognormal_fractions(2.0**-20, 4.0, 1, f) for f in ("fp16", "bf16"))
    assert fp16.zero > 0.1
    assert bf16.zero < 1e-100
    assert bf16.subnormal < 1e-100


def test_step_overflow_probability() -> None:
    f = lognormal_fractions(2.0**-20, 4.0, 2.0**16, "fp16")
    assert f.step_overflows(1) == pytest.approx(f.overflow)
    assert f.step_overflows(10**8) > 0.999  # 2^16 is too large a scale for 1e8 such gradients
    assert lognormal_fractions(2.0**-20, 4.0, 1, "fp16").step_overflows(10**8) < 1e-10


def test_gradscaler_defaults_match_installed_torch() -> None:
    signature = inspect.signature(torch.amp.GradScaler.__init__)
    assert {name: signature.parameters[name].default for name in GRADSCALER_DEFAULTS} == GRADSCALER_DEFAULTS
    scaler = torch.amp.GradScaler("cpu")
    assert scaler.get_scale() == GRADSCALER_DEFAULTS["init_scale"] == 2.0**16
    assert scaler.get_growth_interval() == GRADSCALER_DEFAULTS["growth_interval"] == 2000


def _run_gradscaler(found_infs: list[bool], **options) -> list[float]:
    w = torch.nn.Parameter(torch.ones(1))
    opt = torch.optim.SGD([w], lr=0.1)
    scaler = torch.amp.GradScaler("cpu", **options)
    scales = []
    for found_inf in found_infs:
        opt.zero_grad()
        loss = w.sum() * (math.inf if found_inf else 1.0)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return scales


def test_dynamic_loss_scaler_matches_gradscaler() -> None:
    rng = random.Random(7)
    found_infs = [rng.random() < 0.15 for _ in range(120)]
    reference = DynamicLossScaler(scale=2.0**10, growth_interval=4)
    expected = []
    for found_inf in found_infs:
        reference.update(found_inf)
        expected.append(reference.scale)
    assert _run_gradscaler(found_infs, init_scale=2.0**10, growth_interval=4) == expected


def test_dynamic_loss_scaler_defaults_grow_after_2000_clean_steps() -> None:
    reference = DynamicLossScaler()
    taken = [reference.update(False) for _ in range(1999)]
    assert all(taken)
    assert reference.scale == 2.0**16
    reference.update(False)
    assert reference.scale == 2.0**17
    assert reference.update(True) is False
    assert reference.scale == 2.0**16


def test_dynamic_loss_scaler_stops_growing_before_float32_overflow() -> None:
    reference = DynamicLossScaler(scale=2.0**127, growth_interval=1)
    reference.update(False)
    assert reference.scale == 2.0**127


# --- TF32 and autocast ------------------------------------------------------------------------------------------


def test_torch_fp32_matmuls_do_not_use_tf32_by_default() -> None:
    """PyTorch >= 1.12: FP32 matmuls run in full FP32 unless asked; cuDNN convolutions may use TF32."""
    assert torch.backends.cuda.matmul.allow_tf32 is False
    assert torch.get_float32_matmul_precision() == "highest"
    assert torch.backends.cudnn.allow_tf32 is True


def test_tf32_products_are_exact_in_fp32() -> None:
    """Why the TF32 model multiplies in FP32: an 11-bit by 11-bit product has at most 22 significant bits."""
    rng = np.random.default_rng(3)
    for fmt in ("tf32", "fp16", "bf16"):
        a, b = (quantize(rng.standard_normal(10_000).astype(np.float32), fmt) for _ in range(2))
        assert np.array_equal(a.astype(np.float32) * b.astype(np.float32), a * b)
    a = rng.standard_normal(10_000).astype(np.float32).astype(np.float64)
    assert not np.array_equal((a.astype(np.float32) * a.astype(np.float32)).astype(np.float64), a * a)


def test_quantize_to_tf32_keeps_ten_mantissa_bits() -> None:
    x = np.array([1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-10 + 2.0**-12, -(1 + 2.0**-23)], dtype=np.float32)
    assert quantize(x, "tf32").tolist() == [1.0, 1 + 2 * 2.0**-10, 1 + 2.0**-10, -1.0]  # ties to even
    assert quantize(x, "tf32", "toward-zero").tolist() == [1.0, 1 + 2.0**-10, 1 + 2.0**-10, -1.0]
    assert quantize(x, "fp32").tolist() == x.astype(np.float64).tolist()


def test_cpu_autocast_runs_matmuls_in_16_bits_and_losses_in_fp32() -> None:
    a = torch.randn(8, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.mm(a, a).dtype == torch.bfloat16
        assert torch.nn.functional.linear(a, a).dtype == torch.bfloat16
        b = a.bfloat16()
        assert torch.nn.functional.mse_loss(b, b).dtype == torch.float32
        assert torch.prod(b).dtype == torch.float32


@pytest.mark.gpu
def test_cuda_autocast_follows_the_documented_lists() -> None:
    """On a GPU: the ops the page lists really run in float16 or float32 under CUDA autocast."""
    x = torch.randn(16, 16, device="cuda")
    target = torch.randint(0, 16, (16,), device="cuda")
    lower = {
        "mm": lambda: torch.mm(x, x),
        "matmul": lambda: torch.matmul(x, x),
        "linear": lambda: torch.nn.functional.linear(x, x),
        "bmm": lambda: torch.bmm(x[None], x[None]),
        "addmm": lambda: torch.addmm(x, x, x),
        "conv2d": lambda: torch.nn.functional.conv2d(x[None, None], x[None, None, :3, :3]),
    }
    h = x.half()
    fp32 = {
        "softmax": lambda: torch.softmax(h, 0),
        "log_softmax": lambda: torch.log_softmax(h, 0),
        "layer_norm": lambda: torch.nn.functional.layer_norm(h, (16,)),
        "group_norm": lambda: torch.nn.functional.group_norm(h[None], 4),
        "sum": lambda: torch.sum(h),
        "prod": lambda: torch.prod(h),
        "cumsum": lambda: torch.cumsum(h, 0),
        "exp": lambda: torch.exp(h),
        "log": lambda: torch.log(h.abs()),
        "pow": lambda: torch.pow(h, 2),
        "norm": lambda: torch.norm(h),
        "cross_entropy": lambda: torch.nn.functional.cross_entropy(h, target),
        "nll_loss": lambda: torch.nn.functional.nll_loss(h, target),
        "mse_loss": lambda: torch.nn.functional.mse_loss(h, h),
    }
    assert set(lower) <= set(autocast_ops("lower-precision"))
    assert set(fp32) <= set(autocast_ops("float32"))
    with torch.autocast("cuda", dtype=torch.float16):
        assert {name: op().dtype for name, op in lower.items()} == dict.fromkeys(lower, torch.float16)
        assert {name: op().dtype for name, op in fp32.items()} == dict.fromkeys(fp32, torch.float32)


def test_autocast_table_lists_the_documented_ops() -> None:
    lower, fp32, widest = autocast_ops("lower-precision"), autocast_ops("float32"), autocast_ops("widest")
    for op in ("mm", "matmul", "linear", "conv2d", "bmm", "addmm"):
        assert op in lower
    for op in ("softmax", "log_softmax", "layer_norm", "group_norm", "sum", "prod", "cumsum", "exp", "log", "pow"):
        assert op in fp32
    assert not set(lower) & set(fp32)
    assert [len(lower), len(fp32), len(widest)] == [22, 51, 10]  # the lists of docs/source/amp.md, checked 2026-11-22
    assert "docs/source/amp.md" in autocast_lists().source
    text = mixed_precision_page.autocast_table()
    assert text.startswith("| autocast runs them in | ops (CUDA) | why |")
    assert "| float16 / bfloat16 | `__matmul__`, `addbmm`," in text
    assert "| the widest input type | `addcdiv`, `addcmul`," in text
    with pytest.raises(ValueError, match="unknown autocast list 'fp8'"):
        autocast_ops("fp8")


AUTOCAST = resources.files("gpukb.data").joinpath(AUTOCAST_FILE).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (AUTOCAST.replace('id = "widest"', 'id = "fp8"'), r"list entry 3 \(fp8\): id: Input should be"),
        (AUTOCAST.replace('id = "widest"', 'id = "float32"'), r"list entry 3 \(float32\): id 'float32' repeats"),
        (AUTOCAST.replace('section = "CUDA Ops that can autocast to float32"\n', ""), r"entry 2 \(float32\): section"),
        (AUTOCAST.replace('id = "widest"', 'id = "widest"\nnote = "x"'), r"entry 3 \(widest\): note: Extra inputs"),
        (AUTOCAST.replace("checked = 2026-11-22", 'checked = "2026-11-22"'), r"checked: Input should be a valid date"),
    ],
)  # fmt: skip
def test_a_corrupted_autocast_file_fails_naming_file_entry_and_field(text: str, message: str) -> None:
    assert parse_autocast(AUTOCAST).list == autocast_lists().list
    with pytest.raises(ValueError, match=f"^{AUTOCAST_FILE}: .*{message}"):
        parse_autocast(text)


# --- FSDP mixed precision: param_dtype is a compute dtype ------------------------------------------------------


def test_fsdp_param_dtype_is_the_compute_dtype_not_the_storage_dtype() -> None:
    """FSDP with param_dtype=bf16, reduce_dtype=fp32: BF16 compute, FP32 sharded parameters and gradients."""
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available() or dist.is_initialized():
        pytest.skip("torch.distributed is unavailable or already initialized in this process")
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        model = torch.nn.Linear(8, 4)
        seen = {}
        model.register_forward_hook(lambda module, args, out: seen.update(weight=module.weight.dtype, out=out.dtype))
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        fully_shard(model, mesh=init_device_mesh("cpu", (1,)), mp_policy=policy)
        assert {p.dtype for p in model.parameters()} == {torch.float32}  # what the optimizer updates: FP32
        out = model(torch.randn(2, 8))
        assert seen == {"weight": torch.bfloat16, "out": torch.bfloat16}  # forward (and backward) run in BF16
        out.float().sum().backward()
        assert {p.grad.dtype for p in model.parameters()} == {torch.float32}  # reduced in FP32, kept in FP32
    finally:
        dist.destroy_process_group()
