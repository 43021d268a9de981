"""Results files: one JSON file per run of ``gpukb bench``, validated against a fixed schema.

A file holds ``schema`` (its version), ``meta`` (the GPU, software versions, clocks, date and the exact command)
and one list of records per suite that ran (``gemm``, ``copy``, ``host_device``, ``attention``, ``mistakes``,
``kernels``). Every record keeps its timings as a summary (median, quartiles, extremes, count, in
milliseconds) next to the rate derived from the median. The site renders tables and figures from committed
files under ``bench/results/``; :func:`validate` refuses a malformed file with a message that names the field,
what it holds and what is allowed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpukb.bench.stats import SUMMARY_FIELDS, Summary

SCHEMA_VERSION = 1

#: Where committed results live in a checkout of the repository.
RESULTS_DIR = Path(__file__).resolve().parents[3] / "bench" / "results"

GEMM_DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")
GEMM_SWEEPS = ("square", "grid", "alignment")
COPY_METHODS = ("memcpy", "elementwise")
COPY_DTYPES = ("uint8", "int16", "int32", "int64")
DIRECTIONS = ("h2d", "d2h")
HOST_MEMORY = ("pageable", "pinned")
ATTENTION_BACKENDS = ("flash", "efficient", "cudnn", "math")
ATTENTION_DTYPES = ("bf16", "fp16")
MISTAKES = ("sync", "cold_start", "zeros", "one_run", "idle_gpu", "l2_cache")
RATE_UNITS = ("TFLOP/s", "GB/s")
MODES = ("quick", "full")
SUITES = ("mistakes", "gemm", "copy", "host_device", "attention", "kernels")


@dataclass(frozen=True)
class Field:
    """What one field of a record may hold.

    Attributes:
        kind: ``str``, ``int``, ``number``, ``bool``, ``summary``, ``numbers`` (a list of numbers), ``strings``
            or ``mapping``.
        choices: The allowed values, where the field is an enumeration.
        nullable: Whether ``null`` is allowed.
        optional: Whether the field may be left out.
    """

    kind: str
    choices: tuple[Any, ...] | None = None
    nullable: bool = False
    optional: bool = False

    def describe(self) -> str:
        """The field's rule in words, for error messages."""
        text = f"one of {list(self.choices)}" if self.choices else _KIND_WORDS[self.kind]
        return text + (" or null" if self.nullable else "")


_KIND_WORDS = {
    "str": "a string",
    "int": "a non-negative integer",
    "number": "a finite number",
    "bool": "true or false",
    "summary": f"a summary object with {list(SUMMARY_FIELDS)}",
    "numbers": "a list of finite numbers",
    "strings": "a list of strings",
    "mapping": "an object",
}

_SIZE = Field("int")
META = {
    "gpu": Field("str"),
    "sm_count": _SIZE,
    "compute_capability": Field("str"),
    "memory_bytes": _SIZE,
    "l2_bytes": _SIZE,
    "driver": Field("str", nullable=True),
    "cuda": Field("str", nullable=True),
    "torch": Field("str"),
    "triton": Field("str", nullable=True),
    "python": Field("str"),
    "clocks": Field("mapping", nullable=True),
    "date": Field("str"),
    "command": Field("str"),
    "mode": Field("str", MODES),
    "suites": Field("strings"),
    "duration_s": Field("number"),
    "notes": Field("strings"),
}

SECTIONS: dict[str, dict[str, Field]] = {
    "gemm": {
        "dtype": Field("str", GEMM_DTYPES),
        "sweep": Field("str", GEMM_SWEEPS),
        "m": _SIZE,
        "n": _SIZE,
        "k": _SIZE,
        "ms": Field("summary", nullable=True),
        "tflops": Field("number", nullable=True),
        "rel_error": Field("number", nullable=True, optional=True),
        "error": Field("str", nullable=True, optional=True),
    },
    "copy": {
        "method": Field("str", COPY_METHODS),
        "dtype": Field("str", COPY_DTYPES),
        "bytes": _SIZE,
        "l2_flushed": Field("bool"),
        "ms": Field("summary"),
        "gbps": Field("number"),
    },
    "host_device": {
        "direction": Field("str", DIRECTIONS),
        "memory": Field("str", HOST_MEMORY),
        "bytes": _SIZE,
        "ms": Field("summary"),
        "gbps": Field("number"),
    },
    "attention": {
        "backend": Field("str", ATTENTION_BACKENDS),
        "dtype": Field("str", ATTENTION_DTYPES),
        "batch": _SIZE,
        "heads": _SIZE,
        "seq": _SIZE,
        "head_dim": _SIZE,
        "causal": Field("bool"),
        "ms": Field("summary", nullable=True),
        "tflops": Field("number", nullable=True),
        "error": Field("str", nullable=True, optional=True),
    },
    "mistakes": {
        "mistake": Field("str", MISTAKES),
        "variant": Field("str"),
        "ms": Field("summary"),
        "rate": Field("number"),
        "unit": Field("str", RATE_UNITS),
        "samples": Field("numbers", nullable=True, optional=True),
    },
    "kernels": {
        "name": Field("str"),
        "peer": Field("str"),
        "case": Field("str"),
        "kernel_ms": Field("summary"),
        "peer_ms": Field("summary"),
        "ratio": Field("number"),
        "flops": Field("int", nullable=True),
        "bytes": Field("int", nullable=True),
    },
}


def _check_value(value: Any, rule: Field, where: str) -> None:
    if value is None:
        if not rule.nullable:
            raise ValueError(f"{where} is null; expected {rule.describe()}")
        return
    kind = rule.kind
    ok = {
        "str": lambda v: isinstance(v, str),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "number": lambda v: _is_number(v),
        "bool": lambda v: isinstance(v, bool),
        "summary": lambda v: isinstance(v, Mapping),
        "numbers": lambda v: isinstance(v, list) and all(_is_number(x) for x in v),
        "strings": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
        "mapping": lambda v: isinstance(v, Mapping),
    }[kind](value)
    if not ok:
        raise ValueError(f"{where} is {value!r}; expected {rule.describe()}")
    if rule.choices is not None and value not in rule.choices:
        raise ValueError(f"{where} is {value!r}; allowed: {list(rule.choices)}")
    if kind == "summary":
        unknown = sorted(set(value) - set(SUMMARY_FIELDS))
        if unknown:
            raise ValueError(f"{where} has unknown fields {unknown}; a summary has {list(SUMMARY_FIELDS)}")
        for name in SUMMARY_FIELDS:
            inner = Field("int") if name == "n" else Field("number")
            if name not in value:
                raise ValueError(f"{where}.{name} is missing; expected {inner.describe()}")
            _check_value(value[name], inner, f"{where}.{name}")
        try:
            Summary.from_dict(value)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_record(record: Any, fields: Mapping[str, Field], where: str) -> None:
    if not isinstance(record, Mapping):
        raise ValueError(f"{where} is {type(record).__name__}; expected an object with fields {list(fields)}")
    unknown = sorted(set(record) - set(fields))
    if unknown:
        raise ValueError(f"{where} has unknown fields {unknown}; allowed fields are {list(fields)}")
    for name, rule in fields.items():
        if name not in record:
            if rule.optional:
                continue
            raise ValueError(f"{where}.{name} is missing; expected {rule.describe()}")
        _check_value(record[name], rule, f"{where}.{name}")


def validate(data: Any) -> dict:
    """Check a parsed results file against the schema and return it.

    Raises:
        ValueError: For anything that does not fit: a missing, unknown or mistyped field, a value outside its
            allowed set, a wrong schema version. The message names the field (``gemm[3].dtype``), what it
            holds and what is allowed.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"a results file holds a JSON object; got {type(data).__name__}")
    allowed = ["schema", "meta", *SECTIONS]
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ValueError(f"results file has unknown top-level fields {unknown}; allowed: {allowed}")
    if data.get("schema") != SCHEMA_VERSION:
        raise ValueError(f"schema is {data.get('schema')!r}; this version of gpukb reads schema {SCHEMA_VERSION}")
    if "meta" not in data:
        raise ValueError("meta is missing; a results file names its GPU, software, date and command in meta")
    _check_record(data["meta"], META, "meta")
    for suite in data["meta"]["suites"]:
        if suite not in SUITES:
            raise ValueError(f"meta.suites holds {suite!r}; allowed: {list(SUITES)}")
    for section, fields in SECTIONS.items():
        records = data.get(section, [])
        if not isinstance(records, list):
            raise ValueError(f"{section} is {type(records).__name__}; expected a list of records")
        for index, record in enumerate(records):
            _check_record(record, fields, f"{section}[{index}]")
    return dict(data)


def load_results(path: str | Path) -> dict:
    """Read and validate a results file.

    Raises:
        FileNotFoundError: If there is no such file.
        ValueError: If it is not JSON or does not fit the schema; the message starts with the path.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not JSON ({err})") from None
    try:
        return validate(data)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def committed(name: str) -> Path:
    """The path of a committed results file, by its name under ``bench/results/``.

    Raises:
        FileNotFoundError: If there is none of that name; the message lists the files there are.
    """
    path = RESULTS_DIR / name
    if not path.is_file():
        have = sorted(p.name for p in RESULTS_DIR.glob("*.json")) if RESULTS_DIR.is_dir() else []
        raise FileNotFoundError(f"no results file {name!r} in {RESULTS_DIR}; there are {have}")
    return path


def save_results(data: Mapping, path: str | Path) -> Path:
    """Validate and write a results file (JSON, one space of indent); returns the path."""
    validate(data)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return path


def file_name(gpu: str, date: str) -> str:
    """A results file's conventional name: the GPU's name as a slug and the day, e.g.
    ``nvidia-h100-80gb-hbm3-2026-11-22.json``."""
    slug = re.sub(r"[^a-z0-9]+", "-", gpu.lower()).strip("-")
    if not slug or not re.match(r"\d{4}-\d{2}-\d{2}", date):
        raise ValueError(f"need a GPU name and an ISO date; got {gpu!r}, {date!r}")
    return f"{slug}-{date[:10]}.json"
