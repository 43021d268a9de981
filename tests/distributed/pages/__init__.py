"""The cell checks of the distributed pages, one module per page (``test_<page>.py`` checks
``gpukb.distributed.pages.<page>``); this package checks the tables the one-GPU and two-GPU pages share
(``CHECKS`` for :mod:`gpukb.distributed.pages`) and holds what several check modules read: the committed records,
read raw with ``json``.
"""

from __future__ import annotations

import json
import re
import statistics
import tomllib
from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers import ROOT, markdown_tables

GIB = 2**30


def _data() -> dict[str, Any]:
    return tomllib.loads((ROOT / "src/gpukb/data/distributed/fsdp.toml").read_text(encoding="utf-8"))


def _record(name: str) -> dict[str, Any]:
    return json.loads((ROOT / f"src/gpukb/data/results/distributed/{name}.json").read_text(encoding="utf-8"))


def _table(markdown: str, index: int = 0) -> list[dict[str, str]]:
    tables = markdown_tables(markdown)
    assert tables, "no table rendered"
    return tables[index]


def _arg(kwargs: dict[str, Any], name: str, index: int, default: Any = None) -> Any:
    """A page call's argument, passed by name or by position (``kwargs["args"]``)."""
    if name in kwargs:
        return kwargs[name]
    args = kwargs.get("args") or ()
    return args[index] if len(args) > index else default


def _by_id(record_id: str) -> dict[str, Any]:
    return _record(record_id.removeprefix("distributed/"))


def _runs(name: str = "fsdp-single-gpu") -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in _record(name)["runs"]}


def _config(run: dict[str, Any]) -> tuple[Any, ...]:
    return run["fsdp"], run["mixed_precision"], run["checkpointing"], run["autocast"]


def check_throughput(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _by_id(_arg(kwargs, "record_id", 0, "distributed/fsdp-single-gpu"))
    one_gpu = _arg(kwargs, "one_gpu_id", 1)
    runs = {r["name"]: r for r in raw["runs"]}
    assert [r["configuration"] for r in rows] == list(runs)
    ref = statistics.median(runs["FSDP2 DEFAULT / checkpointing none"]["tokens_per_s"])
    single = {_config(r): r for r in _by_id(one_gpu)["runs"]} if one_gpu else {}
    for row in rows:
        run = runs[row["configuration"]]
        med = statistics.median(run["tokens_per_s"])
        assert int(row["tokens/s (median)"].replace(",", "")) == round(med)
        low, high = (int(x.replace(",", "")) for x in row["min – max of repeats"].split(" – "))
        assert (low, high) == (round(min(run["tokens_per_s"])), round(max(run["tokens_per_s"])))
        if one_gpu:
            alone = statistics.median(single[_config(run)]["tokens_per_s"])
            spread = (max(run["tokens_per_s"]) - min(run["tokens_per_s"])) / med
            assert float(row["spread"].removesuffix("%")) == pytest.approx(100 * spread, abs=0.051)
            assert int(row["one GPU, tokens/s (median)"].replace(",", "")) == round(alone)
            assert float(row["× one GPU"]) == pytest.approx(med / alone, abs=0.006)
            assert "vs FSDP2 DEFAULT" not in row
        else:
            assert float(row["vs FSDP2 DEFAULT"]) == pytest.approx(med / ref, abs=0.006)
            assert float(row["last loss"]) == pytest.approx(run["loss_last"], abs=6e-4)
            assert "× one GPU" not in row
    assert f"world size {raw['world_size']}." in markdown
    assert f"batch {raw['batch']} × {raw['model']['seq']} tokens" in markdown
    _check_throughput_intro(markdown.split("\n\n", 1)[0], raw, _by_id(one_gpu) if one_gpu else None)
    assert "NVIDIA H100 80GB HBM3" in markdown
    assert "torch 2.11.0+cu130" in markdown


def _check_throughput_intro(intro: str, raw: dict[str, Any], alone: dict[str, Any] | None) -> None:
    """The sentence above the table: the model and the run's shape from the record, "per rank" and how tokens are
    counted only on several ranks, and with a one-GPU record the number of repeats behind its medians."""
    m, n = raw["model"], raw["world_size"]
    repeats = len(next(r for r in raw["runs"] if r["name"] == "FSDP2 DEFAULT / checkpointing none")["tokens_per_s"])
    assert intro.startswith(
        f"{raw['parameters'] / 1e6:.0f}M parameters ({m['layers']} blocks, width {m['hidden']}, {m['heads']} heads, "
        f"vocabulary {m['vocab']}), batch {raw['batch']} × {m['seq']} tokens{' per rank' if n > 1 else ''}, "
        f"{repeats} timed repeats of {raw['steps']} steps after {raw['warmup']} warm-up steps, world size {n}."
    )
    several = " Tokens/s counts the tokens of every rank; each repeat lasts as long as its slowest rank."
    counts = sorted({len(r["tokens_per_s"]) for r in alone["runs"]}) if alone else []
    single = f" The one-GPU medians are of {' or '.join(map(str, counts))} repeats." if alone else ""
    assert intro.endswith(f"world size {n}.{several if n > 1 else ''}{single}")


def _predicted(raw: dict[str, Any], run: dict[str, Any]) -> tuple[int, float]:
    """What one forward keeps and the peak per GPU, from the memory model written out here: 16 bytes of states per
    parameter, divided over the ranks under FSDP2."""
    m = raw["model"]
    b, s, h, a, layers, v = raw["batch"], m["seq"], m["hidden"], m["heads"], m["layers"], m["vocab"]
    e = 2 if run["fsdp"] and run["mixed_precision"] != "FULL" else 4
    block = e * (16 * b * s * h + a * b * s * s) + 16 * b * s
    ckpt = run["checkpointing"] != "none"
    kept = layers * (e * b * s * h if ckpt else block) + 2 * b * s * h * e + 8 * b * s + 4 * b * s * v + 8 * (b * s + s)
    states = 16 * raw["parameters"] / (raw["world_size"] if run["fsdp"] else 1)
    return kept, states + kept + (block if ckpt else 0)


def check_memory(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _by_id(_arg(kwargs, "record_id", 0, "distributed/fsdp-single-gpu"))
    one_gpu = _arg(kwargs, "one_gpu_id", 1)
    runs = {r["name"]: r for r in raw["runs"]}
    assert [r["configuration"] for r in rows] == [n for n, r in runs.items() if r["autocast"] is None]
    alone = _by_id(one_gpu) if one_gpu else None
    single = {_config(r): r for r in alone["runs"]} if alone else {}
    for row in rows:
        run = runs[row["configuration"]]
        kept, peak = _predicted(raw, run)
        assert float(row["forward keeps, predicted (GiB)"]) == pytest.approx(kept / GIB, abs=6e-4)
        assert float(row["forward keeps, measured (GiB)"]) == pytest.approx(run["activation_bytes"] / GIB, abs=6e-4)
        assert float(row["peak, predicted (GiB)"]) == pytest.approx(peak / GIB, abs=6e-3)
        assert float(row["peak, measured (GiB)"]) == pytest.approx(run["peak_bytes"] / GIB, abs=6e-3)
        assert float(row["not predicted (GiB)"]) == pytest.approx((run["peak_bytes"] - peak) / GIB, abs=6e-3)
        if alone:
            one = single[_config(run)]
            saved = _predicted(alone, one)[1] - peak
            assert float(row["saved vs one GPU, predicted (GiB)"]) == pytest.approx(saved / GIB, abs=6e-4)
            measured = one["peak_bytes"] - run["peak_bytes"]
            assert float(row["saved vs one GPU, measured (GiB)"]) == pytest.approx(measured / GIB, abs=6e-4)
        else:
            assert "saved vs one GPU, measured (GiB)" not in row


def check_interleaved(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _by_id(_arg(kwargs, "record_id", 0, "distributed/fsdp-interleaved"))
    runs = {r["name"]: r for r in raw["runs"]}
    (reference,) = [r for r in runs.values() if not r["fsdp"]]
    label = "plain" if raw["world_size"] == 1 else "DDP"
    assert reference["name"].startswith(f"{label} / ")
    assert [r["configuration"] for r in rows] == list(runs)
    for row in rows:
        run = runs[row["configuration"]]
        for i, t in enumerate(run["tokens_per_s"]):
            assert int(row[f"round {i + 1} (tokens/s)"].replace(",", "")) == round(t)
        assert f"round {len(run['tokens_per_s']) + 1} (tokens/s)" not in row
        assert int(row["median"].replace(",", "")) == round(statistics.median(run["tokens_per_s"]))
        ratios = [float(x) for x in row[f"vs {label}+autocast, per round"].split(" / ")]
        want = [t / r for t, r in zip(run["tokens_per_s"], reference["tokens_per_s"], strict=True)]
        assert ratios == pytest.approx(want, abs=0.006)


def check_machine(markdown: str, kwargs: dict[str, Any]) -> None:
    """Ranks and backend from the record, and the link ``nvidia-smi topo -m`` shows between the GPUs (its header is
    underlined with terminal escapes): an H100 pair's NV18 is all 18 of an H100 SXM's NVLinks, through NVSwitch."""
    raw = _by_id(_arg(kwargs, "record_id", 0))
    assert markdown.startswith(f"{raw['world_size']} ranks, one GPU each, {raw['backend'].upper()}. ")
    topology = re.sub(r"\x1b\[[0-9;]*m", "", raw["topology"] or "")
    links = {int(n) for n in re.findall(r"\bNV(\d+)\b", topology)}
    assert len(links) == 1, links
    (n,) = links
    assert f"`NV{n}`" in markdown
    assert f"bonded set of {n} NVLinks" in markdown
    h100_sxm = n == 18 and "H100" in raw["run"]["gpu"]["name"]  # 18 NVLinks per H100 SXM (NVIDIA's HGX H100 post)
    assert h100_sxm == ("An H100 SXM has 18 NVLinks in all" in markdown)
    assert "The record shows no NVLink" not in markdown
    assert raw["run"]["gpu"]["name"] in markdown


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "machine_markdown": check_machine,
    "interleaved_markdown": check_interleaved,
    "throughput_markdown": check_throughput,
    "memory_markdown": check_memory,
}
