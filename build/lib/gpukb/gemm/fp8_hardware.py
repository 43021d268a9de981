"""FP8 matrix products on a real GPU, through ``torch._scaled_mm`` (cuBLASLt), checked against the emulator.

The checks return the models of :mod:`gpukb.gemm.results`, so ``bench/gemm_fp8_h100.py`` records them and the GPU
tests assert on them; :mod:`gpukb.gemm.pages` renders a recorded run. The checks take a ``device``:
``"cuda"`` is the point; ``"cpu"`` runs the same code against PyTorch's CPU implementation, which is how the
harness itself is tested without a GPU.

``torch._scaled_mm(A, B, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum)`` is cuBLASLt's
tensor-wide scaled FP8 GEMM: ``scale_a``, ``scale_b`` de-quantize, ``scale_result`` is meant as cuBLASLt's
``scale_D`` (PyTorch 2.10 and 2.11 drop it on CUDA, pytorch/pytorch#190449), and B must be column-major
(cuBLASLt takes only the "TN" layout for FP8 on Hopper; cuBLAS documentation, ``cublasLtMatmul()``, checked
2026-11-22). ``use_fast_accum`` sets ``CUBLASLT_MATMUL_DESC_FAST_ACCUM``: "intermediate results will not
periodically be promoted to a higher precision".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from gpukb.formats.library_casts import torch_dtype
from gpukb.gemm.emulator import (
    FP8_TYPES,
    amax_scale,
    emulate,
    find_combination,
    fp32_accumulation_bound,
    round_to,
)
from gpukb.gemm.results import (
    AccumulationStep,
    Attempt,
    Comparison,
    Int32Overflow,
    LayoutAttempt,
    Overflow,
    ProbeSum,
    ScaleResultProbe,
    Value,
)
from gpukb.numerics import relative_error

OUT_TYPES = ("bf16", "fp16", "fp32", "e4m3", "e5m2")
BIAS_CHOICES = (None, "bf16", "fp16", "fp32")


def documented(a_type: str, b_type: str, out_type: str, bias_type: str | None = None) -> bool:
    """Whether cuBLASLt's FP8 table lists A, B and D types (and the bias type) as a combination."""
    try:
        find_combination(a_type, b_type, out_type, None, "fp32", bias_type)
    except ValueError:
        return False
    return True


def _torch_dtype(name: str):
    dtype = torch_dtype(name)
    if dtype is None:
        raise ValueError(f"torch has no dtype for {name!r}")
    return dtype


def _tensor(values: np.ndarray, type_name: str, device: str, column_major: bool = False):
    """A torch tensor holding ``values`` (already representable in the type, so the cast is exact)."""
    import torch

    values = np.asarray(values, dtype=np.float64)
    if column_major:
        return torch.from_numpy(np.ascontiguousarray(values.T)).to(_torch_dtype(type_name)).to(device).t()
    return torch.from_numpy(np.ascontiguousarray(values)).to(_torch_dtype(type_name)).to(device)


def _scalar(value: float, device: str):
    import torch

    return torch.tensor(float(value), dtype=torch.float32, device=device)


def scaled_mm(
    a: np.ndarray,
    b: np.ndarray,
    *,
    a_type: str,
    b_type: str,
    out_type: str,
    scale_a: float = 1.0,
    scale_b: float = 1.0,
    scale_d: float | None = None,
    bias: np.ndarray | None = None,
    bias_type: str | None = None,
    fast_accum: bool = False,
    device: str = "cuda",
    a_column_major: bool = False,
    b_column_major: bool = True,
) -> np.ndarray:
    """Run ``torch._scaled_mm`` on stored FP8 values and return D's values as float64.

    Raises:
        RuntimeError: Or another exception from torch, for a combination it refuses (the checks record them).
    """
    import torch

    kwargs = {"out_dtype": _torch_dtype(out_type), "use_fast_accum": fast_accum}
    if bias is not None:
        kwargs["bias"] = _tensor(bias, bias_type or "bf16", device)
    if scale_d is not None:
        kwargs["scale_result"] = _scalar(scale_d, device)
    out = torch._scaled_mm(
        _tensor(a, a_type, device, a_column_major),
        _tensor(b, b_type, device, b_column_major),
        _scalar(scale_a, device),
        _scalar(scale_b, device),
        **kwargs,
    )
    if isinstance(out, tuple):  # torch < 2.5 also returned amax
        out = out[0]
    return out.float().cpu().numpy().astype(np.float64)


def _error_fields(exc: BaseException) -> dict[str, str]:
    return {"error_type": type(exc).__name__, "error": str(exc).strip()}


def _random_stored(rng: np.random.Generator, shape: tuple[int, ...], type_name: str) -> np.ndarray:
    return round_to(rng.standard_normal(shape), type_name)


def attempt(
    a_type: str,
    b_type: str,
    out_type: str,
    bias_type: str | None = None,
    *,
    device: str = "cuda",
    m: int = 32,
    n: int = 32,
    k: int = 64,
    seed: int = 0,
    **layout: bool,
) -> Attempt:
    """Call ``torch._scaled_mm`` once with these types and say whether it ran, or what it raised."""
    rng = np.random.default_rng(seed)
    a, b = _random_stored(rng, (m, k), a_type), _random_stored(rng, (k, n), b_type)
    bias = None if bias_type is None else _random_stored(rng, (n,), bias_type)
    record = {"a": a_type, "b": b_type, "out": out_type, "bias": bias_type or "none"}
    try:
        out = scaled_mm(a, b, a_type=a_type, b_type=b_type, out_type=out_type,
                        scale_d=1.0 if out_type in FP8_TYPES else None, bias=bias, bias_type=bias_type,
                        device=device, **layout)  # fmt: skip
    except Exception as exc:
        return Attempt(**record, accepted=False, **_error_fields(exc))
    return Attempt(**record, accepted=True, finite=bool(np.isfinite(out).all()))


def acceptance_grid(device: str = "cuda") -> list[Attempt]:
    """Every A, B in {E4M3, E5M2}, every D of :data:`OUT_TYPES`, with no bias and each bias dtype."""
    return [
        attempt(a, b, out, bias, device=device)
        for a in FP8_TYPES
        for b in FP8_TYPES
        for out in OUT_TYPES
        for bias in BIAS_CHOICES
    ]


def layout_probe(device: str = "cuda") -> list[LayoutAttempt]:
    """E4M3 × E4M3 → BF16 with each of A and B row- or column-major (cuBLASLt wants A row-, B column-major)."""
    records = []
    for a_col in (False, True):
        for b_col in (False, True):
            record = attempt("e4m3", "e4m3", "bf16", device=device, a_column_major=a_col, b_column_major=b_col)
            records.append(LayoutAttempt(a_layout="column-major" if a_col else "row-major",
                                         b_layout="column-major" if b_col else "row-major",
                                         **record.model_dump()))  # fmt: skip
    return records


@dataclass(frozen=True)
class Inputs:
    """The stored operands of one comparison, rebuilt from its seed, and what they should give.

    Attributes:
        a: A as stored (amax-scaled values of A's type).
        b: B as stored.
        scale_a: A's de-quantizing scale (an FP32 value, so both sides use the same one).
        scale_b: B's de-quantizing scale.
        bias: The stored bias vector, or ``None``.
        exact: ``scale_a * scale_b * (a @ b) + bias`` in float64.
        reference: The float64 product of the unquantized matrices, plus the bias.
        scale_d: The FP32 scale that maps ``max|exact|`` to an FP8 D's largest value (1 for other D types).
    """

    a: np.ndarray
    b: np.ndarray
    scale_a: float
    scale_b: float
    bias: np.ndarray | None
    exact: np.ndarray
    reference: np.ndarray
    scale_d: float


def comparison_inputs(
    a_type: str, b_type: str, out_type: str, bias_type: str | None, *, m: int, n: int, k: int, seed: int
) -> Inputs:
    """A and B standard normal, quantized with per-tensor amax scales; the bias normal with standard deviation
    ``sqrt(K)``, like the product's entries; an FP8 D's scale from the exact result's amax."""
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    sa, sb = amax_scale(x, a_type), amax_scale(w, b_type)
    inv_a, inv_b = float(np.float32(1 / sa)), float(np.float32(1 / sb))
    a_q, b_q = round_to(x * sa, a_type), round_to(w * sb, b_type)
    bias = None if bias_type is None else round_to(rng.standard_normal(n) * math.sqrt(k), bias_type)
    bias_row = 0.0 if bias is None else bias[np.newaxis, :]
    exact = inv_a * inv_b * (a_q @ b_q) + bias_row
    scale_d = float(np.float32(amax_scale(exact, out_type))) if out_type in FP8_TYPES else 1.0
    return Inputs(a_q, b_q, inv_a, inv_b, bias, exact, x @ w + bias_row, scale_d)


def emulate_inputs(inputs: Inputs, a_type: str, b_type: str, out_type: str, bias_type: str | None,
                   scale_d: float) -> np.ndarray:  # fmt: skip
    """The emulator's D for :func:`comparison_inputs` (raises ``ValueError`` for a combination it does not model)."""
    return emulate(inputs.a, inputs.b, a_type=a_type, b_type=b_type, d_type=out_type, scale_a=inputs.scale_a,
                   scale_b=inputs.scale_b, scale_d=scale_d, bias=inputs.bias, bias_type=bias_type)  # fmt: skip


def compare(
    a_type: str,
    b_type: str,
    out_type: str,
    bias_type: str | None = None,
    *,
    m: int = 256,
    n: int = 256,
    k: int = 1024,
    seed: int = 0,
    fast_accum: bool = False,
    device: str = "cuda",
) -> Comparison:
    """The GPU's and the emulator's D for the same stored inputs, their difference and the FP32 bound on it.

    An FP8 D is requested with ``scale_result`` set to the scale that maps the exact result's amax to the format's
    largest value. PyTorch 2.10 and 2.11 drop it on CUDA (pytorch/pytorch#190449), so the GPU's D is compared with
    the emulator's both with that scale and with scale 1, and ``emulator_scale`` says which one the figures use
    (the closer). Differences are relative to the exact (float64) result of the stored values.
    """
    inputs = comparison_inputs(a_type, b_type, out_type, bias_type, m=m, n=n, k=k, seed=seed)
    record = {"a": a_type, "b": b_type, "out": out_type, "bias": bias_type or "none", "fast_accum": fast_accum,
              "m": m, "n": n, "k": k, "seed": seed}  # fmt: skip
    fp8_out = out_type in FP8_TYPES
    hw = scaled_mm(inputs.a, inputs.b, a_type=a_type, b_type=b_type, out_type=out_type, scale_a=inputs.scale_a,
                   scale_b=inputs.scale_b, scale_d=inputs.scale_d if fp8_out else None, bias=inputs.bias,
                   bias_type=bias_type, fast_accum=fast_accum, device=device)  # fmt: skip
    try:
        candidates = {scale: emulate_inputs(inputs, a_type, b_type, out_type, bias_type, scale)
                      for scale in ((inputs.scale_d, 1.0) if fp8_out else (1.0,))}  # fmt: skip
    except ValueError as exc:  # a combination cuBLASLt's table does not list: nothing to compare with
        return Comparison(**record, hw_vs_fp64=relative_error(hw, inputs.reference), emulated=False,
                          emulator_error=str(exc))  # fmt: skip
    differences = {
        scale: float(np.linalg.norm(hw - emu) / np.linalg.norm(scale * inputs.exact))
        for scale, emu in candidates.items()
    }
    applied = min(differences, key=differences.get)
    emu = candidates[applied]
    with np.errstate(invalid="ignore"):
        same = hw == emu
    bound = fp32_accumulation_bound(inputs.a, inputs.b, d_type=out_type, scale=inputs.scale_a * inputs.scale_b,
                                    scale_d=applied, bias=inputs.bias)  # fmt: skip
    return Comparison(
        **record,
        emulated=True,
        emulator_scale=("requested" if applied == inputs.scale_d else "one") if fp8_out else None,
        hw_vs_emulator=differences[applied],
        bound=bound,
        identical_fraction=float(np.mean(same)),
        hw_vs_fp64=relative_error(hw / applied, inputs.reference),
        hw_over_requested_vs_fp64=relative_error(hw / inputs.scale_d, inputs.reference) if fp8_out else None,
        emulator_vs_fp64=relative_error(emu / applied, inputs.reference),
        hw_nonfinite=int(np.sum(~np.isfinite(hw))),
    )


def requested_scale_errors(record: Comparison) -> tuple[float, float, float]:
    """For a recorded FP8-D comparison: the error against FP64 of the GPU's D divided by the requested
    ``scale_result``, and what the emulator gives for the same quantity if the scale is applied and if it is ignored.

    The emulator's two values are recomputed from the record's seed and sizes; the one the GPU's value matches
    says what PyTorch did with ``scale_result``.

    Raises:
        ValueError: For a comparison with a 16- or 32-bit D, or one the emulator did not model.
    """
    if record.hw_over_requested_vs_fp64 is None:
        raise ValueError(f"{record.a} × {record.b} → {record.out}: not an emulated comparison with an FP8 D")
    key = (record.a, record.b, record.out, record.bias, record.m, record.n, record.k, record.seed)
    return record.hw_over_requested_vs_fp64, *_emulated_requested_scale_errors(*key)


@cache
def _emulated_requested_scale_errors(a, b, out, bias, m, n, k, seed) -> tuple[float, float]:
    bias_type = None if bias == "none" else bias
    inputs = comparison_inputs(a, b, out, bias_type, m=m, n=n, k=k, seed=seed)
    requested = inputs.scale_d
    applied, ignored = (
        relative_error(emulate_inputs(inputs, a, b, out, bias_type, scale) / requested, inputs.reference)
        for scale in (requested, 1.0)
    )
    return applied, ignored


def agreement_suite(
    acceptance: list[Attempt], *, m: int = 256, n: int = 256, k: int = 1024, device: str = "cuda"
) -> list[Comparison]:
    """:func:`compare` for every accepted combination: without bias with fast accumulation off and on, and with
    each accepted bias with it off."""
    records = []
    for row in acceptance:
        if not row.accepted:
            continue
        bias = None if row.bias == "none" else row.bias
        for fast in (False, True) if bias is None else (False,):
            records.append(compare(row.a, row.b, row.out, bias, m=m, n=n, k=k, fast_accum=fast, device=device))
    return records


def accumulation_study(
    ks: tuple[int, ...] = (256, 1024, 4096, 16384), *, m: int = 128, n: int = 128, seed: int = 0, device: str = "cuda"
) -> list[AccumulationStep]:
    """E4M3 × E4M3 → FP32 for growing K, fast accumulation off and on, against the exact product.

    The stored inputs are amax-scaled normal values and the scales are 1, so the float64 product of the stored
    values is exact (products are multiples of ``2**-18`` below ``2**18``; K ≤ 16384 keeps the sums under 2**50).
    ``max_error_per_abs_sum`` is the largest ``|D - exact| / (|A| @ |B|)``: FP32 accumulation in any order keeps it
    below ``gamma(K) ~ K * 2**-24``.
    """
    records = []
    for k in ks:
        rng = np.random.default_rng(seed)
        x, w = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        a_q, b_q = round_to(x * amax_scale(x, "e4m3"), "e4m3"), round_to(w * amax_scale(w, "e4m3"), "e4m3")
        exact = a_q @ b_q
        abs_sum = np.abs(a_q) @ np.abs(b_q)
        emu = emulate(a_q, b_q, a_type="e4m3", b_type="e4m3", d_type="fp32")
        for fast in (False, True):
            hw = scaled_mm(a_q, b_q, a_type="e4m3", b_type="e4m3", out_type="fp32", fast_accum=fast, device=device)
            records.append(
                AccumulationStep(
                    k=k,
                    fast_accum=fast,
                    hw_vs_exact=relative_error(hw, exact),
                    emulator_vs_exact=relative_error(emu, exact),
                    fp32_bound=fp32_accumulation_bound(a_q, b_q, d_type="fp32") / 2,
                    max_error_per_abs_sum=float(np.max(np.abs(hw - exact) / abs_sum)),
                    gamma_k=k * 2.0**-24 / (1 - k * 2.0**-24),
                )
            )
    return records


#: The small addends of :func:`accumulation_probe`: E4M3 values from 2**-2 down to its smallest subnormal.
PROBE_DELTAS = tuple(2.0**-e for e in range(2, 10))


def accumulation_probe(k: int = 4096, device: str = "cuda") -> list[ProbeSum]:
    """Sum ``1 + (K - 1) * delta`` on the tensor cores: row i of A is ``[1, delta_i, ..., delta_i]``, B is ones.

    Every partial sum is exact in FP32 (at most 20 significant bits, FP32 keeps 24), so an FP32 accumulator
    returns the exact value in any order; an accumulator with fewer bits loses the small addends next to the 1.
    """
    deltas = np.array(PROBE_DELTAS * 2)  # 16 rows: _scaled_mm wants multiples of 16
    a = np.repeat(deltas[:, np.newaxis], k, axis=1)
    a[:, 0] = 1.0
    b = np.ones((k, 16))
    exact = 1.0 + (k - 1) * deltas
    emu = emulate(a, b, a_type="e4m3", b_type="e4m3", d_type="fp32")[:, 0]
    off = scaled_mm(a, b, a_type="e4m3", b_type="e4m3", out_type="fp32", device=device)[:, 0]
    on = scaled_mm(a, b, a_type="e4m3", b_type="e4m3", out_type="fp32", fast_accum=True, device=device)[:, 0]
    return [
        ProbeSum(
            k=k,
            delta=float(deltas[i]),
            exact=float(exact[i]),
            emulator=float(emu[i]),
            fast_accum_off=float(off[i]),
            fast_accum_on=float(on[i]),
        )
        for i in range(len(PROBE_DELTAS))
    ]


def probe_bits_needed(k: int, deltas: tuple[float, ...] = PROBE_DELTAS) -> int:
    """The most significant bits any partial sum ``1 + j * delta`` (``j < K``) of :func:`accumulation_probe` needs."""
    most = 0
    for delta in deltas:
        lowest = min(math.frexp(delta)[1] - 1, 0)  # exponent of the lowest set bit: delta is a power of two
        top = math.frexp(1 + (k - 1) * delta)[1] - 1
        most = max(most, top - lowest + 1)
    return most


def _jsonable(x: float) -> Value:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


#: Output overflow cases: (A type, B type, D type, pairs (p, q) whose sum p + q is D before rounding).
OVERFLOW_CASES = (
    ("e4m3", "e4m3", "e4m3", ((224.0, 224.0), (448.0, 16.0), (448.0, 32.0), (448.0, 448.0))),
    ("e4m3", "e5m2", "e5m2", ((28672.0, 28672.0), (57344.0, 4096.0), (57344.0, 8192.0), (57344.0, 57344.0))),
    ("e4m3", "e5m2", "fp16", ((32768.0, 28672.0), (32768.0, 32768.0), (57344.0, 57344.0))),
)


def overflow_probe(device: str = "cuda") -> list[Overflow]:
    """What D becomes when the result passes its type's largest value: saturated, infinite or NaN.

    Row 0 of A is ``[1, 1, 0, ...]`` and column j of B starts ``[p_j, q_j]``, so ``D[0, j] = p_j + q_j`` exactly
    before D is rounded (scales 1).
    """
    records = []
    for a_type, b_type, out, pairs in OVERFLOW_CASES:
        a = np.zeros((16, 32))
        a[:, :2] = 1.0
        b = np.zeros((32, 16))
        for j, (p, q) in enumerate(pairs):
            b[0, j], b[1, j] = p, q
        record: dict = {"a": a_type, "b": b_type, "out": out, "sums": [p + q for p, q in pairs]}
        common = {"a_type": a_type, "b_type": b_type, "d_type": out}
        record["emulator_saturating"] = [
            _jsonable(v) for v in emulate(a, b, saturate_d=True, **common)[0, : len(pairs)]
        ]
        record["emulator_format_rules"] = [
            _jsonable(v) for v in emulate(a, b, saturate_d=False, **common)[0, : len(pairs)]
        ]
        try:
            hw = scaled_mm(a, b, a_type=a_type, b_type=b_type, out_type=out,
                           scale_d=1.0 if out in FP8_TYPES else None, device=device)  # fmt: skip
        except Exception as exc:
            records.append(Overflow(**record, accepted=False, **_error_fields(exc)))
            continue
        records.append(Overflow(**record, accepted=True, hardware=[_jsonable(v) for v in hw[0, : len(pairs)]]))
    return records


def scale_result_probe(device: str = "cuda") -> list[ScaleResultProbe]:
    """Whether ``scale_result`` (cuBLASLt's ``scale_D``) is applied, ignored or refused for each D type."""
    rng = np.random.default_rng(1)
    a, b = _random_stored(rng, (32, 64), "e4m3"), _random_stored(rng, (64, 32), "e4m3")
    records = []
    for out in ("bf16", "fp16", "fp32", "e4m3"):
        record = {"out": out, "scale_result": 0.5}
        try:
            plain = scaled_mm(a, b, a_type="e4m3", b_type="e4m3", out_type=out, scale_d=1.0, device=device)
            halved = scaled_mm(a, b, a_type="e4m3", b_type="e4m3", out_type=out, scale_d=0.5, device=device)
        except Exception as exc:
            records.append(ScaleResultProbe(**record, accepted=False, **_error_fields(exc)))
            continue
        ratio = float(np.linalg.norm(halved) / np.linalg.norm(plain))
        records.append(ScaleResultProbe(**record, accepted=True, norm_ratio=ratio))
    return records


def int32_overflow_probe(ks: tuple[int, ...] = (131064, 131072), device: str = "cuda") -> list[Int32Overflow]:
    """``torch._int_mm`` of all -128 INT8 matrices: K·2**14 passes INT32's largest value from K = 131072 on."""
    import torch

    records = []
    for k in ks:
        a = torch.full((32, k), -128, dtype=torch.int8, device=device)
        b = torch.full((k, 16), -128, dtype=torch.int8, device=device)
        exact = k * 16384
        record = {"k": k, "exact": exact}
        try:
            hw = int(torch._int_mm(a, b)[0, 0].item())
        except Exception as exc:
            records.append(Int32Overflow(**record, accepted=False, **_error_fields(exc)))
            continue
        wrapped = int(emulate(np.full((1, k), -128), np.full((k, 1), -128), a_type="int8", b_type="int8",
                              d_type="int32", compute="int32", int32_overflow="wrap")[0, 0])  # fmt: skip
        records.append(Int32Overflow(**record, accepted=True, hardware=hw, emulator_wrap=wrapped,
                                     emulator_saturate=min(exact, 2**31 - 1)))  # fmt: skip
    return records


def cublaslt_version() -> str | None:
    """The version of the cuBLASLt library this process has loaded (``major.minor.patch``), or ``None``."""
    import ctypes

    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    paths = sorted({line.split()[-1] for line in maps.splitlines() if "libcublasLt" in line and "/" in line})
    for path in paths:
        try:
            number = int(ctypes.CDLL(path).cublasLtGetVersion())
        except (OSError, AttributeError):
            continue
        return f"{number // 10000}.{number // 100 % 100}.{number % 100}"
    return None
