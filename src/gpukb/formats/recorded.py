"""Results recorded on real hardware for the formats chapter, rendered by its pages.

``bench/formats_gpu.py`` writes the GPU checks (TF32 rounding, CUDA casts) and ``bench/formats_codec_speed.py``
the CPU timing of the vectorized codec; both files are committed under ``bench/results/``.
"""

from __future__ import annotations

import json
from pathlib import Path

from gpukb.tables import markdown_table

_GPU_KEYS = {"meta", "tf32", "casts", "e4m3_overflow"}
_SPEED_KEYS = {"meta", "rows"}


def load(path: str | Path, kind: str) -> dict:
    """Read a results file and check it has the parts its pages use.

    Args:
        path: The JSON file.
        kind: ``"gpu"`` (from ``bench/formats_gpu.py``) or ``"speed"`` (from ``bench/formats_codec_speed.py``).

    Raises:
        ValueError: For an unknown kind, or a file that lacks a required part (naming what is missing).
    """
    required = {"gpu": _GPU_KEYS, "speed": _SPEED_KEYS}.get(kind)
    if required is None:
        raise ValueError(f"unknown results kind {kind!r}; choose 'gpu' or 'speed'")
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    missing = sorted(required - set(data))
    if missing:
        raise ValueError(f"{path}: not a {kind} results file, missing {missing}")
    return data


def _versions(meta: dict) -> str:
    env = meta["environment"]
    libraries = ", ".join(f"{k} {v}" for k, v in env["libraries"].items() if v and k in ("torch", "numpy", "ml_dtypes"))
    where = meta.get("gpu") or meta.get("machine", "CPU")
    driver = f", driver {meta['driver']}" if meta.get("driver") else ""
    return f"Measured on {where}{driver}, Python {env['python']}, {libraries}, on {meta['date']}."


def tf32_markdown(path: str | Path) -> str:
    """The TF32 check as a table of relative errors, with the hardware and versions it came from."""
    data = load(path, "gpu")
    t = data["tf32"]
    rows = [
        [
            "TF32 matmul vs inputs rounded to TF32 (nearest-even), product in float64",
            f"{t['tf32_vs_nearest_even_inputs']:.2e}",
        ],
        ["TF32 matmul vs inputs truncated to TF32, product in float64", f"{t['tf32_vs_truncated_inputs']:.2e}"],
        ["TF32 matmul vs exact product of the FP32 inputs", f"{t['tf32_vs_exact']:.2e}"],
        ["FP32 matmul (TF32 off) vs exact product", f"{t['fp32_vs_exact']:.2e}"],
    ]
    table = markdown_table(["comparison", "relative error (Frobenius)"], rows)
    return f"{table}\n\n{t['n']}×{t['n']} matrices, {t['inputs']} inputs. {_versions(data['meta'])}"


def cuda_casts_markdown(path: str | Path) -> str:
    """How torch's CUDA casts compared with the format rules, per format, and the E4M3 overflow probe."""
    data = load(path, "gpu")
    rows = [
        [c["format"], c["inputs"], c["cuda_matches_rules"], c["cuda_matches_saturating"], c["cuda_matches_cpu"]]
        for c in data["casts"]
    ]
    table = markdown_table(["format", "inputs", "CUDA = format rules", "CUDA = saturating rules", "CUDA = CPU"], rows)
    probe = data["e4m3_overflow"]
    probe_rows = [[value, probe["cuda"][value], probe["cpu"][value]] for value in probe["cuda"]]
    probe_table = markdown_table(["float32 input", "E4M3 on CUDA", "E4M3 on CPU"], probe_rows)
    return f"{table}\n\n{probe_table}\n\n{_versions(data['meta'])}"


def speed_markdown(path: str | Path) -> str:
    """The codec timing as a table: gpukb's numpy code against ml_dtypes' C++ casts."""
    data = load(path, "speed")
    rows = [
        [
            r["format"],
            f"{r['gpukb_encode_s'] * 1e3:.1f}",
            f"{r['ml_dtypes_encode_s'] * 1e3:.1f}",
            f"{r['gpukb_decode_s'] * 1e3:.1f}",
            f"{r['ml_dtypes_decode_s'] * 1e3:.1f}",
            f"{r['round_trip_ratio']:.1f}×",
        ]
        for r in data["rows"]
    ]
    headers = ["format", "encode, gpukb (ms)", "encode, ml_dtypes (ms)", "decode, gpukb (ms)", "decode, ml_dtypes (ms)",
               "round trip, gpukb / ml_dtypes"]  # fmt: skip
    n = data["rows"][0]["n"] if data["rows"] else 0
    meta = data["meta"]
    return (
        f"{markdown_table(headers, rows)}\n\n{n:,} float32 values, medians of 5 runs after a warm-up, one CPU core "
        f"({meta['cpus']} present). {_versions(meta)} Command: `{meta['command']}`."
    )
