"""The cell checks of docs/attention/cost.md (``gpukb.attention.page.cost``)."""

from __future__ import annotations

import inspect
import json
import math
import re
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

import pytest

from gpukb.attention import costs
from gpukb.attention.pages import cost as page
from gpukb.measuring.counting import ELEMENT_BYTES
from tests.helpers import ROOT, h100_ceilings_json, markdown_tables


def check_scaling(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert [int(r["d"]) for r in table] == [16, 64, 128, 512]
    previous = 0.0
    for r in table:
        d = int(r["d"])
        assert int(r["Var(q·k), analytic"]) == d
        assert abs(float(r["Var(q·k), measured"]) / d - 1) < 0.05
        assert abs(float(r["Var(q·k/√d), measured"]) - 1) < 0.05
        unscaled = float(r["largest of 64 weights, unscaled"])
        assert unscaled > previous
        assert unscaled > 2 * float(r["largest weight, scaled"])
        previous = unscaled


def check_cost_table(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    b, h, d, size = 4, 32, 128, 2
    assert len(table) == 6
    for r in table:
        seq, causal = int(r["L"]), r["causal"] == "yes"
        pairs = seq * (seq + 1) // 2 if causal else seq * seq
        flops = 4 * b * h * pairs * d
        fused = b * h * d * size * 4 * seq
        scores = b * h * seq * seq * size
        assert float(r["GFLOP"]) == pytest.approx(flops / 1e9, abs=0.051)
        assert float(r["pairs kept"]) == pytest.approx(pairs / seq**2, abs=5e-5)
        assert float(r["fused MB"]) == pytest.approx(fused / 1e6, abs=0.051)
        assert float(r["score matrix MB"]) == pytest.approx(scores / 1e6, abs=0.051)
        assert int(r["FLOP/B fused"]) == round(flops / fused)
        assert float(r["FLOP/B unfused"]) == pytest.approx(flops / (fused + 4 * scores), abs=0.051)
        # K and V read by every block of 128 queries (top-left causal: the keys up to the block's last row)
        keys = sum(min(start + 128, seq) if causal else seq for start in range(0, seq, 128))
        reread = b * h * d * size * (2 * seq + 2 * keys)
        assert int(r["FLOP/B, K and V read per 128 queries"]) == round(flops / reread)


def check_kv_cache(markdown: str, kwargs: dict[str, Any]) -> None:
    (table,) = markdown_tables(markdown)
    assert [r["attention"] for r in table] == ["multi-head", "grouped-query", "multi-query"]
    for r in table:
        kv = int(r["kv heads"])
        bf16 = 2 * 32 * 8192 * kv * 128 * 2  # layers, tokens, kv heads, head dim, bytes
        assert float(r["bf16 GiB"]) == pytest.approx(bf16 / 2**30, abs=5e-5)
        assert float(r["fp8 GiB"]) == pytest.approx(bf16 / 2 / 2**30, abs=5e-5)
        assert int(r["per token, bf16 KiB"]) == bf16 // 8192 // 1024


def check_decode(markdown: str, kwargs: dict[str, Any]) -> None:
    """One decoding step of 32 layers, 32 query heads of 128, 8192 cached tokens, bf16, from first principles; the
    time at the bandwidth the note under the table states."""
    (table,) = markdown_tables(markdown)
    tbps = float(markdown.split("Times at ")[1].split(" TB/s")[0])
    assert [r["attention"] for r in table] == ["multi-head", "grouped-query", "multi-query"]
    for r in table:
        kv = int(r["kv heads"])
        flops = 32 * 4 * 32 * 8192 * 128
        moved = 32 * 128 * 2 * (2 * 32 * 1 + 2 * kv * 8192)  # layers, d, bytes: Q and O of one token, the cache
        assert float(r["GFLOP"]) == pytest.approx(flops / 1e9, abs=0.006)
        assert float(r["MB read"]) == pytest.approx(moved / 1e6, abs=0.06)
        assert float(r["FLOP/B"]) == pytest.approx(flops / moved, abs=0.006)
        assert int(r["µs at the bandwidth"]) == pytest.approx(moved / (tbps * 1e12) * 1e6, rel=0.01)


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "decode": check_decode,
    "scaling": check_scaling,
    "cost_table": check_cost_table,
    "kv_cache": check_kv_cache,
}


def test_a_rate_that_does_not_follow_from_its_time_fails_the_check() -> None:
    markdown = page.cost_table()
    row = markdown.splitlines()[2]
    cells = row.split(" | ")
    cells[2] = str(float(cells[2]) * 2)
    with pytest.raises(AssertionError):
        check_cost_table(markdown.replace(row, " | ".join(cells)), {})
    assert math.isfinite(float(cells[2]))


def test_the_rereads_sentence_follows_from_the_record() -> None:
    """Every number of the sentence under the cost table, recomputed from the record's JSON read raw: the standard,
    non-causal case, its block of queries, the bytes with K and V read once per block and once in all, the time,
    and the bandwidth that time would need against the copy ceiling."""
    record = json.loads((ROOT / "src/gpukb/data/results/attention/flash-forward-h100.json").read_text("utf-8"))
    case = next(c for c in record["cases"] if c["group"] == "standard" and not c["causal"])
    b, h, seq, d = case["batch"], case["heads"], case["seq"], case["head_dim"]
    block_m = int(case["config"].split("x")[0])
    blocks = -(-seq // block_m)
    traffic = b * h * d * 2 * (2 * seq + 2 * blocks * seq)  # Q read and O written once, K and V once per block
    compulsory = b * h * d * 2 * 4 * seq
    ms = case["triton"]["ms"]["median"]
    needed = traffic / (ms / 1e3) / 1e12  # TB/s
    copy = h100_ceilings_json()["bandwidth"] / 1e3  # TB/s
    said = page.flash_rereads()
    expected = (
        f"(batch {b}, {h} heads, {seq} tokens, head dim {d}, not causal)",
        f"blocks of {block_m} queries, so it reads K and V {seq // block_m} times: {traffic / 1e9:.1f} GB",
        f"against {compulsory / 1e9:.2f} GB of compulsory traffic. It took {ms:.3f} ms",
        f"need {needed:.1f} TB/s from HBM, {needed / copy:.1f} times the {copy:.2f} TB/s",
        f"at least {1 - copy / needed:.0%} of those bytes cannot have come from HBM, and came from the L2 cache",
    )
    for part in expected:
        assert part in said, f"{part!r} not in {said!r}"


class _Form(HTMLParser):
    """The fields, hints and data island of a calculator's HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, dict[str, str | None]] = {}
        self.labels: dict[str, str] = {}
        self.options: list[tuple[str, bool]] = []
        self.hints: list[str] = []
        self.data = ""
        self._in: str | None = None
        self._for: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in ("input", "select"):
            self.fields[a["name"]] = a
        elif tag == "option":
            self.options.append((a["value"], "selected" in a))
        elif tag == "label":
            self._in, self._for = "label", a["for"]
        elif tag == "small":
            self._in = "hint"
        elif tag == "script":
            self._in = "data"

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "label":
            self.labels[self._for.removeprefix("gpukb-attention-")] = data
        elif self._in == "hint":
            self.hints.append(data)
        elif self._in == "data":
            self.data += data


def test_the_calculator_offers_what_its_script_reads() -> None:
    """The form has a field for every argument docs/javascripts/calculators/attention.js reads, each labelled with
    attention_summary's own argument name, prefilled with Llama-3-8B's attention at 8,192 tokens (32 layers, 32
    query heads, 8 key/value heads of 128: the Llama 3 paper, table 3), causal, bf16; the type list offers every
    floating-point type the data island sizes, and the island holds the library's element sizes."""
    script = (ROOT / "docs/javascripts/calculators/attention.js").read_text("utf-8")
    read = set(re.findall(r'value\("(\w+)"\)', script)) | set(re.findall(r"raw\(boxes\.(\w+)\)", script))
    form = _Form()
    form.feed(page.attention_calculator())
    assert set(form.fields) == read == set(inspect.signature(costs.attention_summary).parameters)
    assert {n: lbl for n, lbl in form.labels.items() if n != "layers"} == {n: n for n in read if n != "layers"}
    assert form.labels["layers"].startswith("layers")
    values = {n: f.get("value") for n, f in form.fields.items() if f.get("type") == "text"}
    assert values == {"batch": "1", "heads": "32", "kv_heads": "8", "q_len": "8192", "kv_len": "8192",
                      "head_dim": "128", "layers": "32"}  # fmt: skip
    assert form.fields["causal"]["type"] == "checkbox"
    assert "checked" in form.fields["causal"]
    sizes = json.loads(form.data)["element_bytes"]
    assert sizes == {name: ELEMENT_BYTES[name] for name in ELEMENT_BYTES}
    assert [v for v, _ in form.options] == [n for n in sizes if not n.startswith(("int", "uint"))]
    assert [v for v, chosen in form.options if chosen] == ["bf16"]
    assert form.hints == ["empty: as many as heads"]  # an empty kv_heads is attention_summary's None
