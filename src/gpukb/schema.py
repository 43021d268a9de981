"""Typed models for the project's data files and results files, and the one error message a bad file gets.

Every data file (errata, formats, type tables, GPU datasheets, catalogs) and every recorded results file is read
into pydantic models derived from :class:`StrictModel`: unknown keys, wrong types and missing fields are refused.
:func:`validate_entries` and :func:`validate_document` turn pydantic's errors into one ``ValueError`` whose message
names the file, the entry and the field, so a reader who edits a file by hand learns exactly what to fix.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

M = TypeVar("M", bound=BaseModel)


#: A count that must be positive (a size in elements or bytes, a dimension).
Size = Annotated[int, Field(gt=0)]
#: A finite rate or ratio that cannot be negative.
Rate = Annotated[float, Field(ge=0, allow_inf_nan=False)]
#: Any finite float.
Finite = Annotated[float, Field(allow_inf_nan=False)]


class StrictModel(BaseModel):
    """Base of every data and results model: unknown keys are errors, instances are immutable.

    ``strict=True`` keeps pydantic from coercing: ``"3"`` is not an int and ``1`` is not ``True``; a float field
    still accepts an int (JSON writes ``2.0`` as ``2`` in some writers).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _location(loc: Sequence[Any]) -> str:
    """``("gemm", 3, "dtype")`` → ``gemm[3].dtype``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def describe_errors(err: ValidationError, limit: int = 5) -> str:
    """pydantic's errors as ``field: message (got value)`` clauses, the first few of them."""
    clauses = []
    for item in err.errors(include_url=False)[:limit]:
        got = item.get("input")
        shown = "" if item["type"] == "missing" or isinstance(got, Mapping | list) else f" (got {got!r})"
        clauses.append(f"{_location(item['loc'])}: {item['msg']}{shown}")
    more = err.error_count() - limit
    return "; ".join(clauses) + (f"; and {more} more" if more > 0 else "")


def validate_document(model: type[M], data: Any, file: str, from_json: bool = False) -> M:
    """Validate a whole parsed file (a results file, say) against one model.

    Args:
        from_json: The data came from JSON: validate in pydantic's JSON mode, where a date may be an ISO string
            (types are still strict: ``"3"`` is not an int).

    Raises:
        ValueError: ``<file>: <field>: <what is wrong> (got <value>)``.
    """
    try:
        if from_json:
            return model.model_validate_json(json.dumps(data))
        return model.model_validate(data)
    except ValidationError as err:
        raise ValueError(f"{file}: {describe_errors(err)}") from None


def validate_entries(
    model: type[M],
    entries: Any,
    file: str,
    table: str,
    key: str | Callable[[Mapping], str] = "id",
) -> list[M]:
    """Validate the entries of one array of tables (``[[erratum]]``, ``[[format]]``, ...) and refuse duplicates.

    Args:
        model: The entry's model.
        entries: The parsed array (anything else is refused with a message).
        file: The file's name, for messages.
        table: The array's name in the file, for messages.
        key: The field (or a function of the raw entry) that must be unique and that names the entry in messages.

    Raises:
        ValueError: ``<file>: <table> entry <n> (<key>): <field>: <what is wrong>``, or a duplicate key.
    """
    if not isinstance(entries, list):
        raise ValueError(f"{file}: {table} must be an array of tables ([[{table}]]); got {type(entries).__name__}")

    def name_of(raw: Any) -> str:
        if callable(key):
            return key(raw)
        return str(raw.get(key, f"no {key}")) if isinstance(raw, Mapping) else "not a table"

    out: list[M] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(entries, start=1):
        name = name_of(raw)
        label = f"{file}: {table} entry {index} ({name})"
        try:
            entry = model.model_validate(raw)
        except ValidationError as err:
            raise ValueError(f"{label}: {describe_errors(err)}") from None
        if name in seen:
            raise ValueError(f"{label}: {key if isinstance(key, str) else 'key'} {name!r} repeats entry {seen[name]}")
        seen[name] = index
        out.append(entry)
    return out


def parse_toml(text: str, file: str, tables: Iterable[str]) -> dict[str, Any]:
    """Parse a TOML data file and refuse top-level keys other than ``tables``.

    Raises:
        ValueError: For a syntax error (with TOML's line and column) or an unknown top-level key.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"{file}: not valid TOML ({err})") from None
    allowed = list(tables)
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ValueError(f"{file}: unknown top-level keys {unknown}; this file holds {allowed}")
    return data
