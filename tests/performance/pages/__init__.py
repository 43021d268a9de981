"""The cell checks of the performance pages, one module per page (``test_<page>.py`` checks
``gpukb.performance.pages.<page>``); this package holds what several of them read: the committed sweeps and
datasheets, read raw, and how a printed cell compares with a value.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from collections.abc import Callable
from functools import cache
from typing import Any

from tests.helpers import ROOT, h100_ceilings_json

H100 = "performance/h100-sweep"


MARK = {"confirmed": "", "secondary": " †", "unconfirmed": " ?"}


DASH = "–"


@cache
def _raw(record_id: str) -> dict[str, Any]:
    """A committed record, read with json."""
    return json.loads((ROOT / "src" / "gpukb" / "data" / "results" / f"{record_id}.json").read_text("utf-8"))


@cache
def _sheet() -> dict[str, Any]:
    return tomllib.loads((ROOT / "src" / "gpukb" / "data" / "gpu_specs.toml").read_text("utf-8"))


def _figures(gpu_id: str) -> dict[str, dict[str, Any]]:
    """A GPU's datasheet figures by quantity, its ``base`` GPU's figures first."""
    entry = next(g for g in _sheet()["gpu"] if g["id"] == gpu_id)
    out = _figures(entry["base"]) if "base" in entry else {}
    out.update({f["quantity"]: f for f in _sheet()["figure"] if f["gpu"] == gpu_id})
    return out


def _sheet_id(device: str) -> str | None:
    found = [g["id"] for g in _sheet()["gpu"] if any(d.lower() in device.lower() for d in g["device_names"])]
    return found[0] if len(found) == 1 else None


def _dense(device: str, quantity: str) -> tuple[float, str] | None:
    """The dense datasheet value and status of a quantity for the GPU a record names, or None."""
    gpu = _sheet_id(device)
    figure = None if gpu is None else _figures(gpu).get(quantity)
    if figure is None:
        return None
    return figure["value"] / (2 if figure.get("sparsity") else 1), figure["status"]


PEAK_OF = {"fp32": "fp32", "tf32": "tf32_tensor", "fp16": "fp16_tensor", "bf16": "bf16_tensor", "fp8": "fp8_tensor"}


def _number(cell: str) -> float:
    return float(cell.replace(",", "").replace("%", "").replace("±", "").replace("×", ""))


def _rounds(cell: str, value: float, digits: int) -> bool:
    """Whether ``cell`` is ``value`` printed with ``digits`` decimals (a grouping comma allowed): exactly that many
    decimals, and a number within half of the last one's unit (the value's own rounding may differ in the last bit)."""
    decimals = re.search(r"\.(\d+)", cell)
    if (len(decimals.group(1)) if decimals else 0) != digits:
        return False
    return cell == f"{value:,.{digits}f}" or abs(_number(cell) - value) <= 0.5 * 10**-digits * (1 + 1e-9)


def _pct(cell: str, fraction: float) -> None:
    assert cell.endswith("%"), cell
    assert abs(_number(cell) - 100 * fraction) <= 0.5 + 1e-9, (cell, fraction)


def _tflops(m: int, n: int, k: int, ms: float) -> float:
    return 2 * m * n * k / (ms * 1e-3) / 1e12


def _gbps(nbytes: int, ms: float) -> float:
    return 2 * nbytes / (ms * 1e-3) / 1e9


def _record(kwargs: dict[str, Any]) -> str:
    args = kwargs.get("args", ())
    record = kwargs.get("record")
    if record is not None and not isinstance(record, str):  # a variant (below): the id of the record it changes
        return f"{kwargs['variant_of']} (changed)"
    return record or next((a for a in args if isinstance(a, str) and "/" in a), H100)


def _raw_of(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The raw record a render call read: a variant's changed JSON (``kwargs["raw"]``), else the committed file."""
    return kwargs["raw"] if "raw" in kwargs else _raw(_record(kwargs))


def variant(record_id: str, change: Callable[[dict[str, Any]], None]) -> tuple[Any, dict[str, Any]]:
    """A committed sweep changed as the committed records never are (a GPU the datasheet lacks, a refused case, a
    missing reading), to reach the pages' branches for such runs: ``change`` edits a copy of the raw JSON in place.
    Returns the record the page functions take (validated by the project's model) and the changed JSON the checks
    read, as ``(record, kwargs)`` for a check: ``check(page_function(record=record), kwargs)``."""
    from gpukb.performance.results import SweepRecord

    raw = copy.deepcopy(_raw(record_id))
    change(raw)
    record = SweepRecord.model_validate_json(json.dumps(raw))
    return record, {"record": record, "raw": raw, "variant_of": record_id}


def _ceilings(record_id: str, raw: dict[str, Any]) -> tuple[dict[str, float], float | None]:
    """The rate per type and the copy bandwidth a page shows for a sweep: the sweep's best, except that for the
    H100 sweep the copy, fp16 and bf16 ceilings are the medians of the ceilings run's rounds (read from its JSON)."""
    rates = {d: r["tflops"] for d, r in _best(raw).items()}
    if record_id != H100:
        return rates, _bandwidth(raw)
    quoted = h100_ceilings_json()
    rates.update(fp16=quoted["fp16"], bf16=quoted["bf16"])
    return rates, quoted["bandwidth"]


def _best(raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    best: dict[str, dict[str, Any]] = {}
    for r in raw["gemm"]:
        if r["tflops"] is not None and (r["dtype"] not in best or r["tflops"] > best[r["dtype"]]["tflops"]):
            best[r["dtype"]] = r
    return best


def _bandwidth(raw: dict[str, Any]) -> float | None:
    rates = [r["gbps"] for r in raw["copy"] if r["bytes"] >= 2**28]
    return max(rates) if rates else None
