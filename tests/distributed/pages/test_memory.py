"""The memory page's tables checked: the training states and transients recomputed here."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from html import unescape as html_unescape
from typing import Any

import pytest

from gpukb.distributed import memory
from gpukb.distributed.model import ModelConfig
from gpukb.distributed.pages.memory import MEMORY_RECORDS, matching_runs
from tests.distributed.pages import _arg, _by_id, _data, _table
from tests.helpers import ROOT


def check_states(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = {r["scheme"].strip("`"): r for r in _table(markdown)}
    n, psi = 64, 7.5e9
    want = {
        "ddp": (2, 2, 12),
        "ddp_fp32": (4, 4, 8),
        "zero1": (2, 2, 12 / n),
        "zero2": (2, 2 / n, 12 / n),
        "zero3": (2 / n, 2 / n, 12 / n),
        "fsdp2": (4 / n, 4 / n, 8 / n),
    }
    assert set(rows) == set(want)
    for scheme, parts in want.items():
        row = rows[scheme]
        cells = [float(row[c]) for c in ("params B/param", "grads B/param", "optimizer B/param", "total B/param")]
        assert cells == pytest.approx([*parts, sum(parts)], rel=5e-3)
        assert float(row["GB per rank"]) == pytest.approx(sum(parts) * psi / 1e9, rel=5e-3)
    # the ZeRO paper's figure 1
    assert [rows[s]["GB per rank"] for s in ("ddp", "zero1", "zero2", "zero3")] == ["120", "31.4", "16.6", "1.88"]


def check_transients(markdown: str, kwargs: dict[str, Any]) -> None:
    table = _table(markdown)
    rows = {r["mode"]: r["bytes per parameter of the unit"] for r in table}
    assert rows == {"`FULL`": str(4 + 4 + 4), "`DEFAULT`": str(2 + 2 + 4), "`PURE`": str(2 + 2 + 2)}
    # Composer's modes under amp_bf16: "compute" is bfloat16, "none" the parameters' own float32; a reduce_dtype
    # left unset reduces in the gradients' dtype, the param_dtype
    own = {"compute": "bfloat16", "none": None, "float32": "float32"}
    for mode in _data()["composer_mode"]:
        (row,) = [r for r in table if r["mode"] == f"`{mode['mode']}`"]
        param = own[mode["param_dtype"]] or "float32"
        assert (row["param_dtype"], row["reduce_dtype"]) == (param, own[mode["reduce_dtype"]] or param)


def _calculator(html: str) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The form's fields (name → kind, label, default, options) and its data island, read from the HTML."""
    fields = {}
    for name, kind, body in re.findall(r'<div class="gpukb-calc-field gpukb-calc-(\w+)" data-field="(\w+)">(.*?)</div>',
                                       html):  # fmt: skip
        name, kind = kind, name
        options = re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', body)
        value = re.search(r'type="text" value="([^"]*)"', body)
        default = (
            next((v for v, chosen, _ in options if chosen), None) if kind == "select"
            else ("on" if " checked" in body else "") if kind == "checkbox"
            else value.group(1)
        )  # fmt: skip
        label = html_unescape(re.search(r"<label[^>]*>([^<]*)</label>", body).group(1))
        pairs = [(v, html_unescape(text)) for v, _, text in options]
        fields[name] = {"kind": kind, "label": label, "default": default, "options": pairs}
    island = re.search(r'<script type="application/json" class="gpukb-calc-data">(.*?)</script>', html).group(1)
    return fields, json.loads(island)


def check_memory_calculator(html: str, kwargs: dict[str, Any]) -> None:
    """The form carries every field docs/javascripts/calculators/memory.js reads, each labelled with the library's
    argument name (the messages name it), opening on the last record's measured configuration; its data island holds
    the library's schemes and FSDP2 modes and every memory record as its JSON file has it."""
    fields, data = _calculator(html)
    script = (ROOT / "docs/javascripts/calculators/memory.js").read_text(encoding="utf-8")
    read = set(re.findall(r'value\("(\w+)"\)', script)) | set(re.findall(r"raw\(boxes\.(\w+)\)", script))
    assert set(fields) == read == {"vocab", "seq", "hidden", "heads", "layers", "batch", "scheme", "world_size",
                                   "mixed_precision", "checkpointing"}  # fmt: skip
    for name, field in fields.items():
        assert field["label"].split(" (")[0] in (name, f"activation {name}"), field["label"]
    kinds = {name: field["kind"] for name, field in fields.items()}
    assert kinds == {**dict.fromkeys(read, "text"), "scheme": "select", "mixed_precision": "select",
                     "checkpointing": "checkbox"}  # fmt: skip
    assert [v for v, _ in fields["scheme"]["options"]] == data["schemes"] == list(memory.SCHEMES)
    for value, label in fields["scheme"]["options"]:
        assert label == f"{value}: {memory.SCHEMES[value]}"
    assert [v for v, _ in fields["mixed_precision"]["options"]] == ["", "FULL", "DEFAULT", "PURE"]
    assert data["fsdp2_activation_bytes"] == {"FULL": 4, "DEFAULT": 2, "PURE": 2}  # FULL computes in float32
    ids = _arg(kwargs, "record_ids", 0, MEMORY_RECORDS)
    raws = [_by_id(i) for i in ids]
    assert [r["id"] for r in data["records"]] == list(ids)
    for got, raw in zip(data["records"], raws, strict=True):
        assert (got["model"], got["batch"], got["world_size"]) == (raw["model"], raw["batch"], raw["world_size"])
        assert got["gpu"] == f"{raw['world_size']}× {raw['run']['gpu']['name']}"
        keys = ("name", "fsdp", "mixed_precision", "checkpointing", "autocast", "peak_bytes", "activation_bytes")
        assert got["runs"] == [{k: run[k] for k in keys} for run in raw["runs"]]
    last = raws[-1]
    defaults = {name: field["default"] for name, field in fields.items()}
    assert defaults == {**{k: str(v) for k, v in last["model"].items()}, "batch": str(last["batch"]),
                        "world_size": str(last["world_size"]), "scheme": "fsdp2", "mixed_precision": "DEFAULT",
                        "checkpointing": ""}  # fmt: skip
    assert any(r["fsdp"] and r["mixed_precision"] == "DEFAULT" and r["checkpointing"] == "none" for r in last["runs"])


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "states_markdown": check_states,
    "transients_markdown": check_transients,
    "memory_calculator": check_memory_calculator,
}


@pytest.mark.parametrize("record_id", MEMORY_RECORDS)
def test_matching_runs_are_the_records_runs_of_that_configuration(record_id: str) -> None:
    """Every run of a memory record (none has autocast) is found from its own configuration, and only there: FSDP2
    by its mode, plain or DDP float32 training as ``ddp_fp32``; another batch, world size or model finds nothing."""
    raw = _by_id(record_id)
    config = ModelConfig(**raw["model"])
    for run in raw["runs"]:
        scheme, mode = ("fsdp2", run["mixed_precision"]) if run["fsdp"] else ("ddp_fp32", None)
        ckpt = run["checkpointing"] != "none"
        found = matching_runs(config, raw["batch"], scheme, raw["world_size"], mode, ckpt)
        same = [r for r in raw["runs"] if r["fsdp"] == run["fsdp"] and r["mixed_precision"] == run["mixed_precision"]]
        want = [
            (record_id, r["name"]) for r in same if r["autocast"] is None and (r["checkpointing"] != "none") == ckpt
        ]
        assert [(rid, r.name) for rid, r in found] == want
        assert (run["name"] in [r.name for _, r in found]) is (run["autocast"] is None)
    other = ModelConfig(**{**raw["model"], "layers": raw["model"]["layers"] + 1})
    assert matching_runs(other, raw["batch"], "fsdp2", raw["world_size"], "DEFAULT", False) == []
    assert matching_runs(config, raw["batch"] + 1, "fsdp2", raw["world_size"], "DEFAULT", False) == []
    assert matching_runs(config, raw["batch"], "zero3", raw["world_size"], None, False) == []
