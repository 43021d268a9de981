"""The options page's tables checked against the data file read with ``tomllib`` and torch's own signatures."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.distributed.pages import _data, _record, _table
from tests.helpers import ROOT


def _sources() -> dict[str, str]:
    """Each source's cell, written out from the data file: the file in the repository, its version, the link."""
    return {s["id"]: f"[{s['path'] + ' ' if s['path'] else ''}({s['version']})]({s['url']})" for s in _data()["source"]}


def _text(value: str) -> str:
    """A data-file sentence as a table cell: one line, pipes escaped."""
    return " ".join(value.replace("|", "\\|").split())


def check_composer_modes(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    assert [r["source"] for r in rows] == [_sources()[m["source"]] for m in _data()["composer_mode"]]
    # composer/distributed/mosaic_parallelism.py v0.32.1 under amp_bf16
    want = {"FULL": (None, None, None), "DEFAULT": ("bfloat16", "float32", "bfloat16"), "PURE": ("bfloat16",) * 3}
    raw = {m["mode"]: m for m in _data()["composer_mode"]}
    assert [r["mixed_precision"] for r in rows] == ["`FULL`", "`DEFAULT`", "`PURE`"]
    for row in rows:
        mode = row["mixed_precision"].strip("`")
        for column, dtype in zip(("param_dtype", "reduce_dtype", "buffer_dtype"), want[mode], strict=True):
            written, _, resolved = row[column].partition(" → ")
            assert written == raw[mode][column]
            assert resolved == (dtype or ("buffer dtype" if column == "buffer_dtype" else "parameter dtype"))
        policy = row["FSDP2 policy (Composer)"]
        p, r = (f"torch.{d}" if d else "None" for d in want[mode][:2])
        assert policy == f"`MixedPrecisionPolicy(param_dtype={p}, reduce_dtype={r})`"


def check_composer_keys(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _data()["composer_key"]
    assert [r["key"] for r in rows] == [f"`{k['key']}`" for k in raw]
    assert [r["default"] for r in rows] == [f"`{k['default']}`" for k in raw]
    assert [r["what it does"] for r in rows] == [_text(k["effect"]) for k in raw]
    assert [r["source"] for r in rows] == [_sources()[k["source"]] for k in raw]
    defaults = {r["key"]: r["default"] for r in rows}
    # composer/utils/parallelism.py v0.32.1 FSDPConfig
    assert defaults["`activation_checkpointing_reentrant`"] == "`true`"
    assert defaults["`activation_checkpointing`"] == "`false`"
    assert defaults["`mixed_precision`"] == "`DEFAULT`"


def check_fsdp_map(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _data()["fsdp_map"]
    assert [(r["FSDP1"], r["FSDP2"]) for r in rows] == [(m["fsdp1"], m["fsdp2"]) for m in raw]
    assert [(r["note"], r["source"]) for r in rows] == [(_text(m["note"]), _sources()[m["source"]]) for m in raw]
    assert {"sharding_strategy": "reshard_after_forward"}.items() <= {r["FSDP1"]: r["FSDP2"] for r in rows}.items()


def check_mp_fields(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _data()["mp_field"]
    assert [(r["class"], r["field"], r["default"]) for r in rows] == [
        (f["api"], f"`{f['field']}`", f"`{f['default']}`") for f in raw
    ]
    assert [(r["meaning"], r["source"]) for r in rows] == [(_text(f["meaning"]), _sources()[f["source"]]) for f in raw]
    fsdp2 = {r["field"] for r in rows if r["class"].startswith("FSDP2")}
    assert "`buffer_dtype`" not in fsdp2
    assert "`output_dtype`" in fsdp2


def check_checkpoint_default(markdown: str, kwargs: dict[str, Any]) -> None:
    import torch

    rows = _table(markdown)
    assert rows[0]["torch"] == torch.__version__
    for row in rows:
        assert row["runs reentrant"] == "yes"
        assert row["category"] == "UserWarning"
        assert row["text"].startswith("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly")
    path = ROOT / "src/gpukb/data/results/distributed/fsdp-single-gpu.json"
    if path.is_file():
        gpu = _record("fsdp-single-gpu")["checkpoint_warning"]
        assert rows[1]["torch"] == gpu["torch"]
        assert rows[1]["text"] == " ".join(gpu["message"].split())


def check_fully_shard_signature(markdown: str, kwargs: dict[str, Any]) -> None:
    """The installed torch's version, ``fully_shard``'s positional and keyword-only parameters in order, and every
    ``set_`` method of ``FSDPModule``, as ``inspect`` and ``dir`` give them here."""
    import inspect

    import torch
    from torch.distributed.fsdp import FSDPModule, fully_shard

    params = list(inspect.signature(fully_shard).parameters.values())
    first = [p.name for p in params if p.kind is not p.KEYWORD_ONLY]
    keywords = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
    assert first == ["module"]
    found = re.fullmatch(r"In torch (\S+): `fully_shard\((.*), \*, (.*)\)`; the module it returns is an `FSDPModule` "
                         r"with (.*)\.\n", markdown)  # fmt: skip
    assert found, markdown
    version, positional, keyword, setters = found.groups()
    assert version == torch.__version__.split("+")[0]
    assert positional.split(", ") == first
    assert keyword.split(", ") == keywords
    assert setters.split(", ") == [f"`{m}`" for m in sorted(dir(FSDPModule)) if m.startswith("set_")]
    assert "`set_requires_gradient_sync`" in setters


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "fully_shard_signature": check_fully_shard_signature,
    "composer_modes_markdown": check_composer_modes,
    "composer_keys_markdown": check_composer_keys,
    "fsdp_map_markdown": check_fsdp_map,
    "mp_fields_markdown": check_mp_fields,
    "checkpoint_default_markdown": check_checkpoint_default,
}
