"""The distributed chapter's worked problems, recomputed from the ZeRO paper's counts and the committed record."""

from __future__ import annotations

import json
import re

import pytest

from tests.helpers import ROOT
from tests.worked_problems import answer, assert_shows, numbers, question, rendered_problems, working


@pytest.fixture  # per test (rendered once, then cached), so mutmut maps every test to the problems it reads
def problems() -> dict[str, str]:
    return rendered_problems("distributed")


def test_fsdp_bytes(problems: dict[str, str]) -> None:
    per_param = (2 + 2 + 12) / 8  # ZeRO's mixed-precision Adam: fp16 params, grads, K = 12; all sharded over 8
    text = answer(problems["fsdp-bytes"])
    assert_shows(text, per_param, per_param * 7e9 / 1e9, 16 * 7e9 / 1e9, 2 + 2 + 4)


def test_ring_all_reduce(problems: dict[str, str]) -> None:
    record = json.loads((ROOT / "src/gpukb/data/results/distributed/collectives-h100x2.json").read_text("utf-8"))
    largest = max((r for r in record["rows"] if r["op"] == "all_reduce"), key=lambda r: r["size_bytes"])
    p = 8
    # every rank sends one 1/p chunk in each of the p − 1 reduce-scatter and p − 1 all-gather steps
    sent = 2 * (p - 1) * (2**30 / p)
    text = answer(problems["ring-all-reduce"])
    assert text.startswith(f"{2 * (p - 1)} steps")
    assert_shows(text, sent / 2**30, sent / largest["busbw"] * 1e3, largest["busbw"] / 1e9, rel=0.01)


def test_activation_checkpointing(problems: dict[str, str]) -> None:
    b, s, h, a = 1, 4096, 4096, 32
    # Korthikanti et al. without dropout: sbh(32 + 2as/h) bytes in 16 bits, plus fp32 LayerNorm statistics
    full = s * b * h * (32 + 2 * a * s / h) + 4 * b * s * 4
    kept = 2 * b * s * h
    text = answer(problems["activation-checkpointing"])
    assert_shows(text, full / 2**30, kept / 2**20, 32 * full / 2**30, 32 * kept / 2**30)


def test_bus_bandwidth(problems: dict[str, str]) -> None:
    algbw = 2**30 / 5e-3
    assert_shows(answer(problems["bus-bandwidth"]), algbw / 1e9, algbw * 2 * 7 / 8 / 1e9)


# --- every number of each question and each working step, in order, computed here ------------------------------------


def _sources(text: str) -> list[tuple[str, str]]:
    line = next((x for x in text.splitlines() if x.strip().startswith("Sources:")), "")
    return re.findall(r"\[([^\]]+)\]\((https://[^)]+)\)", line)


def test_fsdp_bytes_working(problems: dict[str, str]) -> None:
    params, ranks, k = 7e9, 8, 12  # ZeRO's K: fp32 master weights, momentum and variance, 4 B each
    text = problems["fsdp-bytes"]
    shard = [2 / ranks, 2 / ranks, k / ranks]
    assert numbers(question(text)) == [params / 1e9, ranks]
    replicated, stage3, product, unit = working(text)
    assert numbers(replicated) == [2, 2, k, 2 + 2 + k]
    assert numbers(stage3) == [3, ranks, *shard, sum(shard)]
    assert numbers(product) == [params, sum(shard) * params]
    assert numbers(unit) == [2, 2, 4, 2 + 2 + 4]
    assert _sources(text) == [(_ZERO_LABEL, "https://arxiv.org/abs/1910.02054")]


_ZERO_LABEL = (
    "Rajbhandari et al., ZeRO: Memory Optimizations Toward Training Trillion Parameter Models (arXiv:1910.02054)"
)


def test_ring_all_reduce_working(problems: dict[str, str]) -> None:
    record = json.loads((ROOT / "src/gpukb/data/results/distributed/collectives-h100x2.json").read_text("utf-8"))
    largest = max((r for r in record["rows"] if r["op"] == "all_reduce"), key=lambda r: r["size_bytes"])
    p, gib = 8, 2**30
    factor = 2 * (p - 1) / p
    seconds = gib * factor / largest["busbw"]
    text = problems["ring-all-reduce"]
    assert numbers(answer(text)) == [2 * (p - 1), factor, round(seconds * 1e3, 1), round(largest["busbw"] / 1e9)]
    chunks, sent, busbw, time = working(text)
    assert numbers(chunks) == [p, p - 1, p - 1, 2 * (p - 1)]
    assert numbers(sent) == [1, p, 2, p, 1, p, factor]
    assert numbers(busbw) == [2, 1, largest["size_bytes"] / gib, round(largest["busbw"] / 1e9, 1)]
    assert numbers(time) == [1, factor, round(largest["busbw"] / 1e9, 1), round(seconds * 1e3, 2)]


def test_activation_checkpointing_working(problems: dict[str, str]) -> None:
    b, s, h, a, layers = 1, 4096, 4096, 32, 32
    linear, scores, stats = 16 * b * s * h, a * b * s * s, 2 * 2 * b * s * 4  # two LayerNorms' fp32 mean and rstd
    full, kept = 2 * (linear + scores) + stats, 2 * b * s * h
    text = problems["activation-checkpointing"]
    assert numbers(question(text)) == [h, a, s, b, layers]
    assert numbers(answer(text)) == [
        round(full / 2**30, 2), round(kept / 2**20), round(layers * full / 2**30, 1), round(layers * kept / 2**30),
        round(full / 2**30, 2), layers,
    ]  # fmt: skip
    saved, checkpoint, _ = working(text)
    assert numbers(saved) == [16, linear, scores, 2, full]
    assert numbers(checkpoint) == [2, kept]
    for count in (linear, scores, full):  # element and byte counts are whole numbers, written as such
        assert re.search(rf" {count:,}(?![\d.]|,\d)", saved), count
    assert re.search(rf" {kept:,} B", checkpoint)
    assert _sources(text) == [(
        "Korthikanti et al., Reducing Activation Recomputation in Large Transformer Models (arXiv:2205.05198)",
        "https://arxiv.org/abs/2205.05198",
    )]  # fmt: skip


def test_bus_bandwidth_working(problems: dict[str, str]) -> None:
    size, seconds, p = 2**30, 5e-3, 8
    algbw = size / seconds
    text = problems["bus-bandwidth"]
    assert numbers(question(text)) == [1, p, seconds * 1e3]
    assert numbers(answer(text)) == [round(algbw / 1e9, 1), round(algbw * 2 * (p - 1) / p / 1e9, 1)]
    first, second = working(text)
    assert numbers(first) == [size, seconds, round(algbw / 1e9, 2)]
    assert numbers(second) == [2, 1, round(algbw / 1e9, 2), 2 * (p - 1) / p, round(algbw * 2 * (p - 1) / p / 1e9, 2)]
    ((label, url),) = _sources(text)
    assert url == "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"
    repository, path = label.split(", ")
    assert (repository, path) == (url.split("/")[4], url.split("/master/")[1])  # the label names the file linked
