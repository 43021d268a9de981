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
import tempfile
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, TypeVar

from gpukb import arguments, chapters
from gpukb.records.run import Run
from gpukb.schema import StrictModel, validate_document

#: Environment variable naming a folder of results files to read instead of the package's own.
RESULTS_DIR_VARIABLE = "GPUKB_RESULTS_DIR"

# --8<-- [start:kinds]
#: Every results kind: its name (stored in each file) → ``module:Model``, from the chapters' declarations.
KINDS = chapters.kinds()
# --8<-- [end:kinds]


#: The longest record id (characters); a longer one is refused before any file name is built from it.
MAX_ID_LENGTH = 200


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
    if isinstance(record_id, str) and len(record_id) > MAX_ID_LENGTH:
        raise ValueError(
            f"a record id has at most {MAX_ID_LENGTH} characters; got one of {len(record_id):,}: "
            f"{arguments.given(record_id)}"
        )
    parts = record_id.split("/") if isinstance(record_id, str) else []
    if not parts or any(p in ("", ".", "..") or not p.replace("-", "").replace("_", "").isalnum() for p in parts):
        raise ValueError(
            f"a record id is a path like 'gemm/fp8-h100' (letters, digits, '-', '_' and '/'); got {record_id!r}"
        )
    return record_id


def folder_for(kind: str) -> str:
    """The folder of the results folder that records of ``kind`` live in: its chapter's, the kind's prefix
    (``"cuda"`` for ``"cuda.device"``, ``"gemm"`` for ``"gemm.triton-gemm"``)."""
    return kind.split(".", 1)[0]


def _check_folder(record_id: str, kind: str, where: str) -> None:
    topic = record_id.split("/", 1)[0]
    if "/" not in record_id or topic != folder_for(kind):
        raise ValueError(
            f"{where}: a {kind!r} record belongs under {folder_for(kind)}/ in the results folder; its id "
            f"{record_id!r} puts it under {topic + '/' if '/' in record_id else 'the top'}"
        )


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
    except UnicodeDecodeError:
        raise ValueError(f"{where}: not a results file (JSON text in UTF-8)") from None
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
    _check_folder(record_id, record.kind, f"results file {record_id!r}")
    if expect is not None and not isinstance(record, expect):
        raise ValueError(f"results file {record_id!r} holds a {record.kind!r} record; expected {expect.kind_name()!r}")
    return record  # type: ignore[return-value]


def read(path: str | Path, expect: type[R] | None = None) -> R:
    """A results file anywhere on disk (a fresh run's output, say), validated like :func:`load`.

    Raises:
        FileNotFoundError: If there is no file at ``path``.
        ValueError: If something other than a regular file is there (a folder, a named pipe: refused before it
            is opened), or the file is not a valid record (of kind ``expect``, when given).
    """
    path = arguments.regular_file("results file", path)
    return _read(path, str(path), expect)  # type: ignore[return-value]


def _committed_id(target: Path, given: Path) -> str | None:
    """The id ``target`` (resolved) has in the committed results folder, or ``None`` if it lies outside it.

    Raises:
        ValueError: If ``given`` names a place in the results folder but resolves (through a link) outside it.
    """
    root = Path(str(results_dir())).resolve()
    for candidate in (target, Path(os.path.abspath(given))):
        if candidate.is_relative_to(root):
            if candidate is not target and not target.is_relative_to(root):
                raise ValueError(f"{given}: resolves to {target}, outside the results folder {root}")
            return candidate.relative_to(root).with_suffix("").as_posix()
    return None


def _checked_output(path: str | Path, replace: bool, kind: str | None) -> tuple[Path, Path]:
    """``(the path as given, where it resolves)`` once every check of :func:`write` that needs no record has passed
    (and, with ``kind``, the id's folder)."""
    given = arguments.path("path", path)
    if ".." in given.parts:
        raise ValueError(f"{given}: a results path may not climb out of its folder ('..'); give it directly")
    if given.suffix != ".json":
        raise ValueError(f"{given}: a results file is named <id>.json; got a {given.suffix or 'suffix-less'} name")
    _check_id(given.stem)
    if given.is_symlink():
        raise ValueError(f"{given}: is a link; write the file itself, not through a link")
    target = given.resolve()
    record_id = _committed_id(target, given)
    if record_id is not None:
        _check_id(record_id)
        if kind is not None:
            _check_folder(record_id, kind, str(given))
    if os.path.lexists(target):
        if not target.is_file():
            raise ValueError(f"{given}: something other than a regular file is there; not replaced")
        if not replace:
            raise ValueError(
                f"{given}: a results file is already there; recorded results are replaced only on purpose "
                f"(replace=True; the scripts and commands take --rerecord)"
            )
    return given, target


def check_output(path: str | Path, *, replace: bool = False) -> Path:
    """Check a results path the way :func:`write` will, before there is a record to write: a bench script calls
    it before it measures, so a bad output is refused at once instead of after the run. The record's kind (and
    the kind of a file it replaces) is checked when it is written.

    Raises:
        TypeError: For a path that is not a string or a ``Path``.
        ValueError: As :func:`write`, for a path it would refuse whatever the record.
    """
    return _checked_output(path, arguments.flag("replace", replace), None)[0]


def write(record: Record, path: str | Path, *, replace: bool = False) -> Path:
    """Validate a record and write it as JSON (one space of indent, keys in model order); returns the path.

    The record is validated again from its JSON form, so what is written is exactly what :func:`load` accepts.
    The file is written whole or not at all: into a temporary file in the same folder, then renamed over the
    target, so an interrupted run leaves an earlier file as it was.

    Args:
        record: The record; its kind must be registered in :data:`KINDS`.
        path: A ``.json`` file. Inside the results folder it must be where the record's id belongs (under
            :func:`folder_for` its kind); a path that climbs (``..``) or resolves out of its folder is refused.
        replace: Replace an existing file, which must hold a record of the same kind. Without it an existing
            file is never touched: recorded results are evidence, re-recorded only on purpose.

    Raises:
        TypeError: For a path that is not a string or a ``Path``, or a ``replace`` that is not a bool.
        ValueError: For an unregistered kind, a path that is not a bounded ``<name>.json`` or climbs out of its
            folder, an id under another kind's folder, an existing file without ``replace=True``, an existing
            file of another kind, or something other than a regular file in the way.
    """
    replace = arguments.flag("replace", replace)
    arguments.path("path", path)
    if record.kind not in KINDS:
        raise ValueError(f"{type(record).__name__} has kind {record.kind!r}, which is not registered in KINDS")
    given, target = _checked_output(path, replace, record.kind)
    if os.path.lexists(target):
        try:
            old = _read(target, str(given), None)
        except (ValueError, OSError, UnicodeDecodeError) as err:
            raise ValueError(f"{given}: the file there is not a results file, so it is not replaced ({err})") from None
        if old.kind != record.kind:
            raise ValueError(f"{given}: holds a {old.kind!r} record; a {record.kind!r} record cannot replace it")
    text = record.model_dump_json(indent=1) + "\n"
    validate_document(type(record), json.loads(text), str(given), from_json=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)  # atomic: a reader sees the old file or the new one, never a part
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return given


def rerecord_option(parser) -> None:
    """Add ``--rerecord`` to a script's ``argparse`` parser: the explicit consent :func:`write` needs to replace
    an existing results file (pass ``replace=args.rerecord``)."""
    parser.add_argument(
        "--rerecord",
        action="store_true",
        help="replace the results file if it exists (it must hold a record of the same kind)",
    )


def json_schemas() -> dict[str, dict]:
    """The JSON Schema of every results kind, by kind, for readers who validate their own files."""
    return {kind: model_for(kind).model_json_schema() for kind in sorted(KINDS)}
