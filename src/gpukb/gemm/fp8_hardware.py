"""FP8 matrix products on a real GPU, through ``torch._scaled_mm`` (cuBLASLt), checked against the emulator.

The checks return plain dictionaries, so ``bench/gemm_fp8_h100.py`` records them and the GPU tests assert on them;
the ``*_markdown`` functions render a recorded file for the page and need no GPU. The checks take a ``device``:
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

import json
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
    relative_errors,
    round_to,
)
from gpukb.tables import markdown_table

OUT_TYPES = ("bf16", "fp16", "fp32", "e4m3", "e5m2")
BIAS_CHOICES = (None, "bf16", "fp16", "fp32")
_TORCH_NAMES = {
    "bf16": "bfloat16",
    "fp16": "float16",
    "fp32": "float32",
    "e4m3": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
}
_REQUIRED = ("meta", "acceptance", "layout", "agreement", "accumulation", "accumulation_probe", "overflow",
             "scale_result", "int32_overflow", "tf32")  # fmt: skip


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


def _error_record(exc: BaseException) -> dict[str, str]:
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
) -> dict[str, object]:
    """Call ``torch._scaled_mm`` once with these types and say whether it ran, or what it raised."""
    rng = np.random.default_rng(seed)
    a, b = _random_stored(rng, (m, k), a_type), _random_stored(rng, (k, n), b_type)
    bias = None if bias_type is None else _random_stored(rng, (n,), bias_type)
    record: dict[str, object] = {"a": a_type, "b": b_type, "out": out_type, "bias": bias_type or "none"}
    try:
        out = scaled_mm(a, b, a_type=a_type, b_type=b_type, out_type=out_type,
                        scale_d=1.0 if out_type in FP8_TYPES else None, bias=bias, bias_type=bias_type,
                        device=device, **layout)  # fmt: skip
    except Exception as exc:
        return {**record, "accepted": False, **_error_record(exc)}
    return {**record, "accepted": True, "error_type": None, "error": None, "finite": bool(np.isfinite(out).all())}


def acceptance_grid(device: str = "cuda") -> list[dict[str, object]]:
    """Every A, B in {E4M3, E5M2}, every D of :data:`OUT_TYPES`, with no bias and each bias dtype."""
    return [
        attempt(a, b, out, bias, device=device)
        for a in FP8_TYPES
        for b in FP8_TYPES
        for out in OUT_TYPES
        for bias in BIAS_CHOICES
    ]


def layout_probe(device: str = "cuda") -> list[dict[str, object]]:
    """E4M3 × E4M3 → BF16 with each of A and B row- or column-major (cuBLASLt wants A row-, B column-major)."""
    records = []
    for a_col in (False, True):
        for b_col in (False, True):
            record = attempt("e4m3", "e4m3", "bf16", device=device, a_column_major=a_col, b_column_major=b_col)
            records.append({"a_layout": "column-major" if a_col else "row-major",
                            "b_layout": "column-major" if b_col else "row-major", **record})  # fmt: skip
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
) -> dict[str, object]:
    """The GPU's and the emulator's D for the same stored inputs, their difference and the FP32 bound on it.

    An FP8 D is requested with ``scale_result`` set to the scale that maps the exact result's amax to the format's
    largest value. PyTorch 2.10 and 2.11 drop it on CUDA (pytorch/pytorch#190449), so the GPU's D is compared with
    the emulator's both with that scale and with scale 1, and ``scale_result_applied`` says which one it matched.
    Differences are relative to the exact (float64) result of the stored values.
    """
    inputs = comparison_inputs(a_type, b_type, out_type, bias_type, m=m, n=n, k=k, seed=seed)
    record: dict[str, object] = {"a": a_type, "b": b_type, "out": out_type, "bias": bias_type or "none",
                                 "fast_accum": fast_accum, "m": m, "n": n, "k": k, "seed": seed}  # fmt: skip
    fp8_out = out_type in FP8_TYPES
    hw = scaled_mm(inputs.a, inputs.b, a_type=a_type, b_type=b_type, out_type=out_type, scale_a=inputs.scale_a,
                   scale_b=inputs.scale_b, scale_d=inputs.scale_d if fp8_out else None, bias=inputs.bias,
                   bias_type=bias_type, fast_accum=fast_accum, device=device)  # fmt: skip
    try:
        candidates = {scale: emulate_inputs(inputs, a_type, b_type, out_type, bias_type, scale)
                      for scale in ((inputs.scale_d, 1.0) if fp8_out else (1.0,))}  # fmt: skip
    except ValueError as exc:  # a combination cuBLASLt's table does not list: nothing to compare with
        return {**record, "hw_vs_fp64": relative_errors(hw, inputs.reference)[0], "emulated": False,
                "emulator_error": str(exc)}  # fmt: skip
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
    record.update(
        emulated=True,
        scale_result_applied=(applied == inputs.scale_d) if fp8_out else None,
        hw_vs_emulator=differences[applied],
        bound=bound,
        identical_fraction=float(np.mean(same)),
        hw_vs_fp64=relative_errors(hw / applied, inputs.reference)[0],
        hw_over_requested_vs_fp64=relative_errors(hw / inputs.scale_d, inputs.reference)[0],
        emulator_vs_fp64=relative_errors(emu / applied, inputs.reference)[0],
        hw_nonfinite=int(np.sum(~np.isfinite(hw))),
    )
    return record


def requested_scale_errors(record: dict) -> tuple[float, float, float]:
    """For a recorded FP8-D comparison: the error against FP64 of the GPU's D divided by the requested
    ``scale_result``, and what the emulator gives for the same quantity if the scale is applied and if it is ignored.

    The emulator's two values are recomputed from the record's seed and sizes; the one the GPU's value matches
    says what PyTorch did with ``scale_result``.
    """
    gpu = record.get("hw_over_requested_vs_fp64", record["hw_vs_fp64"])  # files before this field held it there
    key = (
        record["a"],
        record["b"],
        record["out"],
        record["bias"],
        record["m"],
        record["n"],
        record["k"],
        record["seed"],
    )
    return float(gpu), *_emulated_requested_scale_errors(*key)


@cache
def _emulated_requested_scale_errors(a, b, out, bias, m, n, k, seed) -> tuple[float, float]:
    bias_type = None if bias == "none" else bias
    inputs = comparison_inputs(a, b, out, bias_type, m=m, n=n, k=k, seed=seed)
    requested = inputs.scale_d
    applied, ignored = (
        relative_errors(emulate_inputs(inputs, a, b, out, bias_type, scale) / requested, inputs.reference)[0]
        for scale in (requested, 1.0)
    )
    return applied, ignored


def agreement_suite(
    acceptance: list[dict[str, object]], *, m: int = 256, n: int = 256, k: int = 1024, device: str = "cuda"
) -> list[dict[str, object]]:
    """:func:`compare` for every accepted combination: without bias with fast accumulation off and on, and with
    each accepted bias with it off."""
    records = []
    for row in acceptance:
        if not row["accepted"]:
            continue
        bias = None if row["bias"] == "none" else str(row["bias"])
        for fast in (False, True) if bias is None else (False,):
            records.append(compare(str(row["a"]), str(row["b"]), str(row["out"]), bias, m=m, n=n, k=k,
                                   fast_accum=fast, device=device))  # fmt: skip
    return records


def accumulation_study(
    ks: tuple[int, ...] = (256, 1024, 4096, 16384), *, m: int = 128, n: int = 128, seed: int = 0, device: str = "cuda"
) -> list[dict[str, object]]:
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
                {
                    "k": k,
                    "fast_accum": fast,
                    "hw_vs_exact": relative_errors(hw, exact)[0],
                    "emulator_vs_exact": relative_errors(emu, exact)[0],
                    "fp32_bound": fp32_accumulation_bound(a_q, b_q, d_type="fp32") / 2,
                    "max_error_per_abs_sum": float(np.max(np.abs(hw - exact) / abs_sum)),
                    "gamma_k": k * 2.0**-24 / (1 - k * 2.0**-24),
                }
            )
    return records


#: The small addends of :func:`accumulation_probe`: E4M3 values from 2**-2 down to its smallest subnormal.
PROBE_DELTAS = tuple(2.0**-e for e in range(2, 10))


def accumulation_probe(k: int = 4096, device: str = "cuda") -> list[dict[str, object]]:
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
        {
            "k": k,
            "delta": float(deltas[i]),
            "exact": float(exact[i]),
            "emulator": float(emu[i]),
            "fast_accum_off": float(off[i]),
            "fast_accum_on": float(on[i]),
        }
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


def _jsonable(x: float) -> float | str:
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


def overflow_probe(device: str = "cuda") -> list[dict[str, object]]:
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
        record: dict[str, object] = {"a": a_type, "b": b_type, "out": out, "sums": [p + q for p, q in pairs]}
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
            records.append({**record, "accepted": False, **_error_record(exc)})
            continue
        records.append({**record, "accepted": True, "hardware": [_jsonable(v) for v in hw[0, : len(pairs)]]})
    return records


def scale_result_probe(device: str = "cuda") -> list[dict[str, object]]:
    """Whether ``scale_result`` (cuBLASLt's ``scale_D``) is applied, ignored or refused for each D type."""
    rng = np.random.default_rng(1)
    a, b = _random_stored(rng, (32, 64), "e4m3"), _random_stored(rng, (64, 32), "e4m3")
    records = []
    for out in ("bf16", "fp16", "fp32", "e4m3"):
        record: dict[str, object] = {"out": out, "scale_result": 0.5}
        try:
            plain = scaled_mm(a, b, a_type="e4m3", b_type="e4m3", out_type=out, scale_d=1.0, device=device)
            halved = scaled_mm(a, b, a_type="e4m3", b_type="e4m3", out_type=out, scale_d=0.5, device=device)
        except Exception as exc:
            records.append({**record, "accepted": False, **_error_record(exc)})
            continue
        ratio = float(np.linalg.norm(halved) / np.linalg.norm(plain))
        records.append({**record, "accepted": True, "norm_ratio": ratio})
    return records


def int32_overflow_probe(ks: tuple[int, ...] = (131064, 131072), device: str = "cuda") -> list[dict[str, object]]:
    """``torch._int_mm`` of all -128 INT8 matrices: K·2**14 passes INT32's largest value from K = 131072 on."""
    import torch

    records = []
    for k in ks:
        a = torch.full((32, k), -128, dtype=torch.int8, device=device)
        b = torch.full((k, 16), -128, dtype=torch.int8, device=device)
        exact = k * 16384
        record: dict[str, object] = {"k": k, "exact": exact}
        try:
            hw = int(torch._int_mm(a, b)[0, 0].item())
        except Exception as exc:
            records.append({**record, "accepted": False, **_error_record(exc)})
            continue
        wrapped = int(emulate(np.full((1, k), -128), np.full((k, 1), -128), a_type="int8", b_type="int8",
                              d_type="int32", compute="int32", int32_overflow="wrap")[0, 0])  # fmt: skip
        records.append({**record, "accepted": True, "hardware": hw, "emulator_wrap": wrapped,
                        "emulator_saturate": min(exact, 2**31 - 1)})  # fmt: skip
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


# --- rendering a recorded file (no GPU needed) ---------------------------------------------------------------


def load(path: str | Path) -> dict:
    """Read a results file of ``bench/gemm_fp8_h100.py`` and check it has every part the page uses.

    Raises:
        ValueError: If a part is missing, naming it.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        raise ValueError(f"{path}: not a gemm_fp8_h100 results file, missing {missing}")
    return data


def _first_line(text: str | None, limit: int = 140) -> str:
    if not text:
        return ""
    line = text.strip().splitlines()[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _code(text: str) -> str:
    """A Markdown code span that survives backticks inside the text."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def meta_markdown(path: str | Path) -> str:
    """One sentence: the GPU, driver, versions, date and command the results came from."""
    meta = load(path)["meta"]
    env = meta["environment"]
    libs = ", ".join(f"{k} {v}" for k, v in env["libraries"].items() if v and k in ("torch", "numpy", "ml_dtypes"))
    cublas = f", cuBLASLt {meta['cublaslt']}" if meta.get("cublaslt") else ""
    return (
        f"Measured on an {meta['gpu']} (driver {meta['driver']}, CUDA {env['torch_cuda']}{cublas}), Python "
        f"{env['python']}, {libs}, on {meta['date']}, by `{meta['command']}`."
    )


def acceptance_markdown(path: str | Path) -> str:
    """Which A, B, D and bias types ``torch._scaled_mm`` accepted, next to cuBLASLt's table, and the refusals."""
    rows_by_key: dict[tuple[str, str, str], dict[str, str]] = {}
    refusals: dict[str, list[str]] = {}
    for r in load(path)["acceptance"]:
        key = (r["a"], r["b"], r["out"])
        rows_by_key.setdefault(key, {})[r["bias"]] = "yes" if r["accepted"] else "refused"
        if not r["accepted"]:
            bias = "" if r["bias"] == "none" else f" + {r['bias']} bias"
            refusals.setdefault(f"{r['error_type']}: {_first_line(r['error'])}", []).append(
                f"{r['a']}×{r['b']}→{r['out']}{bias}"
            )
    headers = ["A", "B", "D", "in cuBLASLt's table", "no bias", "bf16 bias", "fp16 bias", "fp32 bias"]
    rows = [
        [
            a,
            b,
            out,
            "yes" if documented(a, b, out) else "no",
            *(cells.get(x, "") for x in ("none", "bf16", "fp16", "fp32")),
        ]
        for (a, b, out), cells in rows_by_key.items()
    ]
    messages = [[_code(message), ", ".join(cases)] for message, cases in refusals.items()]
    return f"{markdown_table(headers, rows)}\n\n{markdown_table(['refused with', 'combinations'], messages)}"


def layout_markdown(path: str | Path) -> str:
    """E4M3 × E4M3 → BF16 with each layout of A and B: accepted or refused, and the message."""
    rows = [
        [
            r["a_layout"],
            r["b_layout"],
            "yes" if r["accepted"] else "refused",
            _code(_first_line(r["error"])) if r["error"] else "",
        ]
        for r in load(path)["layout"]
    ]
    return markdown_table(["A", "B", "accepted", "error"], rows)


def _label(r: dict) -> str:
    return f"{r['a']} × {r['b']} → {r['out']}" + ("" if r["bias"] == "none" else f" + {r['bias']} bias")


def agreement_markdown(path: str | Path) -> str:
    """GPU against emulator for every accepted combination with a 16- or 32-bit D: the difference, the FP32 bound
    on it, how many elements came out identical, and both results' error against FP64."""
    records = [r for r in load(path)["agreement"] if r["out"] not in FP8_TYPES]
    rows = []
    for r in records:
        fast = "on" if r["fast_accum"] else "off"
        if not r.get("emulated"):
            rows.append([_label(r), fast, "not in cuBLASLt's table", "", "", f"{r['hw_vs_fp64']:.2e}", ""])
            continue
        rows.append(
            [
                _label(r),
                fast,
                f"{r['hw_vs_emulator']:.1e}",
                f"{r['bound']:.1e}",
                f"{r['identical_fraction']:.1%}",
                f"{r['hw_vs_fp64']:.2e}",
                f"{r['emulator_vs_fp64']:.2e}",
            ]
        )
    headers = ["combination", "fast accumulation", "GPU vs emulator", "FP32 bound", "identical elements",
               "GPU vs FP64", "emulator vs FP64"]  # fmt: skip
    first = records[0]
    return (
        f"{markdown_table(headers, rows)}\n\nA is {first['m']}×{first['k']} and B {first['k']}×{first['n']}, standard "
        "normal, quantized with per-tensor amax scales; all figures are relative Frobenius norms."
    )


def fp8_output_markdown(path: str | Path) -> str:
    """For each FP8 D (no bias, fast accumulation off): the GPU's error against FP64 after dividing by the requested
    ``scale_result``, next to the emulator's with that scale applied and with it ignored (recomputed from the
    record's seed), and the verdict."""
    rows, gaps = [], []
    for r in load(path)["agreement"]:
        if r["out"] not in FP8_TYPES or r["fast_accum"] or r["bias"] != "none":
            continue
        gpu, applied, ignored = requested_scale_errors(r)
        verdict = "ignored" if abs(gpu - ignored) < abs(gpu - applied) else "applied"
        gaps.append(abs(gpu - (ignored if verdict == "ignored" else applied)))
        rows.append([_label(r), f"{gpu:.4f}", f"{applied:.4f}", f"{ignored:.4f}", verdict])
    headers = ["combination", "GPU", "emulator, scale_result applied", "emulator, scale_result ignored",
               "scale_result was"]  # fmt: skip
    return (
        f"{markdown_table(headers, rows)}\n\nRelative Frobenius error against FP64 of D divided by the requested "
        f"`scale_result`; the GPU's figure is within {max(gaps):.1e} of the emulator's under the verdict in every row."
    )


def accumulation_markdown(path: str | Path) -> str:
    """The K sweep with fast accumulation off and on, and the ``1 + (K - 1) delta`` probe."""
    data = load(path)
    sweep = [
        [
            str(r["k"]),
            "on" if r["fast_accum"] else "off",
            f"{r['hw_vs_exact']:.1e}",
            f"{r['emulator_vs_exact']:.1e}",
            f"{r['fp32_bound']:.1e}",
            f"{r['max_error_per_abs_sum']:.1e}",
            f"{r['gamma_k']:.1e}",
        ]
        for r in data["accumulation"]
    ]
    headers = [
        "K",
        "fast accumulation",
        "GPU vs exact",
        "emulator vs exact",
        "FP32 bound",
        "max error / Σ|a·b|",
        "γ(K) for FP32",
    ]
    probe = [
        [
            f"2^{round(math.log2(r['delta']))}",
            f"{r['exact']:.9g}",
            f"{r['emulator']:.9g}",
            f"{r['fast_accum_off']:.9g}",
            f"{r['fast_accum_on']:.9g}",
        ]
        for r in data["accumulation_probe"]
    ]
    k = data["accumulation_probe"][0]["k"]
    probe_headers = ["δ", f"exact 1 + {k - 1}δ", "emulator", "GPU, fast accumulation off", "GPU, fast accumulation on"]
    bits = probe_bits_needed(k)
    return (
        f"{markdown_table(headers, sweep)}\n\n{markdown_table(probe_headers, probe)}\n\nEvery partial sum of the probe "
        f"needs at most {bits} significant bits."
    )


def overflow_markdown(path: str | Path) -> str:
    """What D became past its largest value on the GPU, next to the saturating and the format's own rules."""
    data = load(path)
    rows = []
    for r in data["overflow"]:
        if not r["accepted"]:
            rows.append([f"{r['a']} × {r['b']} → {r['out']}", "refused", "", "", ""])
            continue
        for s, hw, sat, rules in zip(
            r["sums"], r["hardware"], r["emulator_saturating"], r["emulator_format_rules"], strict=True
        ):
            rows.append([f"{r['a']} × {r['b']} → {r['out']}", f"{s:g}", str(hw), str(sat), str(rules)])
    table = markdown_table(["combination", "exact D", "GPU", "saturating", "format rules"], rows)
    ints = [
        [
            str(r["k"]),
            str(r["exact"]),
            str(r.get("hardware", "refused")),
            str(r.get("emulator_wrap", "")),
            str(r.get("emulator_saturate", "")),
        ]
        for r in data["int32_overflow"]
    ]
    int_table = markdown_table(["K", "exact", "GPU (torch._int_mm)", "wrap (two's complement)", "saturate"], ints)
    return f"{table}\n\n{int_table}"


def scale_result_markdown(path: str | Path) -> str:
    """Whether ``scale_result`` was applied (D's norm halves at 0.5), ignored (ratio 1) or refused, per D type."""
    rows = [
        [
            r["out"],
            f"{r['norm_ratio']:.4g}" if r["accepted"] else "refused",
            "" if r["accepted"] else _code(_first_line(r["error"])),
        ]
        for r in load(path)["scale_result"]
    ]
    return markdown_table(["D", "‖D(scale_result=0.5)‖ / ‖D(scale_result=1)‖", "error"], rows)


def tf32_markdown(path: str | Path) -> str:
    """TF32 and FP32 matmul errors against FP64 for each recorded size."""
    rows = [
        [
            f"{r['n']}",
            f"{r['tf32_vs_exact']:.2e}",
            f"{r['fp32_vs_exact']:.2e}",
            f"{r['tf32_vs_exact'] / r['fp32_vs_exact']:.0f}×",
            f"{r['tf32_vs_nearest_even_inputs']:.1e}",
        ]
        for r in load(path)["tf32"]
    ]
    headers = ["n (n×n×n)", "TF32 vs FP64", "FP32 vs FP64", "TF32 / FP32", "TF32 vs inputs rounded to TF32 in float64"]
    return markdown_table(headers, rows)
