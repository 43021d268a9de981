"""The JSON Schemas of the project's files, published with the site so readers can validate their own.

Every results kind (:data:`gpukb.records.KINDS`) gets the schema of a whole results file; every data file gets the
schema of one entry of its tables (the TOML arrays ``[[erratum]]``, ``[[format]]``, ...), or of the whole file
where one model reads it. The MkDocs hook adds them to the built site under ``schemas/``.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass

from gpukb import chapters, records


def data_files() -> list[tuple[str, str, str]]:
    """Data files (under ``gpukb/data/``), the table of theirs a schema describes ("" for the whole file), and the
    model that reads it, from the chapters' declarations."""
    return [(path, table, model) for path, spec in chapters.data_files().items() for table, model in spec.schemas]


@dataclass(frozen=True)
class Schema:
    """One published schema: its file name on the site, what it describes, and its JSON text."""

    name: str
    describes: str
    model: str
    text: str


def _model(path: str):
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def schemas() -> list[Schema]:
    """Every published schema, results kinds first, in a stable order."""
    out = []
    for kind, schema in records.json_schemas().items():
        text = json.dumps(schema, indent=1, sort_keys=True) + "\n"
        out.append(Schema(f"results-{kind}.json", f"a results file of kind `{kind}`", records.KINDS[kind], text))
    seen: set[str] = set()
    for file, table, model in data_files():
        name = f"data-{model.rsplit(':', 1)[1].lower()}.json"
        describes = f"an entry of `[[{table}]]` in `{file}`" if table else f"the whole of `{file}`"
        if name in seen:  # two files read by the same model share its schema
            out = [s if s.name != name else Schema(name, f"{s.describes}, {describes}", model, s.text) for s in out]
            continue
        seen.add(name)
        text = json.dumps(_model(model).model_json_schema(), indent=1, sort_keys=True) + "\n"
        out.append(Schema(name, describes, model, text))
    return out
