"""Every table the distributed pages render, read back by header and checked against the data file (read with
tomllib), the committed records (read with json) or arithmetic done here, not by calling the page's library."""

from __future__ import annotations

import json
import math
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


def check_sources(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _data()["source"]
    assert len(rows) == len(raw)
    for row, src in zip(rows, raw, strict=True):
        assert row["checked"] == src["checked"]
        full = " ".join(src["version"].split())
        assert row["version"] == re.sub(r"\b([0-9a-f]{12})[0-9a-f]{28}\b", r"\1", full)
        path = (src.get("path") or src["version"]).replace("/", "/<wbr>")
        assert row["file or document"] == f"[{path}]({src['url']})"
        assert row["source"] == " ".join(src["title"].split())


def check_composer_modes(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
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
    defaults = {r["key"]: r["default"] for r in rows}
    # composer/utils/parallelism.py v0.32.1 FSDPConfig
    assert defaults["`activation_checkpointing_reentrant`"] == "`true`"
    assert defaults["`activation_checkpointing`"] == "`false`"
    assert defaults["`mixed_precision`"] == "`DEFAULT`"


def check_fsdp_map(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _data()["fsdp_map"]
    assert [(r["FSDP1"], r["FSDP2"]) for r in rows] == [(m["fsdp1"], m["fsdp2"]) for m in raw]
    assert {"sharding_strategy": "reshard_after_forward"}.items() <= {r["FSDP1"]: r["FSDP2"] for r in rows}.items()


def check_mp_fields(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _data()["mp_field"]
    assert [(r["class"], r["field"], r["default"]) for r in rows] == [
        (f["api"], f"`{f['field']}`", f"`{f['default']}`") for f in raw
    ]
    fsdp2 = {r["field"] for r in rows if r["class"].startswith("FSDP2")}
    assert "`buffer_dtype`" not in fsdp2
    assert "`output_dtype`" in fsdp2


def check_dtype_flow(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = {r["mode"]: r for r in _table(markdown)}
    expect = {
        "`FULL`": ("float32", "float32"),
        "`DEFAULT`": ("bfloat16", "float32"),
        "`PURE`": ("bfloat16", "bfloat16"),
    }
    assert set(rows) == set(expect)
    for mode, (compute, reduce) in expect.items():
        row = rows[mode]
        assert row["params in forward"] == row["all-gather"] == row["unsharded grads"] == compute
        assert row["reduce-scatter"] == reduce
        assert row["sharded grads (optimizer)"] == row["sharded params (optimizer)"] == "float32"


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


def check_checkpoint_behaviours(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = {r["behaviour"]: r for r in _table(markdown)}
    assert rows["torch.autograd.grad(out, x)"]["use_reentrant=True"].startswith("RuntimeError")
    assert rows["torch.autograd.grad(out, x)"]["use_reentrant=False"] == "works"
    assert rows["keyword arguments to the function"]["use_reentrant=True"].startswith("ValueError: Unexpected keyword")
    assert rows["inputs that do not require grad"]["use_reentrant=False"] == "parameters get gradients"
    nested = rows["nested checkpoints"]
    assert (
        nested["use_reentrant=True"] == nested["use_reentrant=False"] == "correct gradients, inner function run 3 times"
    )
    early = rows["recomputation stops once the needed tensors exist"]
    assert (early["use_reentrant=True"], early["use_reentrant=False"]) == (
        "2 of 2 lines after the saving op re-run",
        "0 of 2 lines after the saving op re-run",
    )


def check_checkpoint_memory(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = {r["checkpointing"]: r for r in _table(markdown)}
    b, s, h, a, layers = 2, 16, 32, 4, 3
    block = 4 * (16 * b * s * h + a * b * s * s) + 4 * b * s * 4
    assert int(rows["none"]["bytes held after forward"]) == int(rows["none"]["formula"]) == layers * block + 4
    for impl in ("reentrant", "non-reentrant"):
        assert int(rows[impl]["bytes held after forward"]) == int(rows[impl]["formula"]) == layers * b * s * h * 4 + 4
        assert int(rows[impl]["peak bytes"]) < int(rows["none"]["peak bytes"])
        assert rows[impl]["block forward calls"] == str(2 * layers)
    assert rows["none"]["block forward calls"] == str(layers)


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
    rows = {r["mode"]: r["bytes per parameter of the unit"] for r in _table(markdown)}
    assert rows == {"`FULL`": str(4 + 4 + 4), "`DEFAULT`": str(2 + 2 + 4), "`PURE`": str(2 + 2 + 2)}


def check_ring_traffic(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    size = 1 << 20
    assert [r["ranks p"] for r in rows] == ["2", "4", "8", "16"]
    for row in rows:
        p = int(row["ranks p"])
        assert int(row["steps"]) == 2 * (p - 1)
        assert int(row["bytes sent per rank"]) == int(row["2(p−1)/p · S"]) == 2 * (p - 1) * size // p
        assert float(row["busbw factor"]) == pytest.approx(2 * (p - 1) / p, rel=1e-3)


def check_bus_factors(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = {r["collective"].strip("`"): r for r in _table(markdown)}
    for n in (2, 4, 8):
        # nccl-tests doc/PERFORMANCE.md, "Summary"
        want = {
            "all_reduce": 2 * (n - 1) / n,
            "reduce_scatter": (n - 1) / n,
            "all_gather": (n - 1) / n,
            "broadcast": 1,
            "reduce": 1,
            "all_to_all": (n - 1) / n,
        }
        assert {k: float(r[f"n = {n}"]) for k, r in rows.items()} == pytest.approx(want, rel=1e-3)


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
    assert "NVIDIA H100 80GB HBM3" in markdown
    assert "torch 2.11.0+cu130" in markdown


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


def check_block_check(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    blocks = _record("fsdp-single-gpu")["blocks"]
    assert [r["dtype"] for r in rows] == [x["dtype"] for x in blocks]
    for row, x in zip(rows, blocks, strict=True):
        e = 4 if x["dtype"] == "float32" else 2
        n, s, h, a = x["batch"], x["seq"], x["hidden"], x["heads"]
        assert int(row["saved bytes (measured)"]) == x["live_bytes"] - x["output_bytes"] + x["input_bytes"]
        assert int(row["formula"]) == e * (16 * n * s * h + a * n * s * s) + 16 * n * s
        assert row["measured / formula"] == "1.0000"


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


def check_fsdp_dtypes(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _by_id(_arg(kwargs, "record_id", 0))
    order = ["FULL", "DEFAULT", "PURE"]
    captures = sorted(raw["captures"], key=lambda c: (order.index(c["mode"]), c["rank"]))
    assert [(r["mode"], r["rank"]) for r in rows] == [(f"`{c['mode']}`", str(c["rank"])) for c in captures]
    assert sorted({c["rank"] for c in captures}) == list(range(raw["world_size"]))
    # what each mode sets (Composer under amp_bf16): compute dtype, reduce-scatter dtype
    want = {"FULL": ("float32", "float32"), "DEFAULT": ("bfloat16", "float32"), "PURE": ("bfloat16", "bfloat16")}
    for row, c in zip(rows, captures, strict=True):
        compute, reduce = want[c["mode"]]
        gathers = [x["dtype"] for x in c["collectives"] if x["op"].startswith("all_gather")]
        scatters = [x["dtype"] for x in c["collectives"] if x["op"].startswith("reduce_scatter")]
        assert set(c["forward_params"]) == set(c["unsharded_grads"]) == set(gathers) == {compute}
        assert set(scatters) == {reduce}
        assert row["params in forward"] == row["unsharded grads"] == compute
        assert row["all-gathers"] == f"{len(gathers)} × {compute}"
        assert row["reduce-scatters"] == f"{len(scatters)} × {reduce}"
        assert row["sharded grads (optimizer)"] == "float32" == " / ".join(sorted(set(c["sharded_grads"])))
    assert f"{raw['world_size']} ranks, {raw['backend'].upper()}" in markdown


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
_OPS = {"all_reduce": "all-reduce", "reduce_scatter": "reduce-scatter", "all_gather": "all-gather"}


def _bytes(label: str) -> int:
    number, unit = label.split(" ")
    return int(number) * _UNITS[unit]


def check_collective_bandwidth(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _by_id(_arg(kwargs, "record_id", 0))
    factor = _arg(kwargs, "factor", 1, 4)
    n = raw["world_size"]
    by = {(r["op"], r["size_bytes"]): r for r in raw["rows"]}
    sizes = sorted({r["size_bytes"] for r in raw["rows"]})
    shown = [s for s in sizes if s in {sizes[0] * factor**k for k in range(64)}]
    assert [_bytes(r["size S"]) for r in rows] == shown
    assert len(rows[0]) == 1 + 3 * len(_OPS)
    # nccl-tests doc/PERFORMANCE.md: busbw = algbw × 2(n-1)/n for all-reduce, × (n-1)/n for the other two
    bus = {"all_reduce": 2 * (n - 1) / n, "reduce_scatter": (n - 1) / n, "all_gather": (n - 1) / n}
    for row in rows:
        size = _bytes(row["size S"])
        for op, name in _OPS.items():
            r = by[op, size]
            seconds = r["ms"]["median"] / 1e3
            assert float(row[f"{name} µs"]) == pytest.approx(seconds * 1e6, abs=0.051)
            algbw, busbw = float(row[f"{name} algbw (GB/s)"]), float(row[f"{name} busbw (GB/s)"])
            assert algbw == pytest.approx(size / seconds / 1e9, abs=0.0051)
            assert busbw == pytest.approx(r["busbw"] / 1e9, abs=0.0051)
            assert busbw == pytest.approx(algbw * bus[op], abs=0.011)
    assert f"{raw['dtype']}, {n} ranks, {raw['backend'].upper()}; {raw['warmup']} warm-up calls" in markdown
    assert f"the mean of {raw['iters']} calls" in markdown


def check_link_comparison(markdown: str, kwargs: dict[str, Any]) -> None:
    rows = _table(markdown)
    raw = _by_id(_arg(kwargs, "record_id", 0))
    links = int(re.search(r"\bNV(\d+)\b", _ANSI.sub("", raw["topology"])).group(1))
    assert links == 18
    line, nccl = 450, 370  # NVIDIA/nccl-tests#212: H100's 450 GB/s line rate, less ~20% protocol overhead
    largest = max(r["size_bytes"] for r in raw["rows"])
    top = [r for r in raw["rows"] if r["size_bytes"] == largest]
    assert [r["collective"] for r in rows] == [_OPS[r["op"]] for r in top]
    for row, r in zip(rows, top, strict=True):
        assert _bytes(row["size S"]) == largest
        busbw = r["busbw"] / 1e9
        assert float(row["busbw (GB/s)"]) == pytest.approx(busbw, abs=0.051)
        assert int(row[f"of the line rate, {line} GB/s"].removesuffix("%")) == round(100 * busbw / line)
        assert int(row[f"of NCCL's ~{nccl} GB/s"].removesuffix("%")) == round(100 * busbw / nccl)


def check_ddp_buckets(markdown: str, kwargs: dict[str, Any]) -> None:
    """The DDP run's extra peak over plain training on one GPU, and the 4 bytes per parameter of its buckets, from
    the two records read with json; the buckets are half of it, to within a percent."""
    raw, alone = _by_id(_arg(kwargs, "record_id", 0)), _by_id(_arg(kwargs, "one_gpu_id", 1))
    ddp = next(r for r in raw["runs"] if not r["fsdp"] and r["autocast"] is None)
    plain = next(r for r in alone["runs"] if _config(r) == _config(ddp))
    extra, buckets = ddp["peak_bytes"] - plain["peak_bytes"], 4 * raw["parameters"]
    numbers = [float(x) for x in re.findall(r"(\d+\.\d+) GiB", markdown)]
    assert numbers == [round(extra / 2**30, 3), round(buckets / 2**30, 3), round((extra - buckets) / 2**30, 3)]
    assert f"({buckets / extra:.0%})" in markdown
    assert abs(buckets / extra - 0.5) < 0.01


def check_alpha_beta(markdown: str, kwargs: dict[str, Any]) -> None:
    """Each row's α and B, as printed, reproduce the record's times (2 KiB and up) within the printed worst error,
    and that worst error is where it says; α is the 28-42 µs floor the small sizes show."""
    raw = _by_id(_arg(kwargs, "record_id", 0))
    names = {"all-reduce": "all_reduce", "reduce-scatter": "reduce_scatter", "all-gather": "all_gather"}
    n = raw["world_size"]
    factors = {"all_reduce": 2 * (n - 1) / n, "reduce_scatter": (n - 1) / n, "all_gather": (n - 1) / n}
    (table,) = markdown_tables(markdown)
    for row in table:
        op = names[row["collective"]]
        alpha, bandwidth = float(row["α (µs)"]) * 1e-6, float(row["B (GB/s)"]) * 1e9
        assert 28e-6 <= alpha <= 42e-6
        measured = sorted((r for r in raw["rows"] if r["op"] == op), key=lambda r: r["size_bytes"])[1:]
        errors = [(alpha + factors[op] * r["size_bytes"] / bandwidth) / (r["ms"]["median"] / 1e3) - 1 for r in measured]
        worst = float(row["worst error of the model"].split("%")[0]) / 100
        assert max(abs(e) for e in errors) == pytest.approx(abs(worst), abs=0.02)
        assert float(row["S½ (MiB)"]) == pytest.approx(alpha * bandwidth / factors[op] / 2**20, rel=0.01)
        # what the prose says of them: about 30 µs, 270 to 330 GB/s, S½ of about 10 to 15 MiB, worst at 4 or 8 MiB
        assert 265e9 <= bandwidth <= 335e9
        assert 9.5 <= float(row["S½ (MiB)"]) <= 15.5
        assert row["worst error of the model"].startswith("+")
        assert row["worst error of the model"].endswith(("at 4 MiB", "at 8 MiB"))


def _binomial_interval(values: list[float]) -> tuple[float, float]:
    """The sign-test interval for the median, written out: the largest j with 1 - 2·P(Bin(n, 1/2) < j) ≥ 0.95."""
    n = len(values)
    js = [j for j in range(1, n // 2 + 1) if 1 - 2 * sum(math.comb(n, i) for i in range(j)) / 2**n >= 0.95]
    ordered = sorted(values)
    return ordered[max(js) - 1], ordered[n - max(js)]


def check_modes(markdown: str, kwargs: dict[str, Any]) -> None:
    """Each round's tokens/s and ratio, the alternating order, the medians and the interval, from the record."""
    rows = _table(markdown)
    raw = _by_id(_arg(kwargs, "record_id", 0, "distributed/fsdp-modes-h100x4"))
    runs = {r["mixed_precision"]: r["tokens_per_s"] for r in raw["runs"]}
    default, pure = runs["DEFAULT"], runs["PURE"]
    ratios = [p / d for p, d in zip(pure, default, strict=True)]
    assert [r["round"] for r in rows] == [str(i + 1) for i in range(len(default))] + ["median"]
    for i, row in enumerate(rows[:-1]):
        assert row["order"] == ("DEFAULT, PURE" if i % 2 == 0 else "PURE, DEFAULT")
        assert int(row["DEFAULT tokens/s"].replace(",", "")) == round(default[i])
        assert int(row["PURE tokens/s"].replace(",", "")) == round(pure[i])
        assert float(row["PURE / DEFAULT"]) == pytest.approx(ratios[i], abs=0.0005)
    low, high = _binomial_interval(ratios)
    assert rows[-1]["PURE / DEFAULT"] == (
        f"{statistics.median(ratios):.3f} (96% interval {low:.3f} to {high:.3f})"  # 12 rounds: j = 3 covers 96.1%
    )
    flops = 6 * raw["parameters"] * statistics.median(default + pure) / raw["world_size"] / 1e12
    assert f"at least {flops:,.0f} TFLOP/s" in markdown


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "modes_markdown": check_modes,
    "alpha_beta_markdown": check_alpha_beta,
    "ddp_buckets_markdown": check_ddp_buckets,
    "interleaved_markdown": check_interleaved,
    "throughput_markdown": check_throughput,
    "memory_markdown": check_memory,
    "fsdp_dtypes_markdown": check_fsdp_dtypes,
    "collective_bandwidth_markdown": check_collective_bandwidth,
    "link_comparison_markdown": check_link_comparison,
    "block_check_markdown": check_block_check,
    "sources_markdown": check_sources,
    "composer_modes_markdown": check_composer_modes,
    "composer_keys_markdown": check_composer_keys,
    "fsdp_map_markdown": check_fsdp_map,
    "mp_fields_markdown": check_mp_fields,
    "dtype_flow_markdown": check_dtype_flow,
    "checkpoint_default_markdown": check_checkpoint_default,
    "checkpoint_behaviours_markdown": check_checkpoint_behaviours,
    "checkpoint_memory_markdown": check_checkpoint_memory,
    "states_markdown": check_states,
    "transients_markdown": check_transients,
    "ring_traffic_markdown": check_ring_traffic,
    "bus_factors_markdown": check_bus_factors,
}
