"""Results files: one base model, one registry of kinds, one writer, one cached validating loader.

A results file is JSON holding ``kind`` (which model reads it), ``schema_version`` (of that kind), ``run`` (a
:class:`~gpukb.records.run.Run`) and the kind's own fields. Committed files live in the package
(``gpukb/data/results/<topic>/<name>.json``), so an installed wheel renders the same tables as a checkout;
``GPUKB_RESULTS_DIR`` points the loader at another folder. A file is named by its id, its path there without
``.json`` (``"gemm/fp8-h100"``); pages and code refer to records by id, never by a label.
"""

from __future__ import annotations

import importlib
import json
import os
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, TypeVar

from gpukb.records.run import Run
from gpukb.schema import StrictModel, validate_document

#: Environment variable naming a folder of results files to read instead of the package's own.
RESULTS_DIR_VARIABLE = "GPUKB_RESULTS_DIR"

# --8<-- [start:kinds]
#: Every results kind: its name (stored in each file) → ``module:Model``. A new kind is added here.
KINDS = {
    "bench.sweep": "gpukb.bench.results:SweepRecord",
    "formats.gpu-checks": "gpukb.formats.results:GpuChecks",
    "formats.codec-speed": "gpukb.formats.results:CodecSpeed",
    "gemm.fp8-hardware": "gpukb.gemm.results:Fp8Hardware",
    "gemm.ground-up": "gpukb.gemm.results:GroundUp",
    "kernels.triton-gemm": "gpukb.kernels.results:TritonGemm",
    "site.gpu-tests": "gpukb.site.gpu_tests:GpuTestRun",
    "site.snippet-runs": "gpukb.site.snippet_runs:SnippetRuns",
    "cuda.device": "gpukb.cuda.results:DeviceFacts",
    "cuda.occupancy-check": "gpukb.cuda.results:OccupancyCheck",
    "cuda.copy-width": "gpukb.cuda.results:CopyWidth",
    "cuda.transfers": "gpukb.cuda.results:Transfers",
    "cuda.kernels": "gpukb.cuda.results:KernelBench",
    "cuda.host-memory": "gpukb.cuda.results:HostMemory",
    "cuda.overlap": "gpukb.cuda.results:Overlap",
    "attention.flash-forward": "gpukb.attention.results:FlashForward",
    "attention.flash-training": "gpukb.attention.results:FlashTraining",
    "distributed.collectives": "gpukb.distributed.results:CollectiveBandwidth",
    "distributed.fsdp-training": "gpukb.distributed.results:FsdpTraining",
    "distributed.fsdp-dtypes": "gpukb.distributed.results:FsdpDtypes",
    "cudnn.conv-forward": "gpukb.cudnn.results:ConvForward",
    "kernels.gemm-tuning": "gpukb.kernels.tuning:GemmTuning",
    "kernels.triton-gemm-sweep": "gpukb.kernels.results:TritonGemmSweep",
}
# --8<-- [end:kinds]


class Record(StrictModel):
    """Base of every results kind. A subclass pins its kind and schema version as literal fields, e.g.
    ``kind: Literal["gemm.fp8-hardware"] = "gemm.fp8-hardware"`` and ``schema_version: Literal[1] = 1``, and adds
    its own fields. Bump the version whenever a field changes meaning, and re-record or convert the files."""

    kind: str
    schema_version: int
    run: Run

    @classmethod
    def kind_name(cls) -> str:
        """The kind this model reads (the default of its ``kind`` field)."""
        return cls.model_fields["kind"].default

    @classmethod
    def version(cls) -> int:
        """The schema version this model reads."""
        return cls.model_fields["schema_version"].default


R = TypeVar("R", bound=Record)


def model_for(kind: str) -> type[Record]:
    """The model of a results kind.

    Raises:
        ValueError: For a kind that is not in :data:`KINDS` (the message lists them).
    """
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"unknown results kind {kind!r}; kinds are {sorted(KINDS)}")
    module, name = KINDS[kind].split(":")
    return getattr(importlib.import_module(module), name)


def results_dir() -> Traversable:
    """The folder committed results are read from: ``$GPUKB_RESULTS_DIR`` if set, else the package's own."""
    configured = os.environ.get(RESULTS_DIR_VARIABLE)
    if configured:
        return Path(configured)
    return resources.files("gpukb.data").joinpath("results")


def _check_id(record_id: str) -> str:
    parts = record_id.split("/") if isinstance(record_id, str) else []
    if not parts or any(p in ("", ".", "..") or not p.replace("-", "").replace("_", "").isalnum() for p in parts):
        raise ValueError(
            f"a record id is a path like 'gemm/fp8-h100' (letters, digits, '-', '_' and '/'); got {record_id!r}"
        )
    return record_id


def record_ids() -> list[str]:
    """The ids of every committed results file, sorted."""
    found: list[str] = []

    def walk(folder: Traversable, prefix: str) -> None:
        for item in folder.iterdir():
            if item.is_dir():
                walk(item, f"{prefix}{item.name}/")
            elif item.name.endswith(".json"):
                found.append(prefix + item.name[: -len(".json")])

    root = results_dir()
    if root.is_dir():
        walk(root, "")
    return sorted(found)


def parse(data: Any, where: str, expect: type[R] | None = None) -> Record:
    """Validate parsed JSON as a results file of the kind it names (and, given ``expect``, of that kind).

    Raises:
        ValueError: Naming ``where`` and the field: an unknown kind, a kind other than expected, a schema version
            this gpukb does not read, a missing, unknown or mistyped field.
    """
    if not isinstance(data, dict):
        raise ValueError(f"{where}: a results file holds a JSON object; got {type(data).__name__}")
    kind = data.get("kind")
    try:
        model = model_for(kind)
    except ValueError as err:
        raise ValueError(f"{where}: kind: {err}") from None
    if expect is not None and model is not expect:
        raise ValueError(f"{where}: holds a {kind!r} record; expected {expect.kind_name()!r}")
    if data.get("schema_version") != model.version():
        raise ValueError(
            f"{where}: schema_version is {data.get('schema_version')!r}; this version of gpukb reads {kind} schema "
            f"{model.version()} (re-record the file or convert it)"
        )
    return validate_document(model, data, where, from_json=True)


def _read(path: Traversable, where: str, expect: type[R] | None) -> Record:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{where} does not exist; there are {record_ids()}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{where}: not JSON ({err})") from None
    return parse(data, where, expect)


@cache
def _load_cached(folder: str, record_id: str, stamp: float) -> Record:
    # Keyed by the folder and the file's modification time, so an edited or re-recorded file is read again.
    target = results_dir().joinpath(*f"{record_id}.json".split("/"))
    return _read(target, f"results file {record_id!r} (in {folder})", None)


def load(record_id: str, expect: type[R] | None = None) -> R:
    """A committed results file by id, validated (and cached until the file changes).

    Args:
        record_id: The file's path under the results folder without ``.json``, e.g. ``"gemm/fp8-h100"``.
        expect: The model the caller needs; a file of another kind is refused.

    Raises:
        FileNotFoundError: If there is no such file (the message lists the ids there are).
        ValueError: For a malformed id, or a file that is not JSON or does not fit its kind.
    """
    _check_id(record_id)
    root = results_dir()
    target = root.joinpath(*f"{record_id}.json".split("/"))
    try:
        stamp = Path(str(target)).stat().st_mtime
    except OSError:
        stamp = 0.0  # not a plain file (a zipped package): read once
    record = _load_cached(str(root), record_id, stamp)
    if expect is not None and not isinstance(record, expect):
        raise ValueError(f"results file {record_id!r} holds a {record.kind!r} record; expected {expect.kind_name()!r}")
    return record  # type: ignore[return-value]


def read(path: str | Path, expect: type[R] | None = None) -> R:
    """A results file anywhere on disk (a fresh run's output, say), validated like :func:`load`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no results file at {path}")
    return _read(path, str(path), expect)  # type: ignore[return-value]


def write(record: Record, path: str | Path) -> Path:
    """Validate a record and write it as JSON (one space of indent, keys in model order); returns the path.

    The record is validated again from its JSON form, so what is written is exactly what :func:`load` accepts.
    """
    path = Path(path)
    if record.kind not in KINDS:
        raise ValueError(f"{type(record).__name__} has kind {record.kind!r}, which is not registered in KINDS")
    text = record.model_dump_json(indent=1) + "\n"
    validate_document(type(record), json.loads(text), str(path), from_json=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def json_schemas() -> dict[str, dict]:
    """The JSON Schema of every results kind, by kind, for readers who validate their own files."""
    return {kind: model_for(kind).model_json_schema() for kind in sorted(KINDS)}
